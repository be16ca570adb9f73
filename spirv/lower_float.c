/* Floating-point arithmetic with PTX's modifiers: .ftz flushes subnormal inputs and results to
 * a zero of the same sign (done on the bits, so the target's own denormal mode does not
 * matter); .sat clamps to [0, 1] with NaN giving 0; directed rounding (.rz/.rm/.rp) of f32 add,
 * sub, mul and fma is computed exactly in f64 and rounded once with an FPRoundingMode conversion;
 * that of f64 corrects the round-to-nearest result by the sign of its exact error (f64_directed). */
#include "spirv/lower.h"

#include <string.h>

static const char *const rnd_mods[] = {".rn", ".rz", ".rm", ".rp", NULL};

static SpvFPRoundingMode rounding_of(const char *m)
{
	if (!m || !strcmp(m, ".rn"))
		return SpvFPRoundingModeRTE;
	if (!strcmp(m, ".rz"))
		return SpvFPRoundingModeRTZ;
	if (!strcmp(m, ".rm"))
		return SpvFPRoundingModeRTN;
	return SpvFPRoundingModeRTP;
}

/* Subnormal f32 -> signed zero. */
static uint32_t ftz(lw *c, uint32_t x)
{
	uint32_t f32 = spv_t_float(c->e, 32), u32 = spv_t_int(c->e, 32);
	uint32_t bits = lw_op1(c, SpvOpBitcast, u32, x);
	uint32_t exp = lw_op2(c, SpvOpBitwiseAnd, u32, bits, lw_u32(c, 0x7f800000));
	uint32_t sub = lw_op2(c, SpvOpIEqual, spv_t_bool(c->e), exp, lw_u32(c, 0));
	uint32_t z = lw_op2(c, SpvOpBitwiseAnd, u32, bits, lw_u32(c, 0x80000000));
	return lw_op1(c, SpvOpBitcast, f32, lw_select(c, u32, sub, z, bits));
}

static uint32_t fconst(lw *c, ptype t, double v)
{
	if (t.bits == 32) {
		float f = (float)v;
		uint32_t r;
		memcpy(&r, &f, 4);
		return lw_const(c, t, r);
	}
	uint64_t r;
	memcpy(&r, &v, 8);
	return lw_const(c, t, r);
}

static uint32_t saturate(lw *c, ptype t, uint32_t x)
{
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	uint32_t one = fconst(c, t, 1.0), zero = fconst(c, t, 0.0);
	uint32_t lt1 = lw_op2(c, SpvOpFOrdLessThan, bl, x, one);
	uint32_t gt0 = lw_op2(c, SpvOpFOrdGreaterThan, bl, x, zero);
	return lw_select(c, ty, gt0, lw_select(c, ty, lt1, x, one), zero);
}

/* Round an f64 value to f32 in the given mode. */
static uint32_t round_to_f32(lw *c, uint32_t d, SpvFPRoundingMode mode)
{
	uint32_t r = lw_op1(c, SpvOpFConvert, spv_t_float(c->e, 32), d);
	if (mode != SpvFPRoundingModeRTE)
		spv_decorate(c->e, r, SpvDecorationFPRoundingMode, 1, (uint32_t)mode);
	return r;
}

/* x + y = *sum + *err exactly, in f64 (TwoSum). */
static void two_sum(lw *c, uint32_t x, uint32_t y, uint32_t *sum, uint32_t *err)
{
	uint32_t f64 = spv_t_float(c->e, 64);
	*sum = lw_op2(c, SpvOpFAdd, f64, x, y);
	uint32_t yy = lw_op2(c, SpvOpFSub, f64, *sum, x);
	uint32_t xx = lw_op2(c, SpvOpFSub, f64, *sum, yy);
	*err = lw_op2(c, SpvOpFAdd, f64, lw_op2(c, SpvOpFSub, f64, x, xx), lw_op2(c, SpvOpFSub, f64, y, yy));
}

/* r (of type t) moved one ulp in the mode's direction where the exact value lies beyond it: err
 * (f64) is the exact value minus the value r was rounded from, sign (f64) the value whose sign
 * decides toward zero; only where gate holds (0: everywhere). */
static uint32_t step_by_error(lw *c, ptype t, SpvFPRoundingMode mode, uint32_t gate, uint32_t err, uint32_t sign,
			      uint32_t r)
{
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e), zero = fconst(c, PT('f', 64), 0.0);
	uint32_t above = lw_op2(c, SpvOpFOrdGreaterThan, bl, err, zero), below = lw_op2(c, SpvOpFOrdLessThan, bl, err, zero);
	if (mode == SpvFPRoundingModeRTZ) {   /* toward zero: down above it, up below it */
		above = lw_op2(c, SpvOpLogicalAnd, bl, above, lw_op2(c, SpvOpFOrdLessThan, bl, sign, zero));
		below = lw_op2(c, SpvOpLogicalAnd, bl, below, lw_op2(c, SpvOpFOrdGreaterThan, bl, sign, zero));
	}
	if (gate)
		above = lw_op2(c, SpvOpLogicalAnd, bl, gate, above), below = lw_op2(c, SpvOpLogicalAnd, bl, gate, below);
	uint32_t up = lw_ext(c, ty, OpenCLstd_Nextafter, 2, r, fconst(c, t, __builtin_inf()));
	uint32_t down = lw_ext(c, ty, OpenCLstd_Nextafter, 2, r, fconst(c, t, -__builtin_inf()));
	if (mode == SpvFPRoundingModeRTP)
		return lw_select(c, ty, above, up, r);
	if (mode == SpvFPRoundingModeRTN)
		return lw_select(c, ty, below, down, r);
	return lw_select(c, ty, below, down, lw_select(c, ty, above, up, r));
}

/* Rounding down, an exact zero sum of the f64 addends x and y is -0 unless both are +0: out
 * (of type t) where sum is zero becomes that signed zero. */
static uint32_t zero_sum_down(lw *c, ptype t, uint32_t x, uint32_t y, uint32_t sum, uint32_t out)
{
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e), u64 = spv_t_int(c->e, 64);
	uint32_t sgn = lw_op2(c, SpvOpBitwiseOr, u64, lw_op1(c, SpvOpBitcast, u64, x), lw_op1(c, SpvOpBitcast, u64, y));
	uint32_t neg0 = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u64, sgn, lw_u64(c, 0x8000000000000000ull)),
			       lw_u64(c, 0));
	uint32_t z = lw_select(c, ty, neg0, fconst(c, t, -0.0), fconst(c, t, 0.0));
	return lw_select(c, ty, lw_op2(c, SpvOpFOrdEqual, bl, sum, fconst(c, PT('f', 64), 0.0)), z, out);
}

/* Directed rounding to f32 of x + y, two f64 values that hold f32 operands exactly (for fma, x
 * is a*b: exact in f64). Rounding their f64 sum to f32 is right unless the sum is itself an f32
 * value while the exact sum is not: then no f32 boundary lies between them and the sign of the
 * sum's exact error says whether to move one f32 ulp (add.rp(1, 1e-30) is 1 + 2^-23; rounding
 * the f64 sum alone gave 1). */
static uint32_t f32_directed_sum(lw *c, uint32_t x, uint32_t y, SpvFPRoundingMode mode)
{
	uint32_t f64 = spv_t_float(c->e, 64), bl = spv_t_bool(c->e), sum, err;
	two_sum(c, x, y, &sum, &err);
	uint32_t r = round_to_f32(c, sum, mode);
	uint32_t exact32 = lw_op2(c, SpvOpFOrdEqual, bl, lw_op1(c, SpvOpFConvert, f64, r), sum);
	uint32_t out = step_by_error(c, PT('f', 32), mode, exact32, err, sum, r);
	return mode == SpvFPRoundingModeRTN ? zero_sum_down(c, PT('f', 32), x, y, sum, out) : out;
}

/* min/max: NaN only if both are; -0 is below +0. */
static uint32_t minmax(lw *c, ptype t, bool is_max, uint32_t a, uint32_t b)
{
	uint32_t ty = lw_type(c, t), it = spv_t_int(c->e, t.bits), bl = spv_t_bool(c->e);
	uint32_t r = lw_ext(c, ty, is_max ? OpenCLstd_Fmax : OpenCLstd_Fmin, 2, a, b);
	uint32_t eq = lw_op2(c, SpvOpFOrdEqual, bl, a, b);
	uint32_t ab = lw_op1(c, SpvOpBitcast, it, a), bb = lw_op1(c, SpvOpBitcast, it, b);
	uint32_t z = lw_op1(c, SpvOpBitcast, ty, lw_op2(c, is_max ? SpvOpBitwiseAnd : SpvOpBitwiseOr, it, ab, bb));
	return lw_select(c, ty, eq, z, r);
}

/* Directed rounding of f64 (interval arithmetic): the round-to-nearest result r moved one ulp
 * toward the mode's direction where the exact error (true value - r) says it lies on the other
 * side: add/sub by TwoSum, mul by fma(a, b, -r), div/rcp by the remainder fma(-r, b, a) and the
 * divisor's sign, sqrt by fma(-r, r, a), fma by the error of a*b and of the add. An overflow to
 * infinity of finite operands becomes the largest finite value where the mode rounds toward
 * zero; an exact zero sum (add, sub, fma) is -0 when rounding down. Errors lost to underflow (results in the
 * subnormal range) are not seen: there the result is round-to-nearest's. */
static uint32_t f64_directed(lw *c, const char *op, SpvFPRoundingMode mode, const uint32_t *s, unsigned nsrc)
{
	uint32_t f64 = spv_t_float(c->e, 64), bl = spv_t_bool(c->e);
	ptype T = PT('f', 64);
	uint32_t zero = fconst(c, T, 0.0), r, err;
	uint32_t zx = 0, zy = 0;   /* the addends of a sum (add, sub, fma), for its exact zero */
	uint32_t a = s[0], b = nsrc > 1 ? s[1] : 0;
	if (!strcmp(op, "add") || !strcmp(op, "sub")) {
		if (op[0] == 's')
			b = lw_op1(c, SpvOpFNegate, f64, b);
		two_sum(c, a, b, &r, &err);
		zx = a, zy = b;
	} else if (!strcmp(op, "mul")) {
		r = lw_op2(c, SpvOpFMul, f64, a, b);
		err = lw_ext(c, f64, OpenCLstd_Fma, 3, a, b, lw_op1(c, SpvOpFNegate, f64, r));
	} else if (!strcmp(op, "div") || !strcmp(op, "rcp")) {
		if (op[0] == 'r')
			b = a, a = fconst(c, T, 1.0);
		r = lw_op2(c, SpvOpFDiv, f64, a, b);
		uint32_t rem = lw_ext(c, f64, OpenCLstd_Fma, 3, lw_op1(c, SpvOpFNegate, f64, r), b, a);
		err = lw_op2(c, SpvOpFMul, f64, rem, lw_ext(c, f64, OpenCLstd_Copysign, 2, fconst(c, T, 1.0), b));
	} else if (!strcmp(op, "sqrt")) {
		r = lw_ext(c, f64, OpenCLstd_Sqrt, 1, a);
		err = lw_ext(c, f64, OpenCLstd_Fma, 3, lw_op1(c, SpvOpFNegate, f64, r), r, a);
	} else { /* fma, mad: a*b = p + pe exactly; p + c = s1 + e1 exactly; true - r = (s1 - r) + e1 + pe */
		uint32_t d = s[2];
		r = lw_ext(c, f64, OpenCLstd_Fma, 3, a, b, d);
		uint32_t p = lw_op2(c, SpvOpFMul, f64, a, b);
		uint32_t pe = lw_ext(c, f64, OpenCLstd_Fma, 3, a, b, lw_op1(c, SpvOpFNegate, f64, p));
		uint32_t s1, e1;
		two_sum(c, p, d, &s1, &e1);
		err = lw_op2(c, SpvOpFAdd, f64, lw_op2(c, SpvOpFSub, f64, s1, r), lw_op2(c, SpvOpFAdd, f64, e1, pe));
		zx = p, zy = d;   /* p's sign is a's xor b's, also where it is zero */
	}
	uint32_t out = step_by_error(c, T, mode, 0, err, r, r);
	uint32_t pos = lw_op2(c, SpvOpFOrdGreaterThan, bl, r, zero), neg = lw_op2(c, SpvOpFOrdLessThan, bl, r, zero);
	/* overflow of finite operands: +inf stays only when rounding up, -inf only when rounding down */
	uint32_t fin = lw_op1(c, SpvOpIsFinite, bl, a);
	for (unsigned i = 1; i < nsrc; i++)
		fin = lw_op2(c, SpvOpLogicalAnd, bl, fin, lw_op1(c, SpvOpIsFinite, bl, s[i]));
	if (!strcmp(op, "div") || !strcmp(op, "rcp"))
		fin = lw_op2(c, SpvOpLogicalAnd, bl, fin, lw_op2(c, SpvOpFOrdNotEqual, bl, b, zero));
	uint32_t ovf = lw_op2(c, SpvOpLogicalAnd, bl, fin, lw_op1(c, SpvOpIsInf, bl, r));
	uint32_t maxv = lw_ext(c, f64, OpenCLstd_Copysign, 2, fconst(c, T, 1.7976931348623157e308), r);
	uint32_t keep_inf = mode == SpvFPRoundingModeRTP ? pos : mode == SpvFPRoundingModeRTN ? neg : spv_c_bool(c->e, 0);
	out = lw_select(c, f64, lw_op2(c, SpvOpLogicalAnd, bl, ovf, lw_op1(c, SpvOpLogicalNot, bl, keep_inf)), maxv, out);
	if (zx && mode == SpvFPRoundingModeRTN)   /* add, sub, fma: an exact zero sum */
		out = zero_sum_down(c, T, zx, zy, r, out);
	return out;
}

int lw_float_arith(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	ptype t = lw_insn_type(in);
	if (t.k != 'f' || !strcmp(op, "cvt") || !strcmp(op, "setp") || !strcmp(op, "set") ||
	    !strcmp(op, "selp") || !strcmp(op, "mov") || !strcmp(op, "ld") || !strcmp(op, "st") ||
	    !strcmp(op, "atom") || !strcmp(op, "red") || !strcmp(op, "shfl") || !strcmp(op, "slct") ||
	    !strcmp(op, "ldu") || !strcmp(op, "cvta"))
		return 0;
	for (unsigned i = 0; i < in->nmods; i++)
		if (!strncmp(in->mods[i], ".f16", 4) || !strncmp(in->mods[i], ".bf16", 5) || !strcmp(in->mods[i], ".e4m3"))
			return lw_unsupported(c, in, "half-precision arithmetic is not lowered");
	if (t.bits == 16)
		return lw_unsupported(c, in, "half-precision arithmetic is not lowered");
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	const ir_operand *o = in->ops;
	bool fz = ir_insn_has_mod(in, ".ftz") && t.bits == 32;
	bool sat = ir_insn_has_mod(in, ".sat");
	const char *rm = lw_insn_mod_in(in, rnd_mods);
	SpvFPRoundingMode mode = rounding_of(rm);
	if (in->nops < 2)
		return lw_unsupported(c, in, "too few operands");
	unsigned nsrc = in->nops - 1;
	if (nsrc > 3)   /* no float instruction has more than three sources (fma's) */
		return lw_unsupported(c, in, "too many operands");
	uint32_t s[3] = {0};
	if (!strcmp(op, "testp")) {
		uint32_t a = lw_read(c, &o[1], t);
		if (!a)
			return -1;
		uint32_t it = spv_t_int(c->e, t.bits), r;
		uint32_t abs = lw_ext(c, ty, OpenCLstd_Fabs, 1, a);
		if (ir_insn_has_mod(in, ".finite"))
			r = lw_op1(c, SpvOpIsFinite, bl, a);
		else if (ir_insn_has_mod(in, ".infinite"))
			r = lw_op1(c, SpvOpIsInf, bl, a);
		else if (ir_insn_has_mod(in, ".number"))
			r = lw_op1(c, SpvOpLogicalNot, bl, lw_op1(c, SpvOpIsNan, bl, a));
		else if (ir_insn_has_mod(in, ".notanumber"))
			r = lw_op1(c, SpvOpIsNan, bl, a);
		else if (ir_insn_has_mod(in, ".normal"))
			r = lw_op1(c, SpvOpIsNormal, bl, a);
		else if (ir_insn_has_mod(in, ".subnormal")) {
			uint32_t bits = lw_op1(c, SpvOpBitcast, it, abs);
			uint32_t nz = lw_op2(c, SpvOpINotEqual, bl, bits, lw_const(c, PT('u', t.bits), 0));
			uint32_t small = lw_op2(c, SpvOpULessThan, bl, bits,
						lw_const(c, PT('u', t.bits), t.bits == 32 ? 0x00800000u : 0x0010000000000000ull));
			r = lw_op2(c, SpvOpLogicalAnd, bl, nz, small);
		} else
			return lw_unsupported(c, in, "unknown test");
		return lw_write(c, &o[0], PT('p', 1), r) < 0 ? -1 : 1;
	}
	for (unsigned i = 0; i < nsrc; i++) {
		s[i] = lw_read(c, &o[1 + i], t);
		if (!s[i])
			return -1;
		if (fz)
			s[i] = ftz(c, s[i]);
	}
	uint32_t r = 0;
	bool directed = rm && mode != SpvFPRoundingModeRTE;
	uint32_t f64 = spv_t_float(c->e, 64);
	if (directed && t.bits == 64) {
		static const char *const ops64[] = {"add", "sub", "mul", "div", "rcp", "sqrt", "fma", "mad", NULL};
		bool known = false;
		for (unsigned i = 0; ops64[i]; i++)
			known |= !strcmp(op, ops64[i]);
		if (!known)
			return lw_unsupported(c, in, "directed rounding of this f64 instruction is not lowered");
		if (nsrc < (!strcmp(op, "fma") || !strcmp(op, "mad") ? 3u : !strcmp(op, "sqrt") || !strcmp(op, "rcp") ? 1u : 2u))
			return lw_unsupported(c, in, "too few operands");
		r = f64_directed(c, op, mode, s, nsrc);
		if (sat)
			r = saturate(c, t, r);
		return lw_write(c, &o[0], t, r) < 0 ? -1 : 1;
	}
#define NEED(n) do { if (nsrc < (n)) return lw_unsupported(c, in, "too few operands"); } while (0)
	if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul")) {
		NEED(2);
		SpvOp fop = op[0] == 'a' ? SpvOpFAdd : op[0] == 's' ? SpvOpFSub : SpvOpFMul;
		if (directed) {
			uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]), b = lw_op1(c, SpvOpFConvert, f64, s[1]);
			if (fop == SpvOpFMul)   /* exact in f64: one rounding */
				r = round_to_f32(c, lw_op2(c, fop, f64, a, b), mode);
			else
				r = f32_directed_sum(c, a, fop == SpvOpFSub ? lw_op1(c, SpvOpFNegate, f64, b) : b, mode);
		} else {
			r = lw_op2(c, fop, ty, s[0], s[1]);
		}
	} else if (!strcmp(op, "fma") || !strcmp(op, "mad")) {
		NEED(3);
		if (directed) {
			/* a*b is exact in f64: the sum of it and c, rounded once */
			uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]), b = lw_op1(c, SpvOpFConvert, f64, s[1]),
				 d = lw_op1(c, SpvOpFConvert, f64, s[2]);
			r = f32_directed_sum(c, lw_op2(c, SpvOpFMul, f64, a, b), d, mode);
		} else {
			r = lw_ext(c, ty, OpenCLstd_Fma, 3, s[0], s[1], s[2]);
		}
	} else if (!strcmp(op, "div")) {
		NEED(2);
		if (directed) {
			uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]), b = lw_op1(c, SpvOpFConvert, f64, s[1]);
			r = round_to_f32(c, lw_op2(c, SpvOpFDiv, f64, a, b), mode);
		} else {
			r = lw_op2(c, SpvOpFDiv, ty, s[0], s[1]);
		}
	} else if (!strcmp(op, "rcp")) {
		if (directed) {
			uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]);
			r = round_to_f32(c, lw_op2(c, SpvOpFDiv, f64, fconst(c, PT('f', 64), 1.0), a), mode);
		} else {
			r = lw_op2(c, SpvOpFDiv, ty, fconst(c, t, 1.0), s[0]);
		}
	} else if (!strcmp(op, "sqrt")) {
		if (directed) {
			uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]);
			r = round_to_f32(c, lw_ext(c, f64, OpenCLstd_Sqrt, 1, a), mode);
		} else {
			r = lw_ext(c, ty, OpenCLstd_Sqrt, 1, s[0]);
		}
	} else if (!strcmp(op, "rsqrt")) {
		r = lw_ext(c, ty, OpenCLstd_Rsqrt, 1, s[0]);
	} else if (!strcmp(op, "sin")) {
		r = lw_ext(c, ty, OpenCLstd_Sin, 1, s[0]);
	} else if (!strcmp(op, "cos")) {
		r = lw_ext(c, ty, OpenCLstd_Cos, 1, s[0]);
	} else if (!strcmp(op, "lg2")) {
		r = lw_ext(c, ty, OpenCLstd_Log2, 1, s[0]);
	} else if (!strcmp(op, "ex2")) {
		r = lw_ext(c, ty, OpenCLstd_Exp2, 1, s[0]);
	} else if (!strcmp(op, "tanh")) {
		r = lw_ext(c, ty, OpenCLstd_Tanh, 1, s[0]);
	} else if (!strcmp(op, "abs")) {
		r = lw_ext(c, ty, OpenCLstd_Fabs, 1, s[0]);
	} else if (!strcmp(op, "neg")) {
		r = lw_op1(c, SpvOpFNegate, ty, s[0]);
	} else if (!strcmp(op, "min") || !strcmp(op, "max")) {
		NEED(2);
		r = minmax(c, t, op[1] == 'a', s[0], s[1]);
	} else if (!strcmp(op, "copysign")) {
		NEED(2);
		r = lw_ext(c, ty, OpenCLstd_Copysign, 2, s[1], s[0]);
	} else {
		return lw_unsupported(c, in, "no SPIR-V lowering for this floating-point instruction");
	}
#undef NEED
	if (sat)
		r = saturate(c, t, r);
	if (fz)
		r = ftz(c, r);
	return lw_write(c, &o[0], t, r) < 0 ? -1 : 1;
}
