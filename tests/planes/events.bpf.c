// tests/planes: a host probe that prints a line and outputs a ring record at every launch, so
// that the events reach `gpuprobe run` through the segment's event log, in order.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

/* a ring whose records have a declared type: printed by field (output.h, typed records) */
struct launch_rec {
	__u64 seq;
	__s32 delta;
	__u32 api;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
	__type(value, struct launch_rec);
} typed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} seq SEC(".maps");

HOST_ENTRY("cuLaunchKernel") int on_launch(struct gp_host_ctx *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&seq, &k);
	if (!n)
		return 0;
	__u64 v = ++*n;
	bpf_printk("launch %llu", v);
	bpf_ringbuf_output(&events, &v, sizeof(v), 0);
	struct launch_rec r = {.seq = v, .delta = 1 - (__s32)v, .api = 7};
	bpf_ringbuf_output(&typed, &r, sizeof(r), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
