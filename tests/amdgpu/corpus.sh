#!/usr/bin/env bash
# Real modules through amdgpu/: every *.ptx of the given directories (the frontend's corpus as
# tests/spirv/corpus.sh compiles it, the cuda-samples corpus as tests/spirv/samples_corpus.sh does)
# is lowered by `gpuprobe ptx spirv` and by `gpuprobe ptx amdgpu` for gfx90a, gfx942 and gfx1100;
# llvm-readobj-19 must show one kernel descriptor per kernel, with its register and LDS use. Every
# module spirv/ lowers completely must lower for all three architectures: the rest are listed with
# what stops them (the report, tests/amdgpu/corpus-report.txt, is that table).
# usage: corpus.sh GPUPROBE REPORT DIR...
set -uo pipefail
gp=$1 report=$2
shift 2
readobj=$(command -v llvm-readobj-19 || echo /usr/lib/llvm-19/bin/llvm-readobj)
[ -x "$readobj" ] || { echo "SKIP: no llvm-readobj-19"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mods=()
for d in "$@"; do
	[ -d "$d" ] || continue
	while IFS= read -r f; do mods+=("$f"); done < <(find "$d" -maxdepth 1 -name '*.ptx' | sort)
done
[ ${#mods[@]} -gt 0 ] || { echo "SKIP: no PTX in $* (build it with tests/spirv/corpus.sh / samples_corpus.sh)"; exit 77; }
# One module: its row into $work/row.I, "sp am nk" into $work/st.I, FAIL lines to stdout. Modules
# run side by side (AMDGPU_CORPUS_JOBS, default: the CPUs): the tensor-core GEMMs take LLVM tens of
# seconds per architecture; the report keeps the modules' order.
one() {
	local i=$1 ptx=${mods[$1]} w=$work/m.$1
	local name nk sp am detail err rc arch kd v l left bad=0
	name=$(basename "$(dirname "$ptx")")/$(basename "$ptx" .ptx)
	nk=$(grep -cE '^[[:space:]]*(\.visible[[:space:]]+|\.weak[[:space:]]+)?\.entry[[:space:]]' "$ptx")
	sp=ok
	err=$("$gp" ptx spirv -o "$w.spv" "$ptx" 2>&1) || sp=no
	[ -n "$err" ] && [ $sp = ok ] && sp=partial
	am=ok detail="" left=0
	for arch in gfx90a gfx942 gfx1100; do
		err=$("$gp" ptx amdgpu --arch $arch -o "$w.co" "$ptx" 2>&1)
		rc=$?
		# kernels left out (one line each, exit 0): the module's other kernels lowered
		left=$(printf '%s\n' "$err" | grep -c ': kernel .* left out: ')
		[ $rc = 0 ] && [ "$left" -gt 0 ] && am=partial
		if [ $rc != 0 ]; then
			am=no
			if [ $rc != 1 ] || [ "$(printf '%s\n' "$err" | grep -c .)" != 1 ]; then
				echo "FAIL $name ($arch): exit $rc, not one error line: $(printf '%s' "$err" | head -c 200)"
				detail="FAIL: exit $rc" bad=1
				break
			fi
			detail=$(printf '%s' "${err#gpuprobe: $ptx:}" | cut -c1-200)
			break
		fi
		"$readobj" --notes --dyn-symbols "$w.co" >"$w.ro" 2>&1
		kd=$(grep -c '\.symbol: .*\.kd$' "$w.ro")
		if [ "$kd" != $((nk - left)) ]; then
			am=no detail="$arch: $kd kernel descriptors for $nk kernels, $left left out" bad=1
			echo "FAIL $name: $detail"
			break
		fi
		if [ $arch = gfx942 ]; then
			v=$(grep -o '\.vgpr_count: *[0-9]*' "$w.ro" | awk '{print $2}' | sort -n | tail -1)
			l=$(grep -o '\.group_segment_fixed_size: *[0-9]*' "$w.ro" | awk '{print $2}' | sort -n | tail -1)
			detail="$((nk - left)) kernel(s); gfx942 max VGPRs ${v:-0}, max LDS ${l:-0} bytes"
			[ "$left" = 0 ] || detail="$detail; $left left out, first $(printf '%s\n' "$err" | grep -m1 ' left out: ' |
				sed 's/^gpuprobe: [^ ]*: kernel \([^ ]*\) left out: /\1: /' | cut -c1-150)"
		fi
	done
	rm -f "$w.spv" "$w.co" "$w.ro"
	printf '%-48s spirv=%-7s amdgcn=%-3s %s\n' "$name" "$sp" "$am" "$detail" >"$work/row.$i"
	echo "$sp $am $((nk - left)) $bad" >"$work/st.$i"
}
jobs=${AMDGPU_CORPUS_JOBS:-$(nproc)}
running=0
for i in "${!mods[@]}"; do
	one "$i" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
both=0 spirv_only=0 neither=0 amd_only=0 kernels=0 bad=0
{
echo "# amdgpu/ over real modules: each module's PTX through 'gpuprobe ptx spirv' and 'gpuprobe ptx amdgpu'"
echo "# (gfx90a, gfx942, gfx1100; llvm-readobj: kernel descriptors, VGPRs, LDS). Columns: module, spirv, amdgcn, detail."
} >"$report"
for i in "${!mods[@]}"; do
	read -r sp am nk b <"$work/st.$i" || { sp=no am=no nk=0 b=1; echo "FAIL ${mods[$i]}: no result"; }   # nk: kernels lowered
	bad=$((bad + b))
	case $sp/$am in
	ok/ok | partial/ok | partial/partial) both=$((both + 1)); kernels=$((kernels + nk)) ;;
	ok/no | ok/partial) spirv_only=$((spirv_only + 1)) ;;
	partial/no | no/no) neither=$((neither + 1)) ;;
	no/ok | no/partial) amd_only=$((amd_only + 1)); kernels=$((kernels + nk)) ;;
	esac
	cat "$work/row.$i" >>"$report"
done
summary="$((both + amd_only)) of ${#mods[@]} modules lower to code objects for gfx90a, gfx942 and gfx1100, some with kernels left out as spirv/ leaves them ($kernels kernels, one descriptor each); spirv/ lowers $spirv_only that amdgpu/ does not (the table says why); $neither neither; $amd_only only amdgpu/"
echo "# $summary" >>"$report"
echo "$summary"
[ $bad = 0 ]
