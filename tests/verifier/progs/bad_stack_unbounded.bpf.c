/* A stack pointer moved by an index the program never bounds. */
// expect-status: 1
// expect-insn: 6: (0f) r2 += r1
// expect-reason: R2 math between fp pointer and register with unbounded max value is not allowed
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	volatile char buf[16] = {};
	buf[ctx->thread.lane_id] = 1;
	return buf[0];
}

char LICENSE[] SEC("license") = "GPL";
