#!/bin/bash
# bench/jit_cost: what probes add to the compile of a module, without a GPU. A fresh run pays the
# driver's JIT of every instrumented kernel at its first launch (issue 11: (a) fresh 1.76x the
# program on the H100, cached 1.09x); ptxas compiles the same PTX the same way, so its CPU time
# is the measure here. For each program (app-regressions' fft, fma, chemv and cuda-samples'
# vectorAdd, nvcc -arch=sm_90 -ptx) and each of app-regressions' probes, the module is
# instrumented (gpuprobe ptx instrument --sms 132, inlined as the shim does) and compiled by
# ptxas -arch=sm_90; the table gives ptxas's user time (best of ROUNDS) and its ratio to the
# uninstrumented module's, for each gpuprobe given (to compare two builds side by side).
# usage: ptxas_cost.sh [-n ROUNDS] GPUPROBE [GPUPROBE2]   (needs ../shared/corpora beside the repo)
set -u
rounds=5
[ "${1:-}" = -n ] && { rounds=$2; shift 2; }
[ $# -ge 1 ] || { echo "usage: ptxas_cost.sh [-n ROUNDS] GPUPROBE [GPUPROBE2]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd) repo=$(cd "$here/../.." && pwd)
corp=${CORPORA:-$repo/../shared/corpora}
[ -d "$corp/app-regressions" ] || { echo "SKIP: no corpora at $corp" >&2; exit 77; }
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc} PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
W=$(mktemp -d) && trap 'rm -rf "$W"' EXIT
for p in entry_exit_hash entry_array memcount; do
	"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$repo/include" \
		-c "$corp/app-regressions/probes/$p.bpf.c" -o "$W/$p.bpf.o" || exit 1
done
ptx() {   # name, source, include dir
	"$NVCC" -arch=sm_90 -ptx -I"$3" -I"$corp/cuda-samples/Common" "$2" -o "$W/$1.ptx" 2>/dev/null
}
ptx fft "$corp/app-regressions/fft-cuda/main.cu" "$corp/app-regressions/fft-cuda"
ptx fma "$corp/app-regressions/fma-cuda/main.cu" "$corp/app-regressions/fma-cuda"
ptx chemv "$corp/app-regressions/chemv-cuda/kernel.cu" "$corp/app-regressions/chemv-cuda"
ptx vectorAdd "$corp/cuda-samples/samples/vectorAdd/vectorAdd.cu" "$corp/cuda-samples/samples/vectorAdd"
best() {   # PTX file: ptxas user seconds, best of $rounds ("fail" when ptxas fails)
	local b= t
	for ((r = 0; r < rounds; r++)); do
		/usr/bin/time -f '%U' -o "$W/t" "$PTXAS" -arch=sm_90 "$1" -o "$W/x.cubin" 2>/dev/null
		t=$(tail -1 "$W/t")
		[[ $t =~ ^[0-9.]+$ ]] || { echo fail; return; }
		b=$(awk -v a="${b:-$t}" -v c="$t" 'BEGIN { print (c < a ? c : a) }')
	done
	echo "$b"
}
printf '%-10s %-16s %8s' program probe native
for g in "$@"; do printf ' %16s' "$(basename "$(dirname "$(dirname "$(dirname "$g")")")")"; done
echo
for prog in fft fma chemv vectorAdd; do
	[ -s "$W/$prog.ptx" ] || { echo "$prog: nvcc failed"; continue; }
	n=$(best "$W/$prog.ptx")
	for p in entry_exit_hash entry_array memcount; do
		printf '%-10s %-16s %7ss' "$prog" "$p" "$n"
		i=0
		for g in "$@"; do
			i=$((i + 1))
			"$g" ptx instrument --sms 132 -p "$W/$p.bpf.o" "$W/$prog.ptx" -o "$W/$prog.$p.$i.ptx" 2>/dev/null ||
				{ printf ' %16s' "instrument-fail"; continue; }
			t=$(best "$W/$prog.$p.$i.ptx")
			printf ' %7ss %7s' "$t" "$(awk -v a="$t" -v b="$n" 'BEGIN { if (a == "fail") print "fail"; else if (b > 0) printf "%.1fx", a / b; else print "-" }')"
		done
		echo
	done
done
