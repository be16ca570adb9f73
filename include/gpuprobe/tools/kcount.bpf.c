// kcount: for each kernel, the launches, the blocks that ran and the threads that entered it
// (a launch is counted when its first block, (0,0,0), starts). `gpuprobe run -t kcount -- APP`
// (`-t kernels` is the same tool). docs/tools.md shows its output.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define BY_KERNEL(name)                             \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 4096);          \
		__type(key, gp_kernel_id_t);        \
		__type(value, __u64);               \
	} name SEC(".maps")

BY_KERNEL(launches);
BY_KERNEL(blocks);
BY_KERNEL(threads);

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	gp_count(&threads, ctx->thread.kernel_hash);
	return 0;
}

GPU_BLOCK_BEGIN("*") int on_block(struct gp_block_ctx *ctx)
{
	const __u32 *b = ctx->thread.block_idx;
	gp_count(&blocks, ctx->thread.kernel_hash);
	if (!(b[0] | b[1] | b[2]))
		gp_count(&launches, ctx->thread.kernel_hash);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
