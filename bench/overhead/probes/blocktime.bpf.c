// Per block: %globaltimer when it begins and when it ends, into an array slot per block
// (plain stores: the values keep their one shared copy). Compared with h_blocktime.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct span {
	__u64 begin, end;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, struct span);
} block_span SEC(".maps");

static __always_inline struct span *slot(struct gp_block_ctx *ctx)
{
	__u32 b = (ctx->thread.block_idx[1] * ctx->grid_dim[0] + ctx->thread.block_idx[0]) &
		  ((1 << 20) - 1);
	return bpf_map_lookup_elem(&block_span, &b);
}

GPU_BLOCK_BEGIN("") int on_begin(struct gp_block_ctx *ctx)
{
	struct span *s = slot(ctx);
	if (s)
		s->begin = ctx->timestamp;
	return 0;
}

GPU_BLOCK_END("") int on_end(struct gp_block_ctx *ctx)
{
	struct span *s = slot(ctx);
	if (s)
		s->end = ctx->timestamp;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
