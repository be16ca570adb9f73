// Reads ctx->params (the generic address of the kernel's parameter buffer) and params_size at
// the entry of `pattern`: the instrumentation fills them only for probes that read them.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} param_info SEC(".maps");

GPU_ENTRY("pattern") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&param_info, &k);
	if (v)
		*v = ctx->params;
	k = 1;
	v = bpf_map_lookup_elem(&param_info, &k);
	if (v)
		*v = ctx->params_size;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
