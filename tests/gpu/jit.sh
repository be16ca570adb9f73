#!/bin/bash
# Kernels compiled at run time get probes (issue 16), on the GPU machine: each program runs once
# without gpuprobe and once under `gpuprobe run -p jit_probes.bpf.o` (entry and exit counters
# and memory sites by kind, tests/gpu/jit/jit_probes.bpf.c), each with a fresh compiler cache
# (TRITON_CACHE_DIR, GPUPROBE_CACHE_DIR) so that ptxas and NVRTC really run.
#   Triton vector add (jit/triton_add.py): entries = exits = programs x threads per program
#     exactly, plain global loads and stores > 0, the kernel named add_kernel, the result's hash
#     identical with and without probes, gpuprobe-ptxas's record used by the shim (its log line)
#   Triton matmul (jit/triton_matmul.py): the same, plus async (cp.async / TMA) or matrix sites
#     (ldmatrix / wmma) > 0: the tensor-core pipeline's memory traffic is seen
#   NVRTC (jit/nvrtc_launch.c): a cubin compiled by NVRTC and loaded with cuModuleLoadData:
#     entries = exits = 2^20, plain global loads = stores = 2^20 exactly, result checked
#   JAX (jit/jax_add.py), information only: what XLA's kernels get by default, with
#     XLA_FLAGS=--xla_gpu_enable_libnvptxcompiler=false --xla_gpu_libnvjitlink_mode=disabled
#     (ptxas: gpuprobe-ptxas records) and with ..._mode=enabled (nvJitLink: the stand-in records)
# Prints PASS/FAIL/INFO lines; logs (each run's stdout and stderr) under $OUT.
# usage: tests/gpu/jit.sh   (BUILD: a tests/gpu/prepare.sh build, default ./build, then
# build-jit). Exit 77 without a GPU, the build or the probe object.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root/build-jit"; do
		[ -x "$b/bin/gpuprobe" ] && [ -x "$b/bin/gpuprobe-ptxas" ] && { BUILD=$b; break; }
	done
	BUILD=${BUILD:-$root/build}
fi
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
GP=$BUILD/bin/gpuprobe
PROBE=$BUILD/gpu-jit/jit_probes.bpf.o
J=$root/tests/gpu/jit
for f in "$GP" "$BUILD/bin/gpuprobe-ptxas" "$PROBE"; do
	if [ ! -e "$f" ]; then
		echo "SKIP: $f missing (tests/gpu/prepare.sh $BUILD, or cmake --build $BUILD --target gpuprobe gpu_jit_probes)"
		exit 77
	fi
done
# the GPU machine has no libbpf: the build's copy in lib/
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fail=0
pass() { echo "PASS $*"; }
failed() { echo "FAIL $*"; fail=1; }
info() { echo "INFO $*"; }
check() { if [ "$2" = "$3" ]; then pass "$1 = $3"; else failed "$1: expected $2, got $3"; fi; }
positive() { if [ -n "$2" ] && [ "$2" -gt 0 ] 2>/dev/null; then pass "$1 = $2"; else failed "$1: expected > 0, got '${2:-nothing}'"; fi; }
# "@map[KERNEL]: N" of the report (the kernel by the name its compiler gave it)
val() { grep -F "@$2[$3]: " "$1" | tail -1 | sed 's/.*\]: //'; }

# run NAME CMD...: once plain, once under gpuprobe run; NAME.plain, NAME.out, NAME.err
run_both() {
	local name=$1
	shift
	env TRITON_CACHE_DIR="$OUT/$name-triton-plain" timeout 600 "$@" >"$OUT/$name.plain" 2>"$OUT/$name.plain.err"
	echo "rc=$? $name plain" >>"$OUT/runs.txt"
	env TRITON_CACHE_DIR="$OUT/$name-triton-probed" GPUPROBE_CACHE_DIR="$OUT/gpcache" GPUPROBE_LOG=1 \
		timeout 600 "$GP" run -p "$PROBE" -- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	local rc=$?
	echo "rc=$rc $name probed" >>"$OUT/runs.txt"
	echo "--- $name: $(head -2 "$OUT/$name.out" | tr '\n' ' ')"
	grep -E "cubin whose PTX|cubin with no PTX|did not|not instrumented|probes skipped|first launch with probes" \
		"$OUT/$name.err" | head -8
	return $rc
}

# triton NAME SCRIPT KERNEL
triton() {
	local name=$1 script=$2 kernel=$3
	run_both "$name" python3 "$script"
	check "$name: exit status under gpuprobe is 0" 1 "$(grep -c "rc=0 $name probed" "$OUT/runs.txt")"
	check "$name: the result (hash) identical with and without probes" \
		"$(grep '^result' "$OUT/$name.plain")" "$(grep '^result' "$OUT/$name.out")"
	grep -q "ok$" "$OUT/$name.out" && pass "$name: the result is right" || failed "$name: the result is wrong"
	local shape programs threads
	shape=$(grep "^kernel $kernel " "$OUT/$name.out")
	programs=$(echo "$shape" | awk '{print $4}') threads=$(echo "$shape" | awk '{print $6}')
	local want=$((programs * threads))
	grep -q "a cubin whose PTX ptxas recorded" "$OUT/$name.err" &&
		pass "$name: the shim found gpuprobe-ptxas's record for Triton's cubin" ||
		failed "$name: no 'cubin whose PTX ptxas recorded' line (GPUPROBE_LOG=1)"
	check "$name: entries of $kernel ($programs programs x $threads threads)" "$want" "$(val "$OUT/$name.err" entries "$kernel")"
	check "$name: exits of $kernel" "$want" "$(val "$OUT/$name.err" exits "$kernel")"
	# a matmul's loads may all be asynchronous copies (cp.async / TMA: H100, Triton 3.6)
	positive "$name: global loads of $kernel, plain or async" \
		"$(( $(val "$OUT/$name.err" plain_loads "$kernel" | grep -o '^[0-9]*' || true) + $(val "$OUT/$name.err" async_sites "$kernel" | grep -o '^[0-9]*' || true) + 0 ))"
	positive "$name: plain global stores of $kernel" "$(val "$OUT/$name.err" plain_stores "$kernel")"
	info "$name: async sites run $(val "$OUT/$name.err" async_sites "$kernel"), matrix sites run $(val "$OUT/$name.err" matrix_sites "$kernel")"
}

if python3 -c "import torch, triton" 2>/dev/null; then
	# gpuprobe-ptxas runs the ptxas on PATH, else /usr/local/cuda/bin/ptxas; without either,
	# Triton's own (docs/guide.md: GPUPROBE_REAL_PTXAS)
	if ! command -v ptxas >/dev/null && [ ! -x /usr/local/cuda/bin/ptxas ] && [ -z "${GPUPROBE_REAL_PTXAS:-}" ]; then
		GPUPROBE_REAL_PTXAS=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas"))')
		export GPUPROBE_REAL_PTXAS
		info "no ptxas on PATH or in /usr/local/cuda: GPUPROBE_REAL_PTXAS=$GPUPROBE_REAL_PTXAS"
	fi
	triton triton_add "$J/triton_add.py" add_kernel
	triton triton_matmul "$J/triton_matmul.py" matmul_kernel
	a=$(val "$OUT/triton_matmul.err" async_sites matmul_kernel) m=$(val "$OUT/triton_matmul.err" matrix_sites matmul_kernel)
	positive "triton_matmul: async + matrix sites run (the tensor-core pipeline's memory traffic)" $(( ${a:-0} + ${m:-0} ))
	# what Triton made of the matmul (for the record): the instructions the memory sites saw
	rec=$(ls "$OUT/gpcache"/*.jitptx 2>/dev/null | xargs grep -l "matmul_kernel" 2>/dev/null | head -1)
	[ -n "$rec" ] && info "triton_matmul PTX: $(grep -oE '^\s*(cp\.async[.a-z:0-9_]*|ldmatrix[.a-z0-9]*|stmatrix[.a-z0-9]*|wgmma[.a-z0-9_]*|mma[.a-z0-9]*)' "$rec" | sed 's/^\s*//' | sort | uniq -c | tr '\n' ';')"
else
	echo "SKIP triton parts: torch or triton not importable"
fi

# NVRTC: build the program here when prepare.sh did not (gcc and libdl are all it needs)
NV=$BUILD/gpu-jit/nvrtc_launch
if [ ! -x "$NV" ]; then
	NV=$OUT/nvrtc_launch
	gcc -O2 -o "$NV" "$J/nvrtc_launch.c" -ldl || failed "nvrtc: gcc"
fi
# the stand-in in BUILD/lib forwards to the real libnvrtc.so.13: /usr/local/cuda/lib64's, else a
# Python package's (docs/guide.md: GPUPROBE_REAL_NVRTC)
if [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ] && [ -z "${GPUPROBE_REAL_NVRTC:-}" ]; then
	for d in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
		f=$(ls "$d"/nvidia/*/lib/libnvrtc.so.13 2>/dev/null | head -1)
		[ -n "$f" ] && { export GPUPROBE_REAL_NVRTC=$f; info "GPUPROBE_REAL_NVRTC=$f"; break; }
	done
fi
if [ -x "$NV" ]; then
	run_both nvrtc "$NV"
	check "nvrtc: exit status under gpuprobe is 0" 1 "$(grep -c 'rc=0 nvrtc probed' "$OUT/runs.txt")"
	grep -q "^result ok" "$OUT/nvrtc.out" && pass "nvrtc: every element right" || failed "nvrtc: the result"
	grep -q "a cubin whose PTX nvrtc recorded" "$OUT/nvrtc.err" &&
		pass "nvrtc: the shim found libnvrtc's record for the cubin" || failed "nvrtc: no 'cubin whose PTX nvrtc recorded' line"
	n=$((1 << 20))
	check "nvrtc: entries of scale" $n "$(val "$OUT/nvrtc.err" entries scale)"
	check "nvrtc: exits of scale" $n "$(val "$OUT/nvrtc.err" exits scale)"
	check "nvrtc: plain global loads of scale (one per thread)" $n "$(val "$OUT/nvrtc.err" plain_loads scale)"
	check "nvrtc: plain global stores of scale" $n "$(val "$OUT/nvrtc.err" plain_stores scale)"
fi

# JAX, information only: which compiler XLA used, and what the probes saw
if python3 -c "import jax" 2>/dev/null; then
	for mode in default ptxas nvjitlink; do
		flags=${XLA_FLAGS:-}
		[ $mode = ptxas ] && flags="$flags --xla_gpu_enable_libnvptxcompiler=false --xla_gpu_libnvjitlink_mode=disabled"
		[ $mode = nvjitlink ] && flags="$flags --xla_gpu_enable_libnvptxcompiler=false --xla_gpu_libnvjitlink_mode=enabled"
		env XLA_FLAGS="$flags" GPUPROBE_CACHE_DIR="$OUT/gpcache-jax-$mode" GPUPROBE_LOG=1 \
			timeout 600 "$GP" run -p "$PROBE" -- python3 "$J/jax_add.py" >"$OUT/jax-$mode.out" 2>"$OUT/jax-$mode.err"
		rc=$?
		env XLA_FLAGS="$flags" timeout 600 python3 "$J/jax_add.py" >"$OUT/jax-$mode.plain" 2>&1
		info "jax ($mode, XLA_FLAGS='$flags'): exit $rc; result identical: $(cmp -s "$OUT/jax-$mode.plain" "$OUT/jax-$mode.out" && echo yes || echo no); records made: $(ls "$OUT/gpcache-jax-$mode" 2>/dev/null | grep -c jitptx); cubins found recorded: $(grep -c 'cubin whose PTX' "$OUT/jax-$mode.err"); cubins without a record: $(grep -c 'cubin with no PTX' "$OUT/jax-$mode.err"); entries: $(grep -F '@entries[' "$OUT/jax-$mode.err" | tr '\n' ' ')"
		grep -iE "unknown flag|libnvptxcompiler|ptxas" "$OUT/jax-$mode.err" | head -3
	done
else
	echo "SKIP jax part: jax not importable"
fi

[ $fail = 0 ] && echo "jit: all checks passed" || echo "jit: FAILURES"
exit $fail
