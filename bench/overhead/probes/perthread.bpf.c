// Per-thread array (bpftime's map type 1502: one slot per GPU thread): each thread adds 1 to its
// own slot at exit. Compared with h_perthread.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} thread_exits SEC(".maps");

GPU_EXIT("") int on_exit(struct gp_kernel_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&thread_exits, &key);
	if (v)
		*v += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
