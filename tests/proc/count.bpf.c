// tests/proc: counts cuCtxSynchronize calls on the host (so the report has a number each process
// sets itself: the test app calls it as many times as it is asked), and kernel entries.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} proc_counts SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&proc_counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

HOST_ENTRY("cuCtxSynchronize") int on_sync(struct gp_host_ctx *ctx) { bump(0); return 0; }
GPU_ENTRY("k_*") int on_entry(struct gp_kernel_ctx *ctx) { bump(1); return 0; }

char LICENSE[] SEC("license") = "GPL";
