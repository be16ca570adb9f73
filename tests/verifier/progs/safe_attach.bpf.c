/* One safe program per attach point: each reads the last field of its context (so the context
 * size the verifier uses is exercised at its edge) and calls a helper allowed there. */
// expect-status: 0
// expect-line: on_entry (gpu/entry/vecAdd*): OK
// expect-line: on_exit (gpu/exit/): OK
// expect-line: on_block_begin (gpu/block_begin/): OK
// expect-line: on_block_end (gpu/block_end/): OK
// expect-line: on_func_entry (gpu/func_entry/): OK
// expect-line: on_func_exit (gpu/func_exit/): OK
// expect-line: on_mem (gpu/mem/global,load/): OK
// expect-line: on_barrier (gpu/barrier/): OK
// expect-line: on_barrier_after (gpu/barrier_after/): OK
// expect-line: on_bb (gpu/bb/): OK
// expect-line: on_host_entry (host/entry/cuLaunchKernel): OK
// expect-line: on_host_exit (host/exit/cuMemAlloc*): OK
// expect-line: cuda__probe (kprobe/_Z9vectorAddPKfS0_Pfi): OK
// expect-line: cuda__retprobe (kretprobe/_Z9vectorAddPKfS0_Pfi): OK
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

static __always_inline void bump(__u32 key, __u64 by)
{
	__u64 *v = bpf_map_lookup_elem(&seen, &key);
	if (v)
		__sync_fetch_and_add(v, by);
}

SEC("gpu/entry/vecAdd*") int on_entry(struct gp_kernel_ctx *ctx)
{
	bump(0, ctx->timestamp + bpf_get_sm_id());
	return 0;
}

SEC("gpu/exit/") int on_exit(struct gp_kernel_ctx *ctx)
{
	bump(1, ctx->thread.kernel_hash + bpf_get_globaltimer());
	return 0;
}

SEC("gpu/block_begin/") int on_block_begin(struct gp_block_ctx *ctx)
{
	bump(2, ctx->timestamp);
	return 0;
}

SEC("gpu/block_end/") int on_block_end(struct gp_block_ctx *ctx)
{
	__u64 x, y, z;
	bpf_get_block_idx(&x, &y, &z);
	bump(3, ctx->timestamp + x + y + z);
	return 0;
}

SEC("gpu/func_entry/") int on_func_entry(struct gp_func_ctx *ctx)
{
	bump(0, ctx->args[7] + ctx->thread.kernel_hash);
	return 0;
}

SEC("gpu/func_exit/") int on_func_exit(struct gp_func_ctx *ctx)
{
	bump(1, ctx->ret + bpf_get_lane_id());
	return 0;
}

SEC("gpu/mem/global,load/") int on_mem(struct gp_mem_ctx *ctx)
{
	bump(2, ctx->thread.kernel_hash + ctx->size);
	return 0;
}

SEC("gpu/barrier/") int on_barrier(struct gp_barrier_ctx *ctx)
{
	bump(3, ctx->timestamp + bpf_get_warp_id());
	return 0;
}

SEC("gpu/barrier_after/") int on_barrier_after(struct gp_barrier_ctx *ctx)
{
	bump(0, ctx->timestamp + ctx->after);
	return 0;
}

SEC("gpu/bb/") int on_bb(struct gp_bb_ctx *ctx)
{
	bump(1, ctx->thread.kernel_hash + ctx->bb_index);
	return 0;
}

SEC("host/entry/cuLaunchKernel") int on_host_entry(struct gp_host_ctx *ctx)
{
	bump(2, ctx->tid + bpf_ktime_get_ns() + (__u32)bpf_get_current_pid_tgid());
	return 0;
}

SEC("host/exit/cuMemAlloc*") int on_host_exit(struct gp_host_ctx *ctx)
{
	bump(3, ctx->tid + (ctx->result != 0));
	return 0;
}

SEC("kprobe/_Z9vectorAddPKfS0_Pfi") int cuda__probe(struct gp_kernel_ctx *ctx)
{
	bump(0, 1);
	return 0;
}

SEC("kretprobe/_Z9vectorAddPKfS0_Pfi") int cuda__retprobe(struct gp_kernel_ctx *ctx)
{
	bump(1, ctx->timestamp);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
