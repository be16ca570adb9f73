/* Static (BPF-to-BPF) subprograms that return without setting r0: a void one, and one whose
 * return value no caller uses (clang drops it). Linux requires r0 only at the main program's
 * exit; so must we. */
// expect-status: 0
// expect-line: void_helper (gpu/entry/void): OK
// expect-line: unused_result (gpu/exit/unused): OK
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[4]);
} counts SEC(".maps");

static __attribute__((noinline)) void bump(__u64 *v, __u64 n)
{
	if (v)
		__sync_fetch_and_add(&v[n & 3], 1);
}

static __attribute__((noinline)) int note(__u64 *v, __u64 t)
{
	if (!v)
		return -1;
	__sync_fetch_and_add(&v[1], t);
	return 0;
}

SEC("gpu/entry/void") int void_helper(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;

	bump(bpf_map_lookup_elem(&counts, &k), ctx->grid_dim[0]);
	return 0;
}

SEC("gpu/exit/unused") int unused_result(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;

	note(bpf_map_lookup_elem(&counts, &k), ctx->timestamp);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
