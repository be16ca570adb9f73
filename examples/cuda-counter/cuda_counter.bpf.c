// cuda-counter (bpftime's example, same conventions): on entry and exit of vectorAdd, count
// threads per process and add up per-block time from first entry to last exit; bpf_printk from
// thread 0 of each block. Built like bpftime's probes: vmlinux.h, kprobe/kretprobe sections,
// programs named cuda__*, helpers 502/503/505 by number.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} call_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} exit_count SEC(".maps");

static __always_inline void count(void *map, u32 key)
{
	u64 one = 1, *v = bpf_map_lookup_elem(map, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else if (bpf_map_update_elem(map, &key, &one, BPF_NOEXIST) &&
		 (v = bpf_map_lookup_elem(map, &key)))
		__sync_fetch_and_add(v, 1);
}

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	u64 bx, by, bz, tx, ty, tz;
	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	count(&call_count, bpf_get_current_pid_tgid() >> 32);
	if (tx == 0)
		bpf_printk("vectorAdd block %lu entered at %lu ns", bx, bpf_get_globaltimer());
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int cuda__retprobe()
{
	count(&exit_count, bpf_get_current_pid_tgid() >> 32);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
