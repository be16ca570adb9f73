// bpf_gpu_read_param (helper 514) at the entry of pattern(const float *a, float *b, int n):
// thread 0 of block 0 stores parameter 0 (a, 8 bytes at 0), parameter 1 (b, 8 at 8) and 2
// (n, 4 at 16) in param_values[0..2], the result of a read past the 20-byte buffer (8 at 16:
// -ERANGE) in [3] and what that read left in its destination (zero-filled) in [4]. n lands in
// a map value directly; a and b go through the stack.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, __u64);
} param_values SEC(".maps");

static __always_inline void put(__u32 k, __u64 v)
{
	bpf_map_update_elem(&param_values, &k, &v, BPF_ANY);
}

GPU_ENTRY("_Z7patternPKfPfi") int read_params(struct gp_kernel_ctx *ctx)
{
	if (ctx->thread.block_idx[0] | ctx->thread.thread_idx[0])
		return 0;
	__u64 a = 0, b = 0, past = 7;
	bpf_gpu_read_param(ctx, &a, sizeof(a), 0);
	bpf_gpu_read_param(ctx, &b, sizeof(b), 8);
	put(0, a);
	put(1, b);
	__u32 k = 2;
	__u64 *v = bpf_map_lookup_elem(&param_values, &k);
	if (v)
		bpf_gpu_read_param(ctx, v, 4, 16);   /* n: the low half of the value */
	put(3, (__u64)bpf_gpu_read_param(ctx, &past, sizeof(past), 16));
	put(4, past);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
