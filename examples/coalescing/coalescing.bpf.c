// coalescing: how many distinct 32-byte sectors each warp-wide global load touches, summed per
// kernel, next to the number of warp-wide loads (requests): sectors / requests is 4 for a
// perfectly coalesced 4-byte load, 32 when every lane hits its own sector. The warp-wide view
// comes from bpf_gpu_warp_unique (match.any.sync over the lanes running the probe together).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define KMAP(name)                                  \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 256);           \
		__type(key, gp_kernel_id_t);        \
		__type(value, __u64);               \
	} name SEC(".maps")

KMAP(sectors_by_kernel);
KMAP(requests_by_kernel);

GPU_MEM("global,load", "*") int on_load(struct gp_mem_ctx *ctx)
{
	/* every active lane takes part in both matches; only the first lane of each sector, and
	 * the warp's lowest lane, record */
	__u64 first_of_sector = bpf_gpu_warp_unique(ctx->addr >> 5);
	__u64 first_of_warp = bpf_gpu_warp_unique(0);
	if (first_of_sector)
		gp_add(&sectors_by_kernel, ctx->thread.kernel_hash, 1);
	if (first_of_warp)
		gp_add(&requests_by_kernel, ctx->thread.kernel_hash, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
