// Every kind of map reference a probe makes, for tests/shim/ptx_repeat.sh: an array value by
// constant key (its address in the PTX), a hash map and a ring buffer by descriptor, printk (the
// printk ring's descriptor). The instrumented PTX holds all their addresses. on_entry stores
// bpf_get_current_pid_tgid(): the pid must come from device memory, not be an immediate.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} per_block SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} trace SEC(".maps");

GPU_MEM("global,load,store", "") int on_access(struct gp_mem_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	__u64 a = ctx->addr;
	bpf_ringbuf_output(&trace, &a, sizeof(a), 0);
	return 0;
}

GPU_ENTRY("") int on_entry(struct gp_kernel_ctx *ctx)
{
	__u32 key = ctx->thread.block_idx[0];
	__u64 who = bpf_get_current_pid_tgid();
	bpf_map_update_elem(&per_block, &key, &who, BPF_ANY);
	if (key == 0)
		bpf_printk("entry %u", key);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
