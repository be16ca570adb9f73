#!/usr/bin/env bash
# LD_AUDIT redirect: under `gpuprobe run`, a dlopen of an absolute libcuda.so.1 path and a
# libcuda.so.1 found through DT_RPATH both get the shim, and the shim still reaches the driver.
# usage: audit.sh GPUPROBE ABSDLOPEN FAKE_DRIVER SHIM DLOPEN_WRAP DLOPEN_FIRST
set -u
gpuprobe=$1 app=$2 fake=$3 shim=$4 wrap=$5 first=$6
out=$(mktemp); trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

# Control: without gpuprobe the app gets the fake driver both ways (so the test can fail).
"$app" "$fake" >"$out" 2>&1 || fail "control run: exit $?"
[ "$(cat "$out")" = "dlopen: $fake
linked: $fake
cuDriverGetVersion 0 version 13000
cuInit 0" ] || fail "control run output"
echo "ok control: the app alone loads $fake"

GPUPROBE_REAL_LIBCUDA=$fake "$gpuprobe" run -- "$app" "$fake" >"$out" 2>&1 || fail "gpuprobe run: exit $?"
[ "$(cat "$out")" = "dlopen: $shim
linked: $shim
cuDriverGetVersion 0 version 13000
cuInit 0" ] || fail "under gpuprobe run the shim must answer both, forwarding to the fake driver"
echo "ok gpuprobe run: absolute dlopen and DT_RPATH both reach the shim, which reaches the driver"

# A tool that wraps dlopen (compute-sanitizer does) hides who called it: the shim's own load of
# the driver must still not be redirected back to the shim.
# (Under AddressSanitizer builds the preload comes before the ASan runtime: tell ASan that is fine.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
GPUPROBE_REAL_LIBCUDA=$fake LD_PRELOAD=$wrap "$gpuprobe" run -- "$app" "$fake" >"$out" 2>&1 || fail "with a dlopen wrapper: exit $?"
[ "$(cat "$out")" = "dlopen: $shim
linked: $shim
cuDriverGetVersion 0 version 13000
cuInit 0" ] || fail "with a dlopen wrapper preloaded the shim must still reach the driver"
echo "ok with a dlopen-wrapping LD_PRELOAD library too"

# The application's first contact is a dlopen of the driver's absolute path: the loader then
# knows the shim by that path too, and the shim must still reach the driver (it opens it as
# DIR/./libcuda.so.1).
GPUPROBE_REAL_LIBCUDA=$fake "$gpuprobe" run -- "$first" "$fake" >"$out" 2>&1 || fail "dlopen first: exit $?"
[ "$(cat "$out")" = "dlopen: $shim
cuDriverGetVersion 0 version 13000" ] || fail "dlopen of the driver's path before any call"
echo "ok an absolute dlopen before any call still reaches the driver through the shim"

# gpuprobe run finds the driver itself when GPUPROBE_REAL_LIBCUDA is unset; with none on this
# machine the shim says so in one line and the app sees errors, not a crash.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && [ ! -e /usr/local/nvidia/lib64/libcuda.so.1 ] \
   && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ]; then
  # (GPUPROBE_BACKEND=nvidia: no fallback to gpuprobe's own driver on a machine with OpenCL)
  env -u GPUPROBE_REAL_LIBCUDA GPUPROBE_BACKEND=nvidia "$gpuprobe" run -- "$app" "$fake" >"$out" 2>&1 || fail "exit $?"
  grep -q '^cuInit 100$' "$out" && [ "$(grep -c '^gpuprobe: no real CUDA driver found' "$out")" = 1 ] \
    || fail "no driver under gpuprobe run"
  echo "ok gpuprobe run without a driver: cuInit 100 and one line"
fi
