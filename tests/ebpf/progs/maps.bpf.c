/* BTF-defined maps of every supported kind, and one program per attach point. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct gp_mem_ctx);
} last_access SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct {
	__uint(type, GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} per_thread SEC(".maps");

struct {
	__uint(type, GPUPROBE_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
	__uint(map_flags, 0);
} gpu_events SEC(".maps");

GPU_ENTRY("vecAdd*") int count_entry(struct gp_kernel_ctx *ctx)
{
	__u32 key = ctx->thread.kernel_hash;
	__u64 one = 1, *v = bpf_map_lookup_elem(&calls, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&calls, &key, &one, BPF_NOEXIST);
	return 0;
}

GPU_MEM("global,store", "sgemm*") int on_store(struct gp_mem_ctx *ctx)
{
	__u32 key = ctx->thread.sm_id & 15;
	struct gp_mem_ctx *slot = bpf_map_lookup_elem(&last_access, &key);
	if (slot)
		slot->addr = ctx->addr;
	return 0;
}

GPU_MEM("all", "") int on_any(struct gp_mem_ctx *ctx)
{
	bpf_ringbuf_output(&events, &ctx->addr, 8, 0);
	return 0;
}

GPU_BARRIER_AFTER("reduce") int after_barrier(struct gp_barrier_ctx *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&per_thread, &key);
	if (v)
		*v += 1;
	return 0;
}

GPU_BB("") int on_bb(struct gp_bb_ctx *ctx)
{
	__u32 v = ctx->bb_index;
	bpf_perf_event_output(ctx, &gpu_events, 0, &v, sizeof v);
	return 0;
}

GPU_EXIT("vecAdd*") int on_exit_(struct gp_kernel_ctx *ctx) { return 0; }
GPU_BLOCK_BEGIN("k?") int on_block_begin(struct gp_block_ctx *ctx) { return 0; }
GPU_BLOCK_END("") int on_block_end(struct gp_block_ctx *ctx) { return 0; }
GPU_FUNC_ENTRY("_Z6helperi") int on_func_entry(struct gp_func_ctx *ctx) { return 0; }
GPU_FUNC_EXIT("_Z6helperi") int on_func_exit(struct gp_func_ctx *ctx) { return 0; }
GPU_BARRIER("reduce") int before_barrier(struct gp_barrier_ctx *ctx) { return 0; }
HOST_ENTRY("cuLaunchKernel") int on_launch(struct gp_host_ctx *ctx) { return 0; }
HOST_EXIT("cuMemcpy*") int on_memcpy_exit(struct gp_host_ctx *ctx) { return 0; }

char LICENSE[] SEC("license") = "Dual BSD/GPL";
