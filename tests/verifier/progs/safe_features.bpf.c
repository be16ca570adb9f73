/* Safe programs using what the verifier must accept: bounded loops, BPF-to-BPF calls, ring-buffer
 * records, variable indexes checked against a bound, division by a value that may be zero,
 * per-SM counters, constant strings. */
// expect-status: 0
// expect-line: bounded_loop (gpu/entry/loop): OK
// expect-line: subprog_call (gpu/entry/call): OK
// expect-line: ringbuf_event (gpu/exit/ring): OK
// expect-line: bounded_index (gpu/mem/all/index): OK
// expect-line: divide (gpu/entry/div): OK
// expect-line: say_hello (gpu/block_begin/hello): OK
// expect-line:   map counts: changed only by atomic add (sharded per SM)
// expect-absent:   map hist: changed only by atomic add (sharded per SM)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[8]);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[4]);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct event {
	__u32 sm, lane;
	__u64 t;
};

SEC("gpu/entry/loop") int bounded_loop(struct gp_kernel_ctx *ctx)
{
	__u64 sum = 0;
#pragma clang loop unroll(disable)
	for (int i = 0; i < 3; i++)
		sum += ctx->grid_dim[i] * ctx->block_dim[i];
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(&v[0], sum);
	return 0;
}

static __attribute__((noinline)) __u64 weigh(__u64 a, __u64 b)
{
	return a * 3 + b;
}

SEC("gpu/entry/call") int subprog_call(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 w = weigh(ctx->thread.sm_id, ctx->thread.lane_id);
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(&v[1], w);
	return 0;
}

SEC("gpu/exit/ring") int ringbuf_event(struct gp_kernel_ctx *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->sm = ctx->thread.sm_id;
	e->lane = ctx->thread.lane_id;
	e->t = ctx->timestamp;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("gpu/mem/all/index") int bounded_index(struct gp_mem_ctx *ctx)
{
	__u32 k = 0;
	__u64 *h = bpf_map_lookup_elem(&hist, &k);
	if (!h)
		return 0;
	__u32 bucket = ctx->size;
	if (bucket > 3)
		bucket = 3;
	h[bucket] += 1;     /* a plain store: hist is not atomic-only */
	return 0;
}

SEC("gpu/entry/div") int divide(struct gp_kernel_ctx *ctx)
{
	/* params_size may be 0: division by zero is defined (0) in eBPF */
	return ctx->grid_dim[0] / ctx->params_size + ctx->block_dim[0] % ctx->params_size;
}

SEC("gpu/block_begin/hello") int say_hello(struct gp_block_ctx *ctx)
{
	bpf_puts("block begins\n");
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
