#!/usr/bin/env bash
# Regenerate the small real fatbins under fuzz-seeds/fatbin/ (committed; used by the unit test,
# the fuzzer's seed corpus and the list/fatbin golden tests). Needs nvcc (CUDA 13).
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
out=fuzz-seeds/fatbin
mkdir -p "$out"
"$NVCC" -fatbin -arch=sm_75 -o $out/tiny_default.fatbin src/tiny.cu
"$NVCC" -fatbin -arch=sm_80 -compress-mode=speed -o $out/tiny_speed.fatbin src/tiny.cu
"$NVCC" -fatbin -arch=sm_90 -compress-mode=size -o $out/tiny_size.fatbin src/tiny.cu
"$NVCC" -fatbin -arch=sm_90 -compress-mode=none -o $out/tiny_none.fatbin src/tiny.cu
"$NVCC" -fatbin -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100,code=compute_100 \
	-o $out/tiny_multi.fatbin src/tiny.cu
"$NVCC" -c -arch=sm_75 -o $out/tiny_object.o src/tiny.cu
"$NVCC" -c -rdc=true -arch=sm_75 -o $out/tiny_rdc.o src/tiny.cu
"$NVCC" -c -rdc=true -gencode arch=compute_90,code=lto_90 -o $out/tiny_lto.o src/tiny.cu
"$NVCC" -cubin -arch=sm_75 -o $out/tiny_sm75.cubin src/tiny.cu
rm -f $out/tiny_lib.a
ar rcS $out/tiny_lib.a $out/tiny_object.o $out/tiny_rdc.o   # no symbol index: deterministic and small
