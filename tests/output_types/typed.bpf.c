/* Maps whose key types say how they print (include/gpuprobe/output.h), and maps that still go by
 * their names. The programs only make the object real; the test fills the maps from the host. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define MAP(kind, n, k, name, ...)                   \
	struct {                                     \
		__uint(type, kind);                  \
		__uint(max_entries, n);              \
		__type(key, k);                      \
		__type(value, __u64);                \
	} name SEC(".maps") __VA_ARGS__

typedef gp_kernel_id_t my_kernel_key;   /* a typedef of ours counts as ours */

MAP(BPF_MAP_TYPE_HASH, 64, gp_kernel_id_t, threads);              /* kernel names, no "kernel" in the name */
MAP(BPF_MAP_TYPE_HASH, 64, my_kernel_key, blocks);                /* through a user typedef */
MAP(BPF_MAP_TYPE_HASH, 64, gp_api_id_t, calls);                   /* cuXxx names */
MAP(BPF_MAP_TYPE_ARRAY, 64, gp_log2_key_t, latency);              /* log2 histogram by type */
MAP(BPF_MAP_TYPE_ARRAY, 16, gp_lhist_key_t, width, GP_LHIST_STEP(10));   /* linear, step 10 */
MAP(BPF_MAP_TYPE_HASH, 64, gp_kernel_id_t, size_hist);            /* the type wins over the name */
MAP(BPF_MAP_TYPE_ARRAY, 64, __u32, old_hist);                     /* no type: the name rule */
MAP(BPF_MAP_TYPE_HASH, 64, __u32, sizes);                         /* no type, no rule: counts */

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx)
{
	gp_kernel_id_t k = ctx->thread.kernel_hash;
	__u64 *v = bpf_map_lookup_elem(&threads, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

HOST_ENTRY("cu*") int on_call(struct gp_host_ctx *ctx)
{
	gp_api_id_t k = ctx->api_id;
	__u64 *v = bpf_map_lookup_elem(&calls, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
