// memcount: memory instructions executed per kernel, every state space (global, shared, local,
// generic), one count per thread per instruction: loads, stores and atomics.
// `gpuprobe run -t memcount -- APP`
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define BY_KERNEL(name)                             \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 4096);          \
		__type(key, gp_kernel_id_t);        \
		__type(value, __u64);               \
	} name SEC(".maps")

BY_KERNEL(loads);
BY_KERNEL(stores);
BY_KERNEL(atomics);

GPU_MEM("load", "*") int on_load(struct gp_mem_ctx *ctx)
{
	gp_count(&loads, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("store", "*") int on_store(struct gp_mem_ctx *ctx)
{
	gp_count(&stores, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("atomic", "*") int on_atomic(struct gp_mem_ctx *ctx)
{
	gp_count(&atomics, ctx->thread.kernel_hash);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
