// Exact counts of the kernel-level attach points on the kernel `pattern` (and barriers of
// block_sum): @counts[0] entry (every thread), [1] exit, [2] block begin, [3] block end,
// [4] barrier before, [5] barrier after (block_sum).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("pattern*") int on_entry(struct gp_kernel_ctx *ctx) { bump(0); return 0; }
GPU_EXIT("pattern*") int on_exit(struct gp_kernel_ctx *ctx) { bump(1); return 0; }
GPU_BLOCK_BEGIN("pattern*") int on_block_begin(struct gp_block_ctx *ctx) { bump(2); return 0; }
GPU_BLOCK_END("pattern*") int on_block_end(struct gp_block_ctx *ctx) { bump(3); return 0; }
GPU_BARRIER("block_sum*") int on_barrier(struct gp_barrier_ctx *ctx) { bump(4); return 0; }
GPU_BARRIER_AFTER("block_sum*") int on_barrier_after(struct gp_barrier_ctx *ctx) { bump(5); return 0; }

char LICENSE[] SEC("license") = "GPL";
