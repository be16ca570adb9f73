// Sections for tests/cli/match.sh: kernel globs in the forms the matching rule names, one glob
// that matches nothing in templates.ptx, and a misspelt host API.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("scale*") int on_scale(struct gp_kernel_ctx *ctx)
{
	hit(0);
	return 0;
}

GPU_ENTRY("nosuch*") int on_nosuch(struct gp_kernel_ctx *ctx)
{
	hit(1);
	return 0;
}

HOST_ENTRY("cuLaunchKernal") int on_typo(struct gp_host_ctx *ctx)
{
	hit(2);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
