/* Tensor-core matrix instructions (wmma.load/.store/.mma, mma.sync, ldmatrix, stmatrix) emulated
 * with per-lane arithmetic, the same emulation as spirv/lower_mma.c, so that a module gives the
 * same fragments and the same results on amdgcn, on nvptx and through spirv/:
 *
 * - wmma fragments: PTX fixes only the number of registers, so the distribution is ours, the same
 *   as spirv/'s: a fragment of S element slots per lane (registers x elements per register) over a
 *   logical matrix of E elements (A: MxK, B: KxN, C and D: MxN, each indexed row-major whatever
 *   the layout in memory) gives lane l's slot s the element (l*S + s) mod E. f16 A and B fragments
 *   hold every element twice; accumulators share one mapping, so element-wise code on them holds.
 * - mma.sync and ldmatrix/stmatrix: the documented layouts (g = lane/4, t = lane%4).
 * - The product: each lane writes the first copy of its A and B registers to its warp's part of a
 *   work-group (LDS) scratch between two block barriers, then computes its own D slots,
 *   D[i][j] = C[i][j] + sum_k A[i][k]*B[k][j], each by a helper function's loop over k reading
 *   the scratch. Products and sums are f32 for f16/bf16/tf32 (f32
 *   or f16 accumulators, f16 rounded to nearest at the end), f64 for f64, s32 (wrapping) for u8/s8,
 *   each product added in k order, as a separate multiply and add (no fma): spirv/'s order and
 *   precision.
 *
 * Why a scratch in shared memory and not the target's shuffles (lower_target.c's ds_bpermute or
 * shfl.sync): each lane needs a whole row of A and a whole column of B (K elements each, up to 32
 * registers' worth held by other lanes, at register indices that depend on the lane), which would
 * be K shuffles per element with a register chosen per lane, per D slot; a scratch written once
 * and read freely is one store per register. It needs block barriers (as spirv/'s does), so as
 * with the other warp collectives, every thread of the block must reach a wmma.mma, mma.sync,
 * ldmatrix or stmatrix. The scratch is one module variable, `gp.mma_scratch`, sized by the largest
 * instruction of the module (A + B words of its shape per warp, times 32 warps) rather than
 * spirv/'s fixed 320 words per warp, to leave LDS to the application on amdgcn. The lane and the
 * warp are the linear thread index & 31 and / 32 on both targets, so on wave64 amdgcn the two
 * warps of a wavefront have their own parts of the scratch. */
#include "amdgpu/lower.h"
#include "ptx-frontend/mma_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B (c->b)
#define MMA_WARPS 32u /* 1024 threads */

static enum ir_space space_of(const ir_insn *in)
{
	if (al_mod(in, ".global"))
		return IR_SPACE_GLOBAL;
	if (al_mod(in, ".shared") || al_mod(in, ".shared::cta"))
		return IR_SPACE_SHARED;
	if (al_mod(in, ".local"))
		return IR_SPACE_LOCAL;
	if (al_mod(in, ".const"))
		return IR_SPACE_CONST;
	if (al_mod(in, ".param"))
		return IR_SPACE_PARAM;
	return IR_SPACE_GENERIC;
}

static LLVMValueRef u32c(al *c, uint32_t v) { return al_ci(c, 32, v); }
static LLVMValueRef add32(al *c, LLVMValueRef a, uint32_t k) { return k ? LLVMBuildAdd(B, a, u32c(c, k), "") : a; }
static LLVMValueRef mul32(al *c, LLVMValueRef a, uint32_t k) { return LLVMBuildMul(B, a, u32c(c, k), ""); }

/* The accumulation type of an element type. */
static atype acc_type(enum ptx_mma_etype t)
{
	char k;
	unsigned bits;
	ptx_mma_acc_type(t, &k, &bits);
	return AT(k, bits);
}

/* An element's raw bits (i32, or i64 for f64; narrow elements in the low bits, the rest zero) as
 * its accumulation value. f16 -> f32 and bf16/tf32 -> f32 are exact. */
static LLVMValueRef elem_value(al *c, LLVMBuilderRef b, enum ptx_mma_etype t, LLVMValueRef raw)
{
	LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx), i32 = al_ity(c, 32);
	switch (t) {
	case PTX_MMA_F16:
		return LLVMBuildFPExt(b, LLVMBuildBitCast(b, LLVMBuildTrunc(b, raw, al_ity(c, 16), ""),
							 LLVMHalfTypeInContext(c->ctx), ""), f32, "");
	case PTX_MMA_BF16: return LLVMBuildBitCast(b, LLVMBuildShl(b, raw, LLVMConstInt(i32, 16, 0), ""), f32, "");
	case PTX_MMA_TF32: /* the tensor core reads 10 mantissa bits */
		return LLVMBuildBitCast(b, LLVMBuildAnd(b, raw, LLVMConstInt(i32, 0xffffe000u, 0), ""), f32, "");
	case PTX_MMA_F32: return LLVMBuildBitCast(b, raw, f32, "");
	case PTX_MMA_F64: return LLVMBuildBitCast(b, raw, LLVMDoubleTypeInContext(c->ctx), "");
	case PTX_MMA_S8: return LLVMBuildSExt(b, LLVMBuildTrunc(b, raw, al_ity(c, 8), ""), i32, "");
	default: return raw; /* u8 (masked), s32 */
	}
}

/* ---- the scratch and the per-type helper ---------------------------------------------------- */

/* The scratch, at least words_per_warp * MMA_WARPS words: a larger instruction later in the module
 * replaces it by a larger one (every instruction uses its own per-warp stride between its
 * barriers, so instructions of different sizes share it). */
static LLVMValueRef scratch(al *c, unsigned words_per_warp)
{
	LLVMValueRef g = LLVMGetNamedGlobal(c->mod, "gp.mma_scratch");
	uint64_t want = (uint64_t)words_per_warp * MMA_WARPS;
	if (g && LLVMGetArrayLength2(LLVMGlobalGetValueType(g)) >= want)
		return g;
	LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 32), want);
	LLVMValueRef n = LLVMAddGlobalInAddressSpace(c->mod, ty, "gp.mma_scratch.grown", AS_SHARED);
	LLVMSetInitializer(n, LLVMGetUndef(ty));
	LLVMSetLinkage(n, LLVMInternalLinkage);
	LLVMSetAlignment(n, 8);
	if (g) {
		LLVMReplaceAllUsesWith(g, n);
		LLVMDeleteGlobal(g);
	}
	LLVMSetValueName2(n, "gp.mma_scratch", strlen("gp.mma_scratch"));
	return n;
}

static LLVMValueRef word_ptr(al *c, LLVMBuilderRef b, LLVMValueRef sp, LLVMValueRef word)
{
	LLVMValueRef i = LLVMBuildZExt(b, word, al_ity(c, 64), "");
	return LLVMBuildInBoundsGEP2(b, al_ity(c, 32), sp, &i, 1, "");
}

static LLVMValueRef load_word(al *c, LLVMBuilderRef b, LLVMValueRef sp, LLVMValueRef word)
{
	return LLVMBuildLoad2(b, al_ity(c, 32), word_ptr(c, b, sp, word), "");
}

static void store_word(al *c, LLVMValueRef sp, LLVMValueRef word, LLVMValueRef v)
{
	LLVMBuildStore(B, v, word_ptr(c, B, sp, word));
}

/* A register's value (i32 or i64) at word w of the scratch (an i64 as two words, low first). */
static void store_reg(al *c, LLVMValueRef sp, LLVMValueRef w, LLVMValueRef v, unsigned rw)
{
	if (rw == 2) {
		store_word(c, sp, w, LLVMBuildTrunc(B, v, al_ity(c, 32), ""));
		store_word(c, sp, add32(c, w, 1), LLVMBuildTrunc(B, LLVMBuildLShr(B, v, al_ci(c, 64, 32), ""), al_ity(c, 32), ""));
	} else {
		store_word(c, sp, w, v);
	}
}

/* Element idx of a matrix of type t whose first word in the scratch is base: its raw bits. */
static LLVMValueRef scratch_elem(al *c, LLVMBuilderRef b, LLVMValueRef sp, enum ptx_mma_etype t, LLVMValueRef base, LLVMValueRef idx)
{
	LLVMTypeRef i32 = al_ity(c, 32), i64 = al_ity(c, 64);
	unsigned bits = ptx_mma_etype_bits(t);
	if (bits == 64) {
		LLVMValueRef w = LLVMBuildAdd(b, base, LLVMBuildMul(b, idx, LLVMConstInt(i32, 2, 0), ""), "");
		LLVMValueRef lo = load_word(c, b, sp, w);
		LLVMValueRef hi = load_word(c, b, sp, LLVMBuildAdd(b, w, LLVMConstInt(i32, 1, 0), ""));
		return LLVMBuildOr(b, LLVMBuildZExt(b, lo, i64, ""),
				   LLVMBuildShl(b, LLVMBuildZExt(b, hi, i64, ""), LLVMConstInt(i64, 32, 0), ""), "");
	}
	unsigned per = 32 / bits;
	LLVMValueRef w = LLVMBuildAdd(b, base, LLVMBuildUDiv(b, idx, LLVMConstInt(i32, per, 0), ""), "");
	LLVMValueRef v = load_word(c, b, sp, w);
	if (per == 1)
		return v;
	LLVMValueRef sh = LLVMBuildMul(b, LLVMBuildURem(b, idx, LLVMConstInt(i32, per, 0), ""), LLVMConstInt(i32, bits, 0), "");
	return LLVMBuildAnd(b, LLVMBuildLShr(b, v, sh, ""), LLVMConstInt(i32, (1u << bits) - 1, 0), "");
}

/* D[i][j] = c + sum_k A[i*K + k] * B[k*N + j] (bt: B stored transposed, N x K row-major:
 * B[j*K + k], as mma.sync's registers hold it), one multiply and one add per k, in k order, by a
 * helper function per (A type, B type, K, N, bt), not inlined: the samples have up to thousands of
 * wmma.mma per module, and a loop per D slot in the kernel, unrolled, took LLVM's amdgcn backend
 * minutes. The helper is given the warp's A and B in the scratch as generic pointers: spirv/ on
 * PoCL (the CPU check of the nvptx lowering) reads zeros where a .func reads .shared memory itself
 * (ld.shared, through spirv/'s shared window), as spirv/lower_mma.c notes for its own helper, but
 * reads a generic pointer to it correctly; and a pointer, not the scratch and an offset, as LLVM
 * would propagate the module variable into the internal helper.
 * acc gp_mma_dot_KEY(ptr a, ptr b, i32 i, i32 j, acc c) */
static LLVMValueRef emit_dot(al *c, enum ptx_mma_etype ta, enum ptx_mma_etype tb, unsigned K, unsigned N, bool bt, LLVMValueRef pa,
			     LLVMValueRef pb, LLVMValueRef row, LLVMValueRef col, LLVMValueRef cval)
{
	unsigned key = (unsigned)ta | (unsigned)tb << 4 | K << 8 | N << 16 | (unsigned)bt << 31;
	char name[64];
	snprintf(name, sizeof(name), "gp_mma_dot_%x", key);
	atype at = acc_type(ta);
	LLVMTypeRef acc_t = al_ty(c, at), i32 = al_ity(c, 32);
	LLVMTypeRef params[5] = {al_ptr(c, AS_GENERIC), al_ptr(c, AS_GENERIC), i32, i32, acc_t};
	LLVMTypeRef fty = LLVMFunctionType(acc_t, params, 5, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(c->mod, name, fty);
		LLVMSetLinkage(fn, LLVMInternalLinkage);
		unsigned noinl = LLVMGetEnumAttributeKindForName("noinline", 8);
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, noinl, 0));
		LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
		LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
		LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->ctx, fn, "head");
		LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c->ctx, fn, "loop");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->ctx, fn, "done");
		LLVMValueRef a = LLVMGetParam(fn, 0), bm = LLVMGetParam(fn, 1);
		LLVMValueRef pi = LLVMGetParam(fn, 2), pj = LLVMGetParam(fn, 3), pc = LLVMGetParam(fn, 4);
		LLVMValueRef zero = LLVMConstInt(i32, 0, 0);
		LLVMPositionBuilderAtEnd(b, entry);
		LLVMBuildBr(b, head);
		LLVMPositionBuilderAtEnd(b, head);
		LLVMValueRef k = LLVMBuildPhi(b, i32, "k"), acc = LLVMBuildPhi(b, acc_t, "acc");
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, k, LLVMConstInt(i32, K, 0), ""), loop, done);
		LLVMPositionBuilderAtEnd(b, loop);
		LLVMValueRef ai = LLVMBuildAdd(b, LLVMBuildMul(b, pi, LLVMConstInt(i32, K, 0), ""), k, "");
		LLVMValueRef bi = bt ? LLVMBuildAdd(b, LLVMBuildMul(b, pj, LLVMConstInt(i32, K, 0), ""), k, "")
				     : LLVMBuildAdd(b, LLVMBuildMul(b, k, LLVMConstInt(i32, N, 0), ""), pj, "");
		LLVMValueRef av = elem_value(c, b, ta, scratch_elem(c, b, a, ta, zero, ai));
		LLVMValueRef bv = elem_value(c, b, tb, scratch_elem(c, b, bm, tb, zero, bi));
		LLVMValueRef nacc = at.k == 'f' ? LLVMBuildFAdd(b, acc, LLVMBuildFMul(b, av, bv, ""), "")
						: LLVMBuildAdd(b, acc, LLVMBuildMul(b, av, bv, ""), "");
		LLVMValueRef nk = LLVMBuildAdd(b, k, LLVMConstInt(i32, 1, 0), "");
		LLVMBuildBr(b, head);
		LLVMValueRef kin[2] = {zero, nk}, accin[2] = {pc, nacc};
		LLVMBasicBlockRef from[2] = {entry, loop};
		LLVMAddIncoming(k, kin, from, 2);
		LLVMAddIncoming(acc, accin, from, 2);
		LLVMPositionBuilderAtEnd(b, done);
		LLVMBuildRet(b, acc);
		LLVMDisposeBuilder(b);
	}
	LLVMValueRef args[5] = {pa, pb, row, col, cval};
	return LLVMBuildCall2(B, fty, fn, args, 5, "");
}

/* ---- operands ------------------------------------------------------------------------------ */

/* lane's slot s of a fragment of S slots over E elements -> (row, col) of a matrix of `cols` */
static void slot_rc(al *c, LLVMValueRef lane, unsigned S, unsigned s, unsigned E, unsigned cols, LLVMValueRef *r,
		    LLVMValueRef *col)
{
	LLVMValueRef idx = LLVMBuildURem(B, add32(c, mul32(c, lane, S), s), u32c(c, E), "");
	*r = LLVMBuildUDiv(B, idx, u32c(c, cols), "");
	*col = LLVMBuildURem(B, idx, u32c(c, cols), "");
}

/* The warp's lane and index, from the linear thread index (as spirv/ does). */
static void lane_warp(al *c, LLVMValueRef *lane, LLVMValueRef *warp)
{
	LLVMValueRef tid = al_linear_tid(c);
	*lane = LLVMBuildAnd(B, tid, u32c(c, 31), "");
	if (warp)
		*warp = LLVMBuildLShr(B, tid, u32c(c, 5), "");
}

/* A fragment's n registers (i64 for 64-bit elements, else i32) into v, in order. */
static int read_frag(al *c, const ir_operand *regs, unsigned n, unsigned bits, LLVMValueRef *v)
{
	for (unsigned r = 0; r < n; r++)
		if (!(v[r] = al_read(c, &regs[r], bits == 64 ? AT('u', 64) : AT('u', 32))))
			return -1;
	return 0;
}

/* The final D values (accumulation type) into D's registers; f16 D: pairs rounded and packed. */
static int write_d(al *c, const ir_operand *rd, unsigned nd, enum ptx_mma_etype td, atype at, LLVMValueRef *dvals)
{
	for (unsigned r = 0; r < nd; r++) {
		if (td == PTX_MMA_F16) {
			LLVMValueRef h[2];
			for (unsigned i = 0; i < 2; i++)
				h[i] = LLVMBuildZExt(B, LLVMBuildBitCast(B, LLVMBuildFPTrunc(B, dvals[r * 2 + i], LLVMHalfTypeInContext(c->ctx), ""),
									al_ity(c, 16), ""), al_ity(c, 32), "");
			LLVMValueRef w = LLVMBuildOr(B, h[0], LLVMBuildShl(B, h[1], u32c(c, 16), ""), "");
			if (al_write(c, &rd[r], AT('u', 32), w) < 0)
				return -1;
		} else if (al_write(c, &rd[r], at, dvals[r]) < 0) {
			return -1;
		}
	}
	return 1;
}

/* C's slot (register r, half h of cper) as the accumulation type. */
static LLVMValueRef c_slot(al *c, LLVMValueRef craw, unsigned cper, unsigned h, unsigned cbits, enum ptx_mma_etype tc)
{
	if (cper > 1)
		craw = LLVMBuildAnd(B, LLVMBuildLShr(B, craw, u32c(c, h * cbits), ""), u32c(c, 0xffff), "");
	return elem_value(c, B, tc, craw);
}

/* ---- wmma ---------------------------------------------------------------------------------- */

/* wmma.load.{a,b,c} and wmma.store.d */
static int wmma_ldst(al *c, const ir_insn *in, bool store)
{
	struct ptx_mma_ldst d;
	const char *why;
	if (ptx_mma_ldst_decode(in, store, &d, &why) < 0)
		return al_unsupported(c, in, why);
	enum ptx_mma_etype t = d.t;
	bool col_major = d.col_major;
	unsigned rows = d.rows, cols = d.cols, E = rows * cols;
	if (in->nops < 2)
		return al_unsupported(c, in, "expected a fragment and an address");
	const ir_operand *fr = &in->ops[store ? 1 : 0], *addr = &in->ops[store ? 0 : 1];
	if (addr->kind != IR_OPND_ADDR)
		return al_unsupported(c, in, "expected a fragment and an address");
	unsigned nregs;
	const ir_operand *regs = ptx_mma_regs_of(fr, &nregs);
	unsigned bits = ptx_mma_etype_bits(t), per = ptx_mma_per_reg(bits);
	unsigned S = nregs * per;
	atype rt = bits == 64 ? AT('u', 64) : AT('u', 32);
	LLVMValueRef base = al_address(c, addr, space_of(in));
	if (!base)
		return -1;
	LLVMValueRef stride = in->nops > 2 ? al_read(c, &in->ops[2], AT('u', 32)) : u32c(c, col_major ? rows : cols);
	if (!stride)
		return -1;
	LLVMValueRef lane;
	lane_warp(c, &lane, NULL);
	LLVMTypeRef et = al_ity(c, bits);
	for (unsigned r = 0; r < nregs; r++) {
		LLVMValueRef word = NULL;
		if (store && !(word = al_read(c, &regs[r], rt)))
			return -1;
		for (unsigned e = 0; e < per; e++) {
			LLVMValueRef row, col;
			slot_rc(c, lane, S, r * per + e, E, cols, &row, &col);
			LLVMValueRef lin = col_major ? LLVMBuildAdd(B, LLVMBuildMul(B, col, stride, ""), row, "")
						     : LLVMBuildAdd(B, LLVMBuildMul(B, row, stride, ""), col, "");
			LLVMValueRef off = LLVMBuildMul(B, LLVMBuildZExt(B, lin, al_ity(c, 64), ""), al_ci(c, 64, bits / 8), "");
			LLVMValueRef p = LLVMBuildGEP2(B, al_ity(c, 8), base, &off, 1, "");
			if (store) {
				LLVMValueRef v = per == 1 ? word : LLVMBuildTrunc(B, LLVMBuildLShr(B, word, u32c(c, e * bits), ""), et, "");
				LLVMSetAlignment(LLVMBuildStore(B, v, p), bits / 8);
			} else {
				LLVMValueRef v = LLVMBuildLoad2(B, et, p, "");
				LLVMSetAlignment(v, bits / 8);
				if (per == 1) {
					word = v;
				} else {
					v = LLVMBuildShl(B, LLVMBuildZExt(B, v, al_ity(c, 32), ""), u32c(c, e * bits), "");
					word = e ? LLVMBuildOr(B, word, v, "") : v;
				}
			}
		}
		if (!store && al_write(c, &regs[r], rt, word) < 0)
			return -1;
	}
	return 1;
}

/* wmma.mma: d, a, b, c */
static int wmma_mma(al *c, const ir_insn *in, const struct ptx_mma_op *op)
{
	struct ptx_mma_shape sh = op->sh;
	enum ptx_mma_etype td = op->td, ta = op->ta, tb = op->tb, tc = op->tc;
	unsigned na, nb, ncr, nd;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[0], &nd), *ra = ptx_mma_regs_of(&in->ops[1], &na), *rb = ptx_mma_regs_of(&in->ops[2], &nb),
			 *rc = ptx_mma_regs_of(&in->ops[3], &ncr);
	if (na > 8 || nb > 8 || ncr > 8 || nd > 8)
		return al_unsupported(c, in, "too many fragment registers");
	unsigned abits = ptx_mma_etype_bits(ta), bbits = ptx_mma_etype_bits(tb), cbits = ptx_mma_etype_bits(tc), dbits = ptx_mma_etype_bits(td);
	unsigned wa = ptx_mma_words(sh.m, sh.k, abits), wb = ptx_mma_words(sh.k, sh.n, bbits);
	unsigned cper = ptx_mma_per_reg(cbits), dper = ptx_mma_per_reg(dbits);
	unsigned S = ncr * cper, E = sh.m * sh.n;
	if (nd * dper != S)
		return al_unsupported(c, in, "C and D fragments differ in size");
	/* read every operand before anything is written: d may be c */
	LLVMValueRef av[8], bv[8], cv[8];
	if (read_frag(c, ra, na, abits, av) < 0 || read_frag(c, rb, nb, bbits, bv) < 0 || read_frag(c, rc, ncr, cbits, cv) < 0)
		return -1;
	LLVMValueRef lane, warp;
	lane_warp(c, &lane, &warp);
	/* per warp: A, B, and two words that take the stores of the second copies */
	LLVMValueRef sp = scratch(c, wa + wb + 2);
	LLVMValueRef abase = mul32(c, warp, wa + wb + 2), bbase = add32(c, abase, wa), spare = add32(c, abase, wa + wb);
	/* the first copy of every A and B element into the warp's scratch; the other copies go to the
	 * spare words (a select, not a branch: thousands of small blocks made LLVM's -O2 take minutes
	 * on cudaTensorCoreGemm) */
	al_barrier(c);
	struct { LLVMValueRef *v; unsigned n, words, rw; LLVMValueRef base; } mats[2] = {
		{av, na, wa, abits == 64 ? 2 : 1, abase}, {bv, nb, wb, bbits == 64 ? 2 : 1, bbase}};
	for (unsigned mi = 0; mi < 2; mi++) {
		for (unsigned r = 0; r < mats[mi].n; r++) {
			/* word of lane l's register r: (l*n + r) * rw, written while below the matrix's words */
			LLVMValueRef w = mul32(c, add32(c, mul32(c, lane, mats[mi].n), r), mats[mi].rw);
			LLVMValueRef first = LLVMBuildICmp(B, LLVMIntULT, w, u32c(c, mats[mi].words), "");
			store_reg(c, sp, LLVMBuildSelect(B, first, LLVMBuildAdd(B, mats[mi].base, w, ""), spare, ""), mats[mi].v[r],
				  mats[mi].rw);
		}
	}
	al_barrier(c);
	LLVMValueRef pa = LLVMBuildAddrSpaceCast(B, word_ptr(c, B, sp, abase), al_ptr(c, AS_GENERIC), "");
	LLVMValueRef pb = LLVMBuildAddrSpaceCast(B, word_ptr(c, B, sp, bbase), al_ptr(c, AS_GENERIC), "");
	LLVMValueRef dvals[16];
	for (unsigned s = 0; s < S; s++) {
		LLVMValueRef row, col;
		slot_rc(c, lane, S, s, E, sh.n, &row, &col);
		LLVMValueRef cval = c_slot(c, cv[s / cper], cper, s % cper, cbits, tc);
		dvals[s] = emit_dot(c, ta, tb, sh.k, sh.n, false, pa, pb, row, col, cval);
	}
	al_barrier(c); /* the scratch is free again */
	return write_d(c, rd, nd, td, acc_type(ta), dvals);
}

/* ---- mma.sync and ldmatrix: the documented fragment layouts ----------------------------------- */

/* mma.sync.aligned.{m16n8k8,m16n8k16,m16n8k32,m16n8k4,m8n8k4}.row.col: with g = lane/4, t = lane%4,
 * per = elements per register: A's register r holds row g + 8*(r&1), columns t*per + (K/2)*(r>>1)
 * onwards; B's register r holds rows t*per + (K/2)*r onwards of column g; C/D's 32-bit register r
 * is (g + 8*(r>>1), 2t + (r&1)), an f16x2 one (g + 8r, 2t + h); m8n8k4 f64: A (g, t), B (t, g), C
 * (g, 2t + r). Each register is one word (two for f64) of A (row-major) or of B transposed in the
 * scratch. */
static int mma_sync(al *c, const ir_insn *in, const struct ptx_mma_op *op)
{
	struct ptx_mma_shape sh = op->sh;
	enum ptx_mma_etype td = op->td, ta = op->ta, tb = op->tb, tc = op->tc;
	bool f64 = ta == PTX_MMA_F64;
	unsigned na, nb, ncr, nd;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[0], &nd), *ra = ptx_mma_regs_of(&in->ops[1], &na), *rb = ptx_mma_regs_of(&in->ops[2], &nb),
			 *rc = ptx_mma_regs_of(&in->ops[3], &ncr);
	unsigned bits = ptx_mma_etype_bits(ta), per = ptx_mma_per_reg(bits), rw = bits == 64 ? 2 : 1;
	unsigned wa = ptx_mma_words(sh.m, sh.k, bits), wb = ptx_mma_words(sh.k, sh.n, bits);
	if (na > 8 || nb > 8 || ncr > 8 || nd > 8)
		return al_unsupported(c, in, "too many fragment registers");
	unsigned cbits = ptx_mma_etype_bits(tc), cper = ptx_mma_per_reg(cbits), S = ncr * cper;
	unsigned dbits = ptx_mma_etype_bits(td), dper = ptx_mma_per_reg(dbits);
	if (nd * dper != S || S > 8)
		return al_unsupported(c, in, "C and D fragments differ in size");
	LLVMValueRef av[8], bv[8], cv[8];
	if (read_frag(c, ra, na, bits, av) < 0 || read_frag(c, rb, nb, bits, bv) < 0 || read_frag(c, rc, ncr, cbits, cv) < 0)
		return -1;
	LLVMValueRef lane, warp;
	lane_warp(c, &lane, &warp);
	LLVMValueRef g = LLVMBuildLShr(B, lane, u32c(c, 2), ""), t = LLVMBuildAnd(B, lane, u32c(c, 3), "");
	LLVMValueRef sp = scratch(c, wa + wb);
	LLVMValueRef abase = mul32(c, warp, wa + wb), bbase = add32(c, abase, wa);
	al_barrier(c);
	unsigned K2 = sh.k / 2;
	for (unsigned m = 0; m < 2; m++) {
		unsigned n = m ? nb : na;
		for (unsigned r = 0; r < n; r++) {
			/* the register's first element: A (row, col) -> row*K + col; B^T (g, k) -> g*K + k */
			LLVMValueRef idx;
			if (f64) {
				idx = LLVMBuildAdd(B, mul32(c, g, sh.k), t, "");
			} else if (!m) {
				LLVMValueRef row = add32(c, g, 8 * (r & 1));
				LLVMValueRef col = add32(c, mul32(c, t, per), K2 * (r >> 1));
				idx = LLVMBuildAdd(B, mul32(c, row, sh.k), col, "");
			} else {
				LLVMValueRef k = add32(c, mul32(c, t, per), K2 * r);
				idx = LLVMBuildAdd(B, mul32(c, g, sh.k), k, "");
			}
			LLVMValueRef w = LLVMBuildAdd(B, m ? bbase : abase,
						      rw == 2 ? mul32(c, idx, 2) : LLVMBuildUDiv(B, idx, u32c(c, per), ""), "");
			store_reg(c, sp, w, m ? bv[r] : av[r], rw);
		}
	}
	al_barrier(c);
	LLVMValueRef pa = LLVMBuildAddrSpaceCast(B, word_ptr(c, B, sp, abase), al_ptr(c, AS_GENERIC), "");
	LLVMValueRef pb = LLVMBuildAddrSpaceCast(B, word_ptr(c, B, sp, bbase), al_ptr(c, AS_GENERIC), "");
	LLVMValueRef dvals[8];
	for (unsigned s = 0; s < S; s++) {
		unsigned r = s / cper, h = s % cper;
		LLVMValueRef row, col;
		if (f64) {
			row = g;
			col = add32(c, mul32(c, t, 2), r);
		} else if (cper == 2) {
			row = add32(c, g, 8 * r);
			col = add32(c, mul32(c, t, 2), h);
		} else {
			row = add32(c, g, 8 * (r >> 1));
			col = add32(c, mul32(c, t, 2), r & 1);
		}
		LLVMValueRef cval = c_slot(c, cv[r], cper, h, cbits, tc);
		dvals[s] = emit_dot(c, ta, tb, sh.k, sh.n, true, pa, pb, row, col, cval);
	}
	/* no barrier after (as spirv/'s): the next instruction to write the scratch begins with one */
	return write_d(c, rd, nd, td, acc_type(ta), dvals);
}

/* ldmatrix/stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16: lanes 8i..8i+7 give the row
 * addresses of matrix i; lane l's register i is matrix i's (l/4, 2(l%4)) and (l/4, 2(l%4)+1), or
 * with .trans (2(l%4), l/4) and (2(l%4)+1, l/4). The row addresses go through the warp's scratch
 * (64 bits each). */
static int ldmatrix(al *c, const ir_insn *in, bool store)
{
	struct ptx_mma_ldmatrix d;
	const char *why;
	if (ptx_mma_ldmatrix_decode(in, store, &d, &why) < 0)
		return al_unsupported(c, in, why);
	unsigned n = d.n, ai = d.ai;
	bool trans = d.trans;
	unsigned nr;
	const ir_operand *rd = ptx_mma_regs_of(&in->ops[store ? 1 : 0], &nr);
	if (nr != n)
		return al_unsupported(c, in, "register count differs from .x1/.x2/.x4");
	LLVMValueRef vals[4];
	for (unsigned i = 0; store && i < nr; i++)
		if (!(vals[i] = al_read(c, &rd[i], AT('b', 32))))
			return -1;
	enum ir_space spc = space_of(in);
	int as = al_space_as(spc);
	LLVMValueRef p = al_address(c, &in->ops[ai], spc);
	if (!p)
		return -1;
	LLVMValueRef addr = LLVMBuildPtrToInt(B, p, al_ity(c, 64), "");
	LLVMValueRef lane, warp;
	lane_warp(c, &lane, &warp);
	LLVMValueRef sp = scratch(c, 64);
	LLVMValueRef base = mul32(c, warp, 64);
	al_barrier(c);
	store_reg(c, sp, LLVMBuildAdd(B, base, mul32(c, lane, 2), ""), addr, 2);
	al_barrier(c);
	LLVMValueRef q = LLVMBuildLShr(B, lane, u32c(c, 2), ""), t2 = mul32(c, LLVMBuildAnd(B, lane, u32c(c, 3), ""), 2);
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef half[2];
		for (unsigned h = 0; h < 2; h++) {
			LLVMValueRef row = trans ? add32(c, t2, h) : q;
			LLVMValueRef col = trans ? q : add32(c, t2, h);
			LLVMValueRef at = scratch_elem(c, B, sp, PTX_MMA_F64, base, add32(c, row, 8 * i));
			LLVMValueRef ea = LLVMBuildAdd(B, at, LLVMBuildZExt(B, mul32(c, col, 2), al_ity(c, 64), ""), "");
			LLVMValueRef ep = al_to_ptr(c, ea, as);
			if (store) {
				LLVMValueRef v = LLVMBuildTrunc(B, LLVMBuildLShr(B, vals[i], u32c(c, 16 * h), ""), al_ity(c, 16), "");
				LLVMSetAlignment(LLVMBuildStore(B, v, ep), 2);
			} else {
				LLVMValueRef v = LLVMBuildLoad2(B, al_ity(c, 16), ep, "");
				LLVMSetAlignment(v, 2);
				half[h] = LLVMBuildZExt(B, v, al_ity(c, 32), "");
			}
		}
		if (store)
			continue;
		LLVMValueRef v = LLVMBuildOr(B, half[0], LLVMBuildShl(B, half[1], u32c(c, 16), ""), "");
		if (al_write(c, &rd[i], AT('b', 32), v) < 0)
			return -1;
	}
	if (store)
		al_barrier(c); /* the stores are seen by the warp's lanes after it, as after stmatrix's sync */
	return 1;
}

int al_mma(al *c, const ir_insn *in)
{
	enum ptx_mma_kind kind = ptx_mma_kind_of(in);
	if (kind >= PTX_MMA_WMMA_LOAD && (al_mod(in, ".s4") || al_mod(in, ".u4") || al_mod(in, ".b1")))
		return al_unsupported(c, in, "sub-byte (s4, u4, b1) fragments are not emulated");
	switch (kind) {
	case PTX_MMA_LDMATRIX: return ldmatrix(c, in, false);
	case PTX_MMA_STMATRIX: return ldmatrix(c, in, true);
	case PTX_MMA_WMMA_LOAD: return wmma_ldst(c, in, false);
	case PTX_MMA_WMMA_STORE: return wmma_ldst(c, in, true);
	case PTX_MMA_WMMA_MMA:
		if (al_mod(in, ".satfinite"))
			return al_unsupported(c, in, ".satfinite is not emulated");
		/* fall through */
	case PTX_MMA_SYNC: {
		struct ptx_mma_op op;
		const char *why;
		if (ptx_mma_op_decode(in, kind, &op, &why) < 0)
			return al_unsupported(c, in, why);
		return kind == PTX_MMA_SYNC ? mma_sync(c, in, &op) : wmma_mma(c, in, &op);
	}
	default: return 0;
	}
}
