// blocks: a timeline of thread blocks for gpuprobe run --trace. The first thread into each block
// (gpu/block_begin) and the last one out (gpu/block_end) write a record {kernel, SM, block index,
// begin/end, %globaltimer} into the SM's ring `trace_blocks`; the trace shows each block as a
// span on its SM's track and each launch's kernel span from its first block's start to its last
// block's end. `gpuprobe run --trace out.pftrace -t blocks -- APP`
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

/* cli/trace.c reads these records by this layout (32 bytes). */
struct gp_trace_block {
	__u32 kernel_hash;    /* gp_name_hash() of the kernel's mangled name */
	__u32 sm;             /* %smid */
	__u32 block[3];       /* %ctaid */
	__u32 end;            /* 0: the block began, 1: it ended */
	__u64 ns;             /* %globaltimer */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
	__type(value, struct gp_trace_block);
} trace_blocks SEC(".maps");

static __always_inline int emit(struct gp_block_ctx *ctx, __u32 end)
{
	struct gp_trace_block e = {
		.kernel_hash = ctx->thread.kernel_hash,
		.sm = ctx->thread.sm_id,
		.block = {ctx->thread.block_idx[0], ctx->thread.block_idx[1], ctx->thread.block_idx[2]},
		.end = end,
		.ns = ctx->timestamp,
	};
	return bpf_ringbuf_output(&trace_blocks, &e, sizeof(e), 0);
}

GPU_BLOCK_BEGIN("*") int trace_block_begin(struct gp_block_ctx *ctx) { return emit(ctx, 0); }
GPU_BLOCK_END("*") int trace_block_end(struct gp_block_ctx *ctx) { return emit(ctx, 1); }

char LICENSE[] SEC("license") = "GPL";
