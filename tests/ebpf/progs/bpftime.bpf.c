/* A probe written the bpftime way: kprobe/kretprobe on a CUDA kernel, programs named cuda__*,
 * helpers 501-511 declared by id, map types 1502 and 1527. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static const __u64 (*bpf_get_globaltimer)(void) = (void *)502;
static long (*bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static long (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;
static long (*bpf_puts)(const char *) = (void *)501;

struct {
	__uint(type, 1502);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} start_time SEC(".maps");

struct {
	__uint(type, 1527);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} rb SEC(".maps");

SEC("kprobe/_Z9vectorAddPKfS0_Pfi")
int cuda__probe(void *ctx)
{
	__u32 key = 0;
	__u64 t = bpf_get_globaltimer();
	bpf_map_update_elem(&start_time, &key, &t, BPF_ANY);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pfi")
int cuda__retprobe(void *ctx)
{
	__u32 key = 0;
	__u64 x, y, z, tx, ty, tz;
	__u64 *start = bpf_map_lookup_elem(&start_time, &key);
	bpf_get_block_idx(&x, &y, &z);
	bpf_get_thread_idx(&tx, &ty, &tz);
	if (start && x == 0 && tx == 0) {
		__u64 d = bpf_get_globaltimer() - *start;
		bpf_perf_event_output(ctx, &rb, 0, &d, sizeof d);
		bpf_puts("done");
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
