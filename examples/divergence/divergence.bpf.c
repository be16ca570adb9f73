// Warp divergence per branch target: at each basic block entry of oddEven, the first active
// lane of the warp counts the warp's visit, and counts it as diverged when not all 32 lanes
// are active. @diverged[bb] / @visits[bb] is the divergent fraction of that block.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} visits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} diverged SEC(".maps");

GPU_BB("_Z7oddEvenPf") int on_bb(struct gp_bb_ctx *ctx)
{
	__u64 mask = bpf_get_active_mask() & 0xffffffffull;
	/* only the lowest active lane speaks for the warp */
	if (!mask || (mask & -mask) != (1ull << ctx->thread.lane_id))
		return 0;
	__u32 k = ctx->bb_index;
	__u64 *v = bpf_map_lookup_elem(&visits, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	if (mask != 0xffffffffull && (v = bpf_map_lookup_elem(&diverged, &k)))
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
