// memtrace (one 16-byte record per lane per access) in a lossless ring: what warp records save.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct access {
	__u64 addr;
	__u32 size, dir;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
} trace SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	struct access a = {.addr = ctx->addr, .size = ctx->size, .dir = ctx->dir};
	bpf_ringbuf_output(&trace, &a, sizeof(a), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
