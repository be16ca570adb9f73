/* What a tensor-core instruction (wmma.load/.store/.mma, mma.sync, ldmatrix, stmatrix) means,
 * independent of the target it is lowered for: its element types, its shape, the sizes of its
 * fragments in registers and in words, and the operand checks both lowerings make before they
 * emit anything.
 *
 * spirv/lower_mma.c and amdgpu/lower_mma.c emulate these instructions the same way (the same
 * fragment distribution, the same scratch layout, the same helper keys), so that a module gives
 * the same fragments on every target; deciding what an instruction asks for in one place keeps
 * the two from drifting apart. Only decoding lives here: what emits SPIR-V or LLVM IR stays in
 * each lowering. */
#ifndef GPUPROBE_PTX_MMA_DECODE_H
#define GPUPROBE_PTX_MMA_DECODE_H

#include <stdbool.h>

#include "ptx-frontend/ir.h"

/* An element type of a fragment. The values are part of the lowerings' helper-function names
 * (gpuprobe_mma_dot_KEY, gp_mma_dot_KEY): keep their order. */
enum ptx_mma_etype {
	PTX_MMA_F16, PTX_MMA_BF16, PTX_MMA_TF32, PTX_MMA_F32, PTX_MMA_F64,
	PTX_MMA_U8, PTX_MMA_S8, PTX_MMA_S32, PTX_MMA_NONE
};

/* The element type a modifier names (".f16", ".s8", ...), or PTX_MMA_NONE. */
enum ptx_mma_etype ptx_mma_etype_of(const char *mod);

/* The width of an element in bits (8, 16, 32 or 64). */
unsigned ptx_mma_etype_bits(enum ptx_mma_etype t);

/* The elements a 32-bit register holds (1 for 32- and 64-bit elements, which fill one register). */
static inline unsigned ptx_mma_per_reg(unsigned bits)
{
	return bits < 32 ? 32 / bits : 1;
}

/* The type the products and sums are computed in: 'f' 32 for f16/bf16/tf32/f32, 'f' 64 for
 * f64, 's' 32 (wrapping) for u8/s8/s32. Written as kind and bits so that each lowering makes
 * its own type of them. */
void ptx_mma_acc_type(enum ptx_mma_etype t, char *kind, unsigned *bits);

/* The types an instruction names, in the order of its modifiers (d, a, b, c for mma), at most
 * max of them. */
unsigned ptx_mma_etypes_of(const ir_insn *in, enum ptx_mma_etype *out, unsigned max);

struct ptx_mma_shape {
	unsigned m, n, k;
};

/* The .mMnNkK modifier: 0, or -1 when the instruction has none. */
int ptx_mma_shape_of(const ir_insn *in, struct ptx_mma_shape *s);

/* The 32-bit words a rows x cols matrix of bits-wide elements takes, packed. */
static inline unsigned ptx_mma_words(unsigned rows, unsigned cols, unsigned bits)
{
	return (rows * cols * bits + 31) / 32;
}

/* The registers of a fragment operand: a vector's elements, or the operand itself. */
const ir_operand *ptx_mma_regs_of(const ir_operand *o, unsigned *n);

/* wmma.load.{a,b,c} / wmma.store.d, decoded. */
struct ptx_mma_ldst {
	struct ptx_mma_shape sh;
	enum ptx_mma_etype t;
	char which;         /* 'a', 'b', 'c' or 'd' (store) */
	bool col_major;     /* .col: the memory layout, whatever the logical row-major indexing */
	unsigned rows, cols; /* the logical matrix: A MxK, B KxN, C/D MxN */
};

/* Decode a wmma.load (store false) or wmma.store: 0, or -1 with *why (the reason the lowerings
 * give) when it has no shape or type or names no matrix. Operands are not checked here. */
int ptx_mma_ldst_decode(const ir_insn *in, bool store, struct ptx_mma_ldst *d, const char **why);

/* wmma.mma and mma.sync, decoded: the types of D, A, B and C and the shape. */
struct ptx_mma_op {
	struct ptx_mma_shape sh;
	enum ptx_mma_etype td, ta, tb, tc;
};

/* Which tensor-core instruction this is, from its opcode and first modifier: 0 (PTX_MMA_NOT) for
 * anything else. PTX_MMA_WMMA_OTHER: a wmma with modifiers but none of .load/.store/.mma first. */
enum ptx_mma_kind {
	PTX_MMA_NOT, PTX_MMA_SYNC, PTX_MMA_LDMATRIX, PTX_MMA_STMATRIX,
	PTX_MMA_WMMA_LOAD, PTX_MMA_WMMA_STORE, PTX_MMA_WMMA_MMA, PTX_MMA_WMMA_OTHER
};

enum ptx_mma_kind ptx_mma_kind_of(const ir_insn *in);

/* wmma.mma.sync d, a, b, c: four operands, two types (d and c: f16 multiplicands) or four;
 * f32 multiplicands are refused. 0, or -1 with *why. */
int ptx_mma_wmma_decode(const ir_insn *in, struct ptx_mma_op *d, const char **why);

/* mma.sync.aligned: four types, four operands, .row.col, the m16n8kK shapes (and m8n8k4 for
 * f64), A and B of one width and not f32: what the documented layouts the lowerings implement
 * cover. 0, or -1 with *why. */
int ptx_mma_sync_decode(const ir_insn *in, struct ptx_mma_op *d, const char **why);

/* ldmatrix/stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.b16, decoded. */
struct ptx_mma_ldmatrix {
	unsigned n;      /* matrices: 1, 2 or 4 */
	bool trans;
	unsigned ai;     /* the address operand's index (0 for stmatrix, 1 for ldmatrix) */
};

/* 0, or -1 with *why when it is not .m8n8 .b16 with two operands and an address. */
int ptx_mma_ldmatrix_decode(const ir_insn *in, bool store, struct ptx_mma_ldmatrix *d, const char **why);

/* ptx_mma_wmma_decode or ptx_mma_sync_decode, by kind (PTX_MMA_WMMA_MMA or PTX_MMA_SYNC). */
int ptx_mma_op_decode(const ir_insn *in, enum ptx_mma_kind kind, struct ptx_mma_op *d, const char **why);

#endif
