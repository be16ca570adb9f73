#!/usr/bin/env bash
# No real driver: cuInit gives CUDA_ERROR_NO_DEVICE (100), everything else
# CUDA_ERROR_NOT_INITIALIZED (3), and the shim prints exactly one line naming what it looked for.
# usage: nodriver.sh NODRIVER_BIN SHIM
set -u
bin=$1 shim=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

expected_out='cuInit 100
cuInit again 100
cuGetProcAddress_v2 3 pfn NULL status 1
cuGetProcAddress 3 pfn NULL
cuDriverGetVersion 3 version -1
cuModuleLoadData 3
cuLaunchKernel 3
cuGetErrorName 0 CUDA_ERROR_NO_DEVICE
cuGetErrorString 0 initialization error (gpuprobe: no real CUDA driver was found)
cuGetErrorName(999) 1 NULL
cuMemcpyHtoD_v2_ptds 3'

# 1. An override that names nothing.
GPUPROBE_REAL_LIBCUDA=/nonexistent/libcuda.so.1 "$bin" "$shim" >"$tmp/out" 2>"$tmp/err" || fail "exit status $?"
[ "$(cat "$tmp/out")" = "$expected_out" ] || fail "results differ"
[ "$(cat "$tmp/err")" = "gpuprobe: no real CUDA driver found: looked for GPUPROBE_REAL_LIBCUDA=/nonexistent/libcuda.so.1 (not readable); every CUDA call fails (cuInit returns CUDA_ERROR_NO_DEVICE)" ] \
  || fail "stderr is not the one expected line"
echo "ok override naming nothing"

# 2. An override that names the shim itself: never loaded as its own driver.
GPUPROBE_REAL_LIBCUDA=$shim "$bin" "$shim" >"$tmp/out" 2>"$tmp/err" || fail "exit status $?"
[ "$(cat "$tmp/out")" = "$expected_out" ] || fail "results differ (self)"
[ "$(cat "$tmp/err")" = "gpuprobe: no real CUDA driver found: looked for GPUPROBE_REAL_LIBCUDA=$shim (that is the gpuprobe shim itself); every CUDA call fails (cuInit returns CUDA_ERROR_NO_DEVICE)" ] \
  || fail "stderr is not the one expected line (self)"
echo "ok override naming the shim itself"

# 3. No override: the loader cache and the usual paths (only where this machine has no driver).
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib /lib/x86_64-linux-gnu /usr/lib /usr/local/cuda/compat; do
  [ -e "$d/libcuda.so.1" ] && { echo "ok (search without override skipped: $d/libcuda.so.1 exists)"; exit 0; }
done
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && { echo "ok (search skipped: the loader cache has a driver)"; exit 0; }
# (GPUPROBE_BACKEND=nvidia: no fallback to gpuprobe's own driver on a machine with OpenCL)
env -u GPUPROBE_REAL_LIBCUDA GPUPROBE_BACKEND=nvidia "$bin" "$shim" >"$tmp/out" 2>"$tmp/err" || fail "exit status $?"
[ "$(cat "$tmp/out")" = "$expected_out" ] || fail "results differ (search)"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than one line on stderr"
grep -qx 'gpuprobe: no real CUDA driver found: looked for libcuda.so.1 in the loader cache (/etc/ld.so.cache) and in /usr/local/nvidia/lib64, .*, /usr/local/cuda/compat (set GPUPROBE_REAL_LIBCUDA to its path); every CUDA call fails (cuInit returns CUDA_ERROR_NO_DEVICE)' "$tmp/err" \
  || fail "stderr line does not name what was looked for"
echo "ok search without override"
