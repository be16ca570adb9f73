/* bpf_gpu_warp_output is a warp's helper: a host probe cannot call it. */
// expect-status: 1
// expect-reason-prefix: helper bpf_gpu_warp_output#517 runs only on the GPU: not allowed at a host attach point
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} trace SEC(".maps");

SEC("host/entry/cuLaunchKernel") int prog(struct gp_host_ctx *ctx)
{
	bpf_gpu_warp_output(&trace, 1, 0, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
