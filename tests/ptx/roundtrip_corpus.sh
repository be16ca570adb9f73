#!/usr/bin/env bash
# The PTX round trip on a corpus built from CUDA sources (tests/ptx/src/*.cu: ours and CUB/Thrust
# algorithms), for sm_75, sm_90 and sm_100, each plain, with -G and with -lineinfo. A source may
# narrow that with "// archs: sm_90 sm_100" and "// G-archs: sm_90" lines, and add flags with
# "// nvcc: -rdc=true" and "// ptxas: -c" lines.
# For every module: ptxas on `gpuprobe ptx print` output must give a cubin byte-identical to
# ptxas on the original (same flags, same file name: cubins with line info embed both). Modules
# are also printed with --canonical (every statement from the IR): without .loc that must give
# the same cubin; with .loc (ptxas embeds the PTX text in debug sections) the same code sections.
# Nothing is cached between runs.
#
# usage: roundtrip_corpus.sh GPUPROBE SRC_DIR WORK_DIR [JOBS]
set -uo pipefail

# Hex dumps of the sections that carry code and its launch data (not debug info).
code_sections() {
	local s
	for s in $(readelf -W -S "$1" 2>/dev/null | grep -o '\.text\.[^ ]*\|\.nv\.constant0\.[^ ]*\|\.nv\.info\.[^ ]*\|\.nv\.shared\.[^ ]*' | sort -u); do
		echo "== $s"
		readelf -W -x "$s" "$1" 2>/dev/null | tail -n +3
	done
}

if [ "${1:-}" = "--one" ]; then
	# One module: --one GPUPROBE PTX_FILE (named NAME.ARCH.MODE.ptx)
	gp=$2 f=$3
	base=$(basename "$f" .ptx)
	mode=${base##*.}
	rest=${base%.*}
	arch=${rest##*.}
	case $mode in
	G) pflags=(-g) ;;
	lineinfo) pflags=(-lineinfo) ;;
	*) pflags=() ;;
	esac
	[ -s "$(dirname "$f")/$rest.ptxas" ] && read -ra more < "$(dirname "$f")/$rest.ptxas" && pflags+=("${more[@]}")
	d=$(dirname "$f")/rt.$base
	rm -rf "$d" && mkdir -p "$d/orig" "$d/print" "$d/canon"
	cp "$f" "$d/orig/m.ptx"
	if ! err=$("$gp" ptx print "$f" -o "$d/print/m.ptx" 2>&1); then
		echo "FAIL $base: gpuprobe ptx print: $err"
		exit 0
	fi
	if ! err=$(cd "$d/orig" && ptxas "${pflags[@]}" -arch="$arch" m.ptx -o m.cubin 2>&1); then
		echo "SKIP $base: ptxas rejects the original: $(echo "$err" | grep -v warning | head -1)"
		exit 0
	fi
	if ! err=$(cd "$d/print" && ptxas "${pflags[@]}" -arch="$arch" m.ptx -o m.cubin 2>&1); then
		echo "FAIL $base: ptxas rejects the printed module: $(echo "$err" | grep -v warning | head -1)"
		exit 0
	fi
	if ! cmp -s "$d/orig/m.cubin" "$d/print/m.cubin"; then
		echo "FAIL $base: cubins differ"
		exit 0
	fi
	how=verbatim
	if grep -q '^[[:space:]]*\.loc' "$f"; then
		# With .loc, ptxas embeds the PTX text itself in debug sections, so only the verbatim
		# print can match byte for byte; the canonical print of a -lineinfo module must still
		# give the same code: compare the code, constant, shared and per-kernel info sections.
		# (Not for -G: there ptxas's code itself follows the PTX layout; measured: 29 of 94
		# -G modules checked differ in a few instructions when printed canonically.)
		if [ "$mode" = lineinfo ]; then
			if ! err=$("$gp" ptx print --canonical "$f" -o "$d/canon/m.ptx" 2>&1); then
				echo "FAIL $base: gpuprobe ptx print --canonical: $err"
				exit 0
			fi
			if ! err=$(cd "$d/canon" && ptxas "${pflags[@]}" -arch="$arch" m.ptx -o m.cubin 2>&1); then
				echo "FAIL $base: ptxas rejects the canonical module: $(echo "$err" | grep -v warning | head -1)"
				exit 0
			fi
			code_sections "$d/orig/m.cubin" > "$d/orig.code"
			code_sections "$d/canon/m.cubin" > "$d/canon.code"
			if ! grep -q '^== \.text\.' "$d/orig.code" && grep -q '\.entry\|\.func' "$f"; then
				echo "FAIL $base: no code sections found in the cubin (readelf?)"
				exit 0
			fi
			if ! cmp -s "$d/orig.code" "$d/canon.code"; then
				echo "FAIL $base: canonical print gives different code"
				exit 0
			fi
			how="verbatim+canonical-code"
		fi
	else
		if ! err=$("$gp" ptx print --canonical "$f" -o "$d/canon/m.ptx" 2>&1); then
			echo "FAIL $base: gpuprobe ptx print --canonical: $err"
			exit 0
		fi
		if ! err=$(cd "$d/canon" && ptxas "${pflags[@]}" -arch="$arch" m.ptx -o m.cubin 2>&1); then
			echo "FAIL $base: ptxas rejects the canonical module: $(echo "$err" | grep -v warning | head -1)"
			exit 0
		fi
		if ! cmp -s "$d/orig/m.cubin" "$d/canon/m.cubin"; then
			echo "FAIL $base: canonical cubin differs"
			exit 0
		fi
		how="verbatim+canonical"
	fi
	rm -rf "$d"
	echo "PASS $base ($how)"
	exit 0
fi

if [ "${1:-}" = "--compile" ]; then
	# One nvcc job: --compile SRC ARCH MODE OUT_DIR
	src=$2 arch=$3 mode=$4 out=$5
	name=$(basename "$src" .cu)
	extra=$(sed -n 's,^// nvcc: ,,p' "$src" | head -1)
	sed -n 's,^// ptxas: ,,p' "$src" | head -1 > "$out/$name.$arch.ptxas"
	case $mode in
	G) mflags=(-G) ;;
	lineinfo) mflags=(-lineinfo) ;;
	*) mflags=() ;;
	esac
	# shellcheck disable=SC2086
	if ! err=$(nvcc -ptx -arch="$arch" "${mflags[@]}" $extra -w "$src" -o "$out/$name.$arch.$mode.ptx" 2>&1); then
		echo "nvcc failed: $name $arch $mode: $(echo "$err" | grep -m1 error)" >&2
		return 1 2>/dev/null || exit 1
	fi
	exit 0
fi

gp=${1:?usage: roundtrip_corpus.sh GPUPROBE SRC_DIR WORK_DIR [JOBS]}
srcdir=${2:?}
work=${3:?}
jobs=${4:-2}
self=$(readlink -f "$0")
export PATH=$PATH:/usr/local/cuda/bin
command -v nvcc >/dev/null && command -v ptxas >/dev/null || { echo "nvcc/ptxas not found (CUDA at /usr/local/cuda)"; exit 1; }

start=$(date +%s)
rm -rf "$work" && mkdir -p "$work/ptx"
# The compile jobs, biggest sources first so the two workers finish together.
for src in $(ls -S "$srcdir"/*.cu); do
	archs=$(sed -n 's,^// archs: ,,p' "$src" | head -1)
	garchs=$(sed -n 's,^// G-archs: \([a-z0-9_ ]*\).*,\1,p' "$src" | head -1)
	for arch in ${archs:-sm_75 sm_90 sm_100}; do
		for mode in plain G lineinfo; do
			if [ $mode = G ] && [ -n "$garchs" ] && [[ " $garchs " != *" $arch "* ]]; then
				continue
			fi
			echo "$src $arch $mode"
		done
	done
done > "$work/jobs"
njobs=$(wc -l < "$work/jobs")
nvcc_fail=0
xargs -P "$jobs" -L 1 bash "$self" --compile < <(sed "s|\$| $work/ptx|" "$work/jobs") || nvcc_fail=1
t_compile=$(($(date +%s) - start))
nmods=$(ls "$work/ptx"/*.ptx | wc -l)
bytes=$(cat "$work/ptx"/*.ptx | wc -c)
echo "corpus: $nmods modules ($((bytes / 1024 / 1024)) MiB) from $njobs nvcc jobs in ${t_compile}s"

ls -S "$work/ptx"/*.ptx | xargs -P "$jobs" -n 1 bash "$self" --one "$gp" > "$work/results"
t_total=$(($(date +%s) - start))
pass=$(grep -c '^PASS' "$work/results")
fail=$(grep -c '^FAIL' "$work/results")
skip=$(grep -c '^SKIP' "$work/results")
canon=$(grep -c 'verbatim+canonical)' "$work/results")
canon_code=$(grep -c 'verbatim+canonical-code' "$work/results")
grep -v '^PASS' "$work/results" | sort
echo "round trip: $pass passed ($canon of them also printed canonically, same cubin; $canon_code with .loc printed canonically, same code sections), $fail failed, $skip skipped (ptxas rejects the original), of $nmods modules; ${t_total}s in all"
[ "$nvcc_fail" = 0 ] || { echo "FAILED: some sources did not compile"; exit 1; }
[ "$fail" = 0 ] || { echo "FAILED: $fail modules do not round-trip"; exit 1; }
[ "$skip" = 0 ] || { echo "FAILED: ptxas rejects $skip corpus modules as nvcc wrote them: fix their sources"; exit 1; }
[ "$pass" -ge 300 ] || { echo "FAILED: only $pass modules passed, want at least 300"; exit 1; }
echo "OK"
