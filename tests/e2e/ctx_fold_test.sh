#!/bin/bash
# CI (no GPU): an inlined probe that reads its context keeps no context buffer on the stack.
# The corpus's memory counter keys an array by ctx->dir: its loads went through the buffer's
# generic address, so ptxas kept the 128-byte buffer in local memory at every access (chemv-cuda
# 5.4x slower on the H100, 2026-11-25, 136 bytes of local memory for kernels that had none).
# ptx-frontend/ctx_fold.c reads the buffer by name, a word at a time, drops the address
# computations and forwards the site's stores to the loads: the stack frame is the kernel's own.
# usage: ctx_fold_test.sh GPUPROBE SRC_DIR WORK_DIR
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
cat >"$W/by_dir.bpf.c" <<'C'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u64); } by_dir SEC(".maps");
GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->dir & 3;
	__u64 *v = bpf_map_lookup_elem(&by_dir, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
C
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" -c "$W/by_dir.bpf.c" -o "$W/by_dir.bpf.o" || exit 2
"$NVCC" -arch=sm_90 -ptx "$SRC/tests/e2e/apps/transpose.cu" -o "$W/transpose.ptx" || exit 2
"$PTXAS" -arch=sm_90 -v "$W/transpose.ptx" -o "$W/orig.cubin" 2>"$W/orig.txt" || exit 2
frame() { grep -o '[0-9]* bytes stack frame' "$1" | head -1; }
"$GP" ptx instrument --sms 132 -p "$W/by_dir.bpf.o" "$W/transpose.ptx" -o "$W/inst.ptx" 2>"$W/inst.err"
check "instrumented" 0 $?
K=$(awk '/\.entry/ {f=1} f {print} f && /^}/ {exit}' "$W/inst.ptx")
# the loads by name, then the site's stores forwarded to them: no buffer left at all
check "no context buffer left" 0 "$(grep -c '__gp_ctx' <<<"$K")"
check "no generic address of the context left" 0 "$(grep -c 'cvta\.local\.u64[[:space:]]*%__gp_d0' <<<"$K")"
"$PTXAS" -arch=sm_90 -v "$W/inst.ptx" -o "$W/inst.cubin" 2>"$W/inst.txt"
check "ptxas sm_90" 0 $?
check "stack frame: the kernel's own" "$(frame "$W/orig.txt")" "$(frame "$W/inst.txt")"
exit $fail
