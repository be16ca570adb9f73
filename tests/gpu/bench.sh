#!/bin/bash
# The overhead benchmark (bench/overhead/run.sh) on the GPU machine: builds nothing (the build is
# made on the build machine by bench/overhead/build.sh or tests/gpu/prepare.sh and carried), logs
# and table into $OUT.
# Fails when the run's table is missing or the ring buffer's delivered + lost != accesses made.
# Exit 77 without a GPU or without the build.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
# BENCH_BUILD, else ./build (tests/gpu/prepare.sh), else build-bench
BUILD=${BENCH_BUILD:-}
if [ -z "$BUILD" ]; then
	BUILD=$root/build
	[ -x "$BUILD/overhead/ovh" ] || BUILD=$root/build-bench
fi
OUT=${OUT:-$(mktemp -d)}
export OUT
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
if [ ! -x "$BUILD/overhead/ovh" ]; then
	echo "SKIP: $BUILD/overhead/ovh missing (run bench/overhead/build.sh $BUILD first)"
	exit 77
fi
bash "$root/bench/overhead/run.sh" "$BUILD" || exit 1
grep -q "^== targets" "$OUT/table.txt" || { echo "FAIL: no table"; exit 1; }
if grep -q "exact: NO" "$OUT/table.txt"; then
	echo "FAIL: ring buffer delivered + lost != accesses made"
	exit 1
fi
echo "PASS: bench table in $OUT/table.txt"
