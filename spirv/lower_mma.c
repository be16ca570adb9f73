/* Tensor-core matrix instructions (wmma.load, wmma.store, wmma.mma) emulated with per-lane
 * arithmetic, correct on any target.
 *
 * A wmma fragment's distribution over the warp's lanes is unspecified by PTX (only the number of
 * registers is fixed), so this lowering chooses one: a fragment of S element slots per lane
 * (registers x elements per register) over a logical matrix of E elements (A: MxK, B: KxN, C and
 * D: MxN, each indexed row-major whatever the memory layout) gives lane l's slot s the element
 * (l*S + s) mod E. Accumulators have exactly E = 32*S; f16 A and B fragments hold every element
 * twice, as the hardware's do. wmma.load and wmma.store then address each slot's element in
 * memory by the row/col layout and the stride; element-wise code on fragments (alpha*acc + beta*c)
 * stays correct because all accumulators share the mapping.
 *
 * wmma.mma needs other lanes' elements: each lane writes its A and B registers (the first copy of
 * each element) to a Workgroup scratch area of its warp between two barriers, then computes its
 * own D slots, D[i][j] = C[i][j] + sum_k A[i][k]*B[k][j], by a helper function per element type
 * (a loop over k reading the scratch, which it is passed). Products and sums are f32 for f16/bf16/tf32 inputs (f32
 * or f16 accumulators), f64 for f64 and s32 for u8/s8, each product added in k order. As with
 * the other warp collectives (lower_warp.c), every thread of the block must reach a wmma.mma. */
#include "spirv/lower.h"
#include "ptx-frontend/mma_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MMA_WARP_WORDS 320u /* A and B of the largest shape (m32n8k16 f16: 256 + 64 words) */
#define MMA_WARPS 32u

/* ---- element <-> value --------------------------------------------------------------------- */

/* An f16 (low 16 bits of a u32) as f32, exactly, by its bits (no library call). */
static uint32_t f16_to_f32(lw *c, uint32_t h)
{
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t sign = lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op2(c, SpvOpBitwiseAnd, u32, h, lw_u32(c, 0x8000)),
			       lw_u32(c, 16));
	uint32_t ex = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, h, lw_u32(c, 10)),
			     lw_u32(c, 31));
	uint32_t man = lw_op2(c, SpvOpBitwiseAnd, u32, h, lw_u32(c, 1023));
	uint32_t normal = lw_op2(c, SpvOpBitwiseOr, u32,
				 lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op2(c, SpvOpIAdd, u32, ex, lw_u32(c, 112)),
					lw_u32(c, 23)),
				 lw_op2(c, SpvOpShiftLeftLogical, u32, man, lw_u32(c, 13)));
	uint32_t infnan = lw_op2(c, SpvOpBitwiseOr, u32, lw_u32(c, 0x7f800000),
				 lw_op2(c, SpvOpShiftLeftLogical, u32, man, lw_u32(c, 13)));
	/* subnormal (or zero): man * 2^-24, exact in f32 */
	uint32_t sub = lw_op1(c, SpvOpBitcast, u32,
			      lw_op2(c, SpvOpFMul, f32, lw_op1(c, SpvOpConvertUToF, f32, man),
				     lw_const(c, PT('f', 32), 0x33800000u)));
	uint32_t mag = lw_select(c, u32, lw_op2(c, SpvOpIEqual, bl, ex, lw_u32(c, 0)), sub,
				 lw_select(c, u32, lw_op2(c, SpvOpIEqual, bl, ex, lw_u32(c, 31)), infnan, normal));
	return lw_op1(c, SpvOpBitcast, f32, lw_op2(c, SpvOpBitwiseOr, u32, sign, mag));
}

/* The accumulation type of an element type. */
static ptype acc_type(enum ptx_mma_etype t)
{
	char k;
	unsigned bits;
	ptx_mma_acc_type(t, &k, &bits);
	return PT(k, bits);
}

/* An element's raw bits (u32, or u64 for f64) as its accumulation value. */
static uint32_t elem_value(lw *c, enum ptx_mma_etype t, uint32_t raw)
{
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32);
	switch (t) {
	case PTX_MMA_F16: return f16_to_f32(c, raw);
	case PTX_MMA_BF16: return lw_op1(c, SpvOpBitcast, f32, lw_op2(c, SpvOpShiftLeftLogical, u32, raw, lw_u32(c, 16)));
	case PTX_MMA_TF32: /* the tensor core reads 10 mantissa bits */
		return lw_op1(c, SpvOpBitcast, f32, lw_op2(c, SpvOpBitwiseAnd, u32, raw, lw_u32(c, 0xffffe000u)));
	case PTX_MMA_F32: return lw_op1(c, SpvOpBitcast, f32, raw);
	case PTX_MMA_F64: return lw_op1(c, SpvOpBitcast, spv_t_float(c->e, 64), raw);
	case PTX_MMA_U8: return raw;
	case PTX_MMA_S8: return lw_op1(c, SpvOpSConvert, u32, lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 8), raw));
	default: return raw; /* s32 */
	}
}

/* ---- the scratch and the per-type helper ---------------------------------------------------- */

static uint32_t scratch(lw *c)
{
	if (!c->mma_scratch) {
		uint32_t u32 = spv_t_int(c->e, 32);
		uint32_t at = spv_t_array(c->e, u32, spv_c_int(c->e, 32, MMA_WARP_WORDS * MMA_WARPS));
		c->mma_scratch = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassWorkgroup, at), c->mma_scratch,
		       (uint32_t)SpvStorageClassWorkgroup);
		spv_decorate(c->e, c->mma_scratch, SpvDecorationAlignment, 1, 8u);
		spv_name(c->e, c->mma_scratch, "gpuprobe_mma_scratch");
	}
	return c->mma_scratch;
}

/* A pointer to word `word` of the scratch; sp: the scratch as a u32 pointer (a parameter inside
 * the helper: read directly as the Workgroup variable from the helper, the scratch gave zeros on
 * PoCL 3.1, while a device function reading the shared window works), or 0 for the variable. */
static uint32_t scratch_word_ptr_in(lw *c, uint32_t sp, uint32_t word)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	if (!sp)
		sp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), scratch(c));
	return lw_op2(c, SpvOpInBoundsPtrAccessChain, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), sp, word);
}

static uint32_t scratch_word_ptr(lw *c, uint32_t word)
{
	return scratch_word_ptr_in(c, 0, word);
}

/* Element idx of a matrix of type t whose first word in the scratch (sp) is base: raw bits. */
static uint32_t scratch_elem(lw *c, uint32_t sp, enum ptx_mma_etype t, uint32_t base, uint32_t idx)
{
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64);
	unsigned bits = ptx_mma_etype_bits(t);
	if (bits == 64) {
		uint32_t w = lw_op2(c, SpvOpIAdd, u32, base, lw_op2(c, SpvOpIMul, u32, idx, lw_u32(c, 2)));
		uint32_t lo = lw_op1(c, SpvOpLoad, u32, scratch_word_ptr_in(c, sp, w));
		uint32_t hi = lw_op1(c, SpvOpLoad, u32, scratch_word_ptr_in(c, sp, lw_op2(c, SpvOpIAdd, u32, w, lw_u32(c, 1))));
		return lw_op2(c, SpvOpBitwiseOr, u64, lw_op1(c, SpvOpUConvert, u64, lo),
			      lw_op2(c, SpvOpShiftLeftLogical, u64, lw_op1(c, SpvOpUConvert, u64, hi), lw_u64(c, 32)));
	}
	unsigned per = 32 / bits;
	uint32_t w = lw_op2(c, SpvOpIAdd, u32, base, lw_op2(c, SpvOpUDiv, u32, idx, lw_u32(c, per)));
	uint32_t v = lw_op1(c, SpvOpLoad, u32, scratch_word_ptr_in(c, sp, w));
	if (per == 1)
		return v;
	uint32_t sh = lw_op2(c, SpvOpIMul, u32, lw_op2(c, SpvOpUMod, u32, idx, lw_u32(c, per)), lw_u32(c, bits));
	return lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, v, sh),
		      lw_u32(c, (1u << bits) - 1));
}

/* The helper for (A type, B type, K, N-cols of B):
 * acc dot(u32 *scratch, u32 abase, u32 bbase, u32 i, u32 j, acc c)
 * = c + sum_k A[i*K + k] * B[k*N + j], emitted once into c->helper_funcs. */
static uint32_t dot_helper(lw *c, enum ptx_mma_etype ta, enum ptx_mma_etype tb, unsigned K, unsigned N, bool bt)
{
	/* bt: B is stored transposed (N x K row-major: B[j*K + k]), as mma.sync's registers hold it */
	unsigned key = (unsigned)ta | (unsigned)tb << 4 | K << 8 | N << 16 | (unsigned)bt << 31;
	for (size_t i = 0; i < c->nmma_helpers; i++)
		if (c->mma_helpers[i].key == key)
			return c->mma_helpers[i].id;
	ptype at = acc_type(ta);
	uint32_t acc_t = lw_type(c, at), u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t params[6] = {spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), u32, u32, u32, u32, acc_t};
	uint32_t fn_t = spv_t_func(c->e, acc_t, 6, params);
	uint32_t fn = spv_id(c->e);
	/* one name per helper: llvm-spirv resolves calls by name, so helpers of one name but
	 * different types collided (a module with f16 and f64 wmma failed to translate) */
	char nm[64];
	snprintf(nm, sizeof(nm), "gpuprobe_mma_dot_%x", key);
	spv_name(c->e, fn, nm);
	c->mma_helpers = realloc(c->mma_helpers, (c->nmma_helpers + 1) * sizeof(*c->mma_helpers));
	c->mma_helpers[c->nmma_helpers].key = key;
	c->mma_helpers[c->nmma_helpers++].id = fn;

	/* emit into a buffer of its own: swap the function-scope buffers */
	spv_buf save_body = c->body, save_vars = c->vars;
	bool save_in = c->in_block;
	c->body = (spv_buf){0};
	c->vars = (spv_buf){0};
	c->in_block = false;
	uint32_t p6[6], *p = p6 + 1;
	spv_buf *out = &c->helper_funcs;
	spv_op(out, SpvOpFunction, 4, acc_t, fn, (uint32_t)SpvFunctionControlMaskNone, fn_t);
	for (unsigned i = 0; i < 6; i++) {
		uint32_t *q = &p6[i];
		*q = spv_id(c->e);
		spv_op(out, SpvOpFunctionParameter, 2, params[i], *q);
	}
	uint32_t kv = spv_id(c->e), accv = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), kv,
	       (uint32_t)SpvStorageClassFunction);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, acc_t), accv,
	       (uint32_t)SpvStorageClassFunction);
	uint32_t head = spv_id(c->e), loop = spv_id(c->e), done = spv_id(c->e);
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpStore, 2, kv, lw_u32(c, 0));
	spv_op(&c->body, SpvOpStore, 2, accv, p[4]);
	lw_label(c, head);
	uint32_t k = lw_op1(c, SpvOpLoad, u32, kv);
	lw_branch_cond(c, lw_op2(c, SpvOpULessThan, bl, k, lw_u32(c, K)), loop, done);
	lw_label(c, loop);
	uint32_t ai = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, p[2], lw_u32(c, K)), k);
	uint32_t bi = bt ? lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, p[3], lw_u32(c, K)), k)
			 : lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, k, lw_u32(c, N)), p[3]);
	uint32_t a = elem_value(c, ta, scratch_elem(c, p6[0], ta, p[0], ai));
	uint32_t b = elem_value(c, tb, scratch_elem(c, p6[0], tb, p[1], bi));
	uint32_t acc = lw_op1(c, SpvOpLoad, acc_t, accv);
	if (at.k == 'f')
		acc = lw_op2(c, SpvOpFAdd, acc_t, acc, lw_op2(c, SpvOpFMul, acc_t, a, b));
	else
		acc = lw_op2(c, SpvOpIAdd, acc_t, acc, lw_op2(c, SpvOpIMul, acc_t, a, b));
	spv_op(&c->body, SpvOpStore, 2, accv, acc);
	spv_op(&c->body, SpvOpStore, 2, kv, lw_op2(c, SpvOpIAdd, u32, k, lw_u32(c, 1)));
	lw_branch(c, head);
	lw_label(c, done);
	spv_op(&c->body, SpvOpReturnValue, 1, lw_op1(c, SpvOpLoad, acc_t, accv));
	c->in_block = false;
	/* the first block holds the variables */
	uint32_t entry = spv_id(c->e);
	spv_op(out, SpvOpLabel, 1, entry);
	spv_buf_append(out, &c->vars);
	uint32_t first = c->body.w[1]; /* the body's first OpLabel */
	spv_op(out, SpvOpBranch, 1, first);
	spv_buf_append(out, &c->body);
	spv_op(out, SpvOpFunctionEnd, 0);
	spv_buf_free(&c->body);
	spv_buf_free(&c->vars);
	c->body = save_body;
	c->vars = save_vars;
	c->in_block = save_in;
	return fn;
}

/* ---- operands ------------------------------------------------------------------------------ */

/* lane's slot s of a fragment of S slots over E elements -> (row, col) of a matrix of `cols` */
static void slot_rc(lw *c, uint32_t lane, unsigned S, unsigned s, unsigned E, unsigned cols, uint32_t *r,
		    uint32_t *col)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t idx = lw_op2(c, SpvOpUMod, u32,
			      lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, lane, lw_u32(c, S)), lw_u32(c, s)),
			      lw_u32(c, E));
	*r = lw_op2(c, SpvOpUDiv, u32, idx, lw_u32(c, cols));
	*col = lw_op2(c, SpvOpUMod, u32, idx, lw_u32(c, cols));
}

/* The element pointer: base + (row*stride + col) * bytes (row layout) or (col*stride + row). */
static uint32_t elem_ptr(lw *c, const ir_insn *in, uint32_t base, uint32_t stride, bool col_major, uint32_t r,
			 uint32_t col, unsigned bytes, ptype t)
{
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64);
	uint32_t lin = col_major ? lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, col, stride), r)
				 : lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, r, stride), col);
	uint32_t off = lw_op2(c, SpvOpIMul, u64, lw_op1(c, SpvOpUConvert, u64, lin), lw_u64(c, bytes));
	uint32_t a = lw_op2(c, SpvOpIAdd, u64, base, off);
	enum ir_space sp = lw_insn_space(in);
	return lw_ptr_at(c, sp, a, t);
}

static uint32_t lane_id(lw *c)
{
	return lw_op2(c, SpvOpBitwiseAnd, spv_t_int(c->e, 32), lw_linear_tid(c), lw_u32(c, 31));
}

/* wmma.load.{a,b,c} and wmma.store.d */
static int wmma_ldst(lw *c, const ir_insn *in, bool store)
{
	struct ptx_mma_ldst d;
	const char *why;
	if (ptx_mma_ldst_decode(in, store, &d, &why) < 0)
		return lw_unsupported(c, in, why);
	enum ptx_mma_etype t = d.t;
	bool col_major = d.col_major;
	unsigned rows = d.rows, cols = d.cols, E = rows * cols;
	const ir_operand *fr = &in->ops[store ? 1 : 0], *addr = &in->ops[store ? 0 : 1];
	if (in->nops < 2 || addr->kind != IR_OPND_ADDR)
		return lw_unsupported(c, in, "expected a fragment and an address");
	unsigned nregs;
	const ir_operand *regs = ptx_mma_regs_of(fr, &nregs);
	unsigned bits = ptx_mma_etype_bits(t), per = ptx_mma_per_reg(bits);
	unsigned S = nregs * per;
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64);
	/* the address and stride: [ptr], then the stride (elements; default: the layout's leading size) */
	ir_operand ao = {.kind = addr->name ? IR_OPND_REG : IR_OPND_INT, .name = addr->name};
	uint32_t base = addr->name ? lw_read(c, &ao, PT('u', 64)) : lw_u64(c, 0);
	if (!base)
		return -1;
	if (addr->ival)
		base = lw_op2(c, SpvOpIAdd, u64, base, lw_u64(c, (uint64_t)addr->ival));
	uint32_t stride = in->nops > 2 ? lw_read(c, &in->ops[2], PT('u', 32)) : lw_u32(c, col_major ? rows : cols);
	if (!stride)
		return -1;
	uint32_t lane = lane_id(c);
	ptype et = bits == 64 ? PT('u', 64) : PT('u', bits);
	for (unsigned r = 0; r < nregs; r++) {
		uint32_t word = 0;
		if (store) {
			word = lw_read(c, &regs[r], bits == 64 ? PT('u', 64) : PT('u', 32));
			if (!word)
				return -1;
		}
		for (unsigned e = 0; e < per; e++) {
			unsigned s = r * per + e;
			uint32_t row, col;
			slot_rc(c, lane, S, s, E, cols, &row, &col);
			uint32_t p = elem_ptr(c, in, base, stride, col_major, row, col, bits / 8, et);
			if (!p)
				return -1;
			if (store) {
				uint32_t v = per == 1 ? word
						      : lw_op1(c, SpvOpUConvert, lw_type(c, et),
							       lw_op2(c, SpvOpShiftRightLogical, u32, word, lw_u32(c, e * bits)));
				spv_op(&c->body, SpvOpStore, 4, p, v, (uint32_t)SpvMemoryAccessAlignedMask, bits / 8);
			} else {
				lw_ensure_block(c);
				uint32_t v = spv_id(c->e);
				spv_op(&c->body, SpvOpLoad, 5, lw_type(c, et), v, p, (uint32_t)SpvMemoryAccessAlignedMask,
				       bits / 8);
				if (per == 1) {
					word = v;
				} else {
					v = lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op1(c, SpvOpUConvert, u32, v),
						   lw_u32(c, e * bits));
					word = e ? lw_op2(c, SpvOpBitwiseOr, u32, word, v) : v;
				}
			}
		}
		if (!store && lw_write(c, &regs[r], bits == 64 ? PT('u', 64) : PT('u', 32), word) < 0)
			return -1;
	}
	return 1;
}

/* wmma.mma: d, a, b, c */
static int wmma_mma(lw *c, const ir_insn *in, const struct ptx_mma_op *op)
{
	struct ptx_mma_shape sh = op->sh;
	enum ptx_mma_etype td = op->td, ta = op->ta, tb = op->tb, tc = op->tc;
	unsigned na, nb, ncr, nd;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[0], &nd), *ra = ptx_mma_regs_of(&in->ops[1], &na), *rb = ptx_mma_regs_of(&in->ops[2], &nb),
			 *rc = ptx_mma_regs_of(&in->ops[3], &ncr);
	unsigned abits = ptx_mma_etype_bits(ta), bbits = ptx_mma_etype_bits(tb);
	unsigned wa = ptx_mma_words(sh.m, sh.k, abits), wb = ptx_mma_words(sh.k, sh.n, bbits);
	if (wa + wb > MMA_WARP_WORDS)
		return lw_unsupported(c, in, "this shape is too large for the emulation's scratch");
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t tid = lw_linear_tid(c);
	uint32_t lane = lw_op2(c, SpvOpBitwiseAnd, u32, tid, lw_u32(c, 31));
	uint32_t warp = lw_op2(c, SpvOpShiftRightLogical, u32, tid, lw_u32(c, 5));
	uint32_t abase = lw_op2(c, SpvOpIMul, u32, warp, lw_u32(c, MMA_WARP_WORDS));
	uint32_t bbase = lw_op2(c, SpvOpIAdd, u32, abase, lw_u32(c, wa));
	/* read every operand before anything is written: d may be c */
	unsigned rwords_a = abits == 64 ? 2 : 1, rwords_b = bbits == 64 ? 2 : 1;
	uint32_t av[16], bv[16], cv[16];
	if (na > 8 || nb > 8 || ncr > 8 || nd > 8)
		return lw_unsupported(c, in, "too many fragment registers");
	for (unsigned r = 0; r < na; r++)
		if (!(av[r] = lw_read(c, &ra[r], abits == 64 ? PT('u', 64) : PT('u', 32))))
			return -1;
	for (unsigned r = 0; r < nb; r++)
		if (!(bv[r] = lw_read(c, &rb[r], bbits == 64 ? PT('u', 64) : PT('u', 32))))
			return -1;
	ptype at = acc_type(ta);
	unsigned cbits = ptx_mma_etype_bits(tc), cper = ptx_mma_per_reg(cbits);
	for (unsigned r = 0; r < ncr; r++)
		if (!(cv[r] = lw_read(c, &rc[r], cbits == 64 ? PT('u', 64) : PT('u', 32))))
			return -1;
	/* the first copy of every A and B element into the warp's scratch */
	lw_barrier(c);
	struct { uint32_t *v; unsigned n, words, rw; uint32_t base; } mats[2] = {{av, na, wa, rwords_a, abase},
										  {bv, nb, wb, rwords_b, bbase}};
	uint32_t bl = spv_t_bool(c->e);
	for (unsigned mi = 0; mi < 2; mi++) {
		for (unsigned r = 0; r < mats[mi].n; r++) {
			/* word of lane l's register r: (l*n + r) * rw, written while below the matrix's words */
			uint32_t w = lw_op2(c, SpvOpIMul, u32,
					    lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, lane, lw_u32(c, mats[mi].n)),
						   lw_u32(c, r)),
					    lw_u32(c, mats[mi].rw));
			uint32_t then = spv_id(c->e), join = spv_id(c->e);
			lw_branch_cond(c, lw_op2(c, SpvOpULessThan, bl, w, lw_u32(c, mats[mi].words)), then, join);
			lw_label(c, then);
			uint32_t at_w = lw_op2(c, SpvOpIAdd, u32, mats[mi].base, w);
			if (mats[mi].rw == 2) {
				uint32_t u64 = spv_t_int(c->e, 64);
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, at_w),
				       lw_op1(c, SpvOpUConvert, u32, mats[mi].v[r]));
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, lw_op2(c, SpvOpIAdd, u32, at_w, lw_u32(c, 1))),
				       lw_op1(c, SpvOpUConvert, u32,
					      lw_op2(c, SpvOpShiftRightLogical, u64, mats[mi].v[r], lw_u64(c, 32))));
			} else {
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, at_w), mats[mi].v[r]);
			}
			lw_label(c, join);
		}
	}
	lw_barrier(c);
	uint32_t fn = dot_helper(c, ta, tb, sh.k, sh.n, false);
	uint32_t acc_t = lw_type(c, at);
	unsigned S = ncr * cper, E = sh.m * sh.n;
	unsigned dbits = ptx_mma_etype_bits(td), dper = ptx_mma_per_reg(dbits);
	if (nd * dper != S)
		return lw_unsupported(c, in, "C and D fragments differ in size");
	uint32_t dvals[16];
	for (unsigned s = 0; s < S; s++) {
		uint32_t row, col;
		slot_rc(c, lane, S, s, E, sh.n, &row, &col);
		/* C's slot s as the accumulation type */
		uint32_t craw = cv[s / cper];
		if (cper > 1)
			craw = lw_op2(c, SpvOpBitwiseAnd, u32,
				      lw_op2(c, SpvOpShiftRightLogical, u32, craw, lw_u32(c, (s % cper) * cbits)),
				      lw_u32(c, 0xffff));
		uint32_t cval = elem_value(c, tc, craw);
		uint32_t id = spv_id(c->e);
		lw_ensure_block(c);
		uint32_t sp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), scratch(c));
		spv_op(&c->body, SpvOpFunctionCall, 9, acc_t, id, fn, sp, abase, bbase, row, col, cval);
		dvals[s] = id;
	}
	lw_barrier(c); /* the scratch is free again */
	for (unsigned r = 0; r < nd; r++) {
		uint32_t word;
		if (td == PTX_MMA_F16) {
			uint32_t lo = lw_op1(c, SpvOpUConvert, u32, lw_f2h(c, dvals[r * 2]));
			uint32_t hi = lw_op1(c, SpvOpUConvert, u32, lw_f2h(c, dvals[r * 2 + 1]));
			word = lw_op2(c, SpvOpBitwiseOr, u32, lo, lw_op2(c, SpvOpShiftLeftLogical, u32, hi, lw_u32(c, 16)));
			if (lw_write(c, &rd[r], PT('u', 32), word) < 0)
				return -1;
		} else if (lw_write(c, &rd[r], at, dvals[r]) < 0) {
			return -1;
		}
	}
	return 1;
}

/* ---- mma.sync and ldmatrix: the documented fragment layouts ----------------------------------- */

/* mma.sync.aligned.{m16n8k8,m16n8k16,m16n8k32,m16n8k4,m8n8k4}.row.col: with g = lane/4, t = lane%4,
 * per = elements per register: A's register r holds row g + 8*(r&1), columns t*per + (K/2)*(r>>1)
 * onwards; B's register r holds rows t*per + (K/2)*r onwards of column g; C/D's 32-bit register r
 * is (g + 8*(r>>1), 2t + (r&1)), an f16x2 one (g + 8r, 2t + h); m8n8k4 f64: A (g, t), B (t, g), C
 * (g, 2t + r). Each register is one word of A (row-major) or of B transposed in the scratch. */
static int mma_sync(lw *c, const ir_insn *in, const struct ptx_mma_op *op)
{
	struct ptx_mma_shape sh = op->sh;
	enum ptx_mma_etype td = op->td, ta = op->ta, tb = op->tb, tc = op->tc;
	bool f64 = ta == PTX_MMA_F64;
	unsigned na, nb, ncr, nd;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[0], &nd), *ra = ptx_mma_regs_of(&in->ops[1], &na), *rb = ptx_mma_regs_of(&in->ops[2], &nb),
			 *rc = ptx_mma_regs_of(&in->ops[3], &ncr);
	unsigned bits = ptx_mma_etype_bits(ta), per = ptx_mma_per_reg(bits), rw = bits == 64 ? 2 : 1;
	unsigned wa = ptx_mma_words(sh.m, sh.k, bits), wb = ptx_mma_words(sh.k, sh.n, bits);
	if (na > 8 || nb > 8 || ncr > 8 || nd > 8 || wa + wb > MMA_WARP_WORDS)
		return lw_unsupported(c, in, "too many fragment registers");
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64);
	uint32_t tid = lw_linear_tid(c);
	uint32_t lane = lw_op2(c, SpvOpBitwiseAnd, u32, tid, lw_u32(c, 31));
	uint32_t warp = lw_op2(c, SpvOpShiftRightLogical, u32, tid, lw_u32(c, 5));
	uint32_t g = lw_op2(c, SpvOpShiftRightLogical, u32, lane, lw_u32(c, 2)), t = lw_op2(c, SpvOpBitwiseAnd, u32, lane, lw_u32(c, 3));
	uint32_t abase = lw_op2(c, SpvOpIMul, u32, warp, lw_u32(c, MMA_WARP_WORDS));
	uint32_t bbase = lw_op2(c, SpvOpIAdd, u32, abase, lw_u32(c, wa));
	uint32_t av[8], bv[8], cv[8];
	for (unsigned r = 0; r < na; r++)
		if (!(av[r] = lw_read(c, &ra[r], rw == 2 ? PT('u', 64) : PT('u', 32))))
			return -1;
	for (unsigned r = 0; r < nb; r++)
		if (!(bv[r] = lw_read(c, &rb[r], rw == 2 ? PT('u', 64) : PT('u', 32))))
			return -1;
	unsigned cbits = ptx_mma_etype_bits(tc);
	for (unsigned r = 0; r < ncr; r++)
		if (!(cv[r] = lw_read(c, &rc[r], cbits == 64 ? PT('u', 64) : PT('u', 32))))
			return -1;
	lw_barrier(c);
	unsigned K2 = sh.k / 2;
	for (unsigned m = 0; m < 2; m++) {
		unsigned n = m ? nb : na;
		for (unsigned r = 0; r < n; r++) {
			/* the register's first element: A (row, col) -> row*K + col; B^T (g, k) -> g*K + k */
			uint32_t idx;
			if (f64) {
				idx = m ? lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, g, lw_u32(c, sh.k)), t)
					: lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, g, lw_u32(c, sh.k)), t);
			} else if (!m) {
				uint32_t row = lw_op2(c, SpvOpIAdd, u32, g, lw_u32(c, 8 * (r & 1)));
				uint32_t col = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, t, lw_u32(c, per)), lw_u32(c, K2 * (r >> 1)));
				idx = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, row, lw_u32(c, sh.k)), col);
			} else {
				uint32_t k = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, t, lw_u32(c, per)), lw_u32(c, K2 * r));
				idx = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, g, lw_u32(c, sh.k)), k);
			}
			uint32_t w = lw_op2(c, SpvOpIAdd, u32, m ? bbase : abase,
					    rw == 2 ? lw_op2(c, SpvOpIMul, u32, idx, lw_u32(c, 2)) : lw_op2(c, SpvOpUDiv, u32, idx, lw_u32(c, per)));
			uint32_t v = m ? bv[r] : av[r];
			if (rw == 2) {
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, w), lw_op1(c, SpvOpUConvert, u32, v));
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, lw_op2(c, SpvOpIAdd, u32, w, lw_u32(c, 1))),
				       lw_op1(c, SpvOpUConvert, u32, lw_op2(c, SpvOpShiftRightLogical, u64, v, lw_u64(c, 32))));
			} else {
				spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, w), v);
			}
		}
	}
	lw_barrier(c);
	uint32_t fn = dot_helper(c, ta, tb, sh.k, sh.n, true);
	ptype at = acc_type(ta);
	uint32_t acc_t = lw_type(c, at);
	unsigned cper = ptx_mma_per_reg(cbits), S = ncr * cper;
	unsigned dbits = ptx_mma_etype_bits(td), dper = ptx_mma_per_reg(dbits);
	if (nd * dper != S || S > 8)
		return lw_unsupported(c, in, "C and D fragments differ in size");
	uint32_t dvals[8];
	uint32_t sp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), scratch(c));
	for (unsigned s = 0; s < S; s++) {
		unsigned r = s / cper, h = s % cper;
		uint32_t row, col;
		if (f64) {
			row = g;
			col = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, t, lw_u32(c, 2)), lw_u32(c, r));
		} else if (cper == 2) {
			row = lw_op2(c, SpvOpIAdd, u32, g, lw_u32(c, 8 * r));
			col = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, t, lw_u32(c, 2)), lw_u32(c, h));
		} else {
			row = lw_op2(c, SpvOpIAdd, u32, g, lw_u32(c, 8 * (r >> 1)));
			col = lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIMul, u32, t, lw_u32(c, 2)), lw_u32(c, r & 1));
		}
		uint32_t craw = cv[r];
		if (cper > 1)
			craw = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, craw, lw_u32(c, h * 16)),
				      lw_u32(c, 0xffff));
		uint32_t cval = elem_value(c, tc, craw);
		uint32_t id = spv_id(c->e);
		lw_ensure_block(c);
		spv_op(&c->body, SpvOpFunctionCall, 9, acc_t, id, fn, sp, abase, bbase, row, col, cval);
		dvals[s] = id;
	}
	for (unsigned r = 0; r < nd; r++) {
		if (td == PTX_MMA_F16) {
			uint32_t lo = lw_op1(c, SpvOpUConvert, u32, lw_f2h(c, dvals[r * 2]));
			uint32_t hi = lw_op1(c, SpvOpUConvert, u32, lw_f2h(c, dvals[r * 2 + 1]));
			if (lw_write(c, &rd[r], PT('u', 32),
				     lw_op2(c, SpvOpBitwiseOr, u32, lo, lw_op2(c, SpvOpShiftLeftLogical, u32, hi, lw_u32(c, 16)))) < 0)
				return -1;
		} else if (lw_write(c, &rd[r], at, dvals[r]) < 0) {
			return -1;
		}
	}
	return 1;
}

/* ldmatrix/stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16: lanes 8i..8i+7 give the row
 * addresses of matrix i; lane l's register i is matrix i's (l/4, 2(l%4)) and (l/4, 2(l%4)+1), or
 * with .trans (2(l%4), l/4) and (2(l%4)+1, l/4). The addresses go through the warp's scratch. */
static int ldmatrix(lw *c, const ir_insn *in, bool store)
{
	struct ptx_mma_ldmatrix d;
	const char *why;
	if (ptx_mma_ldmatrix_decode(in, store, &d, &why) < 0)
		return lw_unsupported(c, in, why);
	unsigned n = d.n, ai = d.ai;
	bool trans = d.trans;
	unsigned nr;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[store ? 1 : 0], &nr);
	uint32_t vals[4];
	for (unsigned i = 0; store && i < nr && i < 4; i++)
		if (!(vals[i] = lw_read(c, &rd[i], PT('b', 32))))
			return -1;
	if (nr != n)
		return lw_unsupported(c, in, "register count differs from .x1/.x2/.x4");
	enum ir_space sp = lw_insn_space(in);
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), u16 = spv_t_int(c->e, 16);
	const ir_operand *a = &in->ops[ai];
	uint32_t addr = a->name ? lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = a->name}, PT('u', 64)) : lw_u64(c, 0);
	if (!addr)
		return -1;
	if (a->ival)
		addr = lw_op2(c, SpvOpIAdd, u64, addr, lw_u64(c, (uint64_t)a->ival));
	uint32_t tid = lw_linear_tid(c);
	uint32_t lane = lw_op2(c, SpvOpBitwiseAnd, u32, tid, lw_u32(c, 31));
	uint32_t base = lw_op2(c, SpvOpIMul, u32, lw_op2(c, SpvOpShiftRightLogical, u32, tid, lw_u32(c, 5)), lw_u32(c, MMA_WARP_WORDS));
	lw_barrier(c);
	spv_op(&c->body, SpvOpStore, 2, scratch_word_ptr(c, lw_op2(c, SpvOpIAdd, u32, base, lane)), lw_op1(c, SpvOpUConvert, u32, addr));
	lw_barrier(c);
	uint32_t q = lw_op2(c, SpvOpShiftRightLogical, u32, lane, lw_u32(c, 2)), t2 = lw_op2(c, SpvOpIMul, u32, lw_op2(c, SpvOpBitwiseAnd, u32, lane, lw_u32(c, 3)), lw_u32(c, 2));
	for (unsigned i = 0; i < n; i++) {
		uint32_t half[2];
		for (unsigned h = 0; h < 2; h++) {
			uint32_t row = trans ? lw_op2(c, SpvOpIAdd, u32, t2, lw_u32(c, h)) : q;
			uint32_t col = trans ? q : lw_op2(c, SpvOpIAdd, u32, t2, lw_u32(c, h));
			uint32_t ra = lw_op1(c, SpvOpLoad, u32, scratch_word_ptr(c, lw_op2(c, SpvOpIAdd, u32, base, lw_op2(c, SpvOpIAdd, u32, row, lw_u32(c, 8 * i)))));
			uint32_t ea = lw_op2(c, SpvOpIAdd, u64, lw_op1(c, SpvOpUConvert, u64, ra),
					     lw_op1(c, SpvOpUConvert, u64, lw_op2(c, SpvOpIMul, u32, col, lw_u32(c, 2))));
			uint32_t p = lw_ptr_at(c, sp, ea, PT('u', 16));
			if (!p)
				return -1;
			if (store)
				spv_op(&c->body, SpvOpStore, 2, p,
				       lw_op1(c, SpvOpUConvert, u16, lw_op2(c, SpvOpShiftRightLogical, u32, vals[i], lw_u32(c, 16 * h))));
			else
				half[h] = lw_op1(c, SpvOpUConvert, u32, lw_op1(c, SpvOpLoad, u16, p));
		}
		if (store)
			continue;
		uint32_t v = lw_op2(c, SpvOpBitwiseOr, u32, half[0], lw_op2(c, SpvOpShiftLeftLogical, u32, half[1], lw_u32(c, 16)));
		if (lw_write(c, &rd[i], PT('b', 32), v) < 0)
			return -1;
	}
	if (store)
		lw_barrier(c); /* the stores are seen by the warp's lanes after it, as after the real stmatrix's sync */
	return 1;
}

int lw_mma(lw *c, const ir_insn *in)
{
	enum ptx_mma_kind kind = ptx_mma_kind_of(in);
	switch (kind) {
	case PTX_MMA_LDMATRIX: return ldmatrix(c, in, false);
	case PTX_MMA_STMATRIX: return ldmatrix(c, in, true);
	case PTX_MMA_WMMA_LOAD: return wmma_ldst(c, in, false);
	case PTX_MMA_WMMA_STORE: return wmma_ldst(c, in, true);
	case PTX_MMA_WMMA_MMA:
		if (ir_insn_has_mod(in, ".satfinite"))
			return lw_unsupported(c, in, ".satfinite is not emulated");
		/* fall through */
	case PTX_MMA_SYNC: {
		struct ptx_mma_op op;
		const char *why;
		if (ptx_mma_op_decode(in, kind, &op, &why) < 0)
			return lw_unsupported(c, in, why);
		return kind == PTX_MMA_SYNC ? mma_sync(c, in, &op) : wmma_mma(c, in, &op);
	}
	default: return 0;
	}
}
