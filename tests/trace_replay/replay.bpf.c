// tests/trace_replay: every global and shared access as one warp record (bpf_gpu_warp_output)
// in a lossless ring: the tag says which kernel, space, direction and size, so check.py can
// match each record with the accesses the program makes. 1 MiB is divided among the SMs: 4 KiB
// rings on an H100 or H200 (132 SMs), which the trace overflows many times (every record must
// still arrive: the producers wait); one 1 MiB ring on PoCL's one "SM", which holds it all (a
// block's warps there reserve before any commits: tests/maps/warp_pocl.c tests the waiting).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
} trace SEC(".maps");

GPU_MEM("global,shared,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	__u64 tag = (__u64)ctx->thread.kernel_hash << 32 | (__u64)ctx->space << 24 |
		    (__u64)ctx->dir << 16 | ctx->size;
	bpf_gpu_warp_output(&trace, ctx->addr, tag, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
