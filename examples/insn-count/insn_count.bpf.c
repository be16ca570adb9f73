// Instructions executed per kernel (PTX instructions, counted per thread at each basic block
// entry with the block's length from the context).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, gp_kernel_id_t);   /* ctx->thread.kernel_hash: printed as kernel names */
	__type(value, __u64);
} insns_by_kernel SEC(".maps");

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	gp_add(&insns_by_kernel, ctx->thread.kernel_hash, ctx->ninsns);   /* gpuprobe.h */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
