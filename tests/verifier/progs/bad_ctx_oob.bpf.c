/* A context read past the end of struct gp_kernel_ctx. */
// expect-status: 1
// expect-insn: 0: (79) r0 = *(u64 *)(r1 +96)
// expect-reason: invalid bpf_context access off=96 size=8 (ctx size 88)
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
	return ((__u64 *)ctx)[12];
}

char LICENSE[] SEC("license") = "GPL";
