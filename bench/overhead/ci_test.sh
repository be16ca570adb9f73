#!/bin/bash
# CI (no GPU) guard for what bench/overhead measured on the GPU: every probe of probes/ is
# spliced into the PTX of ovh.cu by `gpuprobe ptx instrument` and ptxas compiles it for sm_90;
#   - a probe that reads no context stores none (the empty probe: no st.local in k_vecadd; the
#     full context at every site made it 10x on the H200),
#   - fetch-less atomic adds of a constant through a constant-key array lookup are plain global
#     reds (ptxas aggregates them per warp; a hand-made ballot or match.any was slower),
#   - a constant-key lookup into an array is a direct address, not a helper call,
#   - the same module instrumented twice prints identical PTX (else the driver's JIT cache
#     misses on every run), with no bpf_puts function where no probe calls it.
# usage: ci_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
# The checks above the inlining block look at the probe functions themselves: calls kept.
export GPUPROBE_INLINE=0
# a call (or red) per access counted below: memory sites not merged (e2e.aggregate tests that)
export GPUPROBE_AGGREGATE=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
"$NVCC" -arch=sm_90 -ptx "$SRC/bench/overhead/ovh.cu" -o "$W/ovh.ptx" || exit 2
body() { awk -v n="$2" 'index($0, n "(") && /\.entry/ {f=1} f {print} f && /^}/ {exit}' "$1"; }
for p in empty blocktime perthread memcount contended memtrace; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
		-c "$SRC/bench/overhead/probes/$p.bpf.c" -o "$W/$p.bpf.o" || exit 2
	"$GP" ptx instrument -p "$W/$p.bpf.o" -o "$W/$p.ptx" "$W/ovh.ptx" 2>/dev/null
	check "$p instrument exit status" 0 $?
	"$PTXAS" -arch=sm_90 "$W/$p.ptx" -o "$W/$p.cubin"
	check "$p ptxas" 0 $?
	check "$p: no puts function" 0 "$(grep -c '__gp_m_puts_' "$W/$p.ptx")"
	"$GP" ptx instrument -p "$W/$p.bpf.o" -o "$W/$p.again.ptx" "$W/ovh.ptx" 2>/dev/null
	# (probes with maps: `ptx instrument` puts them in host memory, whose addresses vary)
	if [ "$p" = empty ]; then
		check "$p: the same PTX twice" same "$(cmp -s "$W/$p.ptx" "$W/$p.again.ptx" && echo same || echo differs)"
	fi
done
check "empty: context stores in k_vecadd" 0 "$(body "$W/empty.ptx" _Z8k_vecaddPKfS0_Pfi | grep -c 'st\.local')"
check "memcount: context stores in k_vecadd" 0 "$(body "$W/memcount.ptx" _Z8k_vecaddPKfS0_Pfi | grep -c 'st\.local.*__gp_ctx')"
check "memtrace: context stores in k_vecadd (addr, size, space/dir for 3 accesses)" 9 \
	"$(body "$W/memtrace.ptx" _Z8k_vecaddPKfS0_Pfi | grep -c 'st\.local.*__gp_ctx')"
# A constant-key lookup into an array is the same address in every lane of a warp (base + this
# SM's copy): a plain global red of the constant, which ptxas aggregates per warp itself (as
# nvcc's atomicAdd); no match.any, no multiply, no isspacep (a map value is never the stack).
probe() { awk -v n="$2" 'index($0, ") " n "(") == 1 {f=1} f {print} f && /^}/ {exit}' "$1"; }
check "memcount: one global red.add of 1 in the probe" 1 \
	"$(probe "$W/memcount.ptx" __gp_p0_0_on_access | grep -c 'red\.global\.add\.u64.*, 0x1;')"
check "contended: one global red.add of 1 in the probe" 1 \
	"$(probe "$W/contended.ptx" __gp_p0_0_on_entry | grep -c 'red\.global\.add\.u64.*, 0x1;')"
check "memcount: no match.any, mul, isspacep in the probe" 0 \
	"$(probe "$W/memcount.ptx" __gp_p0_0_on_access | grep -c 'match\.any\|mul\.lo\|isspacep')"
lookups() { grep -c 'call\.uni.*map_lookup_elem' "$W/$1.ptx"; }
check "memcount: constant-key array lookup as a direct address (no helper call)" 0 "$(lookups memcount)"
check "contended: constant-key array lookup as a direct address (no helper call)" 0 "$(lookups contended)"
check "perthread: per-thread map lookup through the helper" 1 "$(lookups perthread)"
check "blocktime: computed keys into an array as an address in place (no helper call)" 0 "$(lookups blocktime)"
# Inlining (ptx-frontend/inline.c, on by default): ptxas does not inline calls, so every access
# paid a call to the probe (the memory counter: 16.9x the hand-written counter on the H200). With
# it, no call of a generated function is left, the probe functions are dropped, ptxas compiles.
for p in empty blocktime perthread memcount contended memtrace; do
	GPUPROBE_INLINE=1 "$GP" ptx instrument -p "$W/$p.bpf.o" -o "$W/$p.inl.ptx" "$W/ovh.ptx" 2>/dev/null
	check "$p inlined: instrument exit status" 0 $?
	"$PTXAS" -arch=sm_90 "$W/$p.inl.ptx" -o "$W/$p.inl.cubin"
	check "$p inlined: ptxas" 0 $?
	check "$p inlined: calls of generated functions left" 0 "$(grep -c 'call.*__gp' "$W/$p.inl.ptx")"
	check "$p inlined: generated functions left" 0 "$(grep -c '^\.func.*__gp\|^) __gp' "$W/$p.inl.ptx")"
done
check "memcount inlined: one red.add per access in k_vecadd (3 accesses)" 3 \
	"$(body "$W/memcount.inl.ptx" _Z8k_vecaddPKfS0_Pfi | grep -c 'red\.global\.add\.u64')"
check "memcount inlined: the call blocks are gone from k_vecadd" 0 \
	"$(body "$W/memcount.inl.ptx" _Z8k_vecaddPKfS0_Pfi | grep -c 'st\.param\|ld\.param\.b64.*__gp')"
GPUPROBE_INLINE=0 "$GP" ptx instrument -p "$W/memcount.bpf.o" -o "$W/memcount.call.ptx" "$W/ovh.ptx" 2>/dev/null
check "memcount GPUPROBE_INLINE=0: a call per access (218 sites)" 218 \
	"$(grep -c 'call.*__gp_p0_0_on_access' "$W/memcount.call.ptx")"
exit $fail
