/* A ring-buffer record written after bpf_ringbuf_submit: reported as a released reference (not
 * as a scalar), with the instruction that released it. */
// expect-status: 1
// expect-insn: 14: (7b) *(u64 *)(r7 +8) = r1
// expect-reason: R7 invalid mem access: reference released (the ring-buffer record was submitted at insn 12)
// expect-line: ; e[1] = 7; @ bad_ringbuf_use_after_submit.bpf.c:24
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("gpu/exit/") int prog(struct gp_kernel_ctx *ctx)
{
	__u64 *e = bpf_ringbuf_reserve(&events, 16, 0);

	if (!e)
		return 0;
	e[0] = ctx->timestamp;
	bpf_ringbuf_submit(e, 0);
	e[1] = 7;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
