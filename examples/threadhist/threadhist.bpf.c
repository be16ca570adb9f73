// threadhist (bpftime's example, same conventions): a per-thread array (bpftime's map type
// 1502: one slot per GPU thread, no atomics needed) counting how often each thread leaves
// vectorAdd; printed as the sum over the threads.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, 1502);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} thread_exits SEC(".maps");

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	u32 key = 0;
	u64 *v = bpf_map_lookup_elem(&thread_exits, &key);
	if (v)
		*v += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
