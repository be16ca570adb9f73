#!/usr/bin/env bash
# trace_replay.pocl: a lossless memory trace of warp records (replay.bpf.c), captured from
# patterns.cu (nvcc) on gpuprobe's own driver over PoCL, replayed by check.py against the
# addresses the program computes: coalesced, strided, random and shared-memory bank patterns,
# exactly one record per warp access, each lane's address exact, nothing lost. The shim prints
# the records itself (GPUPROBE_JSON): the trace needs no `gpuprobe run`.
# usage: pocl_test.sh BUILD_DIR WORK_DIR      exit 77 (SKIP) without nvcc, clang or OpenCL
set -uo pipefail
build=$(cd "$1" && pwd) work=$2
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
clang=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
[ -n "$clang" ] || { echo "SKIP: no clang for the probe"; exit 77; }
command -v clinfo >/dev/null && ! clinfo -l 2>/dev/null | grep -q . && { echo "SKIP: no OpenCL device"; exit 77; }
mkdir -p "$work"
"$nvcc" -O2 -arch=sm_75 -o "$work/patterns" "$here/patterns.cu" || { echo "FAIL: nvcc patterns.cu"; exit 1; }
"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$here/../../include" \
	-c "$here/replay.bpf.c" -o "$work/replay.bpf.o" || { echo "FAIL: the probe does not build"; exit 1; }
rm -f "$work/trace.json"
env GPUPROBE_BACKEND=opencl GPUPROBE_PROBES="$work/replay.bpf.o" GPUPROBE_JSON="$work/trace.json" \
	LD_LIBRARY_PATH="$build/lib" timeout 600 "$work/patterns" >"$work/patterns.out" 2>"$work/patterns.err"
rc=$?
[ $rc = 0 ] && grep -q "PATTERNS done" "$work/patterns.out" || {
	echo "FAIL: patterns with the probe: exit $rc"; tail -5 "$work/patterns.err"; exit 1; }
python3 "$here/check.py" "$work/patterns.out" "$work/trace.json"
