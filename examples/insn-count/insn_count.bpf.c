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
	__u32 k = ctx->thread.kernel_hash;
	__u64 n = ctx->ninsns, *v = bpf_map_lookup_elem(&insns_by_kernel, &k);
	if (v)
		__sync_fetch_and_add(v, n);
	else if (bpf_map_update_elem(&insns_by_kernel, &k, &n, BPF_NOEXIST) &&
		 (v = bpf_map_lookup_elem(&insns_by_kernel, &k)))
		__sync_fetch_and_add(v, n);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
