// Reads both clock helpers in every kernel (tests/shim/clock_fake.sh): the shim then measures
// the offset of the GPU's %globaltimer from the host's clocks (shim/clock_sync.c).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} stamps SEC(".maps");

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&stamps, &k);
	if (v)
		*v = bpf_ktime_get_ns();
	k = 1;
	if ((v = bpf_map_lookup_elem(&stamps, &k)))
		*v = bpf_get_globaltimer();
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
