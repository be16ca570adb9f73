#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 4096); __type(key, __u32); __type(value, __u64); } enter SEC(".maps");
GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { __u32 k = 7; __u64 *v = bpf_map_lookup_elem(&enter, &k); if (v) __sync_fetch_and_add(v, 1); return 0; }
char LICENSE[] SEC("license") = "GPL";
