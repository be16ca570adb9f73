/* Reads of uninitialized stack: half of the value passed to map_update_elem was never written. */
// expect-status: 1
// expect-insn: 11: (85) call bpf_map_update_elem#2
// expect-reason: invalid read from stack off -24+8 size 16
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
	__u32 k = 0;
	__u64 val[2];
	val[0] = ctx->timestamp;
	bpf_map_update_elem(&vals, &k, val, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
