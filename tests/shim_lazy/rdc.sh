#!/usr/bin/env bash
# A fatbin of two PTX translation units (nvcc -rdc's shape, made here with CUDA's fatbinary):
# unit_a.ptx is module.ptx with its device function `helper` defined in unit_b.ptx (which reads
# unit A's constant array c, and has its own $str). The shim instruments the units linked
# (ptx-frontend/link.h): k_use, instrumented at its first launch (and the whole module with
# GPUPROBE_LAZY=0), carries helper's definition, so ptxas compiles it; before, the instrumented
# k_use declared helper .extern and the compile failed (the kernel ran without probes).
# Over fake_lazy_driver.c, which takes the fatbin for unit A's kernels and variables.
# usage: rdc.sh LAZY_APP SHIM FAKE_DRIVER UNITS_DIR PROBE.bpf.o
set -u
app=$1 shim=$2 fake=$3 units=$4 probe=$5
FATBINARY=${FATBINARY:-/usr/local/cuda/bin/fatbinary}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
[ -x "$FATBINARY" ] && [ -x "$PTXAS" ] || { echo "SKIP: needs $FATBINARY and $PTXAS"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
"$FATBINARY" --create="$tmp/rdc.fatbin" -64 --image3=kind=ptx,sm=90,file="$units/unit_a.ptx" \
	--image3=kind=ptx,sm=90,file="$units/unit_b.ptx" || { bad "fatbinary"; exit 1; }
for lazy in 1 0; do
	n=lazy$lazy
	env GPUPROBE_LOG=1 GPUPROBE_LAZY=$lazy GPUPROBE_PROBES="$probe" GPUPROBE_REAL_LIBCUDA="$fake" \
		GPUPROBE_CACHE_DIR="$tmp/cache-$n" FAKE_CUBIN_PTX="$units/unit_a.ptx" FAKE_DUMP="$tmp/$n.inst.ptx" \
		"$app" "$shim" "$tmp/rdc.fatbin" >"$tmp/$n.out" 2>"$tmp/$n.err"
	rc=$?
	check "$n: every call of the application succeeded" 0 $rc
	[ $rc = 0 ] || cat "$tmp/$n.out" "$tmp/$n.err"
	want="fake: load module instrumented: k_use"
	[ $lazy = 0 ] && want="fake: load module instrumented: k_use k_other k_plain k_dyn"
	check "$n: the instrumented load" "$want" \
		"$(grep "^fake: load module instrumented" "$tmp/$n.out" | tail -1 | sed -E "s/ \(.*//")"
	check "$n: the instrumented PTX defines helper, from unit B" 1 \
		"$(grep -cE '^\.visible \.func +\(\.param \.b32 func_retval0\) helper\($' "$tmp/$n.inst.ptx" 2>/dev/null)"
	check "$n: and declares it .extern no more" 0 "$(grep -c '^\.extern \.func.*helper' "$tmp/$n.inst.ptx" 2>/dev/null)"
	"$PTXAS" -arch=sm_90 "$tmp/$n.inst.ptx" -o "$tmp/$n.cubin" 2>"$tmp/$n.ptxas"
	check "$n: ptxas compiles the instrumented module" "0 " "$? $(head -1 "$tmp/$n.ptxas")"
	check "$n: no line of the shim says a kernel runs without probes" 0 \
		"$(grep -ciE 'without probes|not instrumented|did not compile' "$tmp/$n.err")"
done
# two copies of one module (not units of one program: both define every kernel): the first alone,
# as before linking was tried
"$FATBINARY" --create="$tmp/twice.fatbin" -64 --image3=kind=ptx,sm=90,file="$units/../module.ptx" \
	--image3=kind=ptx,sm=90,file="$units/../module.ptx" || { bad "fatbinary (twice)"; exit 1; }
env GPUPROBE_LOG=1 GPUPROBE_PROBES="$probe" GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_CACHE_DIR="$tmp/cache-twice" \
	FAKE_CUBIN_PTX="$units/../module.ptx" FAKE_DUMP="$tmp/twice.inst.ptx" \
	"$app" "$shim" "$tmp/twice.fatbin" >"$tmp/twice.out" 2>"$tmp/twice.err"
check "two copies of one module: every call succeeded" 0 $?
check "two copies of one module: k_use instrumented once, from one copy" "fake: load module instrumented: k_use" \
	"$(grep "^fake: load module instrumented" "$tmp/twice.out" | tail -1 | sed -E "s/ \(.*//")"
"$PTXAS" -arch=sm_90 "$tmp/twice.inst.ptx" -o "$tmp/twice.cubin" 2>"$tmp/twice.ptxas"
check "two copies of one module: ptxas compiles the instrumented k_use" "0 " "$? $(head -1 "$tmp/twice.ptxas")"
[ $fails = 0 ] && echo "rdc.sh: PASS" || echo "rdc.sh: $fails FAILED"
exit $((fails != 0))
