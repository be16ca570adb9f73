// bpftime's host-memory GPU maps used as its host_map_test example uses them: 1512 (a copy per
// GPU thread, in host memory) for an entry timestamp and per-thread counters, 1513 (one copy in
// host memory) for counters every thread shares, bpf_printk with two arguments.
// Expected on vec_add with G blocks of 32 threads (the host sums per-thread copies): per_thread
// [0] = 32G (each thread counts its exit once), [1] (durations) > 0, [2] = G * 496 (thread_x
// summed); shared[i] (i = thread_x % 10, racy read-add-write) between 1 and the number of
// threads with that remainder; atomic_shared[0] = 32G; 32G "entered" and 32G "exited" lines.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP 1512
#define BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP 1513
#define SLOTS 10

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP);
	__uint(max_entries, SLOTS);
	__type(key, u32);
	__type(value, u64);
} per_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP);
	__uint(max_entries, SLOTS);
	__type(key, u32);
	__type(value, u64);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_HOST_MAP);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} atomic_shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERGPUTD_ARRAY_HOST_MAP);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} started SEC(".maps");

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	u64 tx, ty, tz;
	bpf_get_thread_idx(&tx, &ty, &tz);
	u32 k = 0;
	u64 now = bpf_get_globaltimer();
	bpf_map_update_elem(&started, &k, &now, (u64)BPF_ANY);

	u32 sk = (u32)(tx % SLOTS);
	u64 *s = bpf_map_lookup_elem(&shared, &sk);
	if (s) {
		u64 n = *s + 1;
		bpf_map_update_elem(&shared, &sk, &n, (u64)BPF_ANY);
	} else {
		u64 one = 1;
		bpf_map_update_elem(&shared, &sk, &one, (u64)BPF_ANY);
	}
	u64 *a = bpf_map_lookup_elem(&atomic_shared, &k);
	if (a)
		__sync_fetch_and_add(a, 1);
	bpf_printk("entered %lu at %lu\n", tx, now);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	u64 tx, ty, tz;
	bpf_get_thread_idx(&tx, &ty, &tz);
	u32 k = 0;
	u64 *t0 = bpf_map_lookup_elem(&started, &k);
	u64 took = 0;
	if (t0 && *t0 > 0)
		took = bpf_get_globaltimer() - *t0 + 1;

	u32 ck = 0;
	u64 *c = bpf_map_lookup_elem(&per_thread, &ck);
	if (c) {
		u64 n = *c + 1;
		bpf_map_update_elem(&per_thread, &ck, &n, (u64)BPF_ANY);
	} else {
		u64 one = 1;
		bpf_map_update_elem(&per_thread, &ck, &one, (u64)BPF_ANY);
	}
	u32 dk = 1;
	bpf_map_update_elem(&per_thread, &dk, &took, (u64)BPF_ANY);
	u32 ik = 2;
	bpf_map_update_elem(&per_thread, &ik, &tx, (u64)BPF_ANY);
	bpf_printk("exited %lu after %lu ns\n", tx, took);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
