/* A static function that calls itself: reported as recursion, naming it (not as a call stack
 * "too deep"). */
// expect-status: 1
// expect-insn: 23: (85) call pc-10
// expect-reason: recursive call: count_down calls itself and does not stop within 8 frames
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __attribute__((noinline)) __u64 count_down(__u64 *v, __u32 n)
{
	if (!n)
		return 0;
	__u64 r = count_down(v, n - 1);
	__sync_fetch_and_add(v, r);
	return r + 1;
}

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		count_down(v, ctx->params_size);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
