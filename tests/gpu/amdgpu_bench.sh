#!/bin/bash
# Speed of the LLVM path on the NVIDIA GPU (issue 15): vector add and SGEMM built by nvcc
# (tests/gpu/amdgpu_bench/*.cu, BUILD/amdgpu-bench from amdgpu_prepare.sh) run natively and with
# every module loaded from the PTX amdgpu/'s lowering made of them (the shim's GPUPROBE_LLVM_CACHE),
# alternately, ROUNDS times each, in this one call; the table gives the medians of the programs'
# median kernel times and their ratio (target <= 1.10) for bench/RESULTS.md.
# usage: BUILD=$PWD/build tests/gpu/amdgpu_bench.sh [CACHE]   env: ROUNDS=5
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$root/build}
cache=${1:-$B/llvm-cache}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
rounds=${ROUNDS:-5}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "amdgpu_bench.sh: SKIP: no NVIDIA GPU here"
	exit 77
fi
[ -x "$B/amdgpu-bench/vadd" ] && [ -d "$cache" ] ||
	{ echo "amdgpu_bench.sh: SKIP: run tests/gpu/amdgpu_prepare.sh on the build machine first"; exit 77; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rc=0
printf '| program | native ms | LLVM path ms | ratio |\n|---|---|---|---|\n' >"$out/amdgpu_bench.md"
for p in vadd sgemm; do
	: >"$out/$p.native" ; : >"$out/$p.llvm"
	for r in $(seq "$rounds"); do
		"$B/amdgpu-bench/$p" >>"$out/$p.native.log" 2>&1 || { echo "FAIL $p native"; rc=1; }
		LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} GPUPROBE_BACKEND=nvidia GPUPROBE_LLVM_CACHE=$cache GPUPROBE_LOG=1 \
			"$B/amdgpu-bench/$p" >>"$out/$p.llvm.log" 2>&1 || { echo "FAIL $p LLVM path"; rc=1; }
	done
	grep -o 'median_ms=[0-9.]*' "$out/$p.native.log" | cut -d= -f2 >"$out/$p.native"
	grep -o 'median_ms=[0-9.]*' "$out/$p.llvm.log" | cut -d= -f2 >"$out/$p.llvm"
	grep -q "LLVM path: loaded LLVM's PTX" "$out/$p.llvm.log" || { echo "FAIL $p: the LLVM path did not load LLVM's PTX"; grep "LLVM path" "$out/$p.llvm.log" | head -3; rc=1; }
	grep -q "errors=0" "$out/$p.llvm.log" && ! grep -q "errors=[1-9]" "$out/$p.llvm.log" || { echo "FAIL $p: wrong results on the LLVM path"; rc=1; }
	n=$(median <"$out/$p.native") l=$(median <"$out/$p.llvm")
	ratio=$(awk -v a="$l" -v b="$n" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')
	printf '| %s | %s | %s | %s |\n' "$p" "$n" "$l" "$ratio" >>"$out/amdgpu_bench.md"
done
echo "GPU: $gpu; $rounds rounds each, alternating; kernel times by CUDA events (median of each program's own median)"
cat "$out/amdgpu_bench.md"
exit $rc
