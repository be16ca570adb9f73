#!/bin/bash
# CI (no GPU): aggregated memory sites. An additive probe (ebpf/verifier_additive.c: only array
# lookups and atomic adds, computed from context bytes fixed per site and thread) runs once per
# straight-line run of like sites, with their count as its weight (ptx-frontend/instrument.h,
# gp_inst_probe.weighted). bench/RESULTS.md: the memory counter cost chemv-cuda 2.99x and fma-cuda
# 3.58x on the H100, one red per warp per access in loops of a few loads.
#   - `gpuprobe verify -v` says which probes are additive, and why not;
#   - tests/e2e/aggregate/block.ptx (5 loads, loads under %p1 and !%p1, %p1 written again, `{ }`
#     scopes, stores, an atomic, shared memory, a loop): the calls and their weights, out of line, for a counter
#     keyed by direction and one keyed by space adding the access's size; GPUPROBE_AGGREGATE=0
#     keeps a call per site; inlined, the weight is the site's immediate and ptxas compiles it;
#   - on gpuprobe's own driver over PoCL (GPUPROBE_BACKEND=opencl): block.ptx through
#     tests/e2e/aggregate/ptx_launch.c and nvcc's examples/apps/vec_add, with aggregation on and off:
#     the same maps, equal to the counts block.ptx's header derives, and the programs' own output.
# usage: aggregate_test.sh GPUPROBE SRC_DIR WORK_DIR   (the PoCL half skips without nvcc or OpenCL)
set -u
GP=$1 SRC=$2 W=$3
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc} PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
CC=${CC:-cc}
rm -rf "$W" && mkdir -p "$W/rt" && chmod 700 "$W/rt" || exit 1
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1; fi; }
for p in count_dir agg_bytes agg_hash agg_addr count_hash; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
		-c "$SRC/tests/e2e/probes/$p.bpf.c" -o "$W/$p.bpf.o" || exit 2
done
additive() { "$GP" verify -v "$W/$1.bpf.o" | grep '^  additive:' | sort -u; }
check "verify: count_dir is additive" "  additive: yes (the sites of a basic block with equal context bytes may be counted by one run with its adds multiplied)" "$(additive count_dir)"
check "verify: agg_bytes (adds ctx->size) is additive" "  additive: yes (the sites of a basic block with equal context bytes may be counted by one run with its adds multiplied)" "$(additive agg_bytes)"
check "verify: agg_addr (reads ctx->addr) is not" "  additive: no (insn 0: reads context bytes 0-7, which change from one run to the next)" "$(additive agg_addr)"
check "verify: agg_hash (gp_count on a HASH) is, after a first run" "  additive: yes, after a first run (the sites of a basic block with equal context bytes may be counted by a run of weight 1 and one with its adds multiplied: it inserts into a hash map)" "$(additive agg_hash)"
check "verify: count_hash (reads the insert's result: the same in runs 2..N) is, after a first run" "  additive: yes, after a first run (the sites of a basic block with equal context bytes may be counted by a run of weight 1 and one with its adds multiplied: it inserts into a hash map)" "$(additive count_hash)"

B=$SRC/tests/e2e/aggregate/block.ptx
# The calls and weights below are the per-call form (GPUPROBE_DEFER=0); the deferred form, where
# each site adds its weight to a per-thread accumulator and the thread's flush calls the probe,
# has its checks after them.
export GPUPROBE_DEFER=0
weights() { grep -o '__gp_wt\], [0-9]*' "$1" | awk '{ printf "%s%s", s, $2; s = " " }'; }
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/count_dir.bpf.o" "$B" -o "$W/count_dir.ool.ptx" 2>"$W/count_dir.err"
check "count_dir: instrument" 0 $?
check "count_dir: 17 sites, 9 calls" "gpuprobe: $B: 9 probe sites in 1 functions (8 more counted by another site's weighted call)" "$(cat "$W/count_dir.err")"
check "count_dir: weights (5 loads + shared load across a scope, %p1, !%p1, %p1 past a scope, new %p1, 3 stores, atomic, loop 2, store)" \
	"6 1 1 1 1 3 1 2 1" "$(weights "$W/count_dir.ool.ptx")"
# the merged call stands before the first of its sites: the first load, guarded ones behind their guard
check "count_dir: the guarded calls are behind their guard's skip" "3 1" \
	"$(grep -c '@!%p1 bra' "$W/count_dir.ool.ptx") $(grep -c '@%p1 bra' "$W/count_dir.ool.ptx")"
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/agg_bytes.bpf.o" "$B" -o "$W/agg_bytes.ool.ptx" 2>/dev/null
check "agg_bytes: weights (global loads, stores and atomic, %p1, !%p1, %p1, new %p1, shared 2, loop 2, store)" \
	"8 1 1 1 1 2 2 1" "$(weights "$W/agg_bytes.ool.ptx")"
# a hash counter: a group of N makes a call of weight 1 and one of N-1 (the first run may insert)
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/agg_hash.bpf.o" "$B" -o "$W/agg_hash.ool.ptx" 2>/dev/null
check "agg_hash: weights (count_dir's, each group of N as 1 and N-1)" \
	"1 5 1 1 1 1 1 2 1 1 1 1" "$(weights "$W/agg_hash.ool.ptx")"
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/agg_addr.bpf.o" "$B" -o "$W/addr.ptx" 2>"$W/addr.err"
check "agg_addr: a call per site, no weight" "gpuprobe: $B: 17 probe sites in 1 functions 0" \
	"$(cat "$W/addr.err") $(grep -c __gp_wt "$W/addr.ptx")"
GPUPROBE_AGGREGATE=0 GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/count_dir.bpf.o" "$B" -o "$W/off.ptx" 2>"$W/off.err"
check "GPUPROBE_AGGREGATE=0: a call per site, no weight" "gpuprobe: $B: 17 probe sites in 1 functions 0" \
	"$(cat "$W/off.err") $(grep -c __gp_wt "$W/off.ptx")"
for p in count_dir agg_bytes agg_hash; do
	"$GP" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$B" -o "$W/$p.inl.ptx" 2>/dev/null
	check "$p inlined: the weights are immediates" "$(weights "$W/$p.ool.ptx")" \
		"$(grep -oE '_wt, [0-9]+;' "$W/$p.inl.ptx" | grep -oE '[0-9]+' | paste -sd' ')"
	if [ -x "$PTXAS" ]; then
		"$PTXAS" -arch=sm_90 "$W/$p.inl.ptx" -o "$W/$p.cubin"
		check "$p inlined: ptxas sm_90" 0 $?
	fi
done

# Deferred (the default): each group's weight added to its class's accumulator (one class per
# direction the probe reads), in the order of the calls above, and one call site left: the flush
# (two for the hash counter: its first run apart).
unset GPUPROBE_DEFER
incs() { grep -oE 'add.u64 	%__gp_a0_[0-9]+, %__gp_a0_[0-9]+, [0-9]+' "$1" | awk '{ printf "%s%s", s, $NF; s = " " }'; }
for p in count_dir agg_hash; do
	GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/$p.bpf.o" "$B" -o "$W/$p.def.ptx" 2>"$W/$p.def.err"
	check "$p deferred: the increments are count_dir's weights" "6 1 1 1 1 3 1 2 1" "$(incs "$W/$p.def.ptx")"
	check "$p deferred: the flush's calls only" "$([ $p = agg_hash ] && echo 2 || echo 1)" \
		"$(grep -cE 'call[[:space:]]+\(__gp_ret\), __gp_p0_0_on_mem' "$W/$p.def.ptx")"
	check "$p deferred: every ret and exit of the kernel branches to the flush" 1 \
		"$(awk '/\.entry/ { k = 1 } k' "$W/$p.def.ptx" | grep -cE '^[[:space:]]*(ret|exit);')"
done
check "count_dir deferred: the message" \
	"gpuprobe: $B: 9 probe sites in 1 functions (8 more counted by another site's weighted call); 9 count into per-thread accumulators" \
	"$(cat "$W/count_dir.def.err")"
if [ -x "$PTXAS" ]; then
	"$GP" ptx instrument --sms 132 -p "$W/agg_hash.bpf.o" "$B" -o "$W/agg_hash.def.inl.ptx" 2>/dev/null &&
		"$PTXAS" -arch=sm_90 "$W/agg_hash.def.inl.ptx" -o "$W/agg_hash.def.cubin"
	check "agg_hash deferred, inlined: ptxas sm_90" 0 $?
fi

# The PoCL half: exact counts, on and off.
[ -x "$NVCC" ] || { echo "SKIP (PoCL half): no nvcc at $NVCC"; exit $fail; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP (PoCL half): no OpenCL device"; exit $fail; }
. "$SRC/tests/own_driver/asan_preload.sh"
asan_env=$(own_driver_asan_env "$(dirname "$(dirname "$GP")")/lib")
export XDG_RUNTIME_DIR=$W/rt GPUPROBE_BACKEND=opencl
"$CC" -O1 -o "$W/ptx_launch" "$SRC/tests/e2e/aggregate/ptx_launch.c" -ldl || exit 2
"$NVCC" -arch=sm_90 -o "$W/vec_add" "$SRC/examples/apps/vec_add.cu" || exit 2
run() {   # name, GPUPROBE_AGGREGATE, probe ("" for none), command...
	local name=$1 agg=$2 probe=$3
	shift 3
	env $asan_env GPUPROBE_AGGREGATE=$agg GPUPROBE_LOG=1 GPUPROBE_INLINE=${GPUPROBE_INLINE:-1} timeout 300 "$GP" run ${probe:+-p "$W/$probe.bpf.o"} -- "$@" \
		>"$W/$name.out" 2>"$W/$name.err"
	echo $?
}
st=$(run plain 1 "" "$W/ptx_launch" "$B" agg 2 128 3840)
grep -q '^ptx_launch: agg sum=' "$W/plain.out" ||
	{ echo "SKIP (PoCL half): block.ptx does not run on the own driver here: $(tail -2 "$W/plain.err")"; exit $fail; }
maps() { grep -E '^@' "$W/$1.err" | sort; }
for p in count_dir agg_bytes agg_hash; do
	for a in 1 0; do
		check "block.ptx, $p, GPUPROBE_AGGREGATE=$a: exit 0" 0 "$(run "$p.$a" $a $p "$W/ptx_launch" "$B" agg 2 128 3840)"
		check "block.ptx, $p, GPUPROBE_AGGREGATE=$a: the kernel's results as without probes" \
			"$(cat "$W/plain.out")" "$(cat "$W/$p.$a.out")"
	done
done
sites() { grep -oE 'first launch with probes.*; [0-9]+ probe sites' "$W/$1.err" | grep -oE '[0-9]+ probe sites$'; }
check "block.ptx, count_dir: 9 calls with aggregation, 17 without" "9 probe sites 17 probe sites" \
	"$(sites count_dir.1) $(sites count_dir.0)"
check "block.ptx, count_dir: loads 3584, stores 1024, atomics 256" "@by_dir[1]: 3584
@by_dir[2]: 1024
@by_dir[3]: 256" "$(maps count_dir.1)"
check "block.ptx, count_dir: the same without aggregation" "$(maps count_dir.1)" "$(maps count_dir.0)"
check "block.ptx, agg_hash: loads 3584, stores 1024, atomics 256, on and off" "@dirs[1]: 3584
@dirs[2]: 1024
@dirs[3]: 256
@dirs[1]: 3584
@dirs[2]: 1024
@dirs[3]: 256" "$(maps agg_hash.1; maps agg_hash.0)"
# deferred off (GPUPROBE_DEFER=0: a weighted call per group, as before deferral): the same maps
for p in count_dir agg_bytes agg_hash; do
	GPUPROBE_DEFER=0 run "$p.nodefer" 1 $p "$W/ptx_launch" "$B" agg 2 128 3840 >/dev/null
	check "block.ptx, $p, GPUPROBE_DEFER=0: the same maps" "$(maps $p.1)" "$(maps $p.nodefer)"
done
# out of line (GPUPROBE_INLINE=0): the weight is the probe's parameter at run time, and the
# weighted add takes its second, predicated form (ebpf/lower_mem.c weighted_add)
for p in count_dir agg_bytes agg_hash; do
	GPUPROBE_INLINE=0 run "$p.ool" 1 $p "$W/ptx_launch" "$B" agg 2 128 3840 >/dev/null
	check "block.ptx, $p, out of line: the same maps" "$(maps $p.0)" "$(maps $p.ool)"
done
check "block.ptx, agg_bytes: global 17408 bytes, shared 2048" "@bytes[1]: 17408
@bytes[2]: 2048" "$(maps agg_bytes.1)"
check "block.ptx, agg_bytes: the same without aggregation" "$(maps agg_bytes.1)" "$(maps agg_bytes.0)"
run vplain 1 "" "$W/vec_add" 8 >/dev/null
for a in 1 0; do
	check "vec_add, count_dir, GPUPROBE_AGGREGATE=$a: exit 0" 0 "$(run "vec.$a" $a count_dir "$W/vec_add" 8)"
	check "vec_add, count_dir, GPUPROBE_AGGREGATE=$a: output as without probes" "$(cat "$W/vplain.out")" "$(cat "$W/vec.$a.out")"
done
check "vec_add, count_dir: 768 loads and 512 stores, on and off" "@by_dir[1]: 768
@by_dir[2]: 512
@by_dir[1]: 768
@by_dir[2]: 512" "$(maps vec.1; maps vec.0)"
# The entry+exit hash counter (count_hash: lookup, NOEXIST insert, lookup again, add) is
# additive after a first run (above); entry and exit sites stay a call per thread, so the maps
# are the same with aggregation on and off, and entries equal exits.
for a in 1 0; do
	check "vec_add, count_hash, GPUPROBE_AGGREGATE=$a: exit 0" 0 "$(run "vech.$a" $a count_hash "$W/vec_add" 8)"
	check "vec_add, count_hash, GPUPROBE_AGGREGATE=$a: output as without probes" "$(cat "$W/vplain.out")" "$(cat "$W/vech.$a.out")"
done
check "vec_add, count_hash: the same maps on and off" "$(maps vech.0)" "$(maps vech.1)"
check "vec_add, count_hash: entries per kernel equal exits" \
	"$(maps vech.1 | grep '^@enter' | sed 's/^@enter//')" "$(maps vech.1 | grep '^@leave' | sed 's/^@leave//')"
[ $fail = 0 ] && echo "PASS aggregate" || echo "FAIL aggregate (logs in $W)"
exit $fail
