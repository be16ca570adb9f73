// Rejected by the verifier: a probe may not write its (read-only) context.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

GPU_MEM("global", "*") int writes_ctx(struct gp_mem_ctx *c)
{
	c->addr = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
