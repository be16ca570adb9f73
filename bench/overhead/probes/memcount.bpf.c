// Every global load and store counted in one array value (atomic add only: sharded per SM by
// gpuprobe). Compared with h_memcnt (sharded atomicAdd per access) and compute-sanitizer.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} global_accesses SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&global_accesses, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
