#!/bin/bash
# matrixMul's GEMM (cuda-samples, BLOCK_SIZE 32, the sample's 320x320 by 640x320) per launch on
# PoCL: our SPIR-V of nvcc's PTX, and the same GEMM in OpenCL C (matrixmul.cl) as it is and with
# its k loop unrolled as nvcc unrolls it. Rounds interleave the variants so they share the load.
#   run.sh BUILD_DIR [GPUPROBE_FOR_BEFORE] [ROUNDS]
# GPUPROBE_FOR_BEFORE: another build's gpuprobe (e.g. of the commit before a lowering change),
# whose SPIR-V is timed too. Needs nvcc and ../shared/corpora/cuda-samples.
set -eu
build=$1 before=${2:-} rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${GPUPROBE_SAMPLES_CORPUS:-$here/../../../shared/corpora/cuda-samples}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -O2 -std=c++17 -arch=sm_90 -I"$corpus/Common" -ptx "$corpus/samples/matrixMul/matrixMul.cu" -o "$tmp/mm.ptx"
"$build/bin/gpuprobe" ptx spirv "$tmp/mm.ptx" -o "$tmp/after.spv"
[ -n "$before" ] && "$before" ptx spirv "$tmp/mm.ptx" -o "$tmp/before.spv"
sed 's/for (int k = 0; k < BS; ++k)/_Pragma("unroll") for (int k = 0; k < BS; ++k)/' "$here/matrixmul.cl" >"$tmp/unrolled.cl"
args="20,10,1 32,32,1 10 buf:819200 buf:409600 buf:819200 i32:320 i32:640"
k=_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii
for r in $(seq "$rounds"); do
	[ -n "$before" ] && "$build/bin/kernel_time" "$tmp/before.spv" $k $args | sed "s|$tmp/||"
	"$build/bin/kernel_time" "$tmp/after.spv" $k $args | sed "s|$tmp/||"
	"$build/bin/kernel_time" "$here/matrixmul.cl" mm_ulong $args | sed "s|$here/||"
	"$build/bin/kernel_time" "$tmp/unrolled.cl" mm_ulong $args | sed "s|$tmp/||"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
