#!/bin/bash
# The fatbin reader against NVIDIA's own cuobjdump (on the GPU machines; not in Debian): for each
# file, every cubin `cuobjdump -xelf all` extracts and every PTX `cuobjdump -xptx all` extracts
# must be among what `gpuprobe fatbin` writes, byte for byte (PTX compared without NULs), and the
# counts are printed side by side (gpuprobe may find more: fatbins embedded in data sections,
# such as cuFFT's, which cuobjdump does not list). Files: the committed seeds, then cuBLAS where
# installed (about a minute), and PyTorch's libtorch_cuda.so with FATBIN_TORCH=1 (minutes: it is
# large). FATBIN_FILES="a b" replaces the libraries.
# No GPU needed, only cuobjdump. usage: tests/gpu/fatbin.sh [GPUPROBE]
# (default: $BUILD/bin/gpuprobe, else build-fatbin, build-shim-gpu, build-shim, build)
# Exit 77 without cuobjdump; 1 when any file differs.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
gp=${1:-}
[ -z "$gp" ] && [ -n "${BUILD:-}" ] && [ -x "$BUILD/bin/gpuprobe" ] && gp=$BUILD/bin/gpuprobe
if [ -z "$gp" ]; then
	for b in build-fatbin build-shim-gpu build-shim build; do
		[ -x "$here/$b/bin/gpuprobe" ] && { gp=$here/$b/bin/gpuprobe; break; }
	done
fi
[ -n "$gp" ] && [ -x "$gp" ] || { echo "fatbin.sh: no gpuprobe binary (${BUILD:+not in BUILD=$BUILD/bin, }build one, or give it as the argument)"; exit 2; }
cuobjdump=$(command -v cuobjdump || true)
for c in /usr/local/cuda/bin/cuobjdump /usr/local/cuda-*/bin/cuobjdump; do
	[ -z "$cuobjdump" ] && [ -x "$c" ] && cuobjdump=$c
done
[ -n "$cuobjdump" ] || { echo "fatbin.sh: SKIP: no cuobjdump on this machine"; exit 77; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

files=("$here"/tests/fatbin/fuzz-seeds/fatbin/*.fatbin "$here"/tests/fatbin/fuzz-seeds/fatbin/tiny_object.o)
if [ -n "${FATBIN_FILES:-}" ]; then
	read -r -a extra <<<"$FATBIN_FILES"
else
	extra=()
	for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
		for l in libcublas.so; do
			[ -e "$d/$l" ] && { extra+=("$(readlink -f "$d/$l")"); break; }
		done
	done
	if [ "${FATBIN_TORCH:-0}" = 1 ]; then
		torchlib=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
		[ -n "$torchlib" ] && [ -e "$torchlib/libtorch_cuda.so" ] && extra+=("$torchlib/libtorch_cuda.so")
	fi
fi
for e in "${extra[@]}"; do # each library once (lib64 is often a link to targets/...)
	dup=0
	for f in "${files[@]}"; do [ "$f" = "$e" ] && dup=1; done
	[ $dup = 1 ] || files+=("$e")
done

# hashes FILE...: one sha256 per file, NULs removed for PTX
hashes() {
	for f in "$@"; do
		case $f in
		*.ptx) tr -d '\000' <"$f" | sha256sum | cut -d' ' -f1 ;;
		*) sha256sum <"$f" | cut -d' ' -f1 ;;
		esac
	done | sort
}

fail=0
printf '%-28s %8s %8s %8s %8s %7s  %s\n' FILE cubins ref ptx ref secs result | tee "$out/fatbin.txt"
for f in "${files[@]}"; do
	name=$(basename "$f")
	d=$work/$name
	mkdir -p "$d/ours" "$d/ref"
	start=$(date +%s)
	if ! "$gp" fatbin "$f" -o "$d/ours" >"$d/ours.txt" 2>"$d/ours.err"; then
		echo "$name: gpuprobe fatbin failed: $(cat "$d/ours.err")" | tee -a "$out/fatbin.txt"
		fail=1
		continue
	fi
	(cd "$d/ref" && "$cuobjdump" -xelf all "$f" >/dev/null 2>&1; "$cuobjdump" -xptx all "$f" >/dev/null 2>&1)
	shopt -s nullglob
	ours_elf=("$d"/ours/*.cubin) ours_ptx=("$d"/ours/*.ptx)
	ref_elf=("$d"/ref/*.cubin) ref_ptx=("$d"/ref/*.ptx)
	shopt -u nullglob
	result=ok
	missing_elf=$(comm -13 <(hashes "${ours_elf[@]}" | uniq) <(hashes "${ref_elf[@]}" | uniq) | wc -l)
	missing_ptx=$(comm -13 <(hashes "${ours_ptx[@]}" | uniq) <(hashes "${ref_ptx[@]}" | uniq) | wc -l)
	if [ "$missing_elf" != 0 ] || [ "$missing_ptx" != 0 ]; then
		result="FAIL: $missing_elf cubins and $missing_ptx PTX from cuobjdump not extracted identically"
		fail=1
	elif [ ${#ref_elf[@]} = 0 ] && [ ${#ref_ptx[@]} = 0 ]; then
		result="(cuobjdump extracted nothing)"
	fi
	printf '%-28s %8d %8d %8d %8d %7d  %s\n' "$name" ${#ours_elf[@]} ${#ref_elf[@]} ${#ours_ptx[@]} ${#ref_ptx[@]} \
		$(($(date +%s) - start)) "$result" | tee -a "$out/fatbin.txt"
	rm -rf "$d"
done
[ $fail = 0 ] && echo "fatbin: every cuobjdump entry extracted identically"
exit $fail
