// Warp helpers before and after a branch (tests/e2e/warp_sites_test.sh): the first call runs in
// every lane that entered the probe, so it matches over the site's mask; the second only in the
// lanes that took the branch, so it matches over the lanes active there (activemask).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} warp_counts SEC(".maps");

GPU_MEM("global,load", "*") int on_load(struct gp_mem_ctx *ctx)
{
	__u32 k = 0;
	__u64 n = bpf_gpu_warp_unique(ctx->addr >> 5);
	if (ctx->addr & 4) {
		k = 1;
		n = bpf_gpu_warp_count(ctx->addr >> 7);
	}
	__u64 *v = bpf_map_lookup_elem(&warp_counts, &k);
	if (v)
		__sync_fetch_and_add(v, n);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
