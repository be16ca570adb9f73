// opcodes: PTX instructions executed per kernel, by class (enum gp_op_class, context.h): at
// each basic block's entry every thread adds the block's instructions of each class to that
// class's map (NVBit's opcode_hist, by class, at PTX level). The classes of a block are
// constants at its site, so a class the block lacks costs nothing. The maps, one per class:
// op_int, op_fp32, op_fp64, op_fp16, op_sfu, op_move, op_load, op_store, op_atomic,
// op_control, op_sync, op_warp, op_tensor, op_other. `gpuprobe run -t opcodes -- APP`
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

BY_KERNEL(op_int);
BY_KERNEL(op_fp32);
BY_KERNEL(op_fp64);
BY_KERNEL(op_fp16);
BY_KERNEL(op_sfu);
BY_KERNEL(op_move);
BY_KERNEL(op_load);
BY_KERNEL(op_store);
BY_KERNEL(op_atomic);
BY_KERNEL(op_control);
BY_KERNEL(op_sync);
BY_KERNEL(op_warp);
BY_KERNEL(op_tensor);
BY_KERNEL(op_other);

#define CLASS(map, c)                                          \
	do {                                                   \
		if (ctx->op_count[c])                          \
			gp_add(&map, kernel, ctx->op_count[c]); \
	} while (0)

GPU_BB("*") int on_bb(struct gp_bb_ctx *ctx)
{
	__u32 kernel = ctx->thread.kernel_hash;
	CLASS(op_int, GP_OP_INT);
	CLASS(op_fp32, GP_OP_FP32);
	CLASS(op_fp64, GP_OP_FP64);
	CLASS(op_fp16, GP_OP_FP16);
	CLASS(op_sfu, GP_OP_SFU);
	CLASS(op_move, GP_OP_MOVE);
	CLASS(op_load, GP_OP_LOAD);
	CLASS(op_store, GP_OP_STORE);
	CLASS(op_atomic, GP_OP_ATOMIC);
	CLASS(op_control, GP_OP_CONTROL);
	CLASS(op_sync, GP_OP_SYNC);
	CLASS(op_warp, GP_OP_WARP);
	CLASS(op_tensor, GP_OP_TENSOR);
	CLASS(op_other, GP_OP_OTHER);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
