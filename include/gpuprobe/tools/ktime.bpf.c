// ktime: time on the GPU per kernel. A launch runs from its block (0,0,0)'s start
// (gpu/block_begin) to the end of its last block (gpu/block_end: the block that brings the
// launch's finished blocks to its grid size), both on %globaltimer. Per kernel: @launches
// (launches timed), @time_ns (their durations, summed); @launch_ns: the log2 histogram of
// every launch's duration. Launches of one kernel that overlap (several streams) are not told
// apart: their blocks count towards one launch. `gpuprobe run -t ktime -- APP`
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
BY_KERNEL(time_ns);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65);
	__type(key, gp_log2_key_t);
	__type(value, __u64);
} launch_ns SEC(".maps");

/* The launch in flight, per kernel: written in place (one shared copy, not printed). */
struct gp_ktime_launch {
	__u64 start;   /* %globaltimer at block (0,0,0)'s start */
	__u64 ended;   /* blocks of the launch that have ended */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, gp_kernel_id_t);
	__type(value, struct gp_ktime_launch);
} _inflight SEC(".maps");

GPU_BLOCK_BEGIN("*") int on_begin(struct gp_block_ctx *ctx)
{
	const __u32 *b = ctx->thread.block_idx;
	if (b[0] | b[1] | b[2])
		return 0;
	__u32 kernel = ctx->thread.kernel_hash;
	struct gp_ktime_launch *l = bpf_map_lookup_elem(&_inflight, &kernel);
	if (!l) {
		struct gp_ktime_launch zero = {};
		bpf_map_update_elem(&_inflight, &kernel, &zero, BPF_NOEXIST);
		l = bpf_map_lookup_elem(&_inflight, &kernel);
		if (!l)
			return 0;
	}
	l->start = ctx->timestamp;
	return 0;
}

GPU_BLOCK_END("*") int on_end(struct gp_block_ctx *ctx)
{
	__u32 kernel = ctx->thread.kernel_hash;
	struct gp_ktime_launch *l = bpf_map_lookup_elem(&_inflight, &kernel);
	if (!l) {   /* a block that ended before block (0,0,0) started: counted all the same */
		struct gp_ktime_launch zero = {};
		bpf_map_update_elem(&_inflight, &kernel, &zero, BPF_NOEXIST);
		l = bpf_map_lookup_elem(&_inflight, &kernel);
		if (!l)
			return 0;
	}
	__u64 blocks = (__u64)ctx->grid_dim[0] * ctx->grid_dim[1] * ctx->grid_dim[2];
	if (__sync_fetch_and_add(&l->ended, 1) + 1 < blocks)
		return 0;
	/* the launch's last block: block (0,0,0)'s start read where atomics are (L2), not
	 * through this SM's L1 */
	__u64 ns = ctx->timestamp - __sync_fetch_and_add(&l->start, 0);
	l->ended = 0;
	gp_count(&launches, kernel);
	gp_add(&time_ns, kernel, ns);
	gp_count(&launch_ns, gp_log2_bucket(ns));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
