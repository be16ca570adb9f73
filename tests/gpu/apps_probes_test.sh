#!/bin/bash
# ctest of tests/gpu/apps.sh's four corpus probes without a GPU: each builds with clang, passes
# `gpuprobe verify`, and instruments nvcc's PTX of a small kernel file (a loop, so several basic
# blocks; loads, stores and an atomic) into PTX that ptxas compiles for sm_90 (132 SMs: the sharded
# and per-SM forms). usage: tests/gpu/apps_probes_test.sh BUILD
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath "${1:-$root/build}")
GP=$BUILD/bin/gpuprobe
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
CUDA=${CUDA_ROOT:-/usr/local/cuda}
[ -x "$GP" ] || { echo "SKIP: no $GP"; exit 77; }
[ -n "$CLANG" ] && [ -x "$CUDA/bin/nvcc" ] && [ -x "$CUDA/bin/ptxas" ] || { echo "SKIP: needs clang, nvcc and ptxas"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/k.cu" <<'CU'
__global__ void sum_rows(const float *a, float *out, unsigned *count, int n, int m)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float s = 0;
	for (int j = 0; j < m; j++)
		s += a[i * m + j];
	out[i] = s;
	if (s > 0)
		atomicAdd(count, 1u);
}
__global__ void scale(float *x, float f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= f;
}
CU
"$CUDA/bin/nvcc" -arch=sm_90 -ptx -o "$W/k.ptx" "$W/k.cu" || exit 1
fails=0
for p in "$root/../shared/corpora/app-regressions/probes/entry_exit_hash.bpf.c" \
	"$root/../shared/corpora/app-regressions/probes/memcount.bpf.c" \
	"$root/tests/gpu/apps_probes/bb_insns.bpf.c" "$root/tests/gpu/apps_probes/block_ring.bpf.c"; do
	n=$(basename "$p" .bpf.c)
	if [ ! -f "$p" ]; then echo "skip $n: no $p (the shared corpora)"; continue; fi
	if ! "$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$p" -o "$W/$n.bpf.o"; then
		echo "FAIL $n: clang"; fails=$((fails + 1)); continue
	fi
	v=$("$GP" verify "$W/$n.bpf.o" 2>&1) || { echo "FAIL $n: verify: $v"; fails=$((fails + 1)); continue; }
	if ! "$GP" ptx instrument --sms 132 -p "$W/$n.bpf.o" -o "$W/$n.ptx" "$W/k.ptx" 2>"$W/$n.err"; then
		echo "FAIL $n: instrument: $(cat "$W/$n.err")"; fails=$((fails + 1)); continue
	fi
	if ! "$CUDA/bin/ptxas" -arch=sm_90 -o "$W/$n.cubin" "$W/$n.ptx" 2>"$W/$n.ptxas"; then
		echo "FAIL $n: ptxas: $(head -5 "$W/$n.ptxas")"; fails=$((fails + 1)); continue
	fi
	echo "ok $n: $(echo "$v" | tr '\n' ';') $(wc -c <"$W/k.ptx") -> $(wc -c <"$W/$n.ptx") bytes of PTX, ptxas sm_90 ok"
done
[ $fails = 0 ] && echo "PASS: corpus probes" || { echo "FAIL: $fails probes"; exit 1; }
