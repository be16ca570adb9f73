// Memory probes on every kernel, for the fallback check: with a call at each access, ptxas
// cannot allocate registers for CUB's onesweep radix sort kernel (C7600), so the driver refuses
// the instrumented module and the shim loads the original (one line says so).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} accesses SEC(".maps");

GPU_MEM("all", "*") int on_mem(struct gp_mem_ctx *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&accesses, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
