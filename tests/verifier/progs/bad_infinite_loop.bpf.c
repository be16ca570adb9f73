/* A loop whose state never changes: it can spin forever on a GPU that cannot preempt it. */
// expect-status: 1
// expect-insn: 0: (85) call bpf_get_sm_id#509
// expect-reason: infinite loop detected at insn 0 (loop not provably bounded)
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
	while (bpf_get_sm_id() != 1000)
		;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
