/* Float arithmetic: f32 and f64 (and f16, f16x2 through LLVM's half), .ftz on inputs and result,
 * .sat, directed rounding through the target (al_round_op), testp and copysign. */
#include "amdgpu/lower.h"

#include <string.h>

#define B (c->b)

LLVMValueRef al_saturate(al *c, LLVMValueRef v);

static LLVMValueRef flush32(al *c, LLVMValueRef v)
{
	LLVMTypeRef f = LLVMTypeOf(v);
	LLVMValueRef a = al_intr(c, "llvm.fabs", &f, 1, 1, &v);
	LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, a, LLVMConstReal(f, 1.17549435082228750797e-38), "");
	LLVMValueRef args[2] = {LLVMConstReal(f, 0.0), v};
	return LLVMBuildSelect(B, tiny, al_intr(c, "llvm.copysign", &f, 1, 2, args), v, "");
}

static int testp(al *c, const ir_insn *in, atype t)
{
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', t.bits));
	if (!a)
		return -1;
	unsigned n = t.bits, mant = n == 32 ? 23 : 52;
	uint64_t expm = n == 32 ? 0x7f800000ull : 0x7ff0000000000000ull;
	uint64_t manm = (1ull << mant) - 1;
	LLVMValueRef e = LLVMBuildAnd(B, a, al_ci(c, n, expm), "");
	LLVMValueRef m = LLVMBuildAnd(B, a, al_ci(c, n, manm), "");
	LLVMValueRef emax = LLVMBuildICmp(B, LLVMIntEQ, e, al_ci(c, n, expm), "");
	LLVMValueRef ezero = LLVMBuildICmp(B, LLVMIntEQ, e, al_ci(c, n, 0), "");
	LLVMValueRef mzero = LLVMBuildICmp(B, LLVMIntEQ, m, al_ci(c, n, 0), "");
	LLVMValueRef r;
	if (al_mod(in, ".finite"))
		r = LLVMBuildNot(B, emax, "");
	else if (al_mod(in, ".infinite"))
		r = LLVMBuildAnd(B, emax, mzero, "");
	else if (al_mod(in, ".number"))
		r = LLVMBuildNot(B, LLVMBuildAnd(B, emax, LLVMBuildNot(B, mzero, ""), ""), "");
	else if (al_mod(in, ".notanumber"))
		r = LLVMBuildAnd(B, emax, LLVMBuildNot(B, mzero, ""), "");
	else if (al_mod(in, ".normal"))
		r = LLVMBuildAnd(B, LLVMBuildNot(B, emax, ""), LLVMBuildNot(B, ezero, ""), "");
	else if (al_mod(in, ".subnormal"))
		r = LLVMBuildAnd(B, ezero, LLVMBuildNot(B, mzero, ""), "");
	else
		return al_unsupported(c, in, "no such test");
	return al_write(c, &in->ops[0], AT('p', 1), r) < 0 ? -1 : 1;
}

static const char *frnd(const ir_insn *in)
{
	static const char *const r[] = {".rn", ".rz", ".rm", ".rp", NULL};
	for (int i = 0; r[i]; i++)
		if (al_mod(in, r[i]))
			return r[i];
	return NULL;
}

/* nvptx: what ptxas is free to do differently from an IEEE operation, passed through as written
 * so that it does what it does for nvcc's code: add/sub/mul without a rounding modifier (ptxas
 * contracts them into fma; LLVM prints every fmul as mul.rn, which it may not), and the
 * approximate forms (div.approx, div.full, rcp.approx, sqrt.approx, rsqrt.approx), which LLVM's
 * fdiv and sqrt would compute exactly. With these, BlackScholes, binomialOptions,
 * convolutionFFT2D, HSOpticalFlow and dxtc printed other last digits than natively. */
static bool passed_through(const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul"))
		return !frnd(in);
	if (!strcmp(op, "div"))
		return al_mod(in, ".approx") || al_mod(in, ".full");
	if (!strcmp(op, "rcp") || !strcmp(op, "sqrt") || !strcmp(op, "rsqrt"))
		return al_mod(in, ".approx");
	return false;
}

int al_float(al *c, const ir_insn *in)
{
	static const char *const mine[] = {"add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt", "abs",
		"neg", "min", "max", "sin", "cos", "lg2", "ex2", "copysign", "testp", "tanh", NULL};
	const char *op = in->opcode;
	size_t i;
	for (i = 0; mine[i] && strcmp(mine[i], op); i++)
		;
	if (!mine[i])
		return 0;
	atype t = al_insn_type(in);
	bool x2 = al_mod(in, ".f16x2");
	if (x2)
		t = AT('f', 16);
	if (t.k != 'f')
		return 0;
	for (unsigned k = 0; k < in->nmods; k++)
		if (strstr(in->mods[k], "bf16") || !strcmp(in->mods[k], ".NaN") || !strcmp(in->mods[k], ".xorsign"))
			return al_unsupported(c, in, "bf16 and NaN-propagating forms are not lowered");
	if (!strcmp(op, "testp"))
		return testp(c, in, t);
	if (!strcmp(op, "tanh"))
		return al_unsupported(c, in, "tanh.approx is not lowered");
	unsigned n = t.bits;
	if (c->target == AMDGPU_TARGET_NVPTX && !al_generic() && !x2 && n >= 32 && passed_through(in))
		return al_inline_ptx(c, in, 1);
	LLVMTypeRef ft = n == 64 ? LLVMDoubleTypeInContext(c->ctx) : n == 32 ? LLVMFloatTypeInContext(c->ctx)
									   : LLVMHalfTypeInContext(c->ctx);
	if (x2)
		ft = LLVMVectorType(ft, 2);
	atype rt = n == 16 ? AT('b', x2 ? 32 : 16) : t;
	bool ftz = al_mod(in, ".ftz") && n == 32, sat = al_mod(in, ".sat");
	const char *rnd = frnd(in);
	unsigned nin = in->nops - 1;
	if (nin > 3)
		return al_unsupported(c, in, "too many operands");
	LLVMValueRef a[3];
	for (unsigned k = 0; k < nin; k++) {
		a[k] = al_read(c, &in->ops[k + 1], rt);
		if (!a[k])
			return -1;
		if (n == 16)
			a[k] = LLVMBuildBitCast(B, a[k], ft, "");
		if (ftz)
			a[k] = flush32(c, a[k]);
	}
	LLVMValueRef r = NULL;
	bool directed = rnd && strcmp(rnd, ".rn");
	if (directed && n != 16) {
		const char *o = !strcmp(op, "mad") ? "fma" : op;
		r = al_round_op(c, o, rnd[2], t, a);
		if (!r)
			return al_unsupported(c, in, "directed rounding of this operation on this target");
	} else if (!strcmp(op, "add")) {
		r = LLVMBuildFAdd(B, a[0], a[1], "");
	} else if (!strcmp(op, "sub")) {
		r = LLVMBuildFSub(B, a[0], a[1], "");
	} else if (!strcmp(op, "mul")) {
		r = LLVMBuildFMul(B, a[0], a[1], "");
	} else if (!strcmp(op, "fma") || !strcmp(op, "mad")) {
		r = al_intr(c, "llvm.fma", &ft, 1, 3, a);
	} else if (!strcmp(op, "div")) {
		r = LLVMBuildFDiv(B, a[0], a[1], "");
	} else if (!strcmp(op, "rcp")) {
		r = LLVMBuildFDiv(B, LLVMConstReal(ft, 1.0), a[0], "");
	} else if (!strcmp(op, "sqrt")) {
		r = al_intr(c, "llvm.sqrt", &ft, 1, 1, a);
	} else if (!strcmp(op, "rsqrt")) {
		r = LLVMBuildFDiv(B, LLVMConstReal(ft, 1.0), al_intr(c, "llvm.sqrt", &ft, 1, 1, a), "");
	} else if (!strcmp(op, "abs")) {
		r = al_intr(c, "llvm.fabs", &ft, 1, 1, a);
	} else if (!strcmp(op, "neg")) {
		r = LLVMBuildFNeg(B, a[0], "");
	} else if (!strcmp(op, "min")) {
		r = al_intr(c, "llvm.minnum", &ft, 1, 2, a);
	} else if (!strcmp(op, "max")) {
		r = al_intr(c, "llvm.maxnum", &ft, 1, 2, a);
	} else if (!strcmp(op, "sin") || !strcmp(op, "cos") || !strcmp(op, "lg2") || !strcmp(op, "ex2")) {
		r = al_approx(c, op, x2 ? 0 : n, ftz, ft, a);
	} else if (!strcmp(op, "copysign")) {
		LLVMValueRef args[2] = {a[1], a[0]};
		r = al_intr(c, "llvm.copysign", &ft, 1, 2, args);
	}
	if (!r)
		return -1;
	if (sat && n != 16)
		r = al_saturate(c, r);
	if (ftz)
		r = flush32(c, r);
	if (n == 16)
		r = LLVMBuildBitCast(B, r, al_ity(c, rt.bits), "");
	return al_write(c, &in->ops[0], rt, r) < 0 ? -1 : 1;
}
