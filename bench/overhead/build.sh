#!/bin/bash
# Builds what bench/overhead/run.sh needs into BUILD (default build-bench), on a machine without
# a GPU: gpuprobe (cmake), the workloads (nvcc -arch=sm_90: SASS and PTX), the probes
# (clang -target bpf), and copies of the libraries the GPU machine lacks into BUILD/lib.
# usage: bench/overhead/build.sh [BUILD]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(realpath -m "${1:-$root/build-bench}")
cmake -S "$root" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" --target gpuprobe shim gpuprobe-audit -j2 >/dev/null
mkdir -p "$B/overhead/probes" "$B/lib"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
"$NVCC" -O3 -arch=sm_90 -o "$B/overhead/ovh" "$root/bench/overhead/ovh.cu"
"$NVCC" -O3 -arch=sm_90 -DOVH_HAND -o "$B/overhead/ovh_hand" "$root/bench/overhead/ovh.cu"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
for p in "$root"/bench/overhead/probes/*.bpf.c; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" -c "$p" \
		-o "$B/overhead/probes/$(basename "$p" .c).o"
done
for l in libbpf.so.1 libjson-c.so.5 libyaml-0.so.2; do
	cp -L "/usr/lib/x86_64-linux-gnu/$l" "$B/lib/"
done
du -sh "$B"   # carried to the GPU machine: must stay well under 64 MiB
echo "built $B"
