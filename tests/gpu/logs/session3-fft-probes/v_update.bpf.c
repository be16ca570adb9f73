#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 4096); __type(key, __u32); __type(value, __u64); } enter SEC(".maps");
GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { __u32 k = ctx->thread.kernel_hash; __u64 one = 1; bpf_map_update_elem(&enter, &k, &one, BPF_NOEXIST); return 0; }
char LICENSE[] SEC("license") = "GPL";
