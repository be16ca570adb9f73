/* bpf_gpu_warp_output's flags must be known when the probe is verified (a constant). */
// expect-status: 1
// expect-insn: 6: (85) call bpf_gpu_warp_output#517
// expect-reason: R4 bpf_gpu_warp_output#517: flags must be a known constant (0 or GP_WARP_VALUES)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} trace SEC(".maps");

SEC("gpu/mem/global/") int prog(struct gp_mem_ctx *ctx)
{
	bpf_gpu_warp_output(&trace, ctx->addr, 0, ctx->size & 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
