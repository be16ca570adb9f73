// memtrace_warp's warp records into a lossy ring (the default mode): the kernel never waits, a
// full ring drops the record and counts it; run.sh prints the drop fraction.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26);
} trace SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	__u64 tag = ctx->insn_index | (__u64)ctx->dir << 32 | (__u64)ctx->size << 40;
	bpf_gpu_warp_output(&trace, ctx->addr, tag, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
