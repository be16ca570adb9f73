#!/bin/bash
# CUB's DeviceRadixSortOnesweepKernel (cuda-samples' radixSortThrust, u32 keys and values, nvcc's
# sm_90 PTX) alone on the own driver: one pass over 20,000 keys in 4 tiles, every key and value
# where a stable counting sort puts it (onesweep_probe/harness.c). Under PoCL's loopvec method its
# ranks came out wrong (18,298 of 26,112) and the sample died of signal 11; the runtime now asks
# PoCL for its loops method (spirv/README.md). About 2.5 minutes on one core (PoCL's build of a
# kernel that runs in lock step).
# usage: onesweep.sh BUILD_DIR WORK_DIR   (SKIP without the cuda-samples corpus, nvcc or OpenCL)
set -u
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
corpus=${GPUPROBE_SAMPLES_CORPUS:-$here/../../../shared/corpora/cuda-samples}
[ -d /work/shared/corpora/cuda-samples ] && [ ! -d "$corpus" ] && corpus=/work/shared/corpora/cuda-samples
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
src=$corpus/samples/radixSortThrust/radixSortThrust.cu
[ -f "$src" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
mkdir -p "$work"
"$nvcc" -O2 -std=c++17 -arch=sm_90 -I"$corpus/Common" -ptx "$src" -o "$work/rs.ptx" || { echo "FAIL: nvcc"; exit 1; }
python3 "$here/onesweep_probe/extract.py" "$work/rs.ptx" "$work/onesweep.ptx" \
	'DeviceRadixSortOnesweepKernelINS1_5radix10policy_hubIjjyE' || exit 1
gcc -O1 -o "$work/harness" "$here/onesweep_probe/harness.c" -I/usr/local/cuda/include -L"$build/lib" -lcuda \
	-Wl,-rpath,"$build/lib" || { echo "FAIL: harness build"; exit 1; }
cd "$work" || exit 1
unset POCL_WORK_GROUP_METHOD
out=$(GPUPROBE_BACKEND=opencl ./harness onesweep.ptx 20000 1 2>&1)
rc=$?
echo "$out" | tail -5
if [ $rc = 0 ] && echo "$out" | grep -qx '0 wrong of 20000'; then
	echo "PASS: the onesweep pass sorted 20000 keys and values right"
	exit 0
fi
echo "FAIL: exit $rc; expected '0 wrong of 20000'"
exit 1
