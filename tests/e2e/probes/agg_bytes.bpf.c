// Bytes moved, per state space: the key and the added value both come from site constants
// (ctx->space, ctx->size), so the program is additive and a weighted call adds size times its
// weight (tests/e2e/aggregate_test.sh).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} bytes SEC(".maps");

GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->space & 7;
	__u64 *v = bpf_map_lookup_elem(&bytes, &k);
	if (v)
		__sync_fetch_and_add(v, ctx->size);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
