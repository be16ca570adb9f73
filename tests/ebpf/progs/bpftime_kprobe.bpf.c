/* bpftime's style with BPF_KPROBE/BPF_KRETPROBE from libbpf's bpf_tracing.h (built with
 * -D__TARGET_ARCH_x86), reading the kernel arguments through the pt_regs layout. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_n SEC(".maps");

SEC("kprobe/_Z9vectorAddPKfS0_Pfi")
int BPF_KPROBE(cuda__vector_add, const float *a, const float *b, float *c, int n)
{
	__u32 key = 0;
	__u64 v = (__u64)n;
	bpf_map_update_elem(&last_n, &key, &v, BPF_ANY);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pfi")
int BPF_KRETPROBE(cuda__vector_add_ret, long ret)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
