#!/bin/sh
# The GPU self-check module of lower_gpu_helpers must compile with ptxas (sm_75, sm_90), with one
# manifest line per thread (21 programs x 32 threads).
# usage: helpers_ptxas.sh LOWER_GPU_HELPERS PTXAS
set -u
gen=$1 ptxas=$2
if [ ! -x "$ptxas" ]; then echo "SKIP: no ptxas at $ptxas"; exit 77; fi
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
for sm in sm_75 sm_90; do
	"$gen" "$dir/h.ptx" "$dir/h.manifest" --target $sm || exit 1
	runs=$(grep -c '^run ' "$dir/h.manifest")
	[ "$runs" -eq 672 ] || { echo "FAIL: $runs manifest lines, expected 672"; exit 1; }
	"$ptxas" -arch=$sm "$dir/h.ptx" -o "$dir/h.cubin" || { echo "FAIL: ptxas $sm rejected the module"; exit 1; }
	echo "ok: helper self-checks, ptxas $sm"
done
