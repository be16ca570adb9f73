/* A 200-iteration loop whose body branches (lookup or not): paths meet again at every iteration
 * and prune there only if a kept state exists for each iteration. */
// expect-status: 0
// expect-line: mem (gpu/mem/global,store/): OK
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 256); __type(key, __u32); __type(value, __u64); } hist SEC(".maps");
struct ev { __u32 sm; __u32 pad; __u64 addr; };
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 1 << 16); } rb SEC(".maps");
SEC("gpu/mem/global,store/") int mem(struct gp_mem_ctx *ctx)
{
	__u64 total = 0;
	#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < 200; i++) {
		__u32 k = (ctx->thread.lane_id + i) & 255;
		__u64 *v = bpf_map_lookup_elem(&hist, &k);
		if (v)
			total += *v;
	}
	__u32 b = (ctx->addr >> 12) & 255;
	__u64 *v = bpf_map_lookup_elem(&hist, &b);
	if (v)
		__sync_fetch_and_add(v, 1);
	struct ev e = {.sm = ctx->thread.sm_id, .pad = 0, .addr = ctx->addr + total};
	bpf_ringbuf_output(&rb, &e, sizeof(e), 0);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
