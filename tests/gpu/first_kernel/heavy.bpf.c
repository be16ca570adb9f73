// tests/gpu/first_kernel.sh's heavy probe: every global load and store of every kernel counted
// per (kernel, direction, 4 KiB page) in a HASH map, each site a lookup, an insert on a miss
// and an atomic add: many sites, each with live registers of its own.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} accesses SEC(".maps");

GPU_MEM("global", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u64 key = (__u64)ctx->thread.kernel_hash << 32 | ((__u64)ctx->dir << 28) |
		    (__u32)((ctx->addr >> 12) & 0xffff);
	__u64 one = 1, *v = bpf_map_lookup_elem(&accesses, &key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (bpf_map_update_elem(&accesses, &key, &one, BPF_NOEXIST) &&
	    (v = bpf_map_lookup_elem(&accesses, &key)))
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
