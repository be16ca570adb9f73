/* A variable index bounded too loosely (< 4) for a 2-element map value. */
// expect-status: 1
// expect-insn: 13: (7b) *(u64 *)(r0 +0) = r1
// expect-reason: R0 max value is outside of the allowed memory range: off=0+[0, 24] size=8, map value size 16
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
	__u32 i = ctx->thread.lane_id;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);
	if (v && i < 4)
		v[i] = 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
