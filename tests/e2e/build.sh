#!/bin/bash
# Builds what the end-to-end GPU test (tests/gpu/e2e.sh) and the examples carry to the GPU
# machine (which has no clang and no libbpf): probe objects, CUDA apps (nvcc -arch=sm_90, PTX
# included) and the shared libraries the shim needs, into BUILD/e2e and BUILD/lib.
# usage: tests/e2e/build.sh BUILD_DIR
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
out=$build/e2e
mkdir -p "$out"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
for p in "$src"/tests/e2e/probes/*.bpf.c; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
		-c "$p" -o "$out/$(basename "$p" .c).o"
done
# the entry+exit HASH counter (first_kernel.sh's): reconverge.sh runs warp_whole under it
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/gpu/first_kernel/entry_exit.bpf.c" -o "$out/entry_exit_hash.bpf.o"
# a basic-block counter (HASH by kernel, ARRAY of blocks): aggregate.sh compares deferred sites
# with a call per block on the GPU
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/own_driver/bb_count.bpf.c" -o "$out/bb_count.bpf.o"
NVCC=/usr/local/cuda/bin/nvcc
"$NVCC" -arch=sm_90 -o "$out/pattern" "$src/tests/e2e/apps/pattern.cu"
"$NVCC" -arch=sm_90 -o "$out/cub_algos" "$src/tests/e2e/apps/cub_algos.cu"
"$NVCC" -arch=sm_90 -o "$out/transpose" "$src/tests/e2e/apps/transpose.cu"
"$NVCC" -arch=sm_90 -o "$out/warp_whole" "$src/tests/e2e/apps/warp_whole.cu"
cp "$src/tests/e2e/apps/cupy_kernel.py" "$out/"
# aggregated memory sites on the GPU (tests/gpu/aggregate.sh): a driver-API launcher of block.ptx
cc -O1 -o "$out/ptx_launch" "$src/tests/e2e/aggregate/ptx_launch.c" -ldl
cp "$src/tests/e2e/aggregate/block.ptx" "$out/aggregate_block.ptx"
for l in libbpf.so.1 libjson-c.so.5 libyaml-0.so.2; do
	cp -L "/usr/lib/x86_64-linux-gnu/$l" "$build/lib/" 2>/dev/null || cp -L "/lib/x86_64-linux-gnu/$l" "$build/lib/"
done
