/* Probes written in C for the lowering test: what clang -target bpf -O2 -mcpu=v3 emits for
 * loops, 32-bit jumps, divisions and shifts, BPF-to-BPF calls, atomics on map values, global
 * data, ring buffers, printk and every GPU helper. Each must verify, lower and compile (ptxas). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} latency_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} per_block SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct event {
	__u64 t, block, thread;
	__u32 sm, lane;
};

__u64 total_calls;            /* .bss */
const char greeting[] = "probe ran";  /* .rodata */

/* log2 by a bounded loop (the verifier must see the bound) */
static __attribute__((noinline)) __u32 log2_u64(__u64 v)
{
	__u32 r = 0;
	for (int i = 0; i < 63 && v > 1; i++) {
		v >>= 1;
		r++;
	}
	return r;
}

GPU_ENTRY("") int hist_entry(struct gp_kernel_ctx *ctx)
{
	__u64 now = bpf_get_globaltimer();
	__u64 dt = now - ctx->timestamp;
	__u32 slot = log2_u64(dt / 32 + 1) & 63;
	__u64 *v = bpf_map_lookup_elem(&latency_hist, &slot);
	if (v)
		__sync_fetch_and_add(v, 1);
	__sync_fetch_and_add(&total_calls, 1);
	return 0;
}

GPU_EXIT("") int per_block_exit(struct gp_kernel_ctx *ctx)
{
	__u64 bx, by, bz, tx, ty, tz;
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	if (tx | ty | tz)
		return 0;
	__u64 key = (bz * ctx->grid_dim[1] + by) * ctx->grid_dim[0] + bx;
	__u64 one = 1, *v = bpf_map_lookup_elem(&per_block, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&per_block, &key, &one, BPF_NOEXIST);
	return 0;
}

GPU_ENTRY("sgemm*") int events_entry(struct gp_kernel_ctx *ctx)
{
	if (bpf_get_lane_id() != 0)
		return 0;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	__u64 x, y, z;
	bpf_get_block_idx(&x, &y, &z);
	e->t = bpf_get_globaltimer();
	e->block = x;
	bpf_get_thread_idx(&x, &y, &z);
	e->thread = x;
	e->sm = bpf_get_sm_id();
	e->lane = bpf_get_lane_id();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

GPU_ENTRY("printk*") int printk_entry(struct gp_kernel_ctx *ctx)
{
	__u64 w = bpf_get_warp_id(), c = bpf_get_clock(), m = bpf_get_active_mask();
	bpf_printk("warp %llu clock %llu mask %llx", w, c, m);
	bpf_puts(greeting);
	bpf_gpu_membar();
	if (ctx->params_size > 4096)
		bpf_gpu_exit();
	return (__u32)(c % 7) + (__u32)(ctx->params_size / 3);
}
