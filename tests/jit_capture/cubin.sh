#!/usr/bin/env bash
# The shim finds recorded PTX for a cubin-only load (shim/jit_capture_load.c), over
# tests/shim_lazy's fake driver (FAKE_CUBIN_PTX: a cubin image is taken for the module that PTX
# describes) and its application: gpuprobe-ptxas compiles tests/shim_lazy/module.ptx to a cubin
# with -O3 --maxrregcount 48 -lineinfo; the application loads that cubin. With the record, the
# cubin loads as given and k_use's first launch runs the kernel instrumented from the recorded
# PTX, with the recorded options as JIT options the application did not give itself; without
# it, one line says what a Triton/NVRTC user does about it.
# A cubin without a record that a library loads names the library: an NVIDIA library's (cuBLAS
# decompresses its kernels and loads them) says no PTX exists, another keeps the advice.
# usage: cubin.sh GPUPROBE_PTXAS LAZY_APP SHIM FAKE_DRIVER MODULE.ptx PROBE.bpf.o LOADER.so
set -u
wrap=$1 app=$2 shim=$3 fake=$4 ptx=$5 probe=$6 loader=$7
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
has() { if grep -qF -- "$3" "$tmp/$2"; then ok "$1"; else bad "$1"; echo "--- no line with: $3"; cat "$tmp/$2"; fi; }

export GPUPROBE_CACHE_DIR=$tmp/cache
unset GPUPROBE_LOG GPUPROBE_LAZY
export GPUPROBE_AGGREGATE=0   # the probe sites counted below are one per access
"$wrap" -arch=sm_90 -O3 --maxrregcount 48 -lineinfo "$ptx" -o "$tmp/m.cubin" ||
	{ bad "gpuprobe-ptxas compiles module.ptx"; exit 1; }
key=$(sha256sum "$tmp/m.cubin" | cut -c1-64)

# run NAME [ENV=VALUE...] [-- APP ARGS]
run() {
	local name=$1
	shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	env GPUPROBE_LOG=1 GPUPROBE_PROBES="$probe" GPUPROBE_REAL_LIBCUDA="$fake" \
		FAKE_CUBIN_PTX="$ptx" "${envs[@]}" "$app" "$shim" "$tmp/m.cubin" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	[ $rc = 0 ] && ok "$name: every call of the application succeeded" ||
		{ bad "$name: exit status $rc"; cat "$tmp/$name.out" "$tmp/$name.err"; }
}
# (how many variables a split kernel's module declares is the split's business: not checked)
fake() { grep -E '^fake: ' "$tmp/$1.out" | sed -E 's/; text [0-9a-f]+//; s/(instrumented: k_use) \([0-9]+ variables/\1 (N variables/'; }

# 1. cuModuleLoadDataEx with the application's own CU_JIT_MAX_REGISTERS=64: the cubin loads as
# given; k_use instrumented from the recorded PTX with -O3 and line info added (64 stays).
run module
check "module: the cubin as given, then k_use from its recorded PTX (-O3, line info added)" \
"fake: a cubin, taken for $ptx
fake: load module original: k_use k_other k_plain k_dyn (4 variables; capture mode 0)
fake: instrumented PTX with 7 JIT options: 0=64 7=3 13=1
fake: load module instrumented: k_use (N variables; capture mode 2)
fake: launch k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42
fake: launch k_use instrumented, block 128, 0 bytes dynamic shared; reads c = 7 reads g = 42 reads g = 42 reads c = 7 reads g = 42
fake: unload an instrumented module of k_use
fake: unload an original module of k_use" "$(fake module)"
has "module: the log names the record" module.err \
	"gpuprobe: module 1: a cubin whose PTX ptxas recorded ($tmp/cache/$key.jitptx; arch sm_90; JIT options added: -O3 lineinfo): its kernels are instrumented from that PTX"
has "module: the module line" module.err \
	"gpuprobe: module 1 via cuModuleLoadDataEx: cubin; 4 kernels; PTX recorded by the JIT compiler that made the cubin"
grep -qE "^gpuprobe: kernel k_use \(module 1\): first launch with probes in .* 3 probe sites in 1 functions" \
	"$tmp/module.err" && ok "module: k_use named by its name, 3 probe sites" ||
	{ bad "module: the first-launch line"; cat "$tmp/module.err"; }

# 2. cuLibraryLoadData without options: all three recorded options are added.
run library -- library
check "library: -O3, maxrregcount 48 and line info as JIT options" \
	"fake: instrumented PTX with 7 JIT options: 7=3 0=48 13=1" "$(fake library | grep 'JIT options')"
check "library: both launches instrumented" 2 "$(fake library | grep -c 'launch k_use instrumented')"

# 3. GPUPROBE_LAZY=0: the whole module instrumented from the PTX, checked and loaded with the
# application's options plus the recorded ones.
run whole GPUPROBE_LAZY=0
check "whole: the instrumented module (check, then the load) with the options" \
"fake: instrumented PTX with 3 JIT options: 0=64 7=3 13=1
fake: load module instrumented: k_use k_other k_plain k_dyn (4 variables; capture mode 2)
fake: unload an instrumented module of k_use
fake: instrumented PTX with 3 JIT options: 0=64 7=3 13=1
fake: load module instrumented: k_use k_other k_plain k_dyn (4 variables; capture mode 0)" \
	"$(fake whole | sed -n '1,5p')"
has "whole: 10 probe sites" whole.err "gpuprobe: module 1: instrumented (10 probe sites in 4 functions)"

# 4. No record (another cache): the cubin runs without probes, one actionable line.
run none GPUPROBE_CACHE_DIR="$tmp/empty" GPUPROBE_LOG=0
check "none: one line" 1 "$(grep -c '^gpuprobe: ' "$tmp/none.err")"
has "none: it says what a Triton/NVRTC user does" none.err \
	"gpuprobe: module 1 (cuModuleLoadDataEx): a cubin with no PTX recorded for it (SHA-256 ${key:0:16}...): its kernels run without probes. A cubin that Triton, XLA, NVRTC, nvJitLink or CuPy's nvcc compiled gets probes when the compiler runs under 'gpuprobe run' (it sets TRITON_PTXAS_PATH to gpuprobe-ptxas"
check "none: the original runs" 2 "$(fake none | grep -c 'launch k_use original')"

# 4b. The same load made by a library: by an NVIDIA library's name, no advice; by another, the
# advice with the library named.
run nvlib GPUPROBE_CACHE_DIR="$tmp/empty" GPUPROBE_LOG=0 LAZY_APP_LOADER="$loader" -- library
check "nvlib: one line" 1 "$(grep -c '^gpuprobe: ' "$tmp/nvlib.err")"
has "nvlib: it names the library and says no PTX exists" nvlib.err \
	"gpuprobe: module 1 (cuLibraryLoadData by $loader): machine code that NVIDIA's library loads at run time (no PTX exists for it): its kernels run without probes"
cp "$loader" "$tmp/libloader.so"
run otherlib GPUPROBE_CACHE_DIR="$tmp/empty" GPUPROBE_LOG=0 LAZY_APP_LOADER="$tmp/libloader.so" -- library
has "otherlib: the advice, with the library named" otherlib.err \
	"gpuprobe: module 1 (cuLibraryLoadData by $tmp/libloader.so): a cubin with no PTX recorded for it (SHA-256 ${key:0:16}...): its kernels run without probes. A cubin that Triton"

# 5. A record that does not check out (its PTX altered): ignored with one line.
sed -i 's/k_use/k_USE/' "$tmp/cache/$key.jitptx"
run corrupt GPUPROBE_LOG=0
has "corrupt: said" corrupt.err "gpuprobe: module 1: PTX record $tmp/cache/$key.jitptx does not check out: ignored"
check "corrupt: the original runs" 2 "$(fake corrupt | grep -c 'launch k_use original')"

# 6. Without probes nothing is looked up: not a line.
env GPUPROBE_REAL_LIBCUDA="$fake" FAKE_CUBIN_PTX="$ptx" "$app" "$shim" "$tmp/m.cubin" >"$tmp/plain.out" 2>"$tmp/plain.err"
check "no probes: silent" "" "$(grep '^gpuprobe: module' "$tmp/plain.err")"

echo "$fails failures"
[ $fails = 0 ]
