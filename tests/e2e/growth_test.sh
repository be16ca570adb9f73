#!/bin/bash
# CI (no GPU): instrumented code grows with the number of probe sites, not with inlined copies of
# probe and helper bodies. A 1,000-kernel template module (3.5 MB of PTX) with an entry+exit HASH
# counter became 156 MB of PTX (ptxas 4 min 13 s instead of 9.7 s): every site inlined the whole
# lookup/insert code. Now (ptx-frontend/inline.c) only what pays is inlined, the hash probe and
# insert live in one shared body each, and inlining adds at most GPUPROBE_INLINE_GROWTH (2) times
# the module's own instructions (at least 50,000), past which sites call, with one line.
# A 200-kernel module made from one nvcc kernel (growth/kernel.ptx.in, bench/code_growth's
# template) stands in for it.
# usage: growth_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
N=${GROWTH_KERNELS:-200}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
atmost() { if [ "$2" -le "$3" ]; then echo "ok   $1: $2 <= $3"; else echo "FAIL $1: $2 > $3"; fail=1; fi; }
insns() { grep -E '^\s*(@!?%[A-Za-z0-9_]+\s+)?[a-z][a-z0-9_.]*(\s|;)' "$1" | grep -c ';'; }
for p in count_hash count_dir; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
		-c "$SRC/tests/e2e/probes/$p.bpf.c" -o "$W/$p.bpf.o" || exit 2
done
{
	printf '.version 9.0\n.target sm_90\n.address_size 64\n\n'
	for ((k = 0; k < N; k++)); do sed "s/@K@/$k/g" "$SRC/tests/e2e/growth/kernel.ptx.in"; echo; done
} > "$W/many.ptx"
in=$(insns "$W/many.ptx")
echo "module: $N kernels, $in instructions, $(wc -c < "$W/many.ptx") bytes"
budget=$((2 * in > 50000 ? 2 * in : 50000))
for p in count_hash count_dir; do
	GPUPROBE_INLINE=0 "$GP" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$W/many.ptx" -o "$W/$p.calls.ptx" 2>"$W/$p.calls.err"
	check "$p: instrumented with calls" 0 $?
	"$GP" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$W/many.ptx" -o "$W/$p.ptx" 2>"$W/$p.err"
	check "$p: instrumented" 0 $?
	calls=$(insns "$W/$p.calls.ptx") out=$(insns "$W/$p.ptx")
	sites=$(sed -n 's/.*: \([0-9]*\) probe sites in.*/\1/p' "$W/$p.err")
	echo "$p: $sites sites; $in -> $calls instructions with calls, $out inlined ($(wc -c < "$W/$p.ptx") bytes)"
	atmost "$p: what inlining adds, within the module's budget" $((out - calls)) $budget
done
# The HASH counter: the insert slow path (its bucket claim, a cas) and the hash probe are one
# shared body each, not a copy per site; the kernels call them.
check "count_hash: bucket claims (atom.cas.b32) in the whole module" 1 \
	"$(grep -c 'atom\.global\.cas\.b32' "$W/count_hash.ptx")"
check "count_hash: one map_update_elem body" 1 "$(grep -c '__gp_m_map_update_elem($' "$W/count_hash.ptx")"
# Its lookups (4-byte keys) are emitted in place with the map's constants: no lookup helper, no
# hash_find body anywhere.
check "count_hash: no lookup helper or hash_find body" 0 \
	"$(grep -c '__gp_m_map_lookup_elem\|__gp_m_hash_find' "$W/count_hash.ptx")"
# The memory counter's array lookup of a variable key (ctx->dir & 3) is the element's address
# computed in place (gp_lower_opts.emit_map_lookup_var): no lookup helper anywhere.
check "count_dir: no map_lookup_elem helper" 0 "$(grep -c '__gp_m_map_lookup_elem' "$W/count_dir.ptx")"
# A smaller budget: sites past it call, and one line says so. A call per access
# (GPUPROBE_AGGREGATE=0): the memory counter's weighted calls, one per basic block's like
# accesses, all fit.
GPUPROBE_AGGREGATE=0 GPUPROBE_INLINE=0 "$GP" ptx instrument --sms 132 -p "$W/count_dir.bpf.o" \
	"$W/many.ptx" -o "$W/count_dir.calls0.ptx" 2>/dev/null
GPUPROBE_AGGREGATE=0 GPUPROBE_INLINE_GROWTH=1 "$GP" ptx instrument --sms 132 -p "$W/count_dir.bpf.o" "$W/many.ptx" \
	-o "$W/count_dir.g1.ptx" 2>"$W/count_dir.g1.err"
check "count_dir, GPUPROBE_INLINE_GROWTH=1: instrumented" 0 $?
cat "$W/count_dir.g1.err"
check "count_dir, GPUPROBE_INLINE_GROWTH=1: one line about the budget" 1 \
	"$(grep -c '^gpuprobe: inline: .* called from one shared out-of-line body each; [0-9]* of [0-9]* probe sites call their probe too$' "$W/count_dir.g1.err")"
b1=$((in > 50000 ? in : 50000))
atmost "count_dir, GPUPROBE_INLINE_GROWTH=1: what inlining adds" \
	$(($(insns "$W/count_dir.g1.ptx") - $(insns "$W/count_dir.calls0.ptx"))) $b1
# ptxas takes what both produce (ten kernels: ptxas's time grows with the module, not the check)
if [ -x "$PTXAS" ]; then
	{ printf '.version 9.0\n.target sm_90\n.address_size 64\n\n'
	  for ((k = 0; k < 10; k++)); do sed "s/@K@/$k/g" "$SRC/tests/e2e/growth/kernel.ptx.in"; echo; done
	} > "$W/ten.ptx"
	for p in count_hash count_dir; do
		for inl in 1 0; do
			GPUPROBE_INLINE=$inl "$GP" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$W/ten.ptx" \
				-o "$W/ten_$p.$inl.ptx" 2>/dev/null &&
				"$PTXAS" -arch=sm_90 "$W/ten_$p.$inl.ptx" -o "$W/ten_$p.$inl.cubin"
			check "$p: ptxas sm_90 on ten kernels (GPUPROBE_INLINE=$inl)" 0 $?
		done
	done
fi
[ $fail = 0 ] && echo "PASS growth" || echo "FAIL growth"
exit $fail
