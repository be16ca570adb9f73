/* bpf_gpu_warp_output writes a ring buffer record: any other map is refused. */
// expect-status: 1
// expect-insn: 5: (85) call bpf_gpu_warp_output#517
// expect-reason: cannot pass map_type 2 into func bpf_gpu_warp_output#517
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("gpu/mem/global/") int prog(struct gp_mem_ctx *ctx)
{
	bpf_gpu_warp_output(&counts, ctx->addr, 0, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
