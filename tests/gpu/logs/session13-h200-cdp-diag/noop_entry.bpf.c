#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { return 0; }
char LICENSE[] SEC("license") = "GPL";
