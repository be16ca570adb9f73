// tests/gpu/jit_ml.sh: an entry and an exit counter per kernel, nothing else (the overhead run
// of torch.compile's kernels). The maps are named as in jit_probes.bpf.c.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, gp_kernel_id_t);
	__type(value, __u64);
} entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, gp_kernel_id_t);
	__type(value, __u64);
} exits SEC(".maps");

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

char LICENSE[] SEC("license") = "GPL";
