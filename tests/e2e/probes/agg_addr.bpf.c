// Not additive: the key reads the access's address, which differs from one access to the next
// (tests/e2e/aggregate_test.sh: `gpuprobe verify -v` says so, and every site keeps its call).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} by_align SEC(".maps");

GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->addr & 3;
	__u64 *v = bpf_map_lookup_elem(&by_align, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
