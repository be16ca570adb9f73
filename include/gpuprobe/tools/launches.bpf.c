// launches: every kernel launch as the application asks the driver for it (host probes on
// cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and their _ptsz forms; no device
// code is instrumented). Per kernel: @launches, @blocks (grid size, summed), @threads (grid
// size x block size, summed); @calls: launches per driver function; @block_threads and
// @grid_blocks: log2 histograms of the threads per block and the blocks per grid of every
// launch; @smem_bytes: dynamic shared memory asked for, summed per kernel.
// `gpuprobe run -t launches -- APP`
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

#define LOG2_HIST(name)                             \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_ARRAY);   \
		__uint(max_entries, 65);            \
		__type(key, gp_log2_key_t);         \
		__type(value, __u64);               \
	} name SEC(".maps")

BY_KERNEL(launches);
BY_KERNEL(blocks);
BY_KERNEL(threads);
BY_KERNEL(smem_bytes);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, gp_api_id_t);
	__type(value, __u64);
} calls SEC(".maps");

LOG2_HIST(block_threads);
LOG2_HIST(grid_blocks);

HOST_ENTRY("cuLaunch*") int on_launch(struct gp_host_ctx *ctx)
{
	/* args: function, grid x/y/z, block x/y/z, shared bytes (guide.md: struct gp_host_ctx) */
	if (ctx->nargs < 8)
		return 0;
	__u32 kernel = ctx->kernel_hash;
	__u64 grid = (__u64)(__u32)ctx->args[1] * (__u32)ctx->args[2] * (__u32)ctx->args[3];
	__u64 block = (__u64)(__u32)ctx->args[4] * (__u32)ctx->args[5] * (__u32)ctx->args[6];
	gp_count(&launches, kernel);
	gp_add(&blocks, kernel, grid);
	gp_add(&threads, kernel, grid * block);
	if ((__u32)ctx->args[7])
		gp_add(&smem_bytes, kernel, (__u32)ctx->args[7]);
	gp_count(&calls, ctx->api_id);
	gp_count(&block_threads, gp_log2_bucket(block));
	gp_count(&grid_blocks, gp_log2_bucket(grid));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
