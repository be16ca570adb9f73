// Exact counts of memory accesses by space and direction: @mem[space * 4 + dir] with the
// enum values of gpuprobe/context.h (global=1, shared=2; load=1, store=2, atomic=3), over the
// kernels pattern and block_sum.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __u64);
} mem SEC(".maps");

GPU_MEM("global,shared", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->space * 4 + ctx->dir;
	__u64 *v = bpf_map_lookup_elem(&mem, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
