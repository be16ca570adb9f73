// Malformed uses of bpftime's map types, one per -DCASE=n: each must fail to load (or to make
// its maps) with one clear line, never crash. See run.sh for the expected lines.
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

#if CASE == 1          /* a GPU array with map flags it does not take (BPF_F_NO_PREALLOC) */
#define TYPE 1503
#define KEY u32
#define VALUE u64
#define ENTRIES 4
#define FLAGS 1
#elif CASE == 2        /* a kernel-shared array with an unknown flag bit */
#define TYPE 1504
#define KEY u32
#define VALUE u64
#define ENTRIES 4
#define FLAGS (1u << 20)
#elif CASE == 3        /* a GPU array with an 8-byte key */
#define TYPE 1503
#define KEY u64
#define VALUE u64
#define ENTRIES 4
#define FLAGS 0
#elif CASE == 4        /* a host per-thread array too large to make */
#define TYPE 1512
#define KEY u32
#define VALUE u64
#define ENTRIES 0x40000000
#define FLAGS 0
#elif CASE == 5        /* a GPU hash whose table cannot be sized */
#define TYPE 1501
#define KEY u32
#define VALUE u64
#define ENTRIES 0xffffffff
#define FLAGS 0
#elif CASE == 6        /* a host array of one 2 MiB value (over the 1 MiB limit) */
#define TYPE 1513
#define KEY u32
#define VALUE struct { char b[2 << 20]; }
#define ENTRIES 1
#define FLAGS 0
#endif

struct {
	__uint(type, TYPE);
	__uint(max_entries, ENTRIES);
	__type(key, KEY);
	__type(value, VALUE);
	__uint(map_flags, FLAGS);
} m SEC(".maps");

SEC("kprobe/_Z9vectorAddPKfS0_Pf")
int cuda__probe()
{
	KEY k = 0;
	u64 *v = bpf_map_lookup_elem(&m, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
