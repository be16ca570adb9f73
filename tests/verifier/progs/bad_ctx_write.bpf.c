/* A write into the read-only context. */
// expect-status: 1
// expect-insn: 1: (7b) *(u64 *)(r1 +80) = r2
// expect-reason: cannot write into ctx: the context is read-only (off=80 size=8)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	ctx->timestamp = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
