#!/bin/bash
# tests/gpu/capture.sh's inputs, built here (the GPU machine has no clang): cap_app (nvcc) and the
# memory-trace probes, lossy and lossless (the same source; -DLOSSLESS sets the ring's map_flags
# to GP_RINGBUF_LOSSLESS, include/gpuprobe/warp.h). usage: build.sh OUTDIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$1
mkdir -p "$out"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
clang=$(command -v clang || command -v clang-14)
"$nvcc" -O2 -arch=sm_90 -o "$out/cap_app" "$here/cap_app.cu"
bpf() { "$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" "$@"; }
bpf -c "$here/memtrace_lossy.bpf.c" -o "$out/memtrace_lossy.bpf.o"
bpf -DLOSSLESS='(1U << 28)' -c "$here/memtrace_lossy.bpf.c" -o "$out/memtrace_lossless.bpf.o"
echo "capture/build.sh: $(ls "$out" | paste -sd' ')"
