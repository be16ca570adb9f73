#!/bin/bash
# bench/jit_cost: what one probe makes of each program's module, with and without aggregated
# memory sites (GPUPROBE_AGGREGATE): the probe calls spliced in (and the accesses they count), the
# module's PTX instructions, and the SASS instructions ptxas -arch=sm_90 makes of it (the cubin's
# .text sections, 16 bytes an instruction, NOPs left out). Programs as ptxas_cost.sh (nvcc -arch=sm_90 -ptx of
# app-regressions' fft, fma, chemv); the probe is app-regressions' memcount unless given.
# usage: site_counts.sh GPUPROBE [PROBE.bpf.c]   (needs ../shared/corpora beside the repo)
set -u
[ $# -ge 1 ] || { echo "usage: site_counts.sh GPUPROBE [PROBE.bpf.c]" >&2; exit 2; }
GP=$1
here=$(cd "$(dirname "$0")" && pwd) repo=$(cd "$here/../.." && pwd)
corp=${CORPORA:-$repo/../shared/corpora}
[ -d "$corp/app-regressions" ] || { echo "SKIP: no corpora at $corp" >&2; exit 77; }
probe=${2:-$corp/app-regressions/probes/memcount.bpf.c}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc} PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
W=$(mktemp -d) && trap 'rm -rf "$W"' EXIT
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$repo/include" -c "$probe" -o "$W/p.bpf.o" || exit 1
ptx() { "$NVCC" -arch=sm_90 -ptx -I"$3" "$2" -o "$W/$1.ptx" 2>/dev/null; }
ptx fft "$corp/app-regressions/fft-cuda/main.cu" "$corp/app-regressions/fft-cuda"
ptx fma "$corp/app-regressions/fma-cuda/main.cu" "$corp/app-regressions/fma-cuda"
ptx chemv "$corp/app-regressions/chemv-cuda/kernel.cu" "$corp/app-regressions/chemv-cuda"
insns() { grep -E '^\s*(@!?%[A-Za-z0-9_]+\s+)?[a-z][a-z0-9_.]*(\s|;)' "$1" | grep -c ';'; }
sass() {   # instructions in the cubin's .text sections, NOPs (opcode 0x918) not counted
	local n=0 off size
	while read -r off size; do
		n=$((n + $(od -An -v -tu2 -w16 -j $((16#$off)) -N $((16#$size)) "$1" |
			awk '{ if ($1 % 4096 != 2328) c++ } END { print c + 0 }')))
	done < <(readelf -SW "$1" 2>/dev/null | grep ' \.text\.' |
		 awk '{ for (i = 1; i <= NF; i++) if ($i == "PROGBITS") { print $(i + 2), $(i + 3); break } }')
	echo $n
}
printf '%-8s %-12s %7s %7s %9s %9s\n' program aggregate calls counted ptx_insns sass_insns
for prog in fft fma chemv; do
	[ -s "$W/$prog.ptx" ] || { echo "$prog: nvcc failed"; continue; }
	"$PTXAS" -arch=sm_90 "$W/$prog.ptx" -o "$W/$prog.cubin" &&
		printf '%-8s %-12s %7s %7s %9s %9s\n' "$prog" native - - "$(insns "$W/$prog.ptx")" "$(sass "$W/$prog.cubin")"
	for a in 0 1; do
		GPUPROBE_AGGREGATE=$a "$GP" ptx instrument --sms 132 -p "$W/p.bpf.o" "$W/$prog.ptx" \
			-o "$W/$prog.$a.ptx" 2>"$W/$prog.$a.err" || { echo "$prog: instrument failed"; continue; }
		calls=$(grep -E "^gpuprobe: $W/$prog.ptx: [0-9]+ probe sites" "$W/$prog.$a.err" |
			grep -oE '[0-9]+ probe sites' | grep -oE '^[0-9]+')
		[ $a = 0 ] && sites=$calls   # a call per access: the accesses
		"$PTXAS" -arch=sm_90 "$W/$prog.$a.ptx" -o "$W/$prog.$a.cubin" || { echo "$prog: ptxas failed"; continue; }
		printf '%-8s %-12s %7s %7s %9s %9s\n' "$prog" "$([ $a = 1 ] && echo on || echo off)" "$calls" \
			"$sites" "$(insns "$W/$prog.$a.ptx")" "$(sass "$W/$prog.$a.cubin")"
	done
done
