/* Pointer arithmetic other than adding/subtracting a scalar (masking the context pointer). */
// expect-status: 1
// expect-insn: 0: (57) r1 &= -8
// expect-reason: R1 pointer arithmetic with &= operator prohibited
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
	__u64 *p = (__u64 *)((unsigned long)ctx & ~7UL);
	return *p;
}

char LICENSE[] SEC("license") = "GPL";
