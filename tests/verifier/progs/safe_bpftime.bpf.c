/* bpftime's GPU conventions: a cuda__ program in a kprobe/ section, its GPU helpers, a per-thread
 * array (1502) and the GPU ring buffer (1527) written with perf_event_output. */
// expect-status: 0
// expect-line: cuda__probe (kprobe/_Z9vectorAddPKfS0_Pfi): OK
// expect-line: cuda__retprobe (kretprobe/_Z9vectorAddPKfS0_Pfi): OK
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, GPUPROBE_MAP_TYPE_GPU_RINGBUF);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 256);
} events SEC(".maps");

struct {
	__uint(type, GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct event {
	__u64 block_x, thread_x, t;
};

SEC("kprobe/_Z9vectorAddPKfS0_Pfi") int cuda__probe(void *ctx)
{
	struct event e = {};
	__u64 y, z;
	bpf_get_block_idx(&e.block_x, &y, &z);
	bpf_get_thread_idx(&e.thread_x, &y, &z);
	e.t = bpf_get_globaltimer();
	bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pfi") int cuda__retprobe(void *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&calls, &k);
	if (n)
		*n += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
