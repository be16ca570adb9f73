// tests/jit_capture/mem_sites.sh: one program per memory filter, each counting its sites' bytes
// by kind (so every site fills size and kind).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} bytes SEC(".maps");

static __always_inline int count(struct gp_mem_ctx *ctx)
{
	__u32 k = ctx->kind & 3;
	__u64 *v = bpf_map_lookup_elem(&bytes, &k);
	if (v)
		__sync_fetch_and_add(v, ctx->size);
	return 0;
}

GPU_MEM("all", "*") int on_all(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("plain", "*") int on_plain(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("async", "*") int on_async(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("matrix", "*") int on_matrix(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("async,load", "*") int on_async_load(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("async,matrix,shared", "*") int on_shared(struct gp_mem_ctx *ctx) { return count(ctx); }
GPU_MEM("atomic", "*") int on_atomic(struct gp_mem_ctx *ctx) { return count(ctx); }

char LICENSE[] SEC("license") = "GPL";
