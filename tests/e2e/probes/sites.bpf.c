// One program per device attach point, for the CI structure checks of `gpuprobe ptx instrument`
// (tests/e2e/instrument_test.sh): each counts into its own slot.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline int bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

GPU_ENTRY("_Z7pattern*") int on_entry(struct gp_kernel_ctx *c) { return bump(0); }
GPU_EXIT("_Z7pattern*") int on_exit(struct gp_kernel_ctx *c) { return bump(1); }
GPU_BLOCK_BEGIN("pattern") int on_block_begin(struct gp_block_ctx *c) { return bump(2); }
GPU_BLOCK_END("block_sum") int on_block_end(struct gp_block_ctx *c) { return bump(3); }
GPU_MEM("global,load", "pattern") int on_gload(struct gp_mem_ctx *c) { return bump(4); }
GPU_MEM("shared,store", "block_sum") int on_sstore(struct gp_mem_ctx *c) { return bump(5); }
GPU_BARRIER("block_sum") int on_barrier(struct gp_barrier_ctx *c) { return bump(6); }
GPU_BARRIER_AFTER("block_sum") int on_barrier_after(struct gp_barrier_ctx *c) { return bump(7); }
GPU_BB("block_sum") int on_bb(struct gp_bb_ctx *c) { return bump(8); }
GPU_FUNC_ENTRY("twice") int on_func_entry(struct gp_func_ctx *c) { return bump(9); }
GPU_FUNC_EXIT("twice") int on_func_exit(struct gp_func_ctx *c) { return bump(10); }

char LICENSE[] SEC("license") = "GPL";
