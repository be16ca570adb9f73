// HASH maps with 4-byte keys end to end (their lookups are emitted in place: maps/map_device.c
// emit_hash_lookup_var). @enter: threads entering each kernel (lookup; on a miss a NOEXIST insert
// of 1, lookup again; atomic add), one key per kernel. @by_thread: one key per thread of
// vectorAdd (its global index), inserted at exit; each thread then looks its key up again:
// @checks[0] counts the inserts that succeeded, [1] the lookups that found the thread's own key
// holding 1 (every key one thread: both equal the thread count).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} enter SEC(".maps"), by_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} checks SEC(".maps");

static __always_inline void add_check(__u32 k)
{
	__u64 *c = bpf_map_lookup_elem(&checks, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
}

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 k = ctx->thread.kernel_hash;
	__u64 one = 1, *v = bpf_map_lookup_elem(&enter, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	if (bpf_map_update_elem(&enter, &k, &one, BPF_NOEXIST) && (v = bpf_map_lookup_elem(&enter, &k)))
		__sync_fetch_and_add(v, 1);
	return 0;
}

GPU_EXIT("vectorAdd*") int on_exit(struct gp_kernel_ctx *ctx)
{
	__u32 k = ctx->thread.block_idx[0] * ctx->block_dim[0] + ctx->thread.thread_idx[0];
	__u64 one = 1, *v;
	if (bpf_map_update_elem(&by_thread, &k, &one, BPF_NOEXIST) == 0)
		add_check(0);
	v = bpf_map_lookup_elem(&by_thread, &k);
	if (v && *v == 1)
		add_check(1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
