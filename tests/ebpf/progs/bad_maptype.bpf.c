/* A map type the GPU has no use for. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} jmp SEC(".maps");
SEC("gpu/entry/k") int prog(void *ctx) { bpf_tail_call(ctx, &jmp, 0); return 0; }
char LICENSE[] SEC("license") = "GPL";
