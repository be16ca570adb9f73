#!/bin/bash
# GPU tests of the shim (issue 2): real CUDA apps give identical output with and without it.
#   runtime    tests/gpu/apps/rt_app: kernels, streams, events, a graph, async copies, 8 threads
#   driver     tests/gpu/apps/drv_app: PTX via cuModuleLoadDataEx/cuLibraryLoadData/cuLink*,
#              cuLaunchKernel (params, extra, CUkernel) and cuLaunchKernelEx
#   discovery  the shim on LD_LIBRARY_PATH alone finds the real driver itself
#   dump       GPUPROBE_DUMP_DIR writes each module's PTX; ptxas compiles every file
#   torch      200 MLP training steps: bit-identical losses; GPUPROBE_LOG=1 lists modules
#   sanitizer  compute-sanitizer memcheck finds the same out-of-bounds writes through the shim
#   cuda-gdb   a breakpoint in a kernel is hit through the shim (cuda-gdb -batch)
#   multi-gpu  tests/gpu/apps/multi_gpu on two devices (skipped with one GPU)
#   bench      bench/launch_latency: direct vs shim, side by side
# usage: tests/gpu/shim.sh [BUILD_DIR]   (default $BUILD, then build-shim-gpu, build-shim, else build)
# BUILD_DIR holds lib/libcuda.so.1, lib/libgpuprobe-audit.so, bin/gpuprobe, bin/launch_latency
# and gpu-apps/ (tests/gpu/apps/build.sh BUILD_DIR/gpu-apps, run where nvcc is).
# Logs to $OUT if set. Exit 77 when there is no GPU or driver; 1 when any part fails.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${BUILD:-}}
if [ -z "$build" ] || [ ! -e "$build/lib/libcuda.so.1" ]; then
	for b in "$here/build-shim-gpu" "$here/build-shim" "$here/build"; do
		[ -e "$b/lib/libcuda.so.1" ] && { build=$b; break; }
	done
fi
[ -n "$build" ] && [ -e "$build/lib/libcuda.so.1" ] || { echo "shim.sh: no BUILD_DIR with lib/libcuda.so.1"; exit 2; }
build=$(cd "$build" && pwd)
apps=$build/gpu-apps
if [ ! -x "$apps/rt_app" ]; then
	command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "shim.sh: no $apps and no nvcc"; exit 2; }
	"$here/tests/gpu/apps/build.sh" "$apps" || exit 1
fi
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

real=${GPUPROBE_REAL_LIBCUDA:-}
if [ -z "$real" ]; then
	for c in /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
		[ -e "$c" ] && { real=$c; break; }
	done
fi
if [ -z "$real" ] || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver here (shim GPU tests need one)"
	exit 77
fi
# The driver library's own directory must stay reachable for runs without the shim.
export LD_LIBRARY_PATH="$(dirname "$real")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset GPUPROBE_REAL_LIBCUDA GPUPROBE_LOG GPUPROBE_DUMP_DIR
# The command itself may need the libraries shipped beside the shim (libbpf.so.1).
G=(env "LD_LIBRARY_PATH=$build/lib:$LD_LIBRARY_PATH" "$build/bin/gpuprobe")

{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } | tee "$out/gpus.txt"
echo "driver: $real; shim: $build/lib/libcuda.so.1"
names=() results=()
fails=0
record() { names+=("$1"); results+=("$2"); [ "${2%% *}" = FAIL ] && fails=1; echo "--- $1: $2"; }
same() {   # same NAME FILE_A FILE_B: identical, else FAIL with the first differences
	if cmp -s "$2" "$3"; then return 0; fi
	echo "$1: outputs differ:"; diff "$2" "$3" | head -20; return 1
}
T=${SHIM_TIMEOUT:-240}   # per-run limit (s)

# runtime app
timeout $T "$apps/rt_app" >"$out/rt.direct" 2>&1; a=$?
timeout $T env GPUPROBE_LOG=1 "${G[@]}" run -- "$apps/rt_app" >"$out/rt.shim" 2>"$out/rt.shim.log"; b=$?
if [ $a = 0 ] && [ $b = 0 ] && same runtime "$out/rt.direct" "$out/rt.shim"; then
	mods=$(grep -c '^gpuprobe: module .*; 5 kernels; PTX present$' "$out/rt.shim.log")
	launches=$(grep -c '^gpuprobe: first launch of .* (module 1, PTX present) via cuLaunchKernel' "$out/rt.shim.log")
	passed=$(grep -c 'passed through unintercepted' "$out/rt.shim.log")
	if [ "$mods" = 1 ] && [ "$launches" = 4 ]; then
		record runtime "PASS ($(wc -l <"$out/rt.direct") identical lines; log: its module (5 kernels, PTX) and 4 first launches; $passed entry points the runtime fetched were not shim exports)"
	else
		record runtime "FAIL (identical output, but log has $mods module lines and $launches first launches, not 1 and 4)"
	fi
else
	record runtime "FAIL (exit $a/$b)"
fi
head -20 "$out/rt.shim.log"

# driver-API app
ptx=$apps/drv_kernels.ptx
timeout $T "$apps/drv_app" "$ptx" >"$out/drv.direct" 2>&1; a=$?
timeout $T env GPUPROBE_LOG=1 "${G[@]}" run -- "$apps/drv_app" "$ptx" >"$out/drv.shim" 2>"$out/drv.shim.log"; b=$?
cat "$out/drv.shim.log"
if [ $a = 0 ] && [ $b = 0 ] && same driver "$out/drv.direct" "$out/drv.shim"; then
	mods=$(grep -c '^gpuprobe: module [0-9]* via cu.*PTX present$' "$out/drv.shim.log")
	if [ "$mods" = 3 ]; then record driver "PASS (identical; 3 modules with PTX logged)"
	else record driver "FAIL (identical output but $mods of 3 module lines with PTX)"; fi
else
	record driver "FAIL (exit $a/$b)"
fi

# discovery: LD_LIBRARY_PATH only, no GPUPROBE_REAL_LIBCUDA, no LD_AUDIT
timeout $T env GPUPROBE_LOG=1 LD_LIBRARY_PATH="$build/lib:$LD_LIBRARY_PATH" "$apps/drv_app" "$ptx" \
	>"$out/drv.ldpath" 2>"$out/drv.ldpath.log"; a=$?
if [ $a = 0 ] && same discovery "$out/drv.direct" "$out/drv.ldpath"; then
	record discovery "PASS ($(grep -m1 '^gpuprobe: real driver' "$out/drv.ldpath.log"))"
else
	record discovery "FAIL (exit $a)"; cat "$out/drv.ldpath.log"
fi

# dump: every module's PTX written out compiles with ptxas
rm -rf "$out/dump"; mkdir -p "$out/dump"
timeout $T env GPUPROBE_DUMP_DIR="$out/dump" "${G[@]}" run -- "$apps/rt_app" >"$out/rt.dump" 2>&1; a=$?
n=$(ls "$out/dump" | wc -l)
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
bad=0
for f in "$out/dump"/*.ptx; do [ -e "$f" ] || continue
	[ -x "$ptxas" ] && { "$ptxas" -arch=sm_90 -o /dev/null "$f" || bad=$((bad + 1)); }
done
if [ $a = 0 ] && [ "$n" -ge 1 ] && [ $bad = 0 ] && same dump "$out/rt.direct" "$out/rt.dump"; then
	record dump "PASS ($n PTX files; ptxas compiles all)"
else
	record dump "FAIL (exit $a, $n files, $bad ptxas failures)"
fi

# PyTorch
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	timeout $T python3 "$apps/mlp.py" >"$out/torch.direct" 2>&1; a=$?
	timeout $T "${G[@]}" run -- python3 "$apps/mlp.py" >"$out/torch.shim" 2>&1; b=$?
	timeout $T env GPUPROBE_LOG=1 "${G[@]}" run -- python3 "$apps/mlp.py" >"$out/torch.log.out" 2>"$out/torch.log"; c=$?
	mods=$(grep -c '^gpuprobe: module ' "$out/torch.log")
	launches=$(grep -c '^gpuprobe: first launch of ' "$out/torch.log")
	grep -m8 '^gpuprobe: module ' "$out/torch.log"
	grep -m5 '^gpuprobe: first launch' "$out/torch.log"
	if [ $a = 0 ] && [ $b = 0 ] && [ $c = 0 ] && same torch "$out/torch.direct" "$out/torch.shim" \
	   && same torch-log "$out/torch.direct" "$out/torch.log.out" && [ "$mods" -ge 1 ]; then
		record torch "PASS (200 losses bit-identical, last $(tail -2 "$out/torch.direct" | head -1); log: $mods modules, $launches first launches)"
	else
		record torch "FAIL (exit $a/$b/$c, $mods modules logged)"; tail -5 "$out/torch.shim"
	fi
else
	record torch "SKIP (no PyTorch with CUDA)"
fi

# compute-sanitizer
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$cs" ]; then
	timeout $T "$cs" --tool memcheck "$apps/rt_app" --oob >"$out/cs.direct" 2>&1; a=$?
	timeout $T env GPUPROBE_LOG=1 "${G[@]}" run -- "$cs" --tool memcheck "$apps/rt_app" --oob >"$out/cs.shim" 2>&1; b=$?
	sd=$(grep -m1 'ERROR SUMMARY' "$out/cs.direct"); ss=$(grep -m1 'ERROR SUMMARY' "$out/cs.shim")
	wd=$(grep -c 'Invalid __global__ write of size 4' "$out/cs.direct"); ws=$(grep -c 'Invalid __global__ write of size 4' "$out/cs.shim")
	if [ -n "$sd" ] && [ "$sd" = "$ss" ] && [ "$wd" = "$ws" ] && [ "$wd" -gt 0 ] &&
	   grep -q '^gpuprobe: first launch of _Z9oob_writePii' "$out/cs.shim" &&
	   same sanitizer <(grep -E '^(stream|graph|thread|oob)' "$out/cs.direct") <(grep -E '^(stream|graph|thread|oob)' "$out/cs.shim"); then
		record sanitizer "PASS (both: $sd, $wd invalid writes reported)"
	else
		record sanitizer "FAIL (exit $a/$b; direct '$sd' $wd, shim '$ss' $ws)"; tail -5 "$out/cs.shim"
	fi
else
	record sanitizer "SKIP (no compute-sanitizer)"
fi

# cuda-gdb
cg=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
if [ -x "$cg" ]; then
	gdbargs=(-batch -ex 'break debug_me' -ex run -ex 'info cuda kernels' -ex 'print k' -ex continue --args "$apps/dbg_app")
	timeout $T "$cg" "${gdbargs[@]}" >"$out/gdb.direct" 2>&1; a=$?
	timeout $T env GPUPROBE_LOG=1 LD_LIBRARY_PATH="$build/lib:$LD_LIBRARY_PATH" "$cg" "${gdbargs[@]}" >"$out/gdb.shim" 2>&1; b=$?
	# (the app's own output may interleave with gdb's thread notices: no anchors on "sum")
	ok() { grep -q 'hit Breakpoint 1.*debug_me' "$1" && grep -q '^\$1 = 3$' "$1" && grep -q 'sum 1712' "$1"; }
	timeout $T env GPUPROBE_LOG=1 "${G[@]}" run -- "$cg" "${gdbargs[@]}" >"$out/gdb.run" 2>&1; c=$?
	if ok "$out/gdb.shim" && grep -q '^gpuprobe: first launch of _Z8debug_mePii' "$out/gdb.shim" &&
	   ok "$out/gdb.run" && grep -q '^gpuprobe: first launch of _Z8debug_mePii' "$out/gdb.run"; then
		record cuda-gdb "PASS (through the shim, by LD_LIBRARY_PATH and by gpuprobe run: breakpoint in debug_me hit, k = 3 read, app finished)"
	elif ! ok "$out/gdb.direct"; then
		record cuda-gdb "SKIP (cuda-gdb does not work here even without the shim)"; tail -5 "$out/gdb.direct"
	else
		record cuda-gdb "FAIL"; tail -15 "$out/gdb.shim"
	fi
else
	record cuda-gdb "SKIP (no cuda-gdb)"
fi

# two GPUs
timeout $T "$apps/multi_gpu" >"$out/mgpu.direct" 2>&1; a=$?
if [ $a = 77 ]; then
	record multi-gpu "SKIP ($(cat "$out/mgpu.direct"))"
else
	timeout $T "${G[@]}" run -- "$apps/multi_gpu" >"$out/mgpu.shim" 2>&1; b=$?
	if [ $a = 0 ] && [ $b = 0 ] && same multi-gpu "$out/mgpu.direct" "$out/mgpu.shim"; then
		record multi-gpu "PASS (identical on 2 devices)"
	else
		record multi-gpu "FAIL (exit $a/$b)"
	fi
fi

# launch latency benchmark
if timeout $T "$build/bin/launch_latency" "$real" "$build/lib/libcuda.so.1" 400 >"$out/launch_latency.txt" 2>&1; then
	cat "$out/launch_latency.txt"
	record bench "PASS (see launch_latency.txt)"
else
	record bench "FAIL"; cat "$out/launch_latency.txt"
fi

echo
printf '%-12s %s\n' PART RESULT
for i in "${!names[@]}"; do printf '%-12s %s\n' "${names[$i]}" "${results[$i]}"; done | tee "$out/summary.txt"
exit $fails
