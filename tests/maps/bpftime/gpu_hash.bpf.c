// bpftime's GPU hash (map type 1501: one shared copy) used as bpftime's threadscheduling
// (dynamic hook) and gpu_shared_map examples use it: a struct per thread stored with BPF_ANY
// under (block_x << 16 | thread_x), the counting idiom (lookup, __sync_fetch_and_add on a hit,
// BPF_NOEXIST insert of 1 on a miss) keyed by SM and by (SM << 16 | warp), and one update keyed
// by the process id from the thread at block 0, thread 0 (helper 14 on the GPU). Helpers
// 502-505, 509-511 by id.
// Expected on vec_add with G blocks of 32 threads: `threads` holds 32G keys, the SM counts sum
// to 32G and so do the warp counts, `by_pid` holds one key, the app's pid, valued 7.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define BPF_MAP_TYPE_GPU_HASH_MAP 1501

struct where {
	u64 sm, warp, lane;
	u64 bx, by, bz;
	u64 tx, ty, tz;
	u64 when;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct where);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 128);
	__type(key, u32);
	__type(value, u64);
} per_sm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} per_warp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_GPU_HASH_MAP);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} by_pid SEC(".maps");

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;
static const u64 (*bpf_get_sm_id)(void) = (void *)509;
static const u64 (*bpf_get_warp_id)(void) = (void *)510;
static const u64 (*bpf_get_lane_id)(void) = (void *)511;

static __always_inline void count(void *map, u32 key)
{
	u64 *c = bpf_map_lookup_elem(map, &key);
	if (c) {
		__sync_fetch_and_add(c, 1);
	} else {
		u64 one = 1;
		bpf_map_update_elem(map, &key, &one, BPF_NOEXIST);
	}
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe_sched()
{
	struct where w = {};
	w.sm = bpf_get_sm_id();
	w.warp = bpf_get_warp_id();
	w.lane = bpf_get_lane_id();
	bpf_get_block_idx(&w.bx, &w.by, &w.bz);
	bpf_get_thread_idx(&w.tx, &w.ty, &w.tz);
	w.when = bpf_get_globaltimer();
	u32 key = (u32)((w.bx << 16) | (w.tx & 0xffff));
	bpf_map_update_elem(&threads, &key, &w, BPF_ANY);
	count(&per_sm, (u32)w.sm);
	count(&per_warp, (u32)((w.sm << 16) | (w.warp & 0xffff)));
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	u64 x, y, z, bx, by, bz;
	bpf_get_thread_idx(&x, &y, &z);
	bpf_get_block_idx(&bx, &by, &bz);
	if (x + y + z + bx + by + bz == 0) {
		u32 pid = bpf_get_current_pid_tgid() >> 32;
		u64 v = 7;
		bpf_map_update_elem(&by_pid, &pid, &v, (u64)BPF_ANY);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
