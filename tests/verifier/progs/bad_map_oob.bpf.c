/* A constant offset past the end of a 16-byte map value. */
// expect-status: 1
// expect-insn: 9: (7b) *(u64 *)(r0 +16) = r1
// expect-reason: invalid access to map value, value_size=16 off=16 size=8
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
		v[2] = 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
