// mem_trace: every global load and store of every kernel, counted per kernel and direction
// (gpuprobe's memory attach point; bpftime's mem_trace counts accesses the same way).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, gp_kernel_id_t);   /* ctx->thread.kernel_hash: printed as kernel names */
	__type(value, __u64);
} loads_by_kernel SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, gp_kernel_id_t);   /* ctx->thread.kernel_hash: printed as kernel names */
	__type(value, __u64);
} stores_by_kernel SEC(".maps");

GPU_MEM("global,load", "*") int on_load(struct gp_mem_ctx *ctx)
{
	gp_count(&loads_by_kernel, ctx->thread.kernel_hash);   /* gpuprobe.h: lookup, insert, atomic add */
	return 0;
}

GPU_MEM("global,store", "*") int on_store(struct gp_mem_ctx *ctx)
{
	gp_count(&stores_by_kernel, ctx->thread.kernel_hash);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
