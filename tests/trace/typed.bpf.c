// A probe whose ring records are typed (tests/trace): the ring `events` declares its record
// type, so a trace shows each record's fields as arguments.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct tagged_event {
	__u64 ns;       /* %globaltimer: where the trace places the record */
	__u32 sm;
	__s32 delta;
	char tag[8];
	__u16 lanes[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__type(value, struct tagged_event);
} events SEC(".maps");

GPU_BLOCK_BEGIN("*") int on_begin(struct gp_block_ctx *ctx)
{
	struct tagged_event e = {.ns = ctx->timestamp, .sm = ctx->thread.sm_id, .delta = -1,
				 .tag = "begin", .lanes = {1, 2}};
	return bpf_ringbuf_output(&events, &e, sizeof(e), 0);
}

char LICENSE[] SEC("license") = "GPL";
