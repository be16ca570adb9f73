/* The counting idioms people write, as bpftrace and libbpf-tools do: lookup, a BPF_NOEXIST insert
 * of 1 on a miss, an atomic add on a hit (or after losing the insert to another thread). Their
 * maps are summable (sharded per SM, summed by the host) exactly like atomic-add-only maps; an
 * insert with other flags (it may overwrite a value other SMs added to) keeps the one copy. */
// expect-status: 0
// expect-line: count_noexist (gpu/entry/noexist): OK
// expect-line: count_any (gpu/exit/any): OK
// expect-line:   map enter: changed only by atomic add (sharded per SM)
// expect-absent:   map leave: changed only by atomic add (sharded per SM)
// expect-absent: warning:
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} enter SEC(".maps"), leave SEC(".maps");

static __always_inline void bump(void *map, __u32 k, __u64 flags)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(map, &k, &one, flags) && (v = bpf_map_lookup_elem(map, &k)))
		__sync_fetch_and_add(v, 1);
}

SEC("gpu/entry/noexist") int count_noexist(struct gp_kernel_ctx *ctx)
{
	bump(&enter, ctx->thread.kernel_hash, BPF_NOEXIST);
	return 0;
}

SEC("gpu/exit/any") int count_any(struct gp_kernel_ctx *ctx)
{
	bump(&leave, ctx->thread.kernel_hash, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
