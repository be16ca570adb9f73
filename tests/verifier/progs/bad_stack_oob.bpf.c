/* A stack write at an index bounded by a mask (0..31) that still reaches past the frame's top. */
// expect-status: 1
// expect-insn: 9: (73) *(u8 *)(r2 +0) = r1
// expect-reason: invalid variable-offset write to stack R2 var_off=(0; 0x1f) off=[-16, 15] size=1
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
	volatile char buf[16] = {};
	buf[ctx->thread.lane_id & 31] = 1;
	return buf[0];
}

char LICENSE[] SEC("license") = "GPL";
