#!/bin/bash
# CI (no GPU) check of the memory trace's ring code as the real pipeline makes it: a vector add
# (nvcc -arch=sm_90 -ptx) instrumented with bench/overhead/probes/memtrace.bpf.c (a 16-byte
# bpf_ringbuf_output at each of its 3 global accesses) by `gpuprobe ptx instrument` (probes and
# helpers inlined into the sites). Each site reserves once per warp: its atomics on the ring's
# producer state (the CAS on head, the CAS claiming a reread of the host's position, the drop
# count) all lie in the leader's region, from the branch that sends the other lanes to the site's
# $L_bcast to that label; the position goes out by shfl.sync; one fence.acq_rel.sys publishes,
# no membar.sys. ptxas compiles it for sm_90 without spills. bench/overhead measured the per-lane
# CAS loop this replaced at 430x (16M vector add) and 205x (SGEMM) on the H200.
# usage: ring_site_ptx.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
cat >"$W/va.cu" <<'CU'
__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
CU
"$NVCC" -arch=sm_90 -ptx "$W/va.cu" -o "$W/va.ptx" || exit 2
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
	-c "$SRC/bench/overhead/probes/memtrace.bpf.c" -o "$W/memtrace.bpf.o" || exit 2
GPUPROBE_INLINE=1 "$GP" ptx instrument -p "$W/memtrace.bpf.o" -o "$W/va.inst.ptx" "$W/va.ptx" 2>"$W/instrument.err"
check "instrument exit status" 0 $?
"$PTXAS" -arch=sm_90 -v "$W/va.inst.ptx" -o "$W/va.cubin" 2>"$W/ptxas.txt"
check "ptxas sm_90" 0 $?
check "ptxas: no spills" "0 bytes spill stores, 0 bytes spill loads" \
	"$(grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads' "$W/ptxas.txt" | head -1)"
K=$(awk '/\.entry _Z4vadd/ {f=1} f {print} f && /^}/ {exit}' "$W/va.inst.ptx")
n() { grep -c -- "$1" <<<"$K"; }
check "calls left in the kernel" 0 "$(n 'call')"
check "sites (the ring's activemask, one per site)" 3 "$(n 'activemask\.b32[[:space:]]*%__gpi')"
# The probe branches, so its lanes reconverge after each site (ptx-frontend/instrument_site.c): the
# three sites share one basic block, so one capture of the mask and three bar.warp.syncs of it.
check "site mask captured once (same basic block)" 1 "$(n 'activemask\.b32[[:space:]]*%__gp_wm')"
check "lanes reconverged after each site" 3 "$(n 'bar\.warp\.sync[[:space:]]*%__gp_wm')"
check "lane ranks (lanemask_lt)" 3 "$(n '%lanemask_lt')"
check "groups: same ring, same record size (match.any)" 6 "$(n 'match\.any\.sync\.b64')"
check "positions handed out (shfl.sync.idx: offset; k and k1)" 6 "$(n 'shfl\.sync\.idx\.b32')"
check "atomics on the producer state: head + reread claim per site" 6 "$(n 'atom\.global\.cas\.b64')"
check "drop counts: one red.add per site" 3 "$(n 'red\.global\.add\.u64')"
check "release fences (one per site)" 3 "$(n 'fence\.acq_rel\.sys')"
check "membar.sys" 0 "$(n 'membar\.sys')"
# Every atom/red of the ring inside a leader region: the region opens at the branch on the
# rank != 0 predicate (%..p4) to the site's $L_bcast and closes at that label.
regions=$(awk '
	/@%[^ \t]*_p4 bra[ \t.a-z]*[^ \t]*\$L_bcast;/ { lead = 1; opened++; next }
	/\$L_bcast:/ { lead = 0; next }
	/(atom|red)\.global/ { if (lead) inside++; else outside++ }
	END { printf "%d regions, %d inside, %d outside", opened, inside, outside }' <<<"$K")
check "ring atomics in leader regions (6 cas, 3 red.max, 3 red.add)" "3 regions, 12 inside, 0 outside" "$regions"
exit $fail
