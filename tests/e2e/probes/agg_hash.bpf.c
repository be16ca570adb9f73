// Every access counted by direction in a HASH map with the counting idiom (gp_count: lookup,
// BPF_NOEXIST insert of 0 on a miss, lookup again, atomic add): additive after a first run, so a
// merged group makes a call of weight 1 and one of the rest (tests/e2e/aggregate_test.sh).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} dirs SEC(".maps");

GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	gp_count(&dirs, ctx->dir);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
