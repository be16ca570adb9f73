#!/bin/bash
# Kernels compiled at run time get probes (issue 16), on the GPU machine: each program runs once
# without gpuprobe and once under `gpuprobe run -p jit_probes.bpf.o` (entry and exit counters
# and memory sites by kind, tests/gpu/jit/jit_probes.bpf.c), each with a fresh compiler cache
# (TRITON_CACHE_DIR, CUPY_CACHE_DIR, GPUPROBE_CACHE_DIR) so that ptxas, NVRTC and nvcc really run.
#   Triton vector add (jit/triton_add.py): entries = exits = programs x threads per program
#     exactly, plain global loads and stores > 0, the kernel named add_kernel, the result's hash
#     identical with and without probes, gpuprobe-ptxas's record used by the shim (its log line)
#   Triton matmul (jit/triton_matmul.py): the same, plus async (cp.async / TMA) or matrix sites
#     (ldmatrix / wmma) > 0: the tensor-core pipeline's memory traffic is seen
#   Triton fused softmax (jit/triton_softmax.py, one program per row of 781 in a block of 1024):
#     the same checks as the vector add
#   NVRTC (jit/nvrtc_launch.c): a cubin compiled by NVRTC and loaded with cuModuleLoadData:
#     entries = exits = 2^20, plain global loads = stores = 2^20 exactly, result checked
#   CuPy (jit/cupy_kernels.py, cubins: no CUPY_COMPILE_WITH_PTX): a RawKernel through NVRTC, an
#     ElementwiseKernel (NVRTC), a RawModule and a RawKernel through nvcc (backend="nvcc"; nvcc
#     from PATH, else /usr/local/cuda via CUDA_PATH; NVCC unset, so that under gpuprobe CuPy runs
#     gpuprobe-nvcc, which `gpuprobe run` names in NVCC): per kernel entries = exits = blocks x
#     threads x launches exactly, = what gpuprobe's launches tool saw asked of the driver in the
#     same run, each output identical with and without probes and right; the nvcc kernels' cubins
#     found recorded by gpuprobe-ptxas (through gpuprobe-nvcc): at least 2
#   JAX (jit/jax_add.py): the flags this jaxlib knows are asked first (XLA stops at start-up on
#     a flag it does not know); then by default, with XLA_FLAGS that make XLA run ptxas
#     (--xla_gpu_enable_libnvptxcompiler=false, --xla_gpu_enable_libnvjitlink=false, or the older
#     --xla_gpu_libnvjitlink_mode=disabled: those it knows) and with nvJitLink
#     (--xla_gpu_enable_libnvjitlink=true or ..._mode=enabled), under `-p jit_probes.bpf.o -t
#     launches`: the ptxas run (and the default one when XLA ran ptxas) must show every XLA kernel
#     with entries = exits = its launches' grid x block (the launches tool) and the result
#     identical; the nvJitLink run is information only
# Prints PASS/FAIL/INFO lines; logs (each run's stdout and stderr) under $OUT. About 2 minutes.
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
# every row of the kernel tables (the launches tool lists every kernel launched)
export GPUPROBE_TOP=1000000
# fresh compiler caches and run list, also when OUT is used again
rm -rf "$OUT"/*-triton-plain "$OUT"/*-triton-probed "$OUT"/cupy-plain "$OUT"/cupy-probed "$OUT"/gpcache* \
	"$OUT/runs.txt"
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
	triton triton_softmax "$J/triton_softmax.py" softmax_kernel
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

# CuPy: cubins compiled at run time by NVRTC (RawKernel, ElementwiseKernel) and by nvcc
# (RawModule, RawKernel with backend="nvcc"); without CUPY_COMPILE_WITH_PTX CuPy loads cubins,
# which get probes only through the compilers' records.
# NAME of the kernel a report lists for PREFIX: PREFIX itself or PREFIX_... (CuPy may add types)
kname() { grep -oE "^@threads\[$2(_[^]]*)?\]" "$1" | head -1 | sed 's/^@threads\[//; s/\]$//'; }
if python3 -c "import cupy" 2>/dev/null; then
	cupy_env=(env -u CUPY_COMPILE_WITH_PTX -u NVCC) cupy_arg=()
	if command -v nvcc >/dev/null; then
		:
	elif [ -x /usr/local/cuda/bin/nvcc ]; then
		cupy_env+=(CUDA_PATH=/usr/local/cuda)
		info "cupy: nvcc is /usr/local/cuda/bin/nvcc (CUDA_PATH=/usr/local/cuda)"
	else
		cupy_arg=(nvrtc)
		echo "SKIP cupy's nvcc backend: no nvcc on PATH or in /usr/local/cuda/bin"
	fi
	"${cupy_env[@]}" CUPY_CACHE_DIR="$OUT/cupy-plain" timeout 600 python3 "$J/cupy_kernels.py" "${cupy_arg[@]}" \
		>"$OUT/cupy.plain" 2>"$OUT/cupy.plain.err"
	check "cupy: exit status without probes" 0 $?
	"${cupy_env[@]}" CUPY_CACHE_DIR="$OUT/cupy-probed" GPUPROBE_CACHE_DIR="$OUT/gpcache" GPUPROBE_LOG=1 \
		timeout 600 "$GP" run -p "$PROBE" -t launches -- python3 "$J/cupy_kernels.py" "${cupy_arg[@]}" \
		>"$OUT/cupy.out" 2>"$OUT/cupy.err"
	check "cupy: exit status under gpuprobe" 0 $?
	grep -E "cubin whose PTX|cubin with no PTX|did not|not instrumented|probes skipped|Error|error:|^gpuprobe-nvcc:" "$OUT/cupy.err" | head -10
	check "cupy: kernels run" $(( ${#cupy_arg[@]} ? 2 : 4 )) "$(grep -c '^kernel ' "$OUT/cupy.plain")"
	while read -r _ name _ blocks _ threads _ launches; do
		want=$((blocks * threads * launches))
		rp=$(grep "^result $name " "$OUT/cupy.plain") rq=$(grep "^result $name " "$OUT/cupy.out")
		check "cupy $name: output identical with and without probes" "$rp" "$rq"
		case $rq in *" ok") pass "cupy $name: output right" ;; *) failed "cupy $name: output wrong or missing" ;; esac
		k=$(kname "$OUT/cupy.err" "$name")
		[ -n "$k" ] || k=$name
		[ "$k" = "$name" ] || info "cupy $name: the kernel is named $k"
		check "cupy $name: launches (launches tool)" "$launches" "$(val "$OUT/cupy.err" launches "$k")"
		check "cupy $name: threads asked of the driver ($blocks blocks x $threads x $launches launches, launches tool)" \
			"$want" "$(val "$OUT/cupy.err" threads "$k")"
		check "cupy $name: entries" "$want" "$(val "$OUT/cupy.err" entries "$k")"
		check "cupy $name: exits" "$want" "$(val "$OUT/cupy.err" exits "$k")"
		case $name in *_nvcc)
			[ -z "$(val "$OUT/cupy.err" entries "$k")" ] && grep -q "cubin with no PTX recorded" "$OUT/cupy.err" &&
				info "cupy $name: nvcc made a cubin without a record: did CuPy run gpuprobe-nvcc (NVCC, which gpuprobe run sets; its GPUPROBE_LOG=1 lines 'gpuprobe-nvcc: ...' in $OUT/cupy.err say what it did)?" ;;
		esac
	done < <(grep '^kernel ' "$OUT/cupy.plain")
	if [ ${#cupy_arg[@]} = 0 ]; then
		[ -x "$BUILD/bin/gpuprobe-nvcc" ] || failed "cupy: $BUILD/bin/gpuprobe-nvcc missing (cmake the build again)"
		nrec=$(grep -c 'a cubin whose PTX ptxas recorded' "$OUT/cupy.err")
		[ "$nrec" -ge 2 ] && pass "cupy: cubins of the nvcc backend found recorded by gpuprobe-ptxas (through gpuprobe-nvcc) = $nrec (>= 2)" ||
			failed "cupy: cubins of the nvcc backend found recorded by gpuprobe-ptxas (through gpuprobe-nvcc): expected >= 2, got $nrec"
	fi
	info "cupy: $(grep -c 'a cubin whose PTX nvrtc recorded' "$OUT/cupy.err") cubins instrumented from NVRTC's records, $(grep -c 'a cubin whose PTX ptxas recorded' "$OUT/cupy.err") from gpuprobe-ptxas's, $(grep -c 'cubin with no PTX recorded' "$OUT/cupy.err") without a record"
else
	echo "SKIP cupy part: cupy not importable"
fi

# JAX: XLA's kernels. First ask this jaxlib which of the compiler-choice flags it knows: XLA
# stops at start-up on an unknown flag in XLA_FLAGS, naming every unknown one.
if python3 -c "import jax" 2>/dev/null; then
	cands="--xla_gpu_enable_libnvptxcompiler=false --xla_gpu_enable_libnvjitlink=false --xla_gpu_libnvjitlink_mode=disabled"
	XLA_FLAGS="$cands" timeout 300 python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, flush=True); print(jax.devices())' \
		>"$OUT/jax-flags.txt" 2>&1
	frc=$?
	unknown=$(sed -n 's/.*Unknown flags\{0,1\} in XLA_FLAGS: //p' "$OUT/jax-flags.txt" | head -1)
	knows=""
	if [ $frc = 0 ] || [ -n "$unknown" ]; then
		for f in $cands; do
			case " $unknown " in *" $f "*) ;; *) knows="$knows ${f%%=*}" ;; esac
		done
	else
		info "jax: could not ask this jaxlib about its flags (exit $frc): $(tail -1 "$OUT/jax-flags.txt")"
	fi
	has() { case " $knows " in *" --$1 "*) return 0 ;; esac; return 1; }
	info "jax: $(grep -m1 '^jax ' "$OUT/jax-flags.txt" || echo 'version unknown'); knows:${knows:- none of them}; does not know: ${unknown:-none of them}"
	ptxas_flags="" nvjl_flags=""
	for f in xla_gpu_enable_libnvptxcompiler=false xla_gpu_enable_libnvjitlink=false xla_gpu_libnvjitlink_mode=disabled; do
		has "${f%%=*}" && ptxas_flags="$ptxas_flags --$f"
	done
	if has xla_gpu_enable_libnvjitlink; then
		nvjl_flags="--xla_gpu_enable_libnvjitlink=true"
	elif has xla_gpu_libnvjitlink_mode; then
		nvjl_flags="--xla_gpu_libnvjitlink_mode=enabled"
	fi
	[ -n "$nvjl_flags" ] && has xla_gpu_enable_libnvptxcompiler && nvjl_flags="--xla_gpu_enable_libnvptxcompiler=false $nvjl_flags"
	for mode in default ptxas nvjitlink; do
		case $mode in
		default) extra="" ;;
		ptxas) extra=$ptxas_flags ;;
		nvjitlink) extra=$nvjl_flags ;;
		esac
		if [ $mode != default ] && [ -z "$extra" ]; then
			info "jax $mode: this jaxlib knows no flag for it; not run"
			continue
		fi
		flags=$(echo ${XLA_FLAGS:-} $extra)
		env XLA_FLAGS="$flags" GPUPROBE_CACHE_DIR="$OUT/gpcache-jax-$mode" GPUPROBE_LOG=1 \
			timeout 600 "$GP" run -p "$PROBE" -t launches -- python3 "$J/jax_add.py" >"$OUT/jax-$mode.out" 2>"$OUT/jax-$mode.err"
		rc=$?
		env XLA_FLAGS="$flags" timeout 600 python3 "$J/jax_add.py" >"$OUT/jax-$mode.plain" 2>"$OUT/jax-$mode.plain.err"
		prc=$?
		records=$(ls "$OUT/gpcache-jax-$mode" 2>/dev/null | grep -c '\.jitptx$')
		found=$(grep -c 'cubin whose PTX' "$OUT/jax-$mode.err") norec=$(grep -c 'cubin with no PTX' "$OUT/jax-$mode.err")
		same=no
		[ -n "$(grep '^result' "$OUT/jax-$mode.plain")" ] && cmp -s "$OUT/jax-$mode.plain" "$OUT/jax-$mode.out" && same=yes
		# every kernel launched (the launches tool) or probed: entries = exits = its threads (a
		# kernel with entries and no threads was launched in a way the launches tool does not see,
		# such as a CUDA graph: XLA's command buffers)
		nk=0 good=0 bad=""
		while read -r k; do
			nk=$((nk + 1))
			t=$(val "$OUT/jax-$mode.err" threads "$k") e=$(val "$OUT/jax-$mode.err" entries "$k") x=$(val "$OUT/jax-$mode.err" exits "$k")
			if [ -n "$t" ] && [ "$e" = "$t" ] && [ "$x" = "$t" ]; then
				good=$((good + 1))
			else
				bad="$bad $k(threads ${t:-none}, entries ${e:-none}, exits ${x:-none})"
			fi
		done < <(grep -oE '^@(threads|entries)\[[^]]*\]' "$OUT/jax-$mode.err" | sed -E 's/^@(threads|entries)\[//; s/\]$//' | sort -u)
		summary="XLA_FLAGS='$flags': exit $rc (plain $prc); result identical: $same; records made: $records; cubins found recorded: $found; without a record: $norec; kernels launched $nk, counted exactly $good: $(grep -F '@entries[' "$OUT/jax-$mode.err" | tr '\n' ' ')"
		grep -iE "unknown flag|libnvptxcompiler|nvjitlink" "$OUT/jax-$mode.err" | head -3
		if [ $mode = ptxas ] || { [ $mode = default ] && [ "$found" -gt 0 ]; }; then
			check "jax $mode: exit status under gpuprobe" 0 $rc
			check "jax $mode: result identical with and without probes" yes $same
			positive "jax $mode: cubins instrumented from ptxas's records" "$found"
			if [ $nk -gt 0 ] && [ $good = $nk ]; then
				pass "jax $mode: all $nk XLA kernels: entries = exits = grid x block of their launches ($summary)"
			else
				failed "jax $mode: $good of $nk kernels counted exactly; wrong:$bad ($summary)"
			fi
		else
			info "jax $mode: $summary${bad:+; not exact:$bad}"
			[ $mode = default ] && [ "$found" = 0 ] &&
				info "jax default: no ptxas record: XLA probably compiled its PTX in the process (libnvptxcompiler or nvJitLink); its run with the ptxas flags is the one gpuprobe instruments"
		fi
	done
else
	echo "SKIP jax part: jax not importable"
fi

[ $fail = 0 ] && echo "jit: all checks passed" || echo "jit: FAILURES"
exit $fail
