#!/bin/bash
# PTX written for targets before sm_70 (an application built with -arch=compute_52 or sm_60, run
# on a newer GPU: the driver JIT-compiles its PTX, and that is what the shim instruments). The
# lowered probes need sm_70 (ld.acquire, st.release, activemask): the instrumented module is
# printed with .version 7.8 and .target sm_70 (options kept), and ptxas compiles it for sm_90.
# What later targets do not accept is refused with one line, and the kernel runs without probes:
# PTX 1.x (sm_1x meanings, e.g. mad.f32 without rounding: CUDA 4's matrixMulDynlinkJIT sample
# ships such a module) and shfl/vote without .sync.
# usage: old_targets.sh GPUPROBE SRC_DIR WORK_DIR   (exit 77 without clang or ptxas)
set -u
GP=$1 SRC=$2 W=$3
mkdir -p "$W"
CLANG=${CLANG:-$(command -v clang || command -v clang-14)}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
[ -x "$PTXAS" ] && [ -n "$CLANG" ] || { echo "SKIP: needs clang and $PTXAS"; exit 77; }
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi; }
# threads per kernel in a HASH map at entry and exit (lookup, insert on a miss, atomic add: acquire
# loads, release stores, warp aggregation), and every global access counted in an ARRAY
cat >"$W/probe.bpf.c" <<'C'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u64);
} threads SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} accesses SEC(".maps");
static __always_inline void count(__u64 k)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(&threads, &k);
	if (!v) {
		bpf_map_update_elem(&threads, &k, &one, BPF_NOEXIST);
		return;
	}
	__sync_fetch_and_add(v, 1);
}
GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { count(ctx->thread.kernel_hash); return 0; }
GPU_EXIT("*") int on_exit(struct gp_kernel_ctx *ctx) { count(~ctx->thread.kernel_hash); return 0; }
GPU_MEM("global", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->dir & 3;
	__u64 *v = bpf_map_lookup_elem(&accesses, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
C
"$CLANG" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$SRC/include" \
	-c "$W/probe.bpf.c" -o "$W/probe.bpf.o" || exit 2
# version, target, and one instruction of the body that differs between the cases
kernel() {
	cat <<PTX
.version $1
.target $2
.address_size 64

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .f32 scale_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.f32 	%f1, [scale_param_1];
	mov.u32 	%r1, %tid.x;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd2, %rd2, %rd3;
	ld.global.f32 	%f2, [%rd2];
	$3
	st.global.f32 	[%rd2], %f3;
	ret;
}
PTX
}
mul='mul.rn.f32 	%f3, %f2, %f1;'
for t in "6.0 sm_52" "6.0 sm_60" "5.0 sm_30" "3.2 sm_20" "6.0 sm_52, texmode_independent" "8.0 sm_90"; do
	set -- $t
	v=$1; shift; tg="$*"
	kernel "$v" "$tg" "$mul" >"$W/k.ptx"
	"$PTXAS" -arch=sm_90 "$W/k.ptx" -o "$W/k.cubin" || { echo "FAIL the test's own $tg kernel does not assemble"; fail=1; }
	"$GP" ptx instrument -p "$W/probe.bpf.o" -o "$W/ki.ptx" "$W/k.ptx" 2>"$W/ki.err"
	check "$tg: instrument exit status" 0 $?
	want_v=$v want_t=$tg
	case $tg in sm_[2-6]*) want_v=7.8 want_t=sm_70${tg#sm_[0-9][0-9]} ;; esac
	check "$tg: header" ".version $want_v|.target $want_t" \
		"$(grep -E '^\s*\.(version|target)' "$W/ki.ptx" | sed 's/^[[:space:]]*//' | paste -sd'|')"
	"$PTXAS" -arch=sm_90 "$W/ki.ptx" -o "$W/ki.cubin" 2>"$W/ptxas.err"
	check "$tg: ptxas sm_90 compiles the instrumented module" "0 " "$? $(head -1 "$W/ptxas.err")"
done
# refused: one line each, exit 1
refuse() {
	"$GP" ptx instrument -p "$W/probe.bpf.o" -o "$W/ki.ptx" "$W/k.ptx" 2>"$W/ki.err"
	check "$1: instrument exit status" 1 $?
	check "$1: the line" "$2" "$(grep -v 'probe sites' "$W/ki.err")"
}
kernel 1.4 "sm_10, map_f64_to_f32" 'mad.f32 	%f3, %f2, %f1, %f1;' >"$W/k.ptx"
refuse "PTX 1.4" "gpuprobe: $W/k.ptx: PTX ISA 1.4 (line 1) is not instrumented: its code means what sm_1x targets did (mad.f32 without rounding), which later targets do not accept"
kernel 2.0 sm_13 "$mul" >"$W/k.ptx"
refuse "sm_13" "gpuprobe: $W/k.ptx: PTX for .target sm_13 (line 2) is not instrumented: sm_1x code means what later targets do not accept"
kernel 6.0 sm_60 'shfl.idx.b32 	%r2, %r1, 0, 31;
	mov.b32 	%f3, %r2;' >"$W/k.ptx"
refuse "shfl without .sync" "gpuprobe: $W/k.ptx: PTX for .target sm_60 is not instrumented: shfl without .sync (line 22, in scale) is not allowed for sm_70, which the probes need"
kernel 6.0 sm_60 'shfl.sync.idx.b32 	%r2, %r1, 0, 31, -1;
	mov.b32 	%f3, %r2;' >"$W/k.ptx"
"$GP" ptx instrument -p "$W/probe.bpf.o" -o "$W/ki.ptx" "$W/k.ptx" 2>"$W/ki.err"
check "shfl.sync at sm_60: instrument exit status" 0 $?
"$PTXAS" -arch=sm_90 "$W/ki.ptx" -o "$W/ki.cubin"
check "shfl.sync at sm_60: ptxas sm_90" 0 $?
[ $fail = 0 ] && echo "old_targets: PASS" || echo "old_targets: FAIL"
exit $fail
