// instrcount: PTX instructions executed per kernel: at each basic block's entry every thread
// adds the block's length (NVBit's instr_count, counted per thread, at PTX level).
// `gpuprobe run -t instrcount -- APP`
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, gp_kernel_id_t);
	__type(value, __u64);
} instructions SEC(".maps");

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	gp_add(&instructions, ctx->thread.kernel_hash, ctx->ninsns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
