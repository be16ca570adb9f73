#!/usr/bin/env bash
# gpuprobe's own driver on PoCL: an nvcc-built program (static CUDA runtime) whose fatbin holds
# sm_90 machine code and PTX for compute_120 only, as libraries such as cuRAND ship theirs: the
# newer PTX runs (there is none at or below the compute capability the own driver reports); and
# thread block clusters: one-block clusters run, bigger ones get 0 from
# cudaOccupancyMaxActiveClusters and cudaErrorInvalidClusterSize from the launch, with one line.
# usage: clusters.sh BUILD_DIR WORK_DIR
set -uo pipefail
build=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/asan_preload.sh"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
mkdir -p "$work"
"$nvcc" -O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_120,code=compute_120 \
	"$here/clusters.cu" -o "$work/clusters" >"$work/build.log" 2>&1 || { echo "FAIL: nvcc"; cat "$work/build.log"; exit 1; }
(cd "$work" && env $(own_driver_asan_env "$build/lib") GPUPROBE_BACKEND=opencl LD_LIBRARY_PATH="$build/lib" \
	timeout 120 ./clusters >out 2>err)
rc=$?
expected='launch: cudaSuccess
scale: 0 of 1000 wrong
clusters of 1: occupancy cudaSuccess, some
clusters of 1: launch cudaSuccess
clusters of 2: occupancy cudaSuccess, none
clusters of 2: launch cudaErrorInvalidClusterSize
sync: cudaSuccess'
fail=0
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; fail=1; }
[ "$(cat "$work/out")" = "$expected" ] || { echo "FAIL: output differs:"; diff <(echo "$expected") "$work/out"; fail=1; }
line='gpuprobe: own driver: launch of _Z5scalePiii with clusters of 2 blocks refused: clusters of more than one block (thread block clusters) are not supported'
[ "$(cat "$work/err")" = "$line" ] || { echo "FAIL: stderr is not the one line expected:"; cat "$work/err"; fail=1; }
[ $fail = 0 ] && echo "PASS: compute_120 PTX ran; clusters of 2 refused with one line"
exit $fail
