#!/usr/bin/env bash
# GPUPROBE_BACKEND=levelzero where no Level Zero driver is installed (Debian: the loader at most):
# one line says why, cuInit fails with CUDA_ERROR_NO_DEVICE, the application gets an error code
# and ends normally (vectorAdd, built as samples.tsv says, reports cudaMalloc's error).
# usage: levelzero.sh BUILD_DIR CORPUS_DIR WORK_DIR
set -uo pipefail
build=$(cd "$1" && pwd) corpus=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/asan_preload.sh"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
[ -f "$corpus/samples.tsv" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
python3 "$here/corpus.py" --shim-dir "$build/lib" --work "$work" --corpus "$corpus" --nvcc "$nvcc" \
	--only vectorAdd >/dev/null 2>&1
[ -x "$work/vectorAdd/vectorAdd" ] || { echo "FAIL: vectorAdd not built"; exit 1; }
out=$(cd "$work/vectorAdd" && env $(own_driver_asan_env "$build/lib") GPUPROBE_BACKEND=levelzero LD_LIBRARY_PATH="$build/lib" timeout 60 ./vectorAdd 2>&1)
rc=$?
lines=$(grep -c "^gpuprobe: GPUPROBE_BACKEND=levelzero: " <<<"$out")
if [ "$rc" -ge 124 ] || [ "$rc" -eq 0 ]; then
	echo "FAIL: vectorAdd exited $rc (expected its own error exit)"; echo "$out"; exit 1
fi
if [ "$lines" != 1 ] || ! grep -q "Failed to allocate device vector A" <<<"$out"; then
	echo "FAIL: expected one gpuprobe line and the application's error:"; echo "$out"; exit 1
fi
echo "PASS: $(grep '^gpuprobe: GPUPROBE_BACKEND' <<<"$out"); vectorAdd: $(grep -m1 Failed <<<"$out")"
