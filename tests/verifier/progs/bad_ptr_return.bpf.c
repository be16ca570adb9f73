/* A pointer returned from the program: r0 must be a scalar at exit. */
// expect-status: 1
// expect-insn: 1: (95) exit
// expect-reason: R0 leaks addr as return value
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("gpu/entry/") long prog(struct gp_kernel_ctx *ctx)
{
	return (long)ctx;
}

char LICENSE[] SEC("license") = "GPL";
