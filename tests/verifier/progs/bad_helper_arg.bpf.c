/* A helper argument of the wrong type: a scalar where map_lookup_elem wants a key pointer. */
// expect-status: 1
// expect-insn: 3: (85) call bpf_map_lookup_elem#1
// expect-reason: R2 type=scalar expected=fp, map_value
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
	__u64 *v = bpf_map_lookup_elem(&vals, (void *)(long)ctx->thread.lane_id);
	return v ? 1 : 0;
}

char LICENSE[] SEC("license") = "GPL";
