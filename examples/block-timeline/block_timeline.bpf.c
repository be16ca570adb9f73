// Per-SM block timeline: one event when a block of vectorAdd starts (its first thread in) and
// one when it ends (its last thread out), with the SM, the block and the time; a ring per SM.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct event {
	__u32 sm, block, end, _pad;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} timeline SEC(".maps");

static __always_inline int emit(struct gp_block_ctx *ctx, __u32 end)
{
	struct event e = {.sm = ctx->thread.sm_id, .block = ctx->thread.block_idx[0], .end = end,
			  .ns = ctx->timestamp};
	return bpf_ringbuf_output(&timeline, &e, sizeof(e), 0);
}

GPU_BLOCK_BEGIN("_Z9vectorAddPKfS0_Pf") int on_begin(struct gp_block_ctx *ctx) { return emit(ctx, 0); }
GPU_BLOCK_END("_Z9vectorAddPKfS0_Pf") int on_end(struct gp_block_ctx *ctx) { return emit(ctx, 1); }

char LICENSE[] SEC("license") = "GPL";
