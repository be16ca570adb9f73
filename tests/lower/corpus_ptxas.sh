#!/bin/sh
# Lower all 313 bpf_conformance programs into one module and have ptxas compile it for sm_90
# and sm_75. usage: corpus_ptxas.sh LOWER_CORPUS CORPUS_DIR PTXAS
set -u
gen=$1 corpus=$2 ptxas=$3
if [ ! -d "$corpus" ]; then echo "SKIP: no corpus at $corpus"; exit 77; fi
if [ ! -x "$ptxas" ]; then echo "SKIP: no ptxas at $ptxas"; exit 77; fi
n=$(ls "$corpus"/*.data | wc -l)
[ "$n" -eq 313 ] || { echo "FAIL: corpus has $n programs, expected 313"; exit 1; }
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
for sm in sm_90 sm_75; do
	"$gen" "$corpus" "$dir/c.ptx" "$dir/c.manifest" --target $sm --expect 313 || exit 1
	runs=$(grep -c '^run ' "$dir/c.manifest")
	[ "$runs" -eq 313 ] || { echo "FAIL: $runs programs lowered, expected 313"; grep '^skip' "$dir/c.manifest"; exit 1; }
	"$ptxas" -arch=$sm "$dir/c.ptx" -o "$dir/c.cubin" || { echo "FAIL: ptxas $sm rejected the module"; exit 1; }
	[ -s "$dir/c.cubin" ] || { echo "FAIL: ptxas $sm wrote no cubin"; exit 1; }
	echo "ok: 313 programs, one module, ptxas $sm"
done
