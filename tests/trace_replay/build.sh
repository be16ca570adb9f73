#!/bin/bash
# tests/gpu/trace_replay.sh's inputs, built on the build machine (the GPU machine has no clang):
# patterns (nvcc, SASS and PTX for sm_90), replay.bpf.o, check.py, and cuda-samples' vectorAdd
# with its probe (vectoradd.bpf.o: a lossless warp-record trace of every global access and the
# kernel's pointer arguments). usage: build.sh OUTDIR [CUDA_SAMPLES_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$1
samples=${2:-$root/../shared/corpora/cuda-samples}
[ -d "$samples" ] || samples=/work/shared/corpora/cuda-samples
mkdir -p "$out"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
clang=$(command -v clang || command -v clang-14)
"$nvcc" -O2 -arch=sm_90 -o "$out/patterns" "$here/patterns.cu"
bpf() { "$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" "$@"; }
bpf -c "$here/replay.bpf.c" -o "$out/replay.bpf.o"
bpf -c "$here/vectoradd.bpf.c" -o "$out/vectoradd.bpf.o"
cp "$here/check.py" "$out/"
if [ -f "$samples/samples/vectorAdd/vectorAdd.cu" ]; then
	"$nvcc" -O2 -std=c++17 -arch=sm_90 -I"$samples/Common" -o "$out/vectorAdd" \
		"$samples/samples/vectorAdd/vectorAdd.cu"
else
	echo "trace_replay/build.sh: no cuda-samples at $samples: trace_replay.sh skips vectorAdd"
fi
echo "trace_replay/build.sh: $(ls "$out" | paste -sd' ')"
