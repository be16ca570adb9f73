// A probe whose ring declares its record type (tests/capture): the capture file carries the
// fields of struct cap_rec flattened from this object's BTF, and `gpuprobe decode` prints them.
// The host test writes records with gp_map_inst__ring_output; the GPU script runs it for real.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct cap_rec {
	__u64 seq;
	__u32 sm;
	__s32 neg;
	char tag[8];
	struct {
		__u16 lo, hi;
	} pair;
	float f;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__type(value, struct cap_rec);
} events SEC(".maps");

GPU_BLOCK_BEGIN("*") int on_begin(struct gp_block_ctx *ctx)
{
	struct cap_rec r = {.seq = ctx->timestamp, .sm = ctx->thread.sm_id, .neg = -1,
			    .tag = "begin", .pair = {1, 2}, .f = 0.5f};
	return bpf_ringbuf_output(&events, &r, sizeof(r), 0);
}

char LICENSE[] SEC("license") = "GPL";
