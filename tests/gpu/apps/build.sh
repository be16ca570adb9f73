#!/usr/bin/env bash
# Build the shim's GPU test apps with nvcc (works without a GPU): build.sh OUTDIR
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
out=$1
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out"
# -arch=sm_90 embeds SASS and PTX: the modules carry PTX, as instrumentation needs.
"$NVCC" -O2 -arch=sm_90 -o "$out/rt_app" "$src/rt_app.cu"
"$NVCC" -O2 -arch=sm_90 -o "$out/multi_gpu" "$src/multi_gpu.cu"
"$NVCC" -g -G -arch=sm_90 -o "$out/dbg_app" "$src/dbg_app.cu"
"$NVCC" -ptx -arch=sm_90 -o "$out/drv_kernels.ptx" "$src/drv_kernels.cu"
cc -O2 -Wall -o "$out/drv_app" "$src/drv_app.c" -I/usr/local/cuda/include \
  -L/usr/local/cuda/lib64/stubs -lcuda
cp "$src/mlp.py" "$out/"
echo "build.sh: apps in $out"
