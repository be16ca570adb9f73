#!/bin/bash
# The PTX round trip on real modules: every *.ptx in a directory (the modules that PyTorch and
# our test apps load, written there by the shim with GPUPROBE_DUMP_DIR) goes through
# `gpuprobe ptx print`; ptxas must give byte-identical cubins for the original and the printed
# module (same flags, same file name). Prints one line per module and the counts.
# usage: tests/gpu/ptx_roundtrip.sh [DIR] [GPUPROBE]
#   DIR defaults to $PTX_DUMP_DIR, else $GPUPROBE_DUMP_DIR; without any, and with a GPU and
#   BUILD's shim and test apps (tests/gpu/prepare.sh), the modules that BUILD/e2e's pattern,
#   transpose and cub_algos load are dumped through the shim (GPUPROBE_DUMP_DIR, no probes) and
#   used. GPUPROBE defaults to BUILD/bin/gpuprobe, else bin/gpuprobe of build-ptx,
#   build-shim-gpu, build-shim or build. ARCH=sm_XX picks the ptxas target (default: the
#   GPU's, from nvidia-smi, else each module's own .target).
# Exit 77 when the directory is absent or holds no PTX; 1 when any module fails.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-${PTX_DUMP_DIR:-${GPUPROBE_DUMP_DIR:-}}}
work=${OUT:-$(mktemp -d)}/ptx_roundtrip
rm -rf "$work" && mkdir -p "$work"
if [ -z "$dir" ] && [ -n "${BUILD:-}" ] && [ -e "$BUILD/lib/libcuda.so.1" ] &&
	[ -x "$BUILD/e2e/cub_algos" ] && nvidia-smi -L >/dev/null 2>&1; then
	dir=$work/dump
	mkdir -p "$dir"
	for app in "pattern 4" transpose cub_algos; do
		set -- $app
		(cd "$work" && GPUPROBE_DUMP_DIR=$dir LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
			"$BUILD/e2e/$1" "${@:2}" >"$work/$1.out" 2>&1) ||
			{ echo "ptx_roundtrip: $1 through the shim failed ($work/$1.out)"; exit 1; }
	done
	echo "ptx_roundtrip: modules dumped from BUILD/e2e's pattern, transpose and cub_algos into $dir"
	set --
fi
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "ptx_roundtrip: SKIP: no PTX directory (give DIR, or set PTX_DUMP_DIR to where GPUPROBE_DUMP_DIR wrote modules; or BUILD with its test apps, on a GPU)"
	exit 77
fi
mapfile -t files < <(find "$dir" -maxdepth 1 -type f -name '*.ptx' | sort)
if [ ${#files[@]} = 0 ]; then
	echo "ptx_roundtrip: SKIP: $dir holds no .ptx files"
	exit 77
fi
gp=${2:-}
[ -z "$gp" ] && [ -n "${BUILD:-}" ] && [ -x "$BUILD/bin/gpuprobe" ] && gp=$BUILD/bin/gpuprobe
if [ -z "$gp" ]; then
	for b in build-ptx build-shim-gpu build-shim build; do
		[ -x "$here/$b/bin/gpuprobe" ] && { gp=$here/$b/bin/gpuprobe; break; }
	done
fi
[ -n "$gp" ] && [ -x "$gp" ] || { echo "ptx_roundtrip: no gpuprobe binary (build one, or give it as the second argument)"; exit 2; }
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$ptxas" ] || { echo "ptx_roundtrip: no ptxas"; exit 2; }
arch=${ARCH:-}
if [ -z "$arch" ] && command -v nvidia-smi >/dev/null; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
	[ -n "$cc" ] && arch=sm_$cc
fi
pass=0 fail=0 skip=0
for f in "${files[@]}"; do
	name=$(basename "$f")
	a=$arch
	[ -n "$a" ] || a=$(sed -n 's/^[[:space:]]*\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$f" | head -1)
	# a module's own target may be newer-only (sm_90a): then only that target compiles it
	t=$(sed -n 's/^[[:space:]]*\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$f" | head -1)
	case $t in *a|*f) a=$t ;; esac
	flags=()
	grep -q '^[[:space:]]*\.section[[:space:]]*\.debug_info' "$f" && flags+=(-g)
	d=$work/${name%.ptx}
	mkdir -p "$d/orig" "$d/print"
	tr -d '\000' < "$f" > "$d/orig/m.ptx"
	if ! err=$("$gp" ptx print "$d/orig/m.ptx" -o "$d/print/m.ptx" 2>&1); then
		echo "FAIL $name: $err"; fail=$((fail + 1)); continue
	fi
	# relocatable device code (-rdc) calls functions defined elsewhere: compile only (-c)
	if ! err=$(cd "$d/orig" && "$ptxas" "${flags[@]}" -arch="$a" m.ptx -o m.cubin 2>&1) &&
		[[ "$err" == *"Unresolved extern"* ]]; then
		flags+=(-c)
	fi
	if ! err=$(cd "$d/orig" && "$ptxas" "${flags[@]}" -arch="$a" m.ptx -o m.cubin 2>&1); then
		echo "SKIP $name: ptxas -arch=$a rejects the original: $(echo "$err" | grep -v warning | head -1)"
		skip=$((skip + 1)); continue
	fi
	if ! err=$(cd "$d/print" && "$ptxas" "${flags[@]}" -arch="$a" m.ptx -o m.cubin 2>&1); then
		echo "FAIL $name: ptxas rejects the printed module: $(echo "$err" | grep -v warning | head -1)"
		fail=$((fail + 1)); continue
	fi
	if cmp -s "$d/orig/m.cubin" "$d/print/m.cubin"; then
		echo "PASS $name ($(wc -c < "$f") bytes, -arch=$a)"; pass=$((pass + 1)); rm -rf "$d"
	else
		echo "FAIL $name: cubins differ (-arch=$a)"; fail=$((fail + 1))
	fi
done
echo "ptx_roundtrip: $pass passed, $fail failed, $skip skipped (ptxas rejects the original) of ${#files[@]} modules in $dir"
[ $fail = 0 ] && [ $pass -gt 0 ] || exit 1
