// bpf_gpu_read_param misused, one way per program: each must be rejected by the verifier with
// its own reason (tests/e2e/instrument_test.sh checks the lines of `gpuprobe verify`).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} out SEC(".maps");

/* a memory probe has no kernel context */
GPU_MEM("global", "*") int at_mem(struct gp_mem_ctx *ctx)
{
	__u64 v;
	return bpf_gpu_read_param((void *)ctx, &v, sizeof(v), 0);
}

/* the context is read-only: no destination there */
GPU_ENTRY("*") int into_ctx(struct gp_kernel_ctx *ctx)
{
	return bpf_gpu_read_param(ctx, (void *)ctx, 8, 0);
}

/* the size must be a known constant */
GPU_ENTRY("*") int variable_size(struct gp_kernel_ctx *ctx)
{
	__u64 v[2] = {0, 0};
	return bpf_gpu_read_param(ctx, v, (ctx->params_size & 7) + 1, 0);
}

/* 16 bytes into an 8-byte map value */
GPU_ENTRY("*") int past_value(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&out, &k);
	return v ? bpf_gpu_read_param(ctx, v, 16, 0) : 0;
}

char LICENSE[] SEC("license") = "GPL";
