// Corpus probe (c) of tests/gpu/apps.sh: PTX instructions executed per kernel, counted at every
// basic block entry of every kernel (the block's length from the context), in a HASH map keyed by
// the kernel's name hash. The idiom bpftrace and libbpf-tools write: lookup; on a miss insert a
// constant (0) with BPF_NOEXIST and look up again; then an atomic add.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} insns_by_kernel SEC(".maps");

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	__u32 k = ctx->thread.kernel_hash;
	__u64 zero = 0, *v = bpf_map_lookup_elem(&insns_by_kernel, &k);
	if (!v) {
		bpf_map_update_elem(&insns_by_kernel, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&insns_by_kernel, &k);
	}
	if (v)
		__sync_fetch_and_add(v, (__u64)ctx->ninsns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
