#!/usr/bin/env bash
# A corpus sample's own source at a smaller problem size, through the shim on PoCL. For samples
# whose full problem no CPU finishes in a test's time (the tensor-core GEMMs multiply 4096^3 to
# 8192^3 on the device and again on the host), the source is copied with its compile-time size
# constants lowered by sed expressions (nothing else changes), built with samples.tsv's own
# command and flags, and run as samples.tsv says; it must pass by the sample's own rule (exit
# status and the words it must not print) and print a line matching PATH_RE: the code path the
# GPU takes (e.g. the high-performance kernel, chosen by the device's shared-memory limits).
# usage: resized.sh BUILD_DIR CORPUS WORK SAMPLE PATH_RE SED_EXPR...
set -uo pipefail
build=$(cd "$1" && pwd) corpus=$2 work=$3 sample=$4 path_re=$5
shift 5
[ $# -ge 1 ] || { echo "usage: resized.sh BUILD_DIR CORPUS WORK SAMPLE PATH_RE SED_EXPR..."; exit 2; }
sed_args=()
for e in "$@"; do sed_args+=(-e "$e"); done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/asan_preload.sh"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
[ -f "$corpus/samples.tsv" ] || { echo "SKIP: no cuda-samples corpus at $corpus"; exit 77; }
row=$(awk -F'\t' -v s="$sample" '$1 == s' "$corpus/samples.tsv")
[ -n "$row" ] || { echo "FAIL: $sample is not in samples.tsv"; exit 1; }
IFS=$'\t' read -r name category buildcmd runcmd rule _ <<<"$row"
src=$(find "$corpus/samples/$sample" -maxdepth 1 -name "$sample.cu" | head -1)
[ -n "$src" ] || { echo "FAIL: no $sample.cu"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cp -r "$corpus/samples/$sample/." "$work/"
sed -E "${sed_args[@]}" "$src" >"$work/$sample.cu"
for e in "$@"; do
	sed -E -e "$e" "$src" | cmp -s "$src" - && { echo "FAIL: '$e' changes nothing in $sample.cu"; exit 1; }
done
echo "resized: $(diff "$src" "$work/$sample.cu" | grep -c '^>') line(s) changed: $(diff "$src" "$work/$sample.cu" | grep '^>' | tr '\n' ' ')"
(cd "$work" && export NVCC=$nvcc COMMON=$corpus/Common && eval "$buildcmd") >"$work/build.log" 2>&1 ||
	{ echo "FAIL: build"; tail "$work/build.log"; exit 1; }
start=$(date +%s.%N)
(cd "$work" && env $(own_driver_asan_env "$build/lib") GPUPROBE_BACKEND=opencl LD_LIBRARY_PATH="$build/lib" \
	timeout 600 bash -c "$runcmd" >out 2>err)
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
fail=0
# the rule: "exit 0, not: WORD[, WORD...]" (samples.tsv's column 5)
want_rc=$(sed -nE 's/^exit ([0-9]+).*/\1/p' <<<"$rule")
[ "$rc" = "${want_rc:-0}" ] || { echo "FAIL: exit $rc (want ${want_rc:-0})"; fail=1; }
nots=$(sed -nE 's/.*not: (.*)$/\1/p' <<<"$rule")
IFS=',' read -r -a words <<<"$nots"
for w in "${words[@]}"; do
	w=$(echo "$w" | sed -E 's/^ +| +$//g')
	[ -n "$w" ] && grep -qF -- "$w" "$work/out" && { echo "FAIL: printed '$w' ($(grep -cF -- "$w" "$work/out") lines)"; fail=1; }
done
grep -qE -- "$path_re" "$work/out" || { echo "FAIL: no line matching '$path_re' (the GPU's path)"; fail=1; }
[ $fail = 0 ] || { head -20 "$work/out"; tail -5 "$work/err"; exit 1; }
echo "PASS: $sample resized ($(grep -E -- "$path_re" "$work/out" | head -1)), $secs s"
