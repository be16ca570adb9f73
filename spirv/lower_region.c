/* The region token: keeps `register + immediate` address arithmetic inside the barrier region
 * that uses it.
 *
 * Why: PoCL runs LLVM's -O3 on the one-work-item kernel before it splits the kernel at barriers
 * into work-item loops, and every value computed before a barrier and used after it then lives
 * in a context array of one slot per work-item. nvcc unrolls loops, so a tiled GEMM's loop body
 * reads shared memory at [%r10+128], [%r10+256], ... 64 times; LICM hoists each of those
 * loop-invariant addresses out of the loop, past the loop's barrier, and PoCL keeps 64 pointers
 * per work-item (64 arrays of 8 KiB for a 32x32 block) and loads one back before every access.
 * The same GEMM written in OpenCL C with the loop unrolled gets the same treatment and the same
 * time; cuda-samples' matrixMul kernel took 8x longer per launch than with this token
 * (bench/RESULTS.md, "Barrier regions on PoCL").
 *
 * How: an address `reg + imm` becomes (pointer of (reg + token)) + imm, where the token is a u64
 * that is always 0 but that LLVM cannot see through across a barrier: after every barrier the
 * token is loaded again from a word that is never written, but which the barrier call may write
 * as far as LLVM knows. Only the register's own value crosses the barrier (as it would anyway);
 * the additions are redone in each region. Before any barrier the token is the constant 0, so
 * functions without barriers fold it away. */
#include "spirv/lower.h"

/* The function's token variable, made on first use: 0 from the function's entry. */
static uint32_t token_var(lw *c)
{
	if (!c->token_var) {
		uint32_t u64 = spv_t_int(c->e, 64);
		c->token_var = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u64), c->token_var,
		       (uint32_t)SpvStorageClassFunction);
		spv_op(&c->prologue, SpvOpStore, 2, c->token_var, lw_u64(c, 0));
	}
	return c->token_var;
}

/* A CrossWorkgroup u64 of initial value 0 that nothing writes while kernels run. */
static uint32_t token_word(lw *c)
{
	if (!c->token_word) {
		c->token_word = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 4,
		       spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, spv_t_int(c->e, 64)), c->token_word,
		       (uint32_t)SpvStorageClassCrossWorkgroup, lw_u64(c, 0));
		spv_name(c->e, c->token_word, "gpuprobe_region_token");
	}
	return c->token_word;
}

/* PoCL makes module variables private and compiles each kernel with only the functions it
 * calls. A private variable that such a module never stores to is a constant to LLVM, and one
 * whose address never escapes is one a barrier (a call LLVM cannot see into) cannot write: either
 * way the load after the barrier folds back to 0. So every function that loads the token also
 * stores the token's own address into it, under a condition that never holds (the token is 0,
 * never 1) but that LLVM cannot decide. */
static void token_escape(lw *c)
{
	uint32_t u64 = spv_t_int(c->e, 64), w = token_word(c);
	uint32_t never = lw_op2(c, SpvOpIEqual, spv_t_bool(c->e), lw_op1(c, SpvOpLoad, u64, w), lw_u64(c, 1));
	uint32_t escape = spv_id(c->e), on = spv_id(c->e);
	lw_branch_cond(c, never, escape, on);
	lw_label(c, escape);
	spv_op(&c->body, SpvOpStore, 2, w, lw_op1(c, SpvOpConvertPtrToU, u64, w));
	lw_label(c, on);
}

void lw_region_after_barrier(lw *c)
{
	if (!c->token_escaped) {
		token_escape(c);
		c->token_escaped = true;
	}
	spv_op(&c->body, SpvOpStore, 2, token_var(c), lw_op1(c, SpvOpLoad, spv_t_int(c->e, 64), token_word(c)));
}

uint32_t lw_region_token(lw *c)
{
	return lw_op1(c, SpvOpLoad, spv_t_int(c->e, 64), token_var(c));
}
