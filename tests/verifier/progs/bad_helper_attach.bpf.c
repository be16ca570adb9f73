/* A GPU-only helper (%smid) called from a host attach point. */
// expect-status: 1
// expect-insn: 0: (85) call bpf_get_sm_id#509
// expect-reason: helper bpf_get_sm_id#509 runs only on the GPU: not allowed at a host attach point
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("host/entry/cuLaunchKernel") int prog(struct gp_host_ctx *ctx)
{
	return bpf_get_sm_id();
}

char LICENSE[] SEC("license") = "GPL";
