#!/usr/bin/env bash
# Every nvcc 13 compression mode (default, speed, balance, size, none, -Xfatbin -compress-all)
# and -rdc=true, with cubins and PTX for two targets: gpuprobe fatbin must extract, from the
# executable, PTX equal to `nvcc -ptx` for the same source and target (fatbinary drops comments
# and collapses blanks in embedded PTX, so both are compared token-wise, line by line) and cubins
# byte-identical to `nvcc -cubin`, each an EM_CUDA ELF of the right SM; the compression gpuprobe
# reports must be the one each mode asks for. A shared library and a -fatbin file are read too.
# Usage: nvcc_modes.sh PATH/TO/gpuprobe    (exit 77: no nvcc, skipped)
set -uo pipefail
G=$(readlink -f "$1")
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
if ! [ -x "$NVCC" ]; then
	echo "SKIP: nvcc not found at $NVCC (set NVCC)"
	exit 77
fi
src=$(cd "$(dirname "$0")" && pwd)/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
SRCS="tiny kernels"
ARCHS="75 90"
GENCODE="-gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_90,code=[sm_90,compute_90]"

# PTX without comments and with blanks collapsed, one line per non-empty line.
norm() { sed -e 's|//.*$||' "$1" | tr -s ' \t' '  ' | sed -e 's/^ //' -e 's/ $//' | grep -v '^$'; }

# References: nvcc -ptx and -cubin per source and target, plain and -rdc (two jobs at a time).
for s in $SRCS; do for a in $ARCHS; do
	"$NVCC" -ptx -arch=compute_$a -o ref.$s.$a.ptx "$src/$s.cu" &
	"$NVCC" -cubin -arch=sm_$a -o ref.$s.$a.cubin "$src/$s.cu"
	"$NVCC" -ptx -rdc=true -arch=compute_$a -o ref.$s.$a.rdc.ptx "$src/$s.cu" &
	"$NVCC" -cubin -rdc=true -arch=sm_$a -o ref.$s.$a.rdc.cubin "$src/$s.cu"
	wait
	"$NVCC" -ptx -G -arch=compute_$a -o ref.$s.$a.G.ptx "$src/$s.cu"
done; done
for f in ref.*.ptx; do
	norm "$f" >"$f.norm"
	[ "$(wc -l <"$f.norm")" -gt 10 ] || bad "reference $f is empty (nvcc failed?)"
done

# build MODE FLAGS...: the executable app.MODE from both sources
declare -A FLAGS=(
	[default]="" [speed]="-compress-mode=speed" [balance]="-compress-mode=balance"
	[size]="-compress-mode=size" [none]="-compress-mode=none" [compress-all]="-Xfatbin -compress-all"
	[rdc]="-rdc=true" [G]="-G")
# expected compression of PTX entries and of cubins with kernels (rdc: the device-linked cubins
# are stored raw, the relocatable ones in __nv_relfatbin with zstd)
declare -A PTXC=([default]=zstd [speed]=lz4 [balance]=zstd [size]=zstd [none]=none [compress-all]=zstd [rdc]=zstd
	[shared]=zstd [G]=zstd)
declare -A CUBC=([default]=none [speed]=none [balance]=none [size]=zstd [none]=none [compress-all]=zstd
	[rdc]="none zstd" [shared]=none [G]=zstd)
MODES="default speed balance size none compress-all rdc G"
n=0
for m in $MODES; do
	# shellcheck disable=SC2086
	"$NVCC" ${FLAGS[$m]} $GENCODE -o app.$m "$src/tiny.cu" "$src/kernels.cu" &
	n=$((n + 1))
	((n % 2)) || wait
done
wait

# check_mode MODE APP REFSUFFIX: REFSUFFIX picks the references (.rdc, .G); -G cubins carry
# build paths in their debug sections, so for them only the ELF header is checked.
check_mode() {
	local m=$1 app=$2 rdc=$3
	rm -rf "out.$m"
	if ! "$G" fatbin "$app" -o "out.$m" >"fatbin.$m.txt" 2>"err.$m.txt"; then
		bad "$m: gpuprobe fatbin failed: $(cat "err.$m.txt")"
		return
	fi
	"$G" list "$app" >"list.$m.txt" 2>>"err.$m.txt" || bad "$m: gpuprobe list failed: $(cat "err.$m.txt")"
	local matched_ptx="" matched_cubin=""
	for f in "out.$m"/*; do
		local base=${f##*/} sm
		sm=${base#*-sm_}; sm=${sm%%.*}
		case $base in
		*.ptx)
			norm "$f" >"$f.norm"
			local hit=""
			for s in $SRCS; do
				if cmp -s "$f.norm" "ref.$s.$sm$rdc.ptx.norm"; then hit=$s; fi
			done
			if [ -n "$hit" ]; then matched_ptx+=" $hit.$sm"; else bad "$m: $base matches no nvcc -ptx output"; fi
			[ "$(tail -c 1 "$f" | od -An -tx1 | tr -d ' ')" = 00 ] && bad "$m: $base ends with NUL"
			;;
		*.cubin)
			local hdr
			hdr=$(od -An -tx1 -N 52 "$f" | tr -d ' \n')
			[ "${hdr:0:8}" = 7f454c46 ] || bad "$m: $base is not ELF"
			[ "${hdr:36:4}" = be00 ] || bad "$m: $base e_machine is not EM_CUDA (190): ${hdr:36:4}"
			# e_flags at 48: byte 49 holds the SM (ABI version 8)
			[ $((16#${hdr:98:2})) = "$sm" ] || bad "$m: $base e_flags SM $((16#${hdr:98:2})) != $sm"
			for s in $SRCS; do
				cmp -s "$f" "ref.$s.$sm$rdc.cubin" && matched_cubin+=" $s.$sm"
			done
			;;
		*) bad "$m: unexpected entry $base" ;;
		esac
	done
	for s in $SRCS; do for a in $ARCHS; do
		[[ " $matched_ptx " == *" $s.$a "* ]] || bad "$m: no extracted PTX equals nvcc -ptx of $s for compute_$a"
		[ "$rdc" = .G ] || [[ " $matched_cubin " == *" $s.$a "* ]] ||
			bad "$m: no extracted cubin equals nvcc -cubin of $s for sm_$a"
	done; done
	# compression: every PTX entry uses the mode's; the sources' cubins (those with kernels) too
	local want_ptx=${PTXC[$m]} want_cub=${CUBC[$m]} kind target comp
	while read -r kind target comp; do
		case $kind in
		ptx) [ "$comp" = "$want_ptx" ] || bad "$m: PTX $target compressed with $comp, want $want_ptx" ;;
		cubin) [[ " $want_cub " == *" $comp "* ]] || bad "$m: cubin $target compressed with $comp, want $want_cub" ;;
		esac
	done < <(awk '/^module /{k=$3; t=$4; sub(",","",t); c="none"; if (match($0, /(zstd|lz4)-compressed/)) c=substr($0, RSTART, RLENGTH-11); has=0}
		/^  kernel /{if (!has) {print k, t, c; has=1}}' "list.$m.txt")
	grep -q '^  kernel _ZN10probe_test9block_sumIfLi128EEEvPKT_PS1_i  void probe_test::block_sum<float, 128>(float const\*, float\*, int)$' \
		"list.$m.txt" || bad "$m: list lacks the demangled block_sum<float, 128>"
	grep -q '^  func _ZN10probe_test6squareEf  probe_test::square(float)$' "list.$m.txt" ||
		bad "$m: list lacks the device function probe_test::square"
	grep -q '^PTX: yes (sm_75 sm_90)$' "list.$m.txt" || bad "$m: list does not report PTX for sm_75 and sm_90"
	if [ "$m" = G ]; then
		grep -q 'ptx sm_90, .*options "-g --dont-merge-basicblocks --return-at-end"' "list.$m.txt" ||
			bad "G: list lacks the -G PTX options"
	fi
	if [ "$m" = rdc ]; then
		grep -q '^module .*: cubin sm_90, .*offset' "list.$m.txt" &&
			grep -q 'ptx sm_90, .*options "--compile-only"' "list.$m.txt" ||
			bad "rdc: list lacks the linked cubin or the relocatable PTX with its --compile-only option"
	fi
	echo "$m: $(grep -c . "fatbin.$m.txt") entries, PTX matched:$matched_ptx; cubins matched:$matched_cubin"
}

for m in $MODES; do
	if [ -x app.$m ]; then
		check_mode "$m" "app.$m" "$(case $m in rdc) echo .rdc ;; G) echo .G ;; esac)"
	else
		bad "$m: nvcc failed to build"
	fi
done

# Fatbins reached only through the .nvFatBinSegment wrappers (their section renamed): the same
# modules, each once.
if objcopy --rename-section .nv_fatbin=.data.moved_fatbin app.default app.moved 2>/dev/null; then
	"$G" list app.moved >list.moved.txt 2>&1 || bad "moved: gpuprobe list failed: $(cat list.moved.txt)"
	# (the listing names its file in its hint line: the same hint for either name)
	diff <(tail -n +2 list.default.txt) <(tail -n +2 list.moved.txt | sed 's/app\.moved/app.default/g') >/dev/null ||
		bad "moved: list differs from the original executable's"
else
	echo "(objcopy missing: wrapper-only reading not checked)"
fi

# A shared library and a bare -fatbin file (default mode) read the same way.
"$NVCC" -shared -Xcompiler -fPIC $GENCODE -o libapp.so "$src/tiny.cu" "$src/kernels.cu" &
"$NVCC" -fatbin $GENCODE -o kernels.fatbin "$src/kernels.cu"
wait
check_mode shared libapp.so ""
"$G" fatbin kernels.fatbin -o out.fatbin >/dev/null || bad "fatbin file: gpuprobe fatbin failed"
for a in $ARCHS; do
	cmp -s out.fatbin/*-sm_$a.cubin ref.kernels.$a.cubin || bad "fatbin file: sm_$a cubin differs from nvcc -cubin"
	norm out.fatbin/*-sm_$a.ptx | cmp -s - ref.kernels.$a.ptx.norm || bad "fatbin file: compute_$a PTX differs"
done

# The CUDA libraries beside nvcc, where installed: cuBLAS keeps its fatbins in .nv_fatbin, cuFFT
# ~24000 of them in .ldata (loaded with cuModuleLoadData): both must read whole.
cudalib=$(dirname "$(dirname "$NVCC")")/lib64
for lib in libcublas.so libcufft.so; do
	[ -e "$cudalib/$lib" ] || { echo "($lib not installed: not checked)"; continue; }
	if "$G" list "$cudalib/$lib" >"list.$lib.txt" 2>"err.$lib.txt"; then
		mods=$(head -1 "list.$lib.txt" | grep -oE '[0-9]+ modules' | grep -oE '[0-9]+')
		[ "${mods:-0}" -ge 1000 ] || bad "$lib: only ${mods:-0} modules"
		grep -q '^PTX: yes' "list.$lib.txt" || bad "$lib: no PTX reported"
		echo "$lib: $mods modules, $(grep '^kernels:' "list.$lib.txt")"
	else
		bad "$lib: gpuprobe list failed: $(cat "err.$lib.txt")"
	fi
done

[ $fail = 0 ] && echo "nvcc modes: all checks passed"
exit $fail
