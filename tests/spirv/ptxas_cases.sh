#!/bin/bash
# spirv_cases_ptxas: every conformance case's PTX (spirv_conformance --dump writes each passing
# case's module as the runner builds it) is accepted by NVIDIA's ptxas for sm_90, so that the
# GPU run of the same cases (tests/gpu/spirv.sh, backend cuda) loads them all. A case whose PTX
# only our frontend takes (mem_region_tile's shared array named like its kernel: error 218 on the
# H100, 2026-11-26) fails here, without a GPU.
# usage: ptxas_cases.sh SPIRV_CONFORMANCE CASES_DIR WORK_DIR   exit 77 without ptxas
set -u
bin=$1 cases=$2 work=$3
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
[ -x "$ptxas" ] || { echo "SKIP: no ptxas at $ptxas"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
"$bin" --dump "$work" "$cases" >"$work/conformance.log" 2>&1
n=$(ls "$work"/*.ptx 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || { echo "SKIP: the runner wrote no PTX (no OpenCL device?)"; tail -3 "$work/conformance.log"; exit 77; }
fail=0
for p in "$work"/*.ptx; do
	if ! "$ptxas" -arch=sm_90 "$p" -o "${p%.ptx}.cubin" >"${p%.ptx}.err" 2>&1; then
		echo "FAIL $(basename "$p" .ptx): $(head -2 "${p%.ptx}.err" | tr '\n' ' ')"
		fail=1
	fi
done
[ $fail = 0 ] && echo "ok: ptxas -arch=sm_90 takes all $n cases' PTX"
exit $fail
