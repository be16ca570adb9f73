// bpftime's GPU array (map type 1503: one copy every thread shares) used the ways bpftime's
// examples use it (gpu_shard_array, gpu-plain-array, cutlass counter, gpu_shared_map): a
// read-add-write through lookup and BPF_ANY update (last writer wins), a count kept by one
// leader thread per launch, and an atomic add on the one copy. Sections kprobe/kretprobe on
// vectorAdd by its plain and its mangled name; bpf_trace_printk from a stack buffer.
// Expected on examples/apps/vec_add with G blocks of 32 threads (tests/maps/bpftime/run.sh):
//   hits[0] in 1..32G (racy read-add-write), hits[1] = 1 (leader), hits[2] = 32G (atomic),
//   hits[3] = 32G (atomic, the entry probe), G*32 "array_exit" lines.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_GPU_ARRAY_MAP 1503

static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} hits SEC(".maps");

SEC("kretprobe/vectorAdd")
int cuda__retprobe()
{
	u32 k = 0;
	u64 *v = bpf_map_lookup_elem(&hits, &k);
	u64 next = 1;
	if (v)
		next = *v + 1;
	bpf_map_update_elem(&hits, &k, &next, BPF_ANY);

	u64 tx, ty, tz, bx, by, bz;
	bpf_get_thread_idx(&tx, &ty, &tz);
	bpf_get_block_idx(&bx, &by, &bz);
	if ((tx | ty | tz | bx | by | bz) == 0) {
		u32 lk = 1;
		u64 *c = bpf_map_lookup_elem(&hits, &lk);
		u64 n = c ? *c + 1 : 1;
		bpf_map_update_elem(&hits, &lk, &n, (u64)BPF_ANY);
	}
	u32 ak = 2;
	u64 *a = bpf_map_lookup_elem(&hits, &ak);
	if (a)
		__sync_fetch_and_add(a, 1);
	char line[] = "array_exit\n";
	bpf_trace_printk(line, sizeof(line));
	return 0;
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	u32 k = 3;
	u64 *v = bpf_map_lookup_elem(&hits, &k);
	if (v)
		__atomic_add_fetch(v, 1, __ATOMIC_SEQ_CST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
