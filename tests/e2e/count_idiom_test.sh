#!/bin/bash
# CI (no GPU): the counting idiom on a HASH map keyed by kernel (issue 11's entry+exit probe:
# lookup; on a miss insert 1 with BPF_NOEXIST, look up again; else atomic add) compiles, inlined
# at every kernel entry and exit, to what a hand-written counter would: the element found in
# place, one red per warp of the active lanes' count, no context buffer and no stack in local
# memory. zoom-cuda (1.4e11 threads of a few instructions) ran 4.2x native under
# it on the H100 (2026-11-25/26): at an inlined site the hash lookup was the generic helper's
# (descriptor loads, the key's bytes hashed in a loop from local memory), the insert took
# pointers into the probe's frame, which kept frame and context buffer in local memory (160
# bytes a thread, a store and a load back at every call), and the add, reached from two paths,
# grouped lanes with two match.any.sync first; and each lookup read its bucket's state with
# ld.acquire (an L2 round trip and an L1 invalidation) and then its key.
# usage: count_idiom_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
cp "$SRC/tests/e2e/probes/count_hash.bpf.c" "$W/count.bpf.c"   # the idiom, in HASH maps enter and leave
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" -c "$W/count.bpf.c" -o "$W/count.bpf.o" || exit 2
"$NVCC" -arch=sm_90 -ptx "$SRC/tests/e2e/apps/transpose.cu" -o "$W/transpose.ptx" || exit 2
"$PTXAS" -arch=sm_90 -v "$W/transpose.ptx" -o "$W/orig.cubin" 2>"$W/orig.txt" || exit 2
"$GP" ptx instrument --sms 132 -p "$W/count.bpf.o" "$W/transpose.ptx" -o "$W/inst.ptx" 2>"$W/inst.err"
check "instrumented" 0 $?
sites=$(grep -o '[0-9]* probe sites' "$W/inst.err" | grep -o '^[0-9]*')
entries=$(grep -c '^\.visible \.entry' "$W/transpose.ptx")
[ "${sites:-0}" -ge $((2 * entries)) ] || { echo "FAIL sites: ${sites:-0} for $entries kernels"; fail=1; }
# the kernels alone (the shared cold bodies of the insert come before them)
K=$(awk '/^\.visible \.entry/ {f=1} f {print}' "$W/inst.ptx")
check "no context buffer in the kernels" 0 "$(grep -c '__gp_ctx' <<<"$K")"
check "no probe frame in local memory" 0 "$(grep -cE '(st|ld)\.local.*_stack' <<<"$K")"
check "no generic lookup (descriptor loads)" 0 "$(grep -cE 'map_lookup_elem|ld\.global\.nc\.u32' <<<"$K")"
check "the insert by value (one call a site)" "$sites" "$(grep -c 'call\.uni.*__gp_m_map_update_kv' <<<"$K")"
check "no update through frame pointers" 0 "$(grep -c 'call\.uni.*__gp_m_map_update_elem,' <<<"$K")"
check "no lane grouping" 0 "$(grep -c 'match\.any\.sync' <<<"$K")"
# one red a site, by the lowest active lane for all of them: the element's address is loaded from
# the table, so ptxas cannot see it is the same in every lane and would leave a red per lane at
# one address (zoom-cuda 20x native, H100, 2026-11-26)
check "one red a site" "$sites" "$(grep -cE 'red\.global\.add\.u64' <<<"$K")"
check "by the active lanes' count" "$sites" "$(grep -cE 'popc\.b32' <<<"$K")"
# each lookup reads its site cache first (the bucket it found its key in last), a plain load the
# L1 serves; then, missing, searches the table (ld.acquire, CCTL.IVALL) and writes the cache:
# zoom-cuda 5x native without it, 2.1x with it (H100, 2026-11-26)
check "a cache word read per lookup" "$((2 * sites))" "$(grep -cE 'ld\.global\.u64[[:space:]]*%[A-Za-z0-9_]*, \[__gp_m_hc[0-9]+\]' <<<"$K")"
check "and written after a search" "$((2 * sites))" "$(grep -cE 'st\.global\.u64[[:space:]]*\[__gp_m_hc[0-9]+\]' <<<"$K")"
GPUPROBE_HASH_CACHE=0 "$GP" ptx instrument --sms 132 -p "$W/count.bpf.o" "$W/transpose.ptx" -o "$W/nocache.ptx" 2>/dev/null
check "GPUPROBE_HASH_CACHE=0: no cache" 0 "$(grep -c '__gp_m_hc' "$W/nocache.ptx")"
# a program that deletes could empty a bucket and give it to another key: no cache then
sed 's|^char LICENSE|SEC("gpu/exit/never_a_kernel") int on_never(struct gp_kernel_ctx *ctx) { __u32 k = 0; bpf_map_delete_elem(\&enter, \&k); return 0; }\nchar LICENSE|' \
	"$W/count.bpf.c" >"$W/deletes.bpf.c"
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" -c "$W/deletes.bpf.c" -o "$W/deletes.bpf.o" || exit 2
"$GP" ptx instrument --sms 132 -p "$W/deletes.bpf.o" "$W/transpose.ptx" -o "$W/deletes.ptx" 2>"$W/deletes.err"
check "deleting object: instrumented" 0 $?
check "deleting object: no cache" 0 "$(grep -c '__gp_m_hc' "$W/deletes.ptx")"
# two objects counting in one module: each lookup its own word (the tools' insns and a user's
# probe side by side: ptxas said "Duplicate definition of variable '__gp_m_hc0'", H100, 2026-11-26)
cp "$W/count.bpf.o" "$W/count2.bpf.o"
"$GP" ptx instrument --sms 132 -p "$W/count.bpf.o" -p "$W/count2.bpf.o" "$W/transpose.ptx" -o "$W/two.ptx" 2>/dev/null
check "two objects: instrumented" 0 $?
check "two objects: one word per lookup" "$((4 * sites))" "$(grep -cE '^\.global \.align 8 \.u64[[:space:]]*__gp_m_hc[0-9]+;' "$W/two.ptx")"
check "two objects: every word its own" "$((4 * sites))" "$(grep -oE '^\.global \.align 8 \.u64[[:space:]]*__gp_m_hc[0-9]+;' "$W/two.ptx" | sort -u | wc -l)"
"$PTXAS" -arch=sm_90 "$W/two.ptx" -o "$W/two.cubin"
check "two objects: ptxas sm_90" 0 $?
"$PTXAS" -arch=sm_90 -v "$W/inst.ptx" -o "$W/inst.cubin" 2>"$W/inst.txt"
check "ptxas sm_90" 0 $?
# each kernel's frame: its own, plus at most the insert body's 16-byte buffer (a cold call's
# frame sits on the caller's stack); 160 bytes a thread before
frame() { grep -A1 "Function properties for $2\$" "$1" | grep -o '[0-9]* bytes stack frame' | grep -o '^[0-9]*'; }
for k in $(grep -o '^\.visible \.entry [A-Za-z0-9_]*' "$W/transpose.ptx" | awk '{print $3}'); do
	o=$(frame "$W/orig.txt" "$k") n=$(frame "$W/inst.txt" "$k")
	[ -n "$o" ] && [ -n "$n" ] && [ "$n" -le $((o + 16)) ] && echo "ok   $k: frame $o -> $n bytes" ||
		{ echo "FAIL $k: frame ${o:-?} -> ${n:-?} bytes"; fail=1; }
done
exit $fail
