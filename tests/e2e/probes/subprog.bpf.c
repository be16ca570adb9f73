// A probe whose work is a static subprogram that clang keeps out of line (noinline): the lowering
// makes it a `.func NAME__subN` declared ahead of the probe that calls it. Inlined, the
// subprogram's body goes and its declaration must go with it (ptxas: "Unresolved extern
// function" otherwise). Counts entries [0] and exits [1] of `pattern`.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __attribute__((noinline)) int bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

GPU_ENTRY("pattern*") int on_entry(struct gp_kernel_ctx *ctx) { return bump(0); }
GPU_EXIT("pattern*") int on_exit(struct gp_kernel_ctx *ctx) { return bump(1); }

char LICENSE[] SEC("license") = "GPL";
