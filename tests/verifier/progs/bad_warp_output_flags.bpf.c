/* bpf_gpu_warp_output's flags decide the record's shape: a bit that means nothing is refused. */
// expect-status: 1
// expect-insn: 5: (85) call bpf_gpu_warp_output#517
// expect-reason: R4 bpf_gpu_warp_output#517: flags 0x6 has undefined bits 0x6 (defined: GP_WARP_VALUES 0x1)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} trace SEC(".maps");

SEC("gpu/mem/global/") int prog(struct gp_mem_ctx *ctx)
{
	bpf_gpu_warp_output(&trace, ctx->addr, 0, 6);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
