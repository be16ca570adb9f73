// tests/gpu/jit.sh: per kernel, the threads that entered and left it, and its memory sites run
// by kind (gpu/mem's filters plain, async, matrix) and, for plain ones, by direction.
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

BY_KERNEL(entries);
BY_KERNEL(exits);
BY_KERNEL(plain_loads);
BY_KERNEL(plain_stores);
BY_KERNEL(async_sites);
BY_KERNEL(matrix_sites);

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	gp_count(&entries, ctx->thread.kernel_hash);
	return 0;
}

GPU_EXIT("*") int on_exit(struct gp_kernel_ctx *ctx)
{
	gp_count(&exits, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("plain,global,load", "*") int on_load(struct gp_mem_ctx *ctx)
{
	gp_count(&plain_loads, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("plain,global,store", "*") int on_store(struct gp_mem_ctx *ctx)
{
	gp_count(&plain_stores, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("async", "*") int on_async(struct gp_mem_ctx *ctx)
{
	gp_count(&async_sites, ctx->thread.kernel_hash);
	return 0;
}

GPU_MEM("matrix", "*") int on_matrix(struct gp_mem_ctx *ctx)
{
	gp_count(&matrix_sites, ctx->thread.kernel_hash);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
