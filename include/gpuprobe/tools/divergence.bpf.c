// divergence: how full warps are when they run each basic block. At every basic block's entry
// the lowest active lane of each warp counts one warp-level block execution and the lanes
// running it together (%activemask): per kernel, @warp_blocks (warp-level basic-block
// executions), @active_lanes (their lanes, summed), @full_warps (those with all 32 lanes);
// active_lanes / (32 * warp_blocks) is the SIMD efficiency, and @lanes the histogram of active
// lanes per execution (a warp of a block whose size is not a multiple of 32 is partial without
// diverging). `gpuprobe run -t divergence -- APP`
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

BY_KERNEL(warp_blocks);
BY_KERNEL(active_lanes);
BY_KERNEL(full_warps);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 33);
	__type(key, gp_lhist_key_t);
	__type(value, __u64);
} lanes SEC(".maps") GP_LHIST_STEP(1);

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	__u64 mask = bpf_get_active_mask() & 0xffffffffull;
	__u32 lane = ctx->thread.lane_id & 31;
	if ((mask & -mask) != (1ull << lane))
		return 0;   /* one lane per warp: the lowest running this block */
	__u32 n = __builtin_popcountll(mask);
	__u32 kernel = ctx->thread.kernel_hash;
	gp_count(&warp_blocks, kernel);
	gp_add(&active_lanes, kernel, n);
	if (n == 32)
		gp_count(&full_warps, kernel);
	gp_count(&lanes, n);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
