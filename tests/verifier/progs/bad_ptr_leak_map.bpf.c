/* A pointer stored into a map value (the host would read a device address). */
// expect-status: 1
// expect-insn: 8: (7b) *(u64 *)(r0 +0) = r0
// expect-reason: R0 leaks addr into map
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} vals SEC(".maps");

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&vals, &k);
	if (v)
		v[0] = (__u64)v;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
