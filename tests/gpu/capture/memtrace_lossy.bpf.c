// Every global load and store as a typed 16-byte record (address, size, direction) into a ring
// of 1 MiB per SM (256 MiB over 132 SMs; lossy: a full ring drops and counts). tests/gpu/capture.sh.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct access {
	__u64 addr;
	__u32 size, dir;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 28);
	__type(value, struct access);
#ifdef LOSSLESS
	__uint(map_flags, LOSSLESS);
#endif
} trace SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	struct access a = {.addr = ctx->addr, .size = ctx->size, .dir = ctx->dir};
	bpf_ringbuf_output(&trace, &a, sizeof(a), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
