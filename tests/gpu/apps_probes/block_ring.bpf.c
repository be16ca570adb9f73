// Corpus probe (d) of tests/gpu/apps.sh: one ring-buffer event per block of every kernel (when
// its first thread starts): the kernel, the SM, the block index and %globaltimer.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct block_event {
	__u32 kernel_hash, sm;
	__u32 block[3], _pad;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} blocks SEC(".maps");

GPU_BLOCK_BEGIN("*") int on_block(struct gp_block_ctx *ctx)
{
	struct block_event e = {
		.kernel_hash = ctx->thread.kernel_hash,
		.sm = ctx->thread.sm_id,
		.block = {ctx->thread.block_idx[0], ctx->thread.block_idx[1], ctx->thread.block_idx[2]},
		.ns = ctx->timestamp,
	};
	bpf_ringbuf_output(&blocks, &e, sizeof(e), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
