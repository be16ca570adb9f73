/* BPF-to-BPF calls: a static subprogram, a global one calling it, used by two programs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

static __attribute__((noinline)) __u64 square(__u64 x)
{
	return x * x;
}

__attribute__((noinline)) __u64 sum_squares(__u64 a, __u64 b)
{
	volatile __u64 frame[4] = { a, b, 0, 0 };   /* its own stack frame */
	return square(frame[0]) + square(frame[1]);
}

HOST_ENTRY("") int first(struct gp_host_ctx *ctx)
{
	return (int)sum_squares(ctx->args[0], ctx->args[1]);   /* 3,4 -> 25 */
}

HOST_EXIT("") int second(struct gp_host_ctx *ctx)
{
	__u64 keep = ctx->args[2];
	return (int)(square(ctx->args[0]) + sum_squares(1, 2) + keep);   /* 3 -> 9 + 5 + 100 */
}

char LICENSE[] SEC("license") = "GPL";
