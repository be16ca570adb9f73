#!/usr/bin/env bash
# trace_replay.pocl: a lossless memory trace of warp records (replay.bpf.c), captured from
# patterns.cu (nvcc) on gpuprobe's own driver over PoCL, replayed by check.py against the
# addresses the program computes: coalesced, strided, random and shared-memory bank patterns,
# exactly one record per warp access, each lane's address exact, nothing lost. Once with the
# shim printing the records itself (GPUPROBE_JSON), once through `gpuprobe run --json` with 16
# times the accesses (the lossless ring waits for the copier many times over).
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
python3 "$here/check.py" "$work/patterns.out" "$work/trace.json" || exit 1
# The same through `gpuprobe run --json` (the shim's copier drains the rings into gpuprobe run's
# segment) with 16 times the accesses: the lossless ring fills many times over, and its
# producers wait for the drainer. The copier's snapshot of the maps read the rings' drop counts
# from device memory on the application's in-order queue, behind the kernel that waited for it:
# no drain for 2 s, the producers gave up, 9069 of 18432 records lost (before the snapshots got
# a thread of their own).
rm -f "$work/run.json"
env GPUPROBE_BACKEND=opencl LD_LIBRARY_PATH="$build/lib" timeout 600 "$build/bin/gpuprobe" run \
	--json "$work/run.json" -p "$work/replay.bpf.o" -- "$work/patterns" 65536 \
	>"$work/run.out" 2>"$work/run.err"
rc=$?
[ $rc = 0 ] && grep -q "PATTERNS done" "$work/run.out" || {
	echo "FAIL: gpuprobe run --json patterns 65536: exit $rc"; tail -5 "$work/run.err"; exit 1; }
python3 "$here/check.py" "$work/run.out" "$work/run.json"
