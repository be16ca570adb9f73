// memtrace_warp sampled: each SM's ring keeps 1 in 16 warp accesses (map_extra), losslessly;
// the rate and the accesses offered are in the map's metadata, so counts scale by 16.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
	__uint(map_extra, 16);
} trace SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	__u64 tag = ctx->insn_index | (__u64)ctx->dir << 32 | (__u64)ctx->size << 40;
	bpf_gpu_warp_output(&trace, ctx->addr, tag, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
