// Host API probes (run by the shim's interpreter around driver calls) sharing a map with a
// device probe: launches counted at entry, threads launched (grid x * block x), failed launches
// counted at exit; the device entry probe counts threads in slot 3 of the same map.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} launches SEC(".maps");

static __always_inline void add(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&launches, &k);
	if (v)
		*v += n;
}

HOST_ENTRY("cuLaunchKernel") int on_launch(struct gp_host_ctx *ctx)
{
	add(0, 1);
	add(1, ctx->args[1] * ctx->args[4]);   /* gridDimX * blockDimX */
	return 0;
}

HOST_EXIT("cuLaunchKernel*") int on_launch_exit(struct gp_host_ctx *ctx)
{
	if (ctx->result != 0)
		add(2, 1);
	return 0;
}

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 k = 3;
	__u64 *v = bpf_map_lookup_elem(&launches, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
