#!/bin/bash
# The overhead benchmark (bench/overhead/run.sh) on the GPU machine: builds nothing (the build is
# made on the build machine by bench/overhead/build.sh or tests/gpu/prepare.sh and carried), logs
# and table into $OUT ($OUT/bench-full.log: every log of the run in one file).
# Quick mode by default (OVH_QUICK=1: vector add + SGEMM, the main probes, about 60 s on the
# H200, within the run-all budget of 150 s); BENCH_FULL=1 runs everything (several minutes).
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
[ "${BENCH_FULL:-0}" = 1 ] || export OVH_QUICK=${OVH_QUICK:-1}
start=$(date +%s)
bash "$root/bench/overhead/run.sh" "$BUILD" >"$OUT/bench-run.txt" 2>&1
rc=$?
# every log in one file, each under its name
for f in "$OUT"/device.txt "$OUT"/date.txt "$OUT"/runs.txt "$OUT"/*.out "$OUT"/*.err "$OUT"/first.txt "$OUT"/bench-run.txt; do
	[ -f "$f" ] && { echo "=== $(basename "$f")"; cat "$f"; }
done >"$OUT/bench-full.log"
verdict="PASS: bench table in $OUT/table.txt, full log $OUT/bench-full.log ($(($(date +%s) - start)) s)"
if [ $rc -ne 0 ]; then
	verdict="FAIL: bench/overhead/run.sh exited $rc"
elif ! grep -q "^== targets" "$OUT/table.txt" 2>/dev/null; then
	verdict="FAIL: no table"
elif grep -q "exact: NO" "$OUT/table.txt"; then
	verdict="FAIL: ring buffer delivered + lost != accesses made"
fi
grep -h "rc=" "$OUT/runs.txt" 2>/dev/null
echo "$verdict"
# the ratio table last
cat "$OUT/table.txt" 2>/dev/null
case $verdict in PASS*) exit 0 ;; *) exit 1 ;; esac
