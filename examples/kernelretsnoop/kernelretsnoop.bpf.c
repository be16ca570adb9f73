// kernelretsnoop (bpftime's example, same conventions): one event per thread leaving
// vectorAdd, with its block and thread index and the time, through bpftime's GPU ring buffer
// (map type 1527, perf_event_output with a NULL context). Events print as they arrive.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct event {
	u64 block_x, block_y, block_z;
	u64 thread_x, thread_y, thread_z;
	u64 ns;
};

struct {
	__uint(type, 1527);
	__uint(max_entries, 256);
	__type(key, u32);
	__type(value, struct event);
} rb SEC(".maps");

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	struct event e = {};
	bpf_get_block_idx(&e.block_x, &e.block_y, &e.block_z);
	bpf_get_thread_idx(&e.thread_x, &e.thread_y, &e.thread_z);
	e.ns = bpf_get_globaltimer();
	return bpf_perf_event_output(NULL, &rb, 0, &e, sizeof(e));
}

char LICENSE[] SEC("license") = "GPL";
