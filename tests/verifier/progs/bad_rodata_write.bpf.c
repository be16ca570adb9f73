/* A store into .rodata (a read-only global). */
// expect-status: 1
// expect-insn: 3: (7b) *(u64 *)(r2 +0) = r1
// expect-reason: write into map forbidden, value_size=8 off=0 size=8
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

const volatile __u64 limit = 10;

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	*(volatile __u64 *)&limit = ctx->timestamp;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
