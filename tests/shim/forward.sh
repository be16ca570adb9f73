#!/usr/bin/env bash
# Forwarding, cuGetProcAddress mapping and interception over the fake driver, with the shim's
# log (GPUPROBE_LOG=1) and PTX dump (GPUPROBE_DUMP_DIR) checked line by line.
# usage: forward.sh FORWARD_TEST SHIM FAKE_DRIVER FATBIN_PTX FATBIN_NOPTX
set -u
bin=$1 shim=$2 fake=$3 fb_ptx=$4 fb_noptx=$5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }
mkdir "$tmp/dump"

GPUPROBE_LOG=1 GPUPROBE_DUMP_DIR=$tmp/dump GPUPROBE_REAL_LIBCUDA=$fake \
  "$bin" "$shim" "$fake" "$fb_ptx" "$fb_noptx" >"$tmp/out" 2>"$tmp/err" || fail "exit status $?"
[ "$(grep -c '^ok ' "$tmp/out")" = 21 ] || fail "expected 21 ok lines"
cat "$tmp/out"

exports=$(nm -D --defined-only "$shim" | grep -c ' cu')
absent='PTX absent (cannot be instrumented: rebuild with -arch=sm_XX or -gencode arch=compute_XX,code=compute_XX to embed PTX)'
cubin_absent="PTX absent (a cubin: if Triton, XLA, NVRTC or nvJitLink made it, run the program under 'gpuprobe run', which sets TRITON_PTXAS_PATH to gpuprobe-ptxas and records the PTX of such compiles; nvcc builds: -gencode arch=compute_XX,code=compute_XX embeds PTX)"
cat >"$tmp/want" <<WANT
gpuprobe: real driver $fake (84 of $exports exports present; missing: cuArray3DCreate, cuArray3DCreate_v2, cuArray3DGetDescriptor, ...)
gpuprobe: cuCtxCreate_v2: the real driver does not export it
gpuprobe: cuGetProcAddress(cuFakeHidden): the driver returned an unnamed address: passed through unintercepted
gpuprobe: module 1: PTX written to $tmp/dump/module-0001.ptx
gpuprobe: module 1 via cuModuleLoadData: ptx; 2 kernels; PTX present
gpuprobe: first launch of k_one (module 1, PTX present) via cuLaunchKernel
gpuprobe: module 2: PTX written to $tmp/dump/module-0002-1-sm_90.ptx
gpuprobe: module 2 via cuModuleLoadDataEx: fatbin: cubin sm_90, ptx sm_90 zstd; 2 kernels; PTX present
gpuprobe: first launch of vec_add (module 2, PTX present) via cuLaunchKernel
gpuprobe: module 3 via cuModuleLoadDataEx: fatbin: cubin sm_90; 2 kernels; $absent
gpuprobe: module 4 via cuLibraryLoadData: fatbin: cubin sm_90; 2 kernels; $absent
gpuprobe: first launch of scale (module 4, PTX absent) via cuLaunchKernel
gpuprobe: module 5: PTX written to $tmp/dump/module-0005-1-sm_90.ptx
gpuprobe: module 5 via cuModuleLoad $fb_ptx: fatbin: cubin sm_90, ptx sm_90 zstd; 2 kernels; PTX present
gpuprobe: first launch of scale (module 5, PTX present) via cuLaunchKernel
gpuprobe: module 6 via cuLibraryLoadFromFile $fb_noptx: fatbin: cubin sm_90; 2 kernels; $absent
gpuprobe: module 7 via cuModuleLoad /nonexistent.cubin failed (CUDA error 301)
gpuprobe: module 8 via cuModuleLoadData: cubin linked from 1 inputs; 0 kernels; PTX present
gpuprobe: module 9 via cuModuleLoadData: cubin; 0 kernels; $cubin_absent
gpuprobe: first launch of k_two (module 1, PTX present) via cuGraphAddKernelNode_v2
gpuprobe: first launch of unnamed_by_shim (module not seen by the shim) via cuLaunchKernel
gpuprobe: first launch of k_ex (module 1, PTX present) via cuLaunchKernelEx
gpuprobe: first launch of k_coop (module 1, PTX present) via cuLaunchCooperativeKernel_ptsz
gpuprobe: module 10: PTX written to $tmp/dump/module-0010-1-sm_90.ptx
gpuprobe: module 10 via cuModuleLoadFatBinary: fatbin: cubin sm_90, ptx sm_90 zstd; 2 kernels; PTX present
WANT
grep -v '^forward_test: ' "$tmp/err" >"$tmp/log"
diff "$tmp/want" "$tmp/log" || fail "the shim's log differs from the expected lines"
echo "ok log: one line per module and per first launch"
grep -h '^forward_test: ' "$tmp/err"

# The dump holds the PTX exactly: the module given as text, and the fatbin's decompressed PTX.
grep -q '^\.visible \.entry k_one()$' "$tmp/dump/module-0001.ptx" || fail "dumped PTX module 1"
[ "$(grep -c '\.entry' "$tmp/dump/module-0002-1-sm_90.ptx")" = 2 ] || fail "dumped PTX module 2"
grep -q '^\.target sm_90' "$tmp/dump/module-0002-1-sm_90.ptx" || fail "dumped PTX module 2 target"
cmp -s "$tmp/dump/module-0002-1-sm_90.ptx" "$tmp/dump/module-0005-1-sm_90.ptx" || fail "same PTX by file and by memory"
[ "$(ls "$tmp/dump" | wc -l)" = 4 ] || fail "modules without PTX must not be dumped"
echo "ok GPUPROBE_DUMP_DIR: 4 PTX files, decompressed"

# Without GPUPROBE_LOG the shim says nothing at all.
GPUPROBE_REAL_LIBCUDA=$fake "$bin" "$shim" "$fake" "$fb_ptx" "$fb_noptx" >"$tmp/out" 2>"$tmp/err" || fail "quiet run: $?"
[ -z "$(grep -v '^forward_test: ' "$tmp/err")" ] || fail "the shim printed without GPUPROBE_LOG"
echo "ok silent without GPUPROBE_LOG"
