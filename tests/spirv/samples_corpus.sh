#!/usr/bin/env bash
# The cuda-samples corpus (../shared/corpora/cuda-samples) through `gpuprobe ptx spirv`: every
# module of device code a sample has (the .cu files its build command compiles, the kernel sources
# its NVRTC variant compiles at run time, matrixMulDynlinkJIT's PTX), compiled by nvcc -ptx for
# sm_90 with the sample's own -I/-D/-rdc flags, then lowered. A sample lowers when all its modules
# do. Prints one line per module, then per sample, then the blockers by sample.
# With SPIRV_POCL_BUILD (tests/spirv's spirv_pocl_build), valid modules are also built on PoCL.
# PTX is kept in WORK_DIR/ptx and reused (delete it to recompile).
# Fails if fewer samples lower than the floor (SPIRV_SAMPLES_FLOOR, default 94: see below) or if
# PoCL does not build every module that lowered.
# usage: samples_corpus.sh GPUPROBE CORPUS_DIR WORK_DIR
set -uo pipefail
gp=$1 corpus=$2 work=$3
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvcc" ] || { echo "SKIP: no nvcc at $nvcc"; exit 77; }
[ -f "$corpus/samples.tsv" ] || { echo "SKIP: no corpus at $corpus"; exit 77; }
mkdir -p "$work/ptx" "$work/spv"
rm -f "$work"/spv/*.spv
: >"$work/modules.txt"
# 1: list the modules: sample<TAB>source<TAB>flags
while IFS=$'\t' read -r name _cat build _rest; do
	[ "$name" = name ] && continue
	dir=$corpus/samples/$name
	flags=$(printf '%s\n' "$build" | grep -oE '(-I|-D)[^ ]+|-rdc=true' | grep -v -- '-I\$COMMON' | sort -u | tr '\n' ' ')
	srcs=$(printf '%s\n' "$build" | grep -oE '[^ ]+\.cu\b' | sort -u)
	if [ -z "$srcs" ]; then # NVRTC samples: the kernel source they compile at run time
		srcs=$(cd "$dir" && ls *_kernel.cu *_kernel.cuh extras/matrixMul_kernel_64.ptx 2>/dev/null)
	fi
	for s in $srcs; do printf '%s\t%s\t%s\n' "$name" "$s" "$flags" >>"$work/modules.txt"; done
done <"$corpus/samples.tsv"
# 2: compile and lower each
: >"$work/blockers.txt"
declare -A sample_ok
nmod=0 nok=0 warned=0
while IFS=$'\t' read -r name src flags; do
	mod=$name.$(basename "${src%.*}")
	ptx=$work/ptx/$mod.ptx
	if [[ $src == *.ptx ]]; then
		cp "$corpus/samples/$name/$src" "$ptx"
	elif [ ! -s "$ptx" ]; then
		(cd "$corpus/samples/$name" && "$nvcc" -ptx -O2 -std=c++17 -arch=sm_90 -I"$corpus/Common" $flags \
			-x cu "$src" -o "$ptx") >/dev/null 2>&1 || { rm -f "$ptx"; echo "NOBUILD $mod"; continue; }
	fi
	# a module with no function (host code in a .cu file) is no device code
	grep -qE '\.(entry|func)[[:space:]]' "$ptx" || { echo "NOCODE  $mod"; continue; }
	nmod=$((nmod + 1))
	[ -z "${sample_ok[$name]:-}" ] && sample_ok[$name]=1
	err=$("$gp" ptx spirv -o "$work/spv/$mod.spv" "$ptx" 2>&1)
	rc=$?
	# a warning (a collective part of a block may not reach) is not a kernel left out:
	# the module lowered; count it apart
	nwarn=$(printf '%s\n' "$err" | grep -c ': warning: ')
	err=$(printf '%s\n' "$err" | grep -v ': warning: ')
	warned=$((warned + nwarn))
	if [ $rc -eq 0 ] && [ -n "$err" ]; then
		sample_ok[$name]=0
		first=$(printf '%s\n' "$err" | head -1)
		echo "PARTIAL $mod: $(printf '%s\n' "$err" | wc -l) kernel(s) left out, first: ${first#gpuprobe: $ptx: }" | cut -c1-240
		why=${first#*left out: }; why=${why#needs * not lowered: }
		if [[ $why =~ \`([^\`]*)\` ]]; then c=${BASH_REMATCH[1]}; c=${c%%.*}; b="$c: ${why##*: }"
		else b=$(echo "$why" | sed -E 's/^ ?[0-9]+: //; s/_Z[A-Za-z0-9_]+/NAME/g' | cut -c1-120); fi
		printf '%s\t%s\n' "$name" "$b" >>"$work/blockers.txt"
	elif [ $rc -eq 0 ]; then
		nok=$((nok + 1))
		echo "OK      $mod"
	else
		sample_ok[$name]=0
		msg=${err#gpuprobe: $ptx:}
		echo "BLOCKED $mod:${msg:0:200}"
		if [[ $msg =~ \`([^\`]*)\` ]]; then c=${BASH_REMATCH[1]}; c=${c%%.*}; why=${msg##*: }; b="$c: $why"
		else b=$(echo "$msg" | sed -E 's/^ ?[0-9]+: //; s/_Z[A-Za-z0-9_]+/NAME/g; s/(function|of|kernel) [A-Za-z_$][A-Za-z0-9_$]*/\1 NAME/g' | cut -c1-120)
		fi
		printf '%s\t%s\n' "$name" "$b" >>"$work/blockers.txt"
	fi
done <"$work/modules.txt"
ns=0 nso=0
for s in "${!sample_ok[@]}"; do ns=$((ns + 1)); [ "${sample_ok[$s]}" = 1 ] && nso=$((nso + 1)); done
echo
echo "cuda-samples: $nso of $ns samples with device code lower completely ($nok of $nmod modules); $warned warning(s) for collectives part of a block may not reach"
if [ -n "${SPIRV_POCL_BUILD:-}" ] && [ "$nok" -gt 0 ]; then
	tool=$(realpath "$SPIRV_POCL_BUILD")
	built=$(cd "$work/spv" && "$tool" *.spv 2>/dev/null)
	nbuilt=$(printf '%s\n' "$built" | grep -c '^BUILT')
	echo "OpenCL build: $nbuilt of $(ls "$work"/spv/*.spv | wc -l) modules (complete and partial) build on the OpenCL device"
	printf '%s\n' "$built" | grep -v '^BUILT'
	[ "$nbuilt" -eq "$(ls "$work"/spv/*.spv | wc -l)" ] || bad=1
fi
echo "blocking constructs (samples blocked; each sample's blockers counted once):"
sort -u "$work/blockers.txt" | cut -f2 | sort | uniq -c | sort -rn | sed 's/^/  /'
floor=${SPIRV_SAMPLES_FLOOR:-94}   # 95 on 2026-11-25; 94 on 2026-11-27, when interval's recursion was refused (spirv/lower_recursion.c; its calls are not made from 2026-11-28)
[ "${bad:-0}" -eq 0 ] || { echo "FAIL: PoCL did not build every module"; exit 1; }
[ "$nso" -ge "$floor" ] || { echo "FAIL: $nso samples lower, fewer than the floor $floor"; exit 1; }
exit 0
