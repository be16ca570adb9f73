// tests/gpu/trace_replay.sh: cuda-samples' vectorAdd(A, B, C, numElements) traced losslessly, one
// warp record per global access (bpf_gpu_warp_output), and the kernel's pointer arguments read
// at its entry by its first thread (bpf_gpu_read_param) into a ring of their own, so that
// check.py --vectoradd can compute every lane's address: A + 4i and B + 4i loaded, C + 4i stored.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
} trace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
} params SEC(".maps");

struct vadd_params {
	__u64 a, b, c;
	__u32 n, pad;
};

GPU_ENTRY("vectorAdd") int on_entry(struct gp_kernel_ctx *ctx)
{
	struct vadd_params p = {};
	if (ctx->thread.block_idx[0] || ctx->thread.thread_idx[0])
		return 0;
	if (bpf_gpu_read_param(ctx, &p, 28, 0))
		return 0;
	bpf_ringbuf_output(&params, &p, sizeof(p), 0);
	return 0;
}

GPU_MEM("global,load,store", "vectorAdd") int on_access(struct gp_mem_ctx *ctx)
{
	__u64 tag = (__u64)ctx->thread.kernel_hash << 32 | (__u64)ctx->space << 24 |
		    (__u64)ctx->dir << 16 | ctx->size;   /* as replay.bpf.c: check.py decodes both */
	bpf_gpu_warp_output(&trace, ctx->addr, tag, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
