// bbcount: basic blocks and PTX instructions executed per kernel, counted per thread: at each
// basic block's entry every thread adds 1 block and the block's length (NVBit's instr_count at
// PTX level). `gpuprobe run -t bbcount -- APP` (`-t instrcount` is the same tool).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define BY_KERNEL(name)                             \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_HASH);    \
		__uint(max_entries, 4096);          \
		__type(key, gp_kernel_id_t);        \
		__type(value, __u64);               \
	} name SEC(".maps")

BY_KERNEL(basic_blocks);
BY_KERNEL(instructions);

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	gp_count(&basic_blocks, ctx->thread.kernel_hash);
	gp_add(&instructions, ctx->thread.kernel_hash, ctx->ninsns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
