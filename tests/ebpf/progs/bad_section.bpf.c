/* A program in a section that names no gpuprobe attach point. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp") int not_for_gpus(void *ctx) { return 0; }
char LICENSE[] SEC("license") = "GPL";
