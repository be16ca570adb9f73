#!/bin/bash
# ctest gpu.jit_dry: tests/gpu/jit.sh and jit_ml.sh without a GPU. A fake nvidia-smi, a fake
# python3 that prints what each tests/gpu/jit/ program prints (launch shapes, result hashes,
# losses, the profiler's expected counts, jaxlib's flag answer), a fake `gpuprobe run` that runs
# the program with FAKE_GP set, so that the fake programs print the maps gpuprobe would (entries,
# exits, memory sites; the launches tool's threads and launches with -t launches), and a fake
# nvrtc_launch. Checks that the scripts pass when the numbers are right, and that each wrong number
# is a FAIL line naming it: a kernel's count off by one, an extra Triton kernel, a loss that
# differs, a slow probed loop, an XLA kernel's exits or one the launches tool did not see, a CuPy
# nvcc kernel without probes (its cubins recorded only when CuPy ran gpuprobe-nvcc, which the fake
# gpuprobe names in NVCC as the real one does), a torch.compile kernel launched in another shape
# under gpuprobe, profiled training steps that are not alike (the profiler counts steps 2..50 and
# jit_ml.sh scales them to 50 steps); and that jit.sh leaves out an XLA flag jaxlib does not know.
# usage: tests/gpu/jit_dry_test.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/bin" "$W/build/bin" "$W/build/lib" "$W/build/gpu-jit"
fails=0 n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }

cat >"$W/bin/nvidia-smi" <<'EOF'
#!/bin/sh
echo "GPU 0: fake"
EOF
# the fake gpuprobe: `run [options] -- APP...`; maps come from the fake programs (FAKE_GP)
cat >"$W/build/bin/gpuprobe" <<'EOF'
#!/bin/bash
[ "$1" = run ] || exit 2
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case $1 in
	-t) [ "$2" = launches ] && export FAKE_LAUNCHES=1; shift ;;
	-p|-e) shift ;;
	esac
	shift
done
shift
# as gpuprobe run does: CuPy's nvcc is gpuprobe-nvcc unless NVCC is set
[ -n "${NVCC:-}" ] || export NVCC=$(dirname "$0")/gpuprobe-nvcc
FAKE_GP=1 "$@"
EOF
cp "$W/build/bin/gpuprobe" "$W/build/bin/gpuprobe-ptxas"
cp "$W/build/bin/gpuprobe" "$W/build/bin/gpuprobe-nvcc"
touch "$W/build/gpu-jit/jit_probes.bpf.o" "$W/build/gpu-jit/jit_counters.bpf.o"
cat >"$W/build/gpu-jit/nvrtc_launch" <<'EOF'
#!/bin/bash
echo "kernel scale programs 4096 threads 256 (-arch=sm_90)"
echo "result ok"
if [ -n "${FAKE_GP:-}" ]; then
	echo "gpuprobe: module 1: a cubin whose PTX nvrtc recorded (x.jitptx)" >&2
	for m in entries exits plain_loads plain_stores; do echo "@$m[scale]: 1048576" >&2; done
fi
EOF
cat >"$W/bin/python3" <<'EOF'
#!/bin/bash
# map NAME KERNEL VALUE: a map line on stderr, as gpuprobe prints it, only under the fake gpuprobe
map() { [ -n "${FAKE_GP:-}" ] && echo "@$1[$2]: $3" >&2; return 0; }
# launched KERNEL THREADS LAUNCHES: what the launches tool prints
launched() { [ -n "${FAKE_LAUNCHES:-}" ] && { map threads "$1" "$2"; map launches "$1" "$3"; }; return 0; }
recorded() { [ -n "${FAKE_GP:-}" ] && echo "gpuprobe: module 2: a cubin whose PTX $1 recorded (x.jitptx; arch sm_90a)" >&2; return 0; }
if [ "$1" = -c ]; then
	case $2 in
	*jax.devices*)
		echo "jax 0.9.0 jaxlib 0.9.0"
		if [ -n "${FAKE_JAX_UNKNOWN:-}" ]; then
			echo "F1126 parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: $FAKE_JAX_UNKNOWN" >&2
			exit 1
		fi
		echo "[CudaDevice(id=0)]" ;;
	*site.getsitepackages*) echo /nonexistent ;;
	esac
	exit 0
fi
script=$(basename "$1")
shift
triton() {   # KERNEL PROGRAMS THREADS LOADS STORES
	local t=$(($2 * $3))
	echo "kernel $1 programs $2 threads $3"
	echo "result 0123$1 ok"
	recorded ptxas
	map entries "$1" $t; map exits "$1" $t
	[ "$4" = 0 ] || map plain_loads "$1" "$4"
	map plain_stores "$1" "$5"
}
case $script in
triton_add.py) triton add_kernel 97 128 49216 24608 ;;
triton_softmax.py) triton softmax_kernel 1823 128 233344 233344 ;;
triton_matmul.py)
	triton matmul_kernel 16 128 0 32768
	map async_sites matmul_kernel 655360; map matrix_sites matmul_kernel 32768 ;;
cupy_kernels.py)
	only=${1:-}
	for k in "gp_saxpy_nvrtc 300 256 2" "gp_ew_axpb 500 128 1" "gp_scale_nvcc 40 64 3" "gp_saxpy_nvcc 77 128 1"; do
		set -- $k
		[ "$only" = nvrtc ] && case $1 in *nvcc) continue ;; esac
		echo "kernel $1 programs $2 threads $3 launches $4"
		echo "result $1 5678$1 ok"
		t=$(($2 * $3 * $4)) name=$1
		[ $1 = gp_ew_axpb ] && name=gp_ew_axpb__float32_float32
		launched $name $t $4
		# nvcc's cubins: recorded when CuPy ran gpuprobe-nvcc (NVCC)
		case $1 in *nvcc) if [ -n "${FAKE_NVCC_NOREC:-}" ] || [ "${NVCC:-}" = "${NVCC%/gpuprobe-nvcc}" ]; then
			[ -n "${FAKE_GP:-}" ] && echo "gpuprobe: module 9: a cubin with no PTX recorded for it" >&2
			continue
		fi
		recorded ptxas ;; esac
		map entries $name $t; map exits $name $t
	done ;;
jax_add.py)
	echo "result 9abc"
	recorded ptxas
	[ -n "${GPUPROBE_CACHE_DIR:-}" ] && mkdir -p "$GPUPROBE_CACHE_DIR" && : >"$GPUPROBE_CACHE_DIR/a.jitptx"
	launched loop_add_fusion 262144 1
	[ -n "${FAKE_JAX_GRAPH:-}" ] || launched wrapped_iota 262144 1
	map entries loop_add_fusion 262144; map exits loop_add_fusion 262144
	map entries wrapped_iota 262144; map exits wrapped_iota "${FAKE_IOTA:-262144}" ;;
compile_mlp.py)
	for i in $(seq 0 $((STEPS - 1))); do
		h=3f80000$((i % 10))
		[ -n "${FAKE_GP:-}" ] && [ -n "${FAKE_BADLOSS:-}" ] && [ $i = 7 ] && h=3f800100
		echo "loss $i $h 1.0"
	done
	loop=0.100000
	[ -n "${FAKE_GP:-}" ] && loop=${FAKE_PROBED_LOOP:-0.101000}
	sleep "${FAKE_SLEEP:-0}"
	echo "time first_step_s 3.000000 loop_s $loop steps $STEPS"
	if [ "${1:-}" = --profile ]; then
		# the steps after the first: 131072 and 524288 threads a launch, once a step (the H100's
		# run: the first step's benchmark launches, of other shapes, are not profiled)
		s=$((STEPS - 1)) l=$((STEPS - 1))
		[ -n "${FAKE_UNEVEN:-}" ] && l=$((2 * s + 1))
		echo "profiler kernels 400 triton kernels 2 steps $s"
		echo "profiled triton_per_fused_native_layer_norm_1 $((131072 * l)) $l 131072"
		echo "profiled triton_poi_fused_relu_0 $((524288 * s)) $s 524288"
	fi
	recorded ptxas
	# FAKE_GEOM: gpuprobe's run launches relu_0 with another shape (as many threads per step
	# in twice the launches: a configuration of its own)
	rl=50 rt=26214400
	[ -n "${FAKE_GEOM:-}" ] && rl=100
	map entries triton_poi_fused_relu_0 $rt; map exits triton_poi_fused_relu_0 $rt
	map entries triton_per_fused_native_layer_norm_1 "${FAKE_LN:-6553600}"
	map exits triton_per_fused_native_layer_norm_1 "${FAKE_LN:-6553600}"
	launched triton_poi_fused_relu_0 $rt $rl
	launched triton_per_fused_native_layer_norm_1 6553600 50
	launched sm90_xmma_gemm_f32f32 9999 150
	[ -n "${FAKE_EXTRA:-}" ] && launched triton_poi_fused_extra_9 1000 1
	echo "time total_s 9.0" ;;
esac
exit 0
EOF
chmod +x "$W/bin/"* "$W/build/bin/"* "$W/build/gpu-jit/nvrtc_launch"
# nvcc where jit.sh looks for it decides whether CuPy's nvcc kernels run
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then ONLY_NVRTC=0; else ONLY_NVRTC=1; fi

# run SCRIPT NAME [VAR=VALUE...]: the script with the fakes first on PATH; its output in $W/NAME
run() {
	local s=$1 name=$2
	shift 2
	env "$@" PATH="$W/bin:$PATH" BUILD="$W/build" OUT="$W/out-$name" bash "$root/tests/gpu/$s" >"$W/$name" 2>&1
	echo $? >"$W/$name.rc"
}
has() { grep -qF -- "$2" "$W/$1" && ok "$1: $2" || { bad "$1: no '$2'"; sed 's/^/    /' "$W/$1" | head -60; }; }
hasnt() { grep -qF -- "$2" "$W/$1" && { bad "$1: '$2'"; grep -F -- "$2" "$W/$1" | head -5; } || ok "$1: no '$2'"; }
rc() { [ "$(cat "$W/$1.rc")" = "$2" ] && ok "$1: exit $2" || bad "$1: exit $(cat "$W/$1.rc"), not $2"; }

# jit.sh, every number right (an NVCC of the user's: jit.sh leaves it out, gpuprobe run sets it)
run jit.sh jit-good NVCC=/opt/other/nvcc
rc jit-good 0
has jit-good "jit: all checks passed"
hasnt jit-good "FAIL"
has jit-good "PASS triton_softmax: entries of softmax_kernel (1823 programs x 128 threads) = 233344"
has jit-good "PASS cupy gp_saxpy_nvrtc: entries = 153600"
has jit-good "INFO cupy gp_ew_axpb: the kernel is named gp_ew_axpb__float32_float32"
has jit-good "PASS cupy gp_ew_axpb: exits = 64000"
has jit-good "PASS jax ptxas: all 2 XLA kernels: entries = exits = grid x block of their launches"
has jit-good "XLA_FLAGS='--xla_gpu_enable_libnvptxcompiler=false --xla_gpu_enable_libnvjitlink=false --xla_gpu_libnvjitlink_mode=disabled'"
# wrong numbers, and a jaxlib without --xla_gpu_libnvjitlink_mode
run jit.sh jit-bad FAKE_IOTA=262143 FAKE_NVCC_NOREC=1 FAKE_JAX_UNKNOWN=--xla_gpu_libnvjitlink_mode=disabled
rc jit-bad 1
has jit-bad "FAIL jax default: 1 of 2 kernels counted exactly; wrong: wrapped_iota(threads 262144, entries 262144, exits 262143)"
has jit-bad "FAIL jax ptxas: 1 of 2 kernels"
has jit-bad "does not know: --xla_gpu_libnvjitlink_mode=disabled"
has jit-bad "XLA_FLAGS='--xla_gpu_enable_libnvptxcompiler=false --xla_gpu_enable_libnvjitlink=false':"
has jit-bad "XLA_FLAGS='--xla_gpu_enable_libnvptxcompiler=false --xla_gpu_enable_libnvjitlink=true':"
if [ "$ONLY_NVRTC" = 0 ]; then
	has jit-good "PASS cupy gp_scale_nvcc: entries = 7680"
	has jit-good "PASS cupy gp_saxpy_nvcc: exits = 9856"
	has jit-good "PASS cupy: cubins of the nvcc backend found recorded by gpuprobe-ptxas (through gpuprobe-nvcc) = 2 (>= 2)"
	has jit-bad "FAIL cupy gp_scale_nvcc: entries: expected 7680, got"
	has jit-bad "FAIL cupy: cubins of the nvcc backend found recorded by gpuprobe-ptxas (through gpuprobe-nvcc): expected >= 2, got 0"
	has jit-bad "INFO cupy gp_saxpy_nvcc: nvcc made a cubin without a record"
else
	has jit-bad "SKIP cupy's nvcc backend"
fi
hasnt jit-bad "FAIL cupy gp_saxpy_nvrtc"
hasnt jit-bad "FAIL triton"
# an XLA kernel the launches tool did not see (a CUDA graph's) is not taken as right
run jit.sh jit-graph FAKE_JAX_GRAPH=1
rc jit-graph 1
has jit-graph "FAIL jax ptxas: 1 of 2 kernels counted exactly; wrong: wrapped_iota(threads none, entries 262144, exits 262144)"

# jit_ml.sh, every number right (FAKE_SLEEP: each run takes about that long, so that the whole-run
# ratio is about 1)
run jit_ml.sh ml-good FAKE_SLEEP=1
rc ml-good 0
has ml-good "jit_ml: all checks passed"
hasnt ml-good "FAIL"
has ml-good "PASS torch.compile: 50 losses bit-identical with and without probes"
has ml-good "PASS torch.compile: all 2 Triton kernels: entries = exits = grid x block of every launch"
has ml-good "PASS torch.compile probed-warm2 (cached): entries = exits = grid x block for all 2 Triton kernels"
has ml-good "PASS torch.compile overhead: training loop probed / plain = 1.010, median of 5 rounds (<= 1.10)"
# a count off by one, a loss that differs, an extra kernel, a slow probed loop
run jit_ml.sh ml-bad FAKE_LN=6553599 FAKE_BADLOSS=1 FAKE_EXTRA=1 FAKE_PROBED_LOOP=0.120000
rc ml-bad 1
has ml-bad "FAIL torch.compile: triton_per_fused_native_layer_norm_1: profiler 50 launches / 6553600 threads in 50 steps (131072 per launch); gpuprobe: entries '6553599', exits '6553599'"
has ml-bad "FAIL torch.compile: losses differ with probes"
has ml-bad "FAIL torch.compile: triton_poi_fused_extra_9 launched under gpuprobe (1000 threads) but not in the plain run"
has ml-bad "FAIL torch.compile probed-warm1 (cached): 1 of 2 Triton kernels counted wrong"
has ml-bad "FAIL torch.compile overhead: training loop probed / plain = 1.200, median of 5 rounds (> 1.10)"
has ml-bad "PASS torch.compile: the profiler saw 2 Inductor Triton kernels in training steps 2..50"
has ml-good "  triton_poi_fused_relu_0: 50 launches, entries = exits = 26214400"
# a kernel launched in another shape under gpuprobe: its launches differ, both shapes named
run jit_ml.sh ml-geom FAKE_GEOM=1
rc ml-geom 1
has ml-geom "FAIL torch.compile: triton_poi_fused_relu_0: profiler 50 launches / 26214400 threads in 50 steps (524288 per launch); gpuprobe: entries '26214400', exits '26214400', launches tool '100' launches / '26214400' threads (262144 per launch)"
hasnt ml-geom "FAIL torch.compile: triton_per_fused_native_layer_norm_1"
# training steps that do not launch alike: no expectation made up for the kernel
run jit_ml.sh ml-uneven FAKE_UNEVEN=1
rc ml-uneven 1
has ml-uneven "FAIL torch.compile: triton_per_fused_native_layer_norm_1: the profiler saw 99 launches (12976128 threads, 131072 per launch) in 49 training steps: not the same in every step"
has ml-uneven "FAIL torch.compile: triton_per_fused_native_layer_norm_1 launched under gpuprobe (6553600 threads) but not in the plain run's training steps"

echo "$((n - fails)) passed, $fails failed"
[ $fails = 0 ]
