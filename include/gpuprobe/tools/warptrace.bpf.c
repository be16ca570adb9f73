// warptrace: every global load, store and atomic of a warp as ONE record in the SM's ring
// (bpf_gpu_warp_output: struct gp_warp_record, gpuprobe/warp.h): base + stride when the lanes'
// addresses are regular (coalesced, strided), else each active lane's address after it. The
// ring is lossless: a full ring makes the kernel wait instead of losing records. The tag is the
// kernel's gp_name_hash << 32 | enum gp_mem_space << 24 | enum gp_mem_dir << 16 | size.
// Best with a capture: `gpuprobe run -t warptrace -k KERNEL --output t.gpt -- APP`, then
// `gpuprobe decode --json t.gpt` (tests/trace_replay/check.py --summary reads it).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
	__uint(map_flags, GP_RINGBUF_LOSSLESS);
} warps SEC(".maps");

GPU_MEM("global", "*") int on_access(struct gp_mem_ctx *ctx)
{
	__u64 tag = (__u64)ctx->thread.kernel_hash << 32 | (__u64)ctx->space << 24 |
		    (__u64)ctx->dir << 16 | ctx->size;
	bpf_gpu_warp_output(&warps, ctx->addr, tag, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
