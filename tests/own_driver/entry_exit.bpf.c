// An entry and an exit counter and a memory-access counter on every kernel: @counts[0] counts
// thread entries, [1] thread exits, [2] global loads, [3] global stores. On the own driver (PoCL)
// they must equal what the launch geometry and the kernel's code make them.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { bump(0); return 0; }
GPU_EXIT("*") int on_exit(struct gp_kernel_ctx *ctx) { bump(1); return 0; }

GPU_MEM("global", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	if (ctx->dir == 1)
		bump(2);
	else if (ctx->dir == 2)
		bump(3);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
