// tests/shim_lazy/lazy.sh: counts kernel entries and global accesses into an array map (a probe
// with sites at the entry and at every global load and store of every kernel).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lazy_counts SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&lazy_counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("k_*") int on_entry(struct gp_kernel_ctx *ctx) { bump(0); return 0; }
GPU_MEM("global", "k_*") int on_mem(struct gp_mem_ctx *ctx) { bump(1); return 0; }

char LICENSE[] SEC("license") = "GPL";
