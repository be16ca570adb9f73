// Threads entering and leaving every kernel, per kernel, in HASH maps (lookup; on a miss insert
// with BPF_NOEXIST; then atomic add): two sites that branch in every kernel (tests/gpu/reconverge.sh).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} enter SEC(".maps"), leave SEC(".maps");

static __always_inline void bump(void *map, __u32 k)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(map, &k, &one, BPF_NOEXIST) && (v = bpf_map_lookup_elem(map, &k)))
		__sync_fetch_and_add(v, 1);
}

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { bump(&enter, ctx->thread.kernel_hash); return 0; }
GPU_EXIT("*") int on_exit(struct gp_kernel_ctx *ctx) { bump(&leave, ctx->thread.kernel_hash); return 0; }
char LICENSE[] SEC("license") = "GPL";
