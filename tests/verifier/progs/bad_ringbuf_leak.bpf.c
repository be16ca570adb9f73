/* A ring-buffer record reserved and never submitted or discarded. */
// expect-status: 1
// expect-insn: 12: (95) exit
// expect-reason: Unreleased reference id=1 alloc_insn=6
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("gpu/exit/") int prog(struct gp_kernel_ctx *ctx)
{
	__u64 *e = bpf_ringbuf_reserve(&events, 8, 0);
	if (!e)
		return 0;
	*e = ctx->timestamp;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
