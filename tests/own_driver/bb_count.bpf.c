// Basic-block counters on every kernel, in the idiom bpftrace and libbpf-tools write (lookup; on
// a miss insert 0 with BPF_NOEXIST and look up again; atomic add): @insns counts the PTX
// instructions each kernel executed (a block's length at every block), @blocks the blocks run.
// Both are additive, so gpuprobe counts them in per-thread accumulators that each thread adds to
// the maps where it leaves (GPUPROBE_DEFER, ptx-frontend/instrument.h); tests/own_driver/probes.sh
// checks that the maps hold the same counts as with a call at every block (GPUPROBE_DEFER=0).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} insns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} blocks SEC(".maps");

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	__u32 k = ctx->thread.kernel_hash, z = 0;
	__u64 zero = 0, *v = bpf_map_lookup_elem(&insns, &k);
	if (!v) {
		bpf_map_update_elem(&insns, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&insns, &k);
	}
	if (v)
		__sync_fetch_and_add(v, (__u64)ctx->ninsns);
	__u64 *b = bpf_map_lookup_elem(&blocks, &z);
	if (b)
		__sync_fetch_and_add(b, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
