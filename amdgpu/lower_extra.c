/* The rest: bf16, tf32 and fp8 (e4m3x2, e5m2x2) conversions on the bits (rounding to nearest even, .rna away from
 * zero, .rz toward zero; NaN gives the format's canonical NaN), dp4a/dp2a, f16x2 comparisons,
 * cp.async as an ordinary copy (zero fill past src-size; its groups then wait for nothing), and
 * alloca/stacksave/stackrestore as LLVM's dynamic allocas (nvptx) or a private arena (amdgcn). */
#include "amdgpu/lower.h"

#include <math.h>
#include <string.h>

#define B (c->b)

/* f32 bits x rounded to its top (32 - drop) bits, shifted down by drop. */
static LLVMValueRef round_bits(al *c, LLVMValueRef x, unsigned drop, char mode)
{
	LLVMValueRef add;
	if (mode == 'z')
		add = al_ci(c, 32, 0);
	else if (mode == 'a')
		add = al_ci(c, 32, 1u << (drop - 1));
	else
		add = LLVMBuildAdd(B, al_ci(c, 32, (1u << (drop - 1)) - 1),
				   LLVMBuildAnd(B, LLVMBuildLShr(B, x, al_ci(c, 32, drop), ""), al_ci(c, 32, 1), ""), "");
	return LLVMBuildLShr(B, LLVMBuildAdd(B, x, add, ""), al_ci(c, 32, drop), "");
}

static LLVMValueRef f32_narrow(al *c, const ir_insn *in, LLVMValueRef f, unsigned drop)
{
	char mode = al_mod(in, ".rna") ? 'a' : al_mod(in, ".rz") ? 'z' : 'n';
	LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx);
	if (al_mod(in, ".relu"))
		f = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, f, LLVMConstReal(f32, 0), ""), LLVMConstReal(f32, 0), f, "");
	LLVMValueRef x = LLVMBuildBitCast(B, f, al_ity(c, 32), "");
	LLVMValueRef sign = LLVMBuildAnd(B, x, al_ci(c, 32, 0x80000000u), "");
	LLVMValueRef mag = LLVMBuildAnd(B, x, al_ci(c, 32, 0x7fffffffu), "");
	LLVMValueRef r = round_bits(c, mag, drop, mode);
	if (al_mod(in, ".satfinite"))
		r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGE, r, al_ci(c, 32, 0x7f800000u >> drop), ""),
				    al_ci(c, 32, (0x7f800000u >> drop) - 1), r, "");
	r = LLVMBuildOr(B, r, LLVMBuildLShr(B, sign, al_ci(c, 32, drop), ""), "");
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, f, f, ""), al_ci(c, 32, 0x7fffffffu >> drop), r, "");
}

/* ---- fp8 (e4m3, e5m2), on the bits as spirv/ converts them ---------------------------------- */

struct fp8 {
	unsigned m, bias;
	uint32_t maxcode, nan;   /* largest finite code (no sign), canonical NaN */
};
static const struct fp8 E4M3 = {3, 7, 0x7e, 0x7f}, E5M2 = {2, 15, 0x7b, 0x7f};

static LLVMValueRef f32_const(al *c, float v) { return LLVMConstReal(LLVMFloatTypeInContext(c->ctx), v); }

static LLVMValueRef relu(al *c, LLVMValueRef f)
{
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, f, f32_const(c, 0), ""), f32_const(c, 0), f, "");
}

/* f32 -> fp8 code (an i32 of 8 bits): to nearest even, saturating to the largest finite value
 * (infinity included), NaN to the canonical NaN. */
static LLVMValueRef f32_to_fp8(al *c, LLVMValueRef f, const struct fp8 *F, bool rl)
{
	LLVMTypeRef i32 = al_ity(c, 32), f32 = LLVMFloatTypeInContext(c->ctx);
	if (rl)
		f = relu(c, f);
	LLVMValueRef x = LLVMBuildBitCast(B, f, i32, "");
	LLVMValueRef sign = LLVMBuildLShr(B, LLVMBuildAnd(B, x, al_ci(c, 32, 0x80000000u), ""), al_ci(c, 32, 24), "");
	LLVMValueRef mag = LLVMBuildAnd(B, x, al_ci(c, 32, 0x7fffffffu), "");
	LLVMValueRef a = LLVMBuildBitCast(B, mag, f32, "");
	/* normal: the f32 mantissa rounded to m bits, the exponent rebiased */
	LLVMValueRef normal = LLVMBuildSub(B, round_bits(c, mag, 23 - F->m, 'n'), al_ci(c, 32, (127u - F->bias) << F->m), "");
	/* below the smallest normal 2^(1-bias): rint(a * 2^(bias-1+m)), which reaches 2^m exactly where
	 * it rounds up into the smallest normal's code */
	LLVMValueRef q = LLVMBuildFMul(B, a, f32_const(c, ldexpf(1.0f, (int)(F->bias - 1 + F->m))), "");
	q = al_intr(c, "llvm.rint", &f32, 1, 1, &q);
	LLVMValueRef sub = LLVMBuildFPToUI(B, q, i32, "");
	LLVMValueRef code = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntULT, mag, al_ci(c, 32, (127u + 1u - F->bias) << 23), ""), sub, normal, "");
	LLVMValueRef maxc = al_ci(c, 32, F->maxcode);
	code = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, code, maxc, ""), maxc, code, "");
	code = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGE, mag, al_ci(c, 32, 0x7f800000u), ""), maxc, code, "");
	code = LLVMBuildOr(B, code, sign, "");
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, f, f, ""), al_ci(c, 32, F->nan), code, "");
}

/* fp8 code (an i32 of 8 bits) -> f16 bits (i16), exactly (f16 holds every fp8 value); NaN: 0x7fff. */
static LLVMValueRef fp8_to_f16(al *c, LLVMValueRef code, const struct fp8 *F, bool e4m3, bool rl)
{
	LLVMTypeRef i32 = al_ity(c, 32), f32 = LLVMFloatTypeInContext(c->ctx);
	unsigned ebits = 7 - F->m;
	LLVMValueRef sign = LLVMBuildShl(B, LLVMBuildAnd(B, code, al_ci(c, 32, 0x80), ""), al_ci(c, 32, 24), "");
	LLVMValueRef ex = LLVMBuildAnd(B, LLVMBuildLShr(B, code, al_ci(c, 32, F->m), ""), al_ci(c, 32, (1u << ebits) - 1), "");
	LLVMValueRef man = LLVMBuildAnd(B, code, al_ci(c, 32, (1u << F->m) - 1), "");
	LLVMValueRef normal = LLVMBuildOr(B, LLVMBuildShl(B, LLVMBuildAdd(B, ex, al_ci(c, 32, 127 - F->bias), ""), al_ci(c, 32, 23), ""),
					  LLVMBuildShl(B, man, al_ci(c, 32, 23 - F->m), ""), "");
	LLVMValueRef sub = LLVMBuildBitCast(B, LLVMBuildFMul(B, LLVMBuildUIToFP(B, man, f32, ""),
							     f32_const(c, ldexpf(1.0f, -(int)(F->bias - 1 + F->m))), ""), i32, "");
	LLVMValueRef mag = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, ex, al_ci(c, 32, 0), ""), sub, normal, "");
	LLVMValueRef top = al_ci(c, 32, (1u << ebits) - 1);
	LLVMValueRef exmax = LLVMBuildICmp(B, LLVMIntEQ, ex, top, "");
	LLVMValueRef nan, inf = al_ci(c, 1, 0);
	if (e4m3)   /* S.1111.111 is NaN; there is no infinity */
		nan = LLVMBuildAnd(B, exmax, LLVMBuildICmp(B, LLVMIntEQ, man, al_ci(c, 32, 7), ""), "");
	else {      /* exponent all ones: infinity or NaN, as in f16 */
		LLVMValueRef mz = LLVMBuildICmp(B, LLVMIntEQ, man, al_ci(c, 32, 0), "");
		nan = LLVMBuildAnd(B, exmax, LLVMBuildNot(B, mz, ""), "");
		inf = LLVMBuildAnd(B, exmax, mz, "");
	}
	mag = LLVMBuildSelect(B, inf, al_ci(c, 32, 0x7f800000u), mag, "");
	LLVMValueRef f = LLVMBuildBitCast(B, LLVMBuildOr(B, mag, sign, ""), f32, "");
	if (rl)
		f = relu(c, f);
	LLVMValueRef h = LLVMBuildBitCast(B, LLVMBuildFPTrunc(B, f, LLVMHalfTypeInContext(c->ctx), ""), al_ity(c, 16), "");
	return LLVMBuildSelect(B, nan, al_ci(c, 16, 0x7fff), h, "");
}

/* cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b (a in the high byte) and
 * cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a (the low byte to the low half). */
static int fp8_cvt(al *c, const ir_insn *in)
{
	bool e4 = al_mod(in, ".e4m3x2");
	const struct fp8 *F = e4 ? &E4M3 : &E5M2;
	bool rl = al_mod(in, ".relu");
	const char *last = in->mods[in->nmods - 1];
	if (!strcmp(last, ".f32") && in->nops == 3) {
		if (!al_mod(in, ".satfinite"))
			return al_unsupported(c, in, "fp8 conversions need .satfinite");
		LLVMValueRef a = al_read(c, &in->ops[1], AT('f', 32)), b = a ? al_read(c, &in->ops[2], AT('f', 32)) : NULL;
		if (!b)
			return -1;
		LLVMValueRef r = LLVMBuildOr(B, LLVMBuildShl(B, f32_to_fp8(c, a, F, rl), al_ci(c, 32, 8), ""), f32_to_fp8(c, b, F, rl), "");
		return al_write(c, &in->ops[0], AT('b', 16), LLVMBuildTrunc(B, r, al_ity(c, 16), "")) < 0 ? -1 : 1;
	}
	if (al_mod(in, ".f16x2") && strcmp(last, ".f16x2") && in->nops == 2) {
		LLVMValueRef a = al_read(c, &in->ops[1], AT('b', 16));
		if (!a)
			return -1;
		a = LLVMBuildZExt(B, a, al_ity(c, 32), "");
		LLVMValueRef lo = fp8_to_f16(c, LLVMBuildAnd(B, a, al_ci(c, 32, 0xff), ""), F, e4, rl);
		LLVMValueRef hi = fp8_to_f16(c, LLVMBuildLShr(B, a, al_ci(c, 32, 8), ""), F, e4, rl);
		LLVMValueRef r = LLVMBuildOr(B, LLVMBuildZExt(B, lo, al_ity(c, 32), ""),
					     LLVMBuildShl(B, LLVMBuildZExt(B, hi, al_ity(c, 32), ""), al_ci(c, 32, 16), ""), "");
		return al_write(c, &in->ops[0], AT('b', 32), r) < 0 ? -1 : 1;
	}
	return al_unsupported(c, in, "this fp8 conversion is not lowered");
}

static int narrow_cvt(al *c, const ir_insn *in)
{
	atype f32t = AT('f', 32);
	if (in->nmods && (al_mod(in, ".e4m3x2") || al_mod(in, ".e5m2x2")))
		return fp8_cvt(c, in);
	bool bf = al_mod(in, ".bf16") || al_mod(in, ".bf16x2"), tf = al_mod(in, ".tf32");
	if (!bf && !tf)
		return 0;
	if (al_mod(in, ".f32") && in->nmods && !strcmp(in->mods[in->nmods - 1], ".bf16")) {   /* cvt.f32.bf16 */
		LLVMValueRef h = al_read(c, &in->ops[1], AT('b', 16));
		if (!h)
			return -1;
		LLVMValueRef w = LLVMBuildShl(B, LLVMBuildZExt(B, h, al_ity(c, 32), ""), al_ci(c, 32, 16), "");
		return al_write(c, &in->ops[0], AT('b', 32), w) < 0 ? -1 : 1;
	}
	if (!al_mod(in, ".f32") || strcmp(in->mods[in->nmods - 1], ".f32"))
		return al_unsupported(c, in, "this conversion is not lowered");
	LLVMValueRef a = al_read(c, &in->ops[1], f32t);
	if (!a)
		return -1;
	if (tf)
		return al_write(c, &in->ops[0], AT('b', 32), LLVMBuildShl(B, f32_narrow(c, in, a, 13), al_ci(c, 32, 13), "")) < 0 ? -1 : 1;
	if (al_mod(in, ".bf16x2")) {
		LLVMValueRef b = al_read(c, &in->ops[2], f32t);
		if (!b)
			return -1;
		LLVMValueRef hi = f32_narrow(c, in, a, 16), lo = f32_narrow(c, in, b, 16);
		return al_write(c, &in->ops[0], AT('b', 32), LLVMBuildOr(B, LLVMBuildShl(B, hi, al_ci(c, 32, 16), ""), lo, "")) < 0 ? -1 : 1;
	}
	return al_write(c, &in->ops[0], AT('b', 16), LLVMBuildTrunc(B, f32_narrow(c, in, a, 16), al_ity(c, 16), "")) < 0 ? -1 : 1;
}

static int dp(al *c, const ir_insn *in, bool four)
{
	atype at = al_insn_type_n(in, 0), bt = al_insn_type_n(in, 1);
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', 32)), b = al_read(c, &in->ops[2], AT('b', 32));
	LLVMValueRef r = al_read(c, &in->ops[3], AT('b', 32));
	if (!a || !b || !r)
		return -1;
	unsigned aw = four ? 8 : 16, n = four ? 4 : 2, boff = four || !al_mod(in, ".hi") ? 0 : 2;
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef x = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, al_ci(c, 32, i * aw), ""), al_ity(c, aw), "");
		LLVMValueRef y = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, al_ci(c, 32, (i + boff) * 8), ""), al_ity(c, 8), "");
		x = at.k == 's' ? LLVMBuildSExt(B, x, al_ity(c, 32), "") : LLVMBuildZExt(B, x, al_ity(c, 32), "");
		y = bt.k == 's' ? LLVMBuildSExt(B, y, al_ity(c, 32), "") : LLVMBuildZExt(B, y, al_ity(c, 32), "");
		r = LLVMBuildAdd(B, r, LLVMBuildMul(B, x, y, ""), "");
	}
	return al_write(c, &in->ops[0], AT('b', 32), r) < 0 ? -1 : 1;
}

/* setp.CMP.f16x2 p|q, a, b / set.CMP.f16x2.f16x2 d, a, b: the two halves compared apart. */
static int f16x2_compare(al *c, const ir_insn *in, bool set)
{
	static const struct { const char *m; LLVMRealPredicate p; } tab[] = {
		{".eq", LLVMRealOEQ}, {".ne", LLVMRealONE}, {".lt", LLVMRealOLT}, {".le", LLVMRealOLE},
		{".gt", LLVMRealOGT}, {".ge", LLVMRealOGE}, {".equ", LLVMRealUEQ}, {".neu", LLVMRealUNE},
		{".ltu", LLVMRealULT}, {".leu", LLVMRealULE}, {".gtu", LLVMRealUGT}, {".geu", LLVMRealUGE},
		{".num", LLVMRealORD}, {".nan", LLVMRealUNO},
	};
	LLVMRealPredicate pr = 0;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (al_mod(in, tab[i].m))
			pr = tab[i].p;
	if (!pr || al_mod(in, ".and") || al_mod(in, ".or") || al_mod(in, ".xor"))
		return al_unsupported(c, in, "this comparison is not lowered");
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', 32)), b = al_read(c, &in->ops[2], AT('b', 32));
	if (!a || !b)
		return -1;
	LLVMTypeRef h = LLVMHalfTypeInContext(c->ctx);
	LLVMValueRef r[2];
	for (unsigned i = 0; i < 2; i++) {
		LLVMValueRef x = LLVMBuildBitCast(B, LLVMBuildTrunc(B, LLVMBuildLShr(B, a, al_ci(c, 32, 16 * i), ""), al_ity(c, 16), ""), h, "");
		LLVMValueRef y = LLVMBuildBitCast(B, LLVMBuildTrunc(B, LLVMBuildLShr(B, b, al_ci(c, 32, 16 * i), ""), al_ity(c, 16), ""), h, "");
		r[i] = LLVMBuildFCmp(B, pr, x, y, "");
	}
	const ir_operand *d = &in->ops[0];
	if (set) {
		bool half = false;   /* the destination type (the first of .f16x2/.u32/.s32) */
		for (unsigned i = 0; i < in->nmods; i++)
			if (!strcmp(in->mods[i], ".f16x2") || !strcmp(in->mods[i], ".u32") || !strcmp(in->mods[i], ".s32")) {
				half = !strcmp(in->mods[i], ".f16x2");
				break;
			}
		LLVMValueRef one = al_ci(c, 32, half ? 0x3c00 : 0xffff), v = al_ci(c, 32, 0);
		for (unsigned i = 0; i < 2; i++)
			v = LLVMBuildOr(B, v, LLVMBuildShl(B, LLVMBuildSelect(B, r[i], one, al_ci(c, 32, 0), ""), al_ci(c, 32, 16 * i), ""), "");
		return al_write(c, d, AT('b', 32), v) < 0 ? -1 : 1;
	}
	if (d->kind != IR_OPND_PAIR || d->nelems != 2)
		return al_unsupported(c, in, "needs two predicates (p|q)");
	if (al_write(c, &d->elems[0], AT('p', 1), r[0]) < 0 || al_write(c, &d->elems[1], AT('p', 1), r[1]) < 0)
		return -1;
	return 1;
}

/* cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size}: copied at once. */
static int cp_async(al *c, const ir_insn *in)
{
	if (in->nops < 3 || in->ops[2].kind != IR_OPND_INT)
		return al_unsupported(c, in, "a copy size that is not an immediate");
	if (al_mod(in, ".bulk") || (in->nmods && strstr(in->mods[0], "bulk")))
		return al_unsupported(c, in, "bulk copies are not lowered");
	unsigned size = (unsigned)in->ops[2].ival;
	LLVMValueRef dst = al_address(c, &in->ops[0], IR_SPACE_SHARED), src = al_address(c, &in->ops[1], IR_SPACE_GLOBAL);
	if (!dst || !src)
		return -1;
	LLVMValueRef srcsize = NULL;
	if (in->nops > 3 && in->ops[3].kind != IR_OPND_ADDR) {
		struct al_var *v = in->ops[3].kind == IR_OPND_REG ? al_lookup(c, in->ops[3].name) : NULL;
		if (v && v->is_reg && v->t.k == 'p') {   /* ignore-src: the bytes are all zeros */
			LLVMValueRef p = al_read_pred(c, &in->ops[3]);
			if (!p)
				return -1;
			srcsize = LLVMBuildSelect(B, p, al_ci(c, 32, 0), al_ci(c, 32, size), "");
		} else if (!(v && v->is_reg && v->t.bits == 64)) {   /* a 64-bit operand is a cache policy */
			srcsize = al_read(c, &in->ops[3], AT('u', 32));
			if (!srcsize)
				return -1;
		}
	}
	LLVMTypeRef i8 = al_ity(c, 8);
	for (unsigned k = 0; k < size; k++) {
		LLVMValueRef o = al_ci(c, 64, k);
		LLVMValueRef sp = LLVMBuildGEP2(B, i8, src, &o, 1, ""), dp = LLVMBuildGEP2(B, i8, dst, &o, 1, "");
		LLVMValueRef v;
		if (srcsize) {   /* bytes past src-size read as zero (and are not read) */
			LLVMValueRef in_range = LLVMBuildICmp(B, LLVMIntULT, al_ci(c, 32, k), srcsize, "");
			LLVMBasicBlockRef rd = al_new_block(c, "cp.rd"), join = al_new_block(c, "cp.join");
			LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
			LLVMBuildCondBr(B, in_range, rd, join);
			LLVMPositionBuilderAtEnd(B, rd);
			LLVMValueRef lv = LLVMBuildLoad2(B, i8, sp, "");
			LLVMBuildBr(B, join);
			LLVMPositionBuilderAtEnd(B, join);
			v = LLVMBuildPhi(B, i8, "");
			LLVMValueRef vals[2] = {LLVMConstInt(i8, 0, 0), lv};
			LLVMBasicBlockRef bbs[2] = {from, rd};
			LLVMAddIncoming(v, vals, bbs, 2);
		} else {
			v = LLVMBuildLoad2(B, i8, sp, "");
		}
		LLVMBuildStore(B, v, dp);
	}
	return 1;
}

/* alloca/stacksave/stackrestore on amdgcn (LLVM 19's AMDGPU backend has no dynamic stack
 * allocation), as spirv/ does for OpenCL: a private arena of ARENA_BYTES per thread and function
 * with a bump offset; stacksave is the arena's top as a local address, stackrestore sets it back.
 * An allocation that does not fit yields address 0 (using it faults instead of overwriting). */
#define ARENA_BYTES 4096
static int arena(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	LLVMTypeRef i64 = al_ity(c, 64);
	if (!c->arena) {
		LLVMTypeRef at = LLVMArrayType2(al_ity(c, 8), ARENA_BYTES);
		c->arena = LLVMBuildAlloca(c->ab, at, "alloca.arena");
		LLVMSetAlignment(c->arena, 16);
		c->arena_top = LLVMBuildAlloca(c->ab, i64, "alloca.top");
		LLVMBuildStore(c->ab, al_ci(c, 64, 0), c->arena_top);
	}
	LLVMValueRef base = c->arena;
	if (LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != AS_LOCAL)
		base = LLVMBuildAddrSpaceCast(B, base, al_ptr(c, AS_LOCAL), "");
	base = LLVMBuildPtrToInt(B, base, i64, "");
	if (!strcmp(op, "stacksave")) {
		if (in->nops != 1)
			return al_unsupported(c, in, "stacksave needs a destination");
		LLVMValueRef top = LLVMBuildLoad2(B, i64, c->arena_top, "");
		return al_write(c, &in->ops[0], AT('u', 64), LLVMBuildAdd(B, base, top, "")) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "stackrestore")) {
		if (in->nops != 1)
			return al_unsupported(c, in, "stackrestore needs an address");
		LLVMValueRef a = al_read(c, &in->ops[0], AT('u', 64));
		if (!a)
			return -1;
		LLVMBuildStore(B, LLVMBuildSub(B, a, base, ""), c->arena_top);
		return 1;
	}
	if (in->nops < 2)
		return al_unsupported(c, in, "alloca needs a destination and a size");
	LLVMValueRef n = al_read(c, &in->ops[1], AT('u', 64));
	if (!n)
		return -1;
	uint64_t align = in->nops > 2 && in->ops[2].kind == IR_OPND_INT && in->ops[2].ival > 0 ? (uint64_t)in->ops[2].ival : 8;
	LLVMValueRef top = LLVMBuildLoad2(B, i64, c->arena_top, "");
	LLVMValueRef at = LLVMBuildAnd(B, LLVMBuildAdd(B, top, al_ci(c, 64, align - 1), ""), al_ci(c, 64, ~(align - 1)), "");
	LLVMValueRef end = LLVMBuildAdd(B, at, n, "");
	LLVMValueRef fits = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntULE, end, al_ci(c, 64, ARENA_BYTES), ""),
					 LLVMBuildICmp(B, LLVMIntULE, n, al_ci(c, 64, ARENA_BYTES), ""), "");
	LLVMBuildStore(B, LLVMBuildSelect(B, fits, end, top, ""), c->arena_top);
	LLVMValueRef r = LLVMBuildSelect(B, fits, LLVMBuildAdd(B, base, at, ""), al_ci(c, 64, 0), "");
	return al_write(c, &in->ops[0], AT('u', 64), r) < 0 ? -1 : 1;
}

static int stack(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	int as = c->target == AMDGPU_TARGET_AMDGCN ? AS_LOCAL : AS_GENERIC;
	LLVMTypeRef pt = al_ptr(c, as);
	if (c->target == AMDGPU_TARGET_AMDGCN || al_generic())
		return arena(c, in);
	if (!strcmp(op, "stacksave")) {
		LLVMValueRef p = al_intr(c, "llvm.stacksave", &pt, 1, 0, NULL);
		if (!p)
			return -1;
		return al_write(c, &in->ops[0], AT('u', 64), LLVMBuildPtrToInt(B, p, al_ity(c, 64), "")) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "stackrestore")) {
		LLVMValueRef a = al_read(c, &in->ops[0], AT('u', 64));
		if (!a)
			return -1;
		LLVMValueRef p = LLVMBuildIntToPtr(B, a, pt, "");
		return al_intr(c, "llvm.stackrestore", &pt, 1, 1, &p) ? 1 : -1;
	}
	/* alloca.u64 d, size{, align}: a local-space address */
	LLVMValueRef n = al_read(c, &in->ops[1], AT('u', 64));
	if (!n)
		return -1;
	LLVMValueRef p = LLVMBuildArrayAlloca(B, al_ity(c, 8), n, "");
	LLVMSetAlignment(p, in->nops > 2 && in->ops[2].kind == IR_OPND_INT ? (unsigned)in->ops[2].ival : 8);
	if (as != AS_LOCAL)
		p = LLVMBuildAddrSpaceCast(B, p, al_ptr(c, AS_LOCAL), "");
	return al_write(c, &in->ops[0], AT('u', 64), LLVMBuildPtrToInt(B, p, al_ity(c, 64), "")) < 0 ? -1 : 1;
}

/* fns.b32 d, mask, base, offset: the offset-th set bit of mask at or above base (offset > 0), at
 * or below it (offset < 0), base itself if set (offset 0); 0xffffffff when there is none. */
static int fns(al *c, const ir_insn *in)
{
	LLVMValueRef mask = al_read(c, &in->ops[1], AT('b', 32)), base = al_read(c, &in->ops[2], AT('u', 32));
	LLVMValueRef off = al_read(c, &in->ops[3], AT('s', 32));
	if (!mask || !base || !off)
		return -1;
	LLVMTypeRef i32 = al_ity(c, 32);
	LLVMValueRef bs = LLVMBuildAnd(B, base, al_ci(c, 32, 31), "");
	LLVMValueRef up = LLVMBuildICmp(B, LLVMIntSGT, off, al_ci(c, 32, 0), "");
	LLVMValueRef upmask = LLVMBuildShl(B, LLVMConstAllOnes(i32), bs, "");
	LLVMValueRef downmask = LLVMBuildLShr(B, LLVMConstAllOnes(i32), LLVMBuildSub(B, al_ci(c, 32, 31), bs, ""), "");
	LLVMValueRef m0 = LLVMBuildAnd(B, mask, LLVMBuildSelect(B, up, upmask, downmask, ""), "");
	LLVMValueRef k0 = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, off, al_ci(c, 32, 0), ""), LLVMBuildNeg(B, off, ""), off, "");
	LLVMValueRef ms = LLVMBuildAlloca(c->ab, i32, "fns.m"), ks = LLVMBuildAlloca(c->ab, i32, "fns.k");
	LLVMBuildStore(B, m0, ms);
	LLVMBuildStore(B, k0, ks);
	LLVMBasicBlockRef head = al_new_block(c, "fns.head"), step = al_new_block(c, "fns.step"), done = al_new_block(c, "fns.done");
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, head);
	LLVMValueRef m = LLVMBuildLoad2(B, i32, ms, ""), k = LLVMBuildLoad2(B, i32, ks, "");
	LLVMValueRef more = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntUGT, k, al_ci(c, 32, 1), ""),
					 LLVMBuildICmp(B, LLVMIntNE, m, al_ci(c, 32, 0), ""), "");
	LLVMBuildCondBr(B, more, step, done);
	LLVMPositionBuilderAtEnd(B, step);
	LLVMValueRef zf[2] = {m, al_ci(c, 1, 0)};
	LLVMValueRef top = LLVMBuildSub(B, al_ci(c, 32, 31), al_intr(c, "llvm.ctlz", &i32, 1, 2, zf), "");
	LLVMValueRef next = LLVMBuildSelect(B, up, LLVMBuildAnd(B, m, LLVMBuildSub(B, m, al_ci(c, 32, 1), ""), ""),
					    LLVMBuildAnd(B, m, LLVMBuildNot(B, LLVMBuildShl(B, al_ci(c, 32, 1), top, ""), ""), ""), "");
	LLVMBuildStore(B, next, ms);
	LLVMBuildStore(B, LLVMBuildSub(B, k, al_ci(c, 32, 1), ""), ks);
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, done);
	m = LLVMBuildLoad2(B, i32, ms, "");
	LLVMValueRef lo = al_intr(c, "llvm.cttz", &i32, 1, 2, (LLVMValueRef[]){m, al_ci(c, 1, 0)});
	LLVMValueRef hi = LLVMBuildSub(B, al_ci(c, 32, 31), al_intr(c, "llvm.ctlz", &i32, 1, 2, (LLVMValueRef[]){m, al_ci(c, 1, 0)}), "");
	LLVMValueRef r = LLVMBuildSelect(B, up, lo, hi, "");
	r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, m, al_ci(c, 32, 0), ""), LLVMConstAllOnes(i32), r, "");
	/* offset 0: base itself when set */
	LLVMValueRef set = LLVMBuildTrunc(B, LLVMBuildLShr(B, mask, bs, ""), al_ity(c, 1), "");
	LLVMValueRef r0 = LLVMBuildSelect(B, set, bs, LLVMConstAllOnes(i32), "");
	r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, off, al_ci(c, 32, 0), ""), r0, r, "");
	return al_write(c, &in->ops[0], AT('b', 32), r) < 0 ? -1 : 1;
}

/* SIMD lanes: vadd4/vsub4/vmin4/vmax4/vabsdiff4/vavrg4 (and their 2-lane forms) with .sat and
 * .add (the lanes' sum plus c), and the packed add/sub/min/max.{u16x2,s16x2}. */
static int simd(al *c, const ir_insn *in, const char *op, unsigned lanes, bool video)
{
	unsigned w = 32 / lanes;
	bool sd = false, sa = false, sb = false;
	if (video) {
		atype dt = al_insn_type_n(in, 0), at = al_insn_type_n(in, 1), bt = al_insn_type_n(in, 2);
		sd = dt.k == 's', sa = at.k == 's', sb = bt.k == 's';
		for (unsigned i = 0; i < in->nmods; i++)
			if (!strncmp(in->mods[i], ".b", 2) && strlen(in->mods[i]) > 2 && in->mods[i][2] != '3' && in->mods[i][2] != '6')
				return al_unsupported(c, in, "lane selectors and masks are not lowered");
	} else {
		sd = sa = sb = al_mod(in, ".s16x2");
	}
	bool sat = al_mod(in, ".sat"), acc = al_mod(in, ".add");
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', 32)), b = al_read(c, &in->ops[2], AT('b', 32));
	LLVMValueRef cc = video ? al_read(c, &in->ops[3], AT('b', 32)) : al_ci(c, 32, 0);
	if (!a || !b || !cc)
		return -1;
	LLVMTypeRef i32 = al_ity(c, 32), lt = al_ity(c, w);
	LLVMValueRef packed = al_ci(c, 32, 0), sum = cc;
	for (unsigned l = 0; l < lanes; l++) {
		LLVMValueRef x = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, al_ci(c, 32, l * w), ""), lt, "");
		LLVMValueRef y = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, al_ci(c, 32, l * w), ""), lt, "");
		x = sa ? LLVMBuildSExt(B, x, i32, "") : LLVMBuildZExt(B, x, i32, "");
		y = sb ? LLVMBuildSExt(B, y, i32, "") : LLVMBuildZExt(B, y, i32, "");
		LLVMValueRef r;
		bool signed_cmp = sa || sb;
		if (!strcmp(op, "add"))
			r = LLVMBuildAdd(B, x, y, "");
		else if (!strcmp(op, "sub"))
			r = LLVMBuildSub(B, x, y, "");
		else if (!strcmp(op, "min") || !strcmp(op, "max")) {
			LLVMIntPredicate p = op[1] == 'i' ? (signed_cmp ? LLVMIntSLT : LLVMIntULT) : (signed_cmp ? LLVMIntSGT : LLVMIntUGT);
			r = LLVMBuildSelect(B, LLVMBuildICmp(B, p, x, y, ""), x, y, "");
		} else if (!strcmp(op, "absdiff")) {
			LLVMValueRef d = LLVMBuildSub(B, x, y, "");
			r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, d, al_ci(c, 32, 0), ""), LLVMBuildNeg(B, d, ""), d, "");
		} else if (!strcmp(op, "avrg")) {
			r = LLVMBuildAShr(B, LLVMBuildAdd(B, LLVMBuildAdd(B, x, y, ""), al_ci(c, 32, 1), ""), al_ci(c, 32, 1), "");
		} else {
			return al_unsupported(c, in, "no such SIMD operation");
		}
		if (sat) {
			int64_t lo = sd ? -(1ll << (w - 1)) : 0, hi = sd ? (1ll << (w - 1)) - 1 : (1ll << w) - 1;
			r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, r, al_ci(c, 32, (uint64_t)lo), ""), al_ci(c, 32, (uint64_t)lo), r, "");
			r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, r, al_ci(c, 32, (uint64_t)hi), ""), al_ci(c, 32, (uint64_t)hi), r, "");
		}
		sum = LLVMBuildAdd(B, sum, r, "");
		LLVMValueRef lane = LLVMBuildAnd(B, r, al_ci(c, 32, (1ull << w) - 1), "");
		packed = LLVMBuildOr(B, packed, LLVMBuildShl(B, lane, al_ci(c, 32, l * w), ""), "");
	}
	return al_write(c, &in->ops[0], AT('b', 32), acc ? sum : packed) < 0 ? -1 : 1;
}

/* bf16 / bf16x2 arithmetic: each lane widened to f32 (exact), computed there, rounded back to
 * bf16 to nearest even (NaN to the canonical NaN). */
static int bf16_arith(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	bool x2 = al_mod(in, ".bf16x2");
	unsigned lanes = x2 ? 2 : 1, nin = in->nops - 1;
	if (nin > 3 || nin < 1)
		return al_unsupported(c, in, "operands");
	if (al_mod(in, ".rz") || al_mod(in, ".rm") || al_mod(in, ".rp") || al_mod(in, ".sat") || al_mod(in, ".relu") ||
	    al_mod(in, ".NaN") || al_mod(in, ".xorsign"))
		return al_unsupported(c, in, "this bf16 form is not lowered");
	LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx), i32 = al_ity(c, 32);
	LLVMValueRef a[3];
	for (unsigned k = 0; k < nin; k++)
		if (!(a[k] = al_read(c, &in->ops[k + 1], AT('b', 16 * lanes))))
			return -1;
	LLVMValueRef out = al_ci(c, 32, 0);
	ir_insn rn = *in;   /* f32_narrow's rounding: to nearest even */
	rn.nmods = 0;
	for (unsigned l = 0; l < lanes; l++) {
		LLVMValueRef v[3];
		for (unsigned k = 0; k < nin; k++) {
			LLVMValueRef h = LLVMBuildTrunc(B, LLVMBuildLShr(B, LLVMBuildZExt(B, a[k], i32, ""), al_ci(c, 32, 16 * l), ""), al_ity(c, 16), "");
			v[k] = LLVMBuildBitCast(B, LLVMBuildShl(B, LLVMBuildZExt(B, h, i32, ""), al_ci(c, 32, 16), ""), f32, "");
		}
		LLVMValueRef r;
		if (!strcmp(op, "add"))
			r = LLVMBuildFAdd(B, v[0], v[1], "");
		else if (!strcmp(op, "sub"))
			r = LLVMBuildFSub(B, v[0], v[1], "");
		else if (!strcmp(op, "mul"))
			r = LLVMBuildFMul(B, v[0], v[1], "");
		else if (!strcmp(op, "fma"))
			r = al_intr(c, "llvm.fma", &f32, 1, 3, v);
		else if (!strcmp(op, "min") || !strcmp(op, "max"))
			r = al_intr(c, op[1] == 'i' ? "llvm.minnum" : "llvm.maxnum", &f32, 1, 2, v);
		else if (!strcmp(op, "neg"))
			r = LLVMBuildFNeg(B, v[0], "");
		else if (!strcmp(op, "abs"))
			r = al_intr(c, "llvm.fabs", &f32, 1, 1, v);
		else
			return al_unsupported(c, in, "this bf16 operation is not lowered");
		LLVMValueRef h = f32_narrow(c, &rn, r, 16);
		out = LLVMBuildOr(B, out, LLVMBuildShl(B, h, al_ci(c, 32, 16 * l), ""), "");
	}
	return al_write(c, &in->ops[0], AT('b', 16 * lanes), x2 ? out : LLVMBuildTrunc(B, out, al_ity(c, 16), "")) < 0 ? -1 : 1;
}

int al_extra(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	int r = al_async(c, in);   /* mbarrier, cp.async.bulk, cp.async.mbarrier, barrier.cluster */
	if (r)
		return r;
	if ((al_mod(in, ".bf16") || al_mod(in, ".bf16x2")) && strcmp(op, "cvt") && strcmp(op, "ld") && strcmp(op, "st") &&
	    strcmp(op, "mov") && strcmp(op, "setp") && strcmp(op, "set") && strcmp(op, "selp"))
		return bf16_arith(c, in);
	if (!strcmp(op, "fns"))
		return fns(c, in);
	static const char *const vops[] = {"add", "sub", "min", "max", "absdiff", "avrg", NULL};
	if (op[0] == 'v' && (op[strlen(op) - 1] == '4' || op[strlen(op) - 1] == '2'))
		for (int i = 0; vops[i]; i++)
			if (strlen(op) == strlen(vops[i]) + 2 && !strncmp(op + 1, vops[i], strlen(vops[i])))
				return simd(c, in, vops[i], op[strlen(op) - 1] == '4' ? 4 : 2, true);
	if ((al_mod(in, ".u16x2") || al_mod(in, ".s16x2")) &&
	    (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "min") || !strcmp(op, "max")))
		return simd(c, in, op, 2, false);
	if (!strcmp(op, "cvt"))
		return narrow_cvt(c, in);
	if (!strcmp(op, "dp4a") || !strcmp(op, "dp2a"))
		return dp(c, in, op[2] == '4');
	if ((!strcmp(op, "setp") || !strcmp(op, "set")) && al_mod(in, ".f16x2"))
		return f16x2_compare(c, in, op[3] == 0);
	if (!strcmp(op, "cp") && in->nmods && !strcmp(in->mods[0], ".async")) {
		if (al_mod(in, ".commit_group") || al_mod(in, ".wait_group") || al_mod(in, ".wait_all"))
			return 1;
		return cp_async(c, in);
	}
	if (!strcmp(op, "stacksave") || !strcmp(op, "stackrestore") || !strcmp(op, "alloca"))
		return stack(c, in);
	return 0;
}
