#!/bin/bash
# GPU test of bpftime's map types 1501, 1503, 1504, 1512 and 1513 (issue 17): the probes of
# tests/maps/bpftime (bpftime's examples' sections, map definitions and helper calls) on
# examples/apps/vec_add 8 through the real driver, with the checks the PoCL ctest
# maps_bpftime_types makes (tests/maps/bpftime/checks.sh): exact atomic counts on the one shared
# copy (256), the per-thread host arrays summed (256 exits, thread_x summed 3968), a struct per
# thread in the GPU hash under its (block_x << 16 | thread_x) key with lane = thread_x, the
# counting idiom's SM and warp counts summing to 1..256 (its insert-on-miss races in a warp), the uretprobe on cudaLaunchKernel counting
# the app's 2 launches into the kernel-shared array, kprobe/__memcapture at each of the 1280 loads
# and stores, the app's own output unchanged.
# Needs (tests/gpu/prepare.sh BUILD makes them): BUILD/bin/gpuprobe, BUILD/lib/libcuda.so.1,
# BUILD/examples/vec_add, BUILD/bpftime-maps/*.bpf.o (tests/maps/bpftime/build.sh BUILD).
# usage: tests/gpu/bpftime_maps.sh   (BUILD default ./build; logs in $OUT). Exit 77 without a GPU.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
work=${OUT:-$(mktemp -d)}
mkdir -p "$work"
g=$build/bin/gpuprobe app=$build/examples/vec_add probes=$build/bpftime-maps
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU here"; exit 77
fi
for f in "$g" "$app" "$probes/gpu_array.bpf.o"; do
	[ -e "$f" ] || { echo "bpftime_maps.sh: $f missing: run tests/gpu/prepare.sh $build on the build machine"; exit 2; }
done
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fails=$((fails + 1)); fi; }
BPFTIME_MAPS_DEVICE=gpu   # checks.sh: warps race where PoCL runs threads in turn
. "$here/tests/maps/bpftime/checks.sh"
"$app" 8 >"$work/plain.out" 2>"$work/plain.err" || { echo "FAIL: vec_add does not run without probes"; exit 1; }
for p in gpu_array gpu_hash host_maps kernel_shared special_sections; do
	GPUPROBE_TOP=1000 timeout 300 "$g" run -p "$probes/$p.bpf.o" -- "$app" 8 >"$work/$p.out" 2>"$work/$p.err"
	echo $? >"$work/$p.rc"
	echo "--- $p"; grep -v '^entered\|^exited\|^array_exit\|^@threads\[' "$work/$p.err" | head -40
done
bpftime_maps_check "$work"
[ $fails = 0 ] && echo "all passed" || echo "$fails failed (logs in $work)"
[ $fails = 0 ]
