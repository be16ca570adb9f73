#!/bin/bash
# Kernels per launch on PoCL: our SPIR-V of nvcc's PTX against the same kernel written in OpenCL
# C (issue 14's ratio): cuda-samples' vectorAdd (vecadd.cl), a sum reduction that ends in warp
# shuffles (reduce.cu; reduce.cl ends its shared-memory tree with barriers instead), and
# matrixMul's GEMM (BLOCK_SIZE 32, the sample's 320x320 by 640x320; matrixmul.cl as it is and
# with its k loop unrolled as nvcc unrolls it). Rounds interleave the variants so they share the
# load; each line ends with a checksum of the buffers, equal for the two builds of a kernel.
#   run.sh BUILD_DIR [GPUPROBE_FOR_BEFORE] [ROUNDS]
# GPUPROBE_FOR_BEFORE: another build's gpuprobe (e.g. of the commit before a lowering change),
# whose SPIR-V of the GEMM is timed too. Needs nvcc and ../shared/corpora/cuda-samples.
set -eu
build=$1 before=${2:-} rounds=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${GPUPROBE_SAMPLES_CORPUS:-$here/../../../shared/corpora/cuda-samples}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -O2 -std=c++17 -arch=sm_90 -I"$corpus/Common" -ptx "$corpus/samples/matrixMul/matrixMul.cu" -o "$tmp/mm.ptx"
"$nvcc" -O2 -arch=sm_90 -I"$corpus/Common" -ptx "$corpus/samples/vectorAdd/vectorAdd.cu" -o "$tmp/vecadd.ptx"
"$nvcc" -O2 -arch=sm_90 -ptx "$here/reduce.cu" -o "$tmp/reduce.ptx"
for m in mm vecadd reduce; do "$build/bin/gpuprobe" ptx spirv "$tmp/$m.ptx" -o "$tmp/$m.spv"; done
[ -n "$before" ] && "$before" ptx spirv "$tmp/mm.ptx" -o "$tmp/before.spv"
sed 's/for (int k = 0; k < BS; ++k)/_Pragma("unroll") for (int k = 0; k < BS; ++k)/' "$here/matrixmul.cl" >"$tmp/unrolled.cl"
n=$((1 << 22))
va="16384,1,1 256,1,1 10 buf:$((4 * n)) buf:$((4 * n)) buf:$((4 * n)) i32:$n"
ra="8192,1,1 256,1,1 10 buf:$((4 * n)) buf:$((4 * 8192)) i32:$n"
args="20,10,1 32,32,1 10 buf:819200 buf:409600 buf:819200 i32:320 i32:640"
k=_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii
t() { "$build/bin/kernel_time" "$@" | sed "s|$tmp/||; s|$here/||"; }
for r in $(seq "$rounds"); do
	t "$tmp/vecadd.spv" _Z9vectorAddPKfS0_Pfi $va
	t "$here/vecadd.cl" vec_add $va
	t "$tmp/reduce.spv" reduce $ra
	t "$here/reduce.cl" reduce $ra
	[ -n "$before" ] && t "$tmp/before.spv" $k $args
	t "$tmp/mm.spv" $k $args
	t "$here/matrixmul.cl" mm_ulong $args
	t "$tmp/unrolled.cl" mm_ulong $args
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
