#!/bin/bash
# What PoCL makes of a barrier loop with reg+imm shared addresses (cases/mem_region_tile.case):
# how many per-thread pointers it keeps in context arrays across the barrier. lower_region.c's
# token keeps those additions inside the region after the barrier, so only the registers' own
# pointers cross it (2 arrays in the kernel function here); without it LICM
# hoisted all 16 addresses and PoCL kept 18 arrays, the cause of matrixMul's 3x slowdown against
# OpenCL C (bench/RESULTS.md). The case's results are checked by the same run.
#   region_context.sh SPIRV_CONFORMANCE CASE
set -u
conf=$1 case=$2
command -v llvm-dis-15 >/dev/null || { echo "SKIP: no llvm-dis-15 to read PoCL's output"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a private kernel cache, kept with PoCL's intermediate files
if ! POCL_CACHE_DIR=$tmp POCL_LEAVE_KERNEL_COMPILER_TEMP_FILES=1 "$conf" "$case" >"$tmp/out" 2>&1; then
	if grep -q "^SKIP" "$tmp/out"; then cat "$tmp/out"; exit 77; fi
	cat "$tmp/out"
	exit 1
fi
bc=$(find "$tmp" -name parallel.bc | head -1)
if [ -z "$bc" ]; then
	grep -q "pthread\|cpu" "$tmp/out" && { echo "FAIL: PoCL left no parallel.bc"; exit 1; }
	echo "SKIP: not PoCL's CPU device"; exit 77
fi
n=$(llvm-dis-15 "$bc" -o - | grep "\.pocl_context\.i = alloca" | grep -c "ptr addrspace(3)")
echo "shared-memory pointers in PoCL's context arrays: $n (at most 4 expected)"
[ "$n" -le 4 ] || { echo "FAIL: reg+imm shared addresses are hoisted across the barrier again"; exit 1; }
echo PASS
