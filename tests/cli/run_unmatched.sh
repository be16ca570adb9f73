#!/bin/sh
# Issue 13 point 5: at the application's end, the shim names each device section whose glob
# matched no kernel of the modules it loaded, with the kernels it saw. Over the fake driver
# (tests/shim/fake_gpu.c), with the application tests/shim/capture_app.c and the fatbin of
# kernels scale and vec_add. Skips when the build made none of them (no nvcc).
# usage: run_unmatched.sh SOURCE_DIR BUILD_DIR WORK_DIR   (CLANG in the environment)
set -u
src=$1 build=$2 work=$3
app=$build/bin/shim_capture_app fake=$build/tests/shim/fake/libcuda.so.1
fatbin=$build/tests/shim/kernels_ptx.fatbin
for f in "$app" "$fake" "$fatbin" "$build/lib/libcuda.so.1"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 0; }
done
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
[ -n "$CLANG" ] || { echo "SKIP: no clang"; exit 0; }
rm -rf "$work"; mkdir -p "$work"
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$src/include" \
	-c "$src/tests/cli/data/match.bpf.c" -o "$work/match.bpf.o" || { echo "FAIL: clang"; exit 1; }
env LD_LIBRARY_PATH="$build/lib" FAKE_GPU=1 FAKE_REPORT="$work/rep" GPUPROBE_REAL_LIBCUDA="$fake" \
	GPUPROBE_CACHE_DIR="$work/cache" GPUPROBE_PROBES="$work/match.bpf.o" \
	"$app" "$fatbin" > "$work/out" 2> "$work/err"
st=$?
[ $st = 0 ] || { echo "FAIL: the application exited $st"; cat "$work/err"; exit 1; }
want="gpuprobe: gpu/entry/nosuch*: no kernel of the application matched; kernels seen: scale, vec_add"
grep -qxF "$want" "$work/err" || { echo "FAIL: no line '$want' in:"; cat "$work/err"; exit 1; }
grep -q "gpu/entry/scale\*: no kernel" "$work/err" && { echo "FAIL: scale* reported"; cat "$work/err"; exit 1; }
echo "ok: $want"
# Again with what that run cached: the kernels' instrumented code now comes from the cache and
# no module is parsed, yet the report is the same (it was missing on the GPU: bpftime_maps.sh).
env LD_LIBRARY_PATH="$build/lib" FAKE_GPU=1 FAKE_REPORT="$work/rep" GPUPROBE_REAL_LIBCUDA="$fake" \
	GPUPROBE_CACHE_DIR="$work/cache" GPUPROBE_PROBES="$work/match.bpf.o" GPUPROBE_LOG=1 \
	"$app" "$fatbin" > "$work/out2" 2> "$work/err2" || { echo "FAIL: the cached run"; cat "$work/err2"; exit 1; }
grep -q "from the cache" "$work/err2" || { echo "FAIL: the second run did not use the cache:"; cat "$work/err2"; exit 1; }
grep -qxF "$want" "$work/err2" || { echo "FAIL: cached run: no line '$want' in:"; cat "$work/err2"; exit 1; }
grep -q "gpu/entry/scale\*: no kernel" "$work/err2" && { echo "FAIL: cached run: scale* reported"; cat "$work/err2"; exit 1; }
echo "ok: the same from the cache"
echo PASS
