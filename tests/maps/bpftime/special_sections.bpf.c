// bpftime's GPU array (1503) in its examples with bpftime-only sections: mem_trace's
// kprobe/__memcapture (a probe before every load and store of every kernel; here gpu/mem's plain
// global, local and generic loads and stores) bumping a counter with `*val = *val + 1`, and
// (ours) an atomic count beside it; directly_run's kprobe/__directly_run (bpftime runs the
// program as a kernel of its own; nothing here does) reading u32 and u32[3] values and writing
// results with BPF_ANY. Expected on vec_add with G blocks of 32 threads: 5 memory sites (vectorAdd
// 2 loads and a store, oddEven a load and a store), accesses[1] = 32G * 5, accesses[0] (racy) in
// 1..32G * 5.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_GPU_ARRAY_MAP 1503

static const __u64 (*bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static const __u64 (*bpf_get_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)504;
static const __u64 (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 4);
	__type(key, u32);
	__type(value, u64);
} accesses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32[3]);
} shape SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_ARRAY_MAP);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} in_a SEC(".maps"), in_b SEC(".maps"), out_c SEC(".maps");

SEC("kprobe/__memcapture")
int cuda__mem(struct pt_regs *ctx)
{
	u32 k = 0;
	u64 *v = bpf_map_lookup_elem(&accesses, &k);
	if (v)
		*v = *v + 1;
	u32 k1 = 1;
	u64 *n = bpf_map_lookup_elem(&accesses, &k1);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

SEC("kprobe/__directly_run")
int cuda__add(struct pt_regs *ctx)
{
	__u64 bx = 0, by = 0, bz = 0, dx = 0, dy = 0, dz = 0, tx = 0, ty = 0, tz = 0;
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_block_dim(&dx, &dy, &dz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	__u32 z = 0;
	__u32 *dims = bpf_map_lookup_elem(&shape, &z);
	if (!dims)
		return 0;
	__u32 i = (__u32)(bx * dx + tx);
	if (i >= dims[0])
		return 0;
	__u32 *a = bpf_map_lookup_elem(&in_a, &i), *b = bpf_map_lookup_elem(&in_b, &i);
	__u32 s = (a ? *a : 0) + (b ? *b : 0);
	bpf_map_update_elem(&out_c, &i, &s, (u64)BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
