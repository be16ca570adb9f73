// One lane of every block inserts its block's key into a HASH map (BPF_NOEXIST), the others
// find it and add: the insert path is long and taken by one lane of one warp per block, the
// divergence that broke fft-cuda's shared-memory transposes (tests/e2e/reconverge_test.sh).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} per_block SEC(".maps");

GPU_ENTRY("transpose_blocks") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 k = ctx->thread.block_idx[0];
	__u64 one = 1, *v = bpf_map_lookup_elem(&per_block, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (bpf_map_update_elem(&per_block, &k, &one, BPF_NOEXIST) &&
	    (v = bpf_map_lookup_elem(&per_block, &k)))
		__sync_fetch_and_add(v, 1);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
