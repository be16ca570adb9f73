// Entries and exits per kernel (every thread), and memory accesses per kernel (reduce, scan): for any kernel,
// entries == exits (each thread enters once and leaves once), which the GPU test checks exactly.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define KMAP(name)                                  \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 1024);          \
		__type(key, __u32);                 \
		__type(value, __u64);               \
	} name SEC(".maps")

KMAP(entry_by_kernel);
KMAP(exit_by_kernel);
KMAP(mem_by_kernel);

static __always_inline void bump(void *map, __u32 k)
{
	__u64 *v = bpf_map_lookup_elem(map, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(map, &k, &one, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(map, &k);
		if (v)
			__sync_fetch_and_add(v, 1);
	}
}

GPU_ENTRY("*") int on_entry(struct gp_kernel_ctx *ctx) { bump(&entry_by_kernel, ctx->thread.kernel_hash); return 0; }
GPU_EXIT("*") int on_exit(struct gp_kernel_ctx *ctx) { bump(&exit_by_kernel, ctx->thread.kernel_hash); return 0; }
/* Memory probes on CUB's reduce and scan kernels: the radix sort's onesweep kernel with a call
 * at each of its accesses does not compile (ptxas C7600, see tests/e2e/README.md), and a module
 * that does not load runs without probes. */
GPU_MEM("all", "*DeviceReduce*") int on_mem_reduce(struct gp_mem_ctx *ctx) { bump(&mem_by_kernel, ctx->thread.kernel_hash); return 0; }
GPU_MEM("all", "*DeviceScan*") int on_mem_scan(struct gp_mem_ctx *ctx) { bump(&mem_by_kernel, ctx->thread.kernel_hash); return 0; }

char LICENSE[] SEC("license") = "GPL";
