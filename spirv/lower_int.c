/* Integer and bitwise arithmetic with PTX's defined results where SPIR-V leaves them undefined:
 * shifts clamp their count (a count of the width or more, "negative" counts included, gives 0 or
 * the sign), division by zero and INT_MIN / -1 give what NVIDIA hardware gives. */
#include "spirv/lower.h"

#include <string.h>


static uint32_t cmp_lt(lw *c, ptype t, uint32_t a, uint32_t b)
{
	return lw_op2(c, t.k == 's' ? SpvOpSLessThan : SpvOpULessThan, spv_t_bool(c->e), a, b);
}

/* a << n, a >> n with PTX's clamping: n is an unsigned 32-bit count. */
static uint32_t shift(lw *c, SpvOp op, ptype t, uint32_t a, uint32_t n32)
{
	uint32_t ty = lw_type(c, t), b = spv_t_bool(c->e);
	uint32_t big = lw_op2(c, SpvOpUGreaterThanEqual, b, n32, lw_u32(c, t.bits));
	uint32_t n = n32;
	if (op == SpvOpShiftRightArithmetic)
		n = lw_select(c, spv_t_int(c->e, 32), big, lw_u32(c, t.bits - 1), n32);
	else
		n = lw_op2(c, SpvOpBitwiseAnd, spv_t_int(c->e, 32), n32, lw_u32(c, t.bits - 1));
	if (t.bits != 32)
		n = lw_op1(c, SpvOpUConvert, ty, n);
	uint32_t r = lw_op2(c, op, ty, a, n);
	if (op == SpvOpShiftRightArithmetic)
		return r;
	return lw_select(c, ty, big, lw_const(c, t, 0), r);
}

/* (1 << len) - 1 for len in [0, bits], len an unsigned value of type t. */
static uint32_t low_mask(lw *c, ptype t, uint32_t len)
{
	uint32_t ty = lw_type(c, t);
	uint32_t full = lw_op2(c, SpvOpUGreaterThanEqual, spv_t_bool(c->e), len, lw_const(c, t, t.bits));
	uint32_t safe = lw_op2(c, SpvOpBitwiseAnd, ty, len, lw_const(c, t, t.bits - 1));
	uint32_t m = lw_op2(c, SpvOpISub, ty, lw_op2(c, SpvOpShiftLeftLogical, ty, lw_const(c, t, 1), safe),
			    lw_const(c, t, 1));
	return lw_select(c, ty, full, lw_const(c, t, ~0ull), m);
}

static uint32_t umin(lw *c, ptype t, uint32_t a, uint32_t b)
{
	uint32_t lt = lw_op2(c, SpvOpULessThan, spv_t_bool(c->e), a, b);
	return lw_select(c, lw_type(c, t), lt, a, b);
}

static uint32_t bfe(lw *c, ptype t, uint32_t a, uint32_t b32, uint32_t c32)
{
	uint32_t ty = lw_type(c, t), u32 = spv_t_int(c->e, 32);
	ptype ut = PT('u', t.bits);
	uint32_t N = lw_u32(c, t.bits);
	uint32_t pos = lw_op2(c, SpvOpBitwiseAnd, u32, b32, lw_u32(c, 0xff));
	uint32_t len = lw_op2(c, SpvOpBitwiseAnd, u32, c32, lw_u32(c, 0xff));
	uint32_t posc = umin(c, PT('u', 32), pos, N);
	uint32_t v = shift(c, SpvOpShiftRightLogical, ut, a, posc);
	uint32_t avail = lw_op2(c, SpvOpISub, u32, N, posc);
	uint32_t L = umin(c, PT('u', 32), len, avail);
	uint32_t Lt = t.bits == 32 ? L : lw_op1(c, SpvOpUConvert, ty, L);
	uint32_t mask = low_mask(c, ut, Lt);
	uint32_t field = lw_op2(c, SpvOpBitwiseAnd, ty, v, mask);
	if (t.k != 's')
		return field;
	/* sign bit: a[min(pos+len-1, msb)], and 0 when len == 0 */
	uint32_t top = umin(c, PT('u', 32), lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpIAdd, u32, pos, len), lw_u32(c, 1)),
			    lw_u32(c, t.bits - 1));
	uint32_t sb = lw_op2(c, SpvOpBitwiseAnd, ty, shift(c, SpvOpShiftRightLogical, ut, a, top), lw_const(c, t, 1));
	uint32_t bl = spv_t_bool(c->e);
	uint32_t neg = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpINotEqual, bl, sb, lw_const(c, t, 0)),
			      lw_op2(c, SpvOpINotEqual, bl, len, lw_u32(c, 0)));
	uint32_t ext = lw_op2(c, SpvOpBitwiseOr, ty, field, lw_op1(c, SpvOpNot, ty, mask));
	return lw_select(c, ty, neg, ext, field);
}

static uint32_t bfi(lw *c, ptype t, uint32_t a, uint32_t base, uint32_t c32, uint32_t d32)
{
	uint32_t ty = lw_type(c, t), u32 = spv_t_int(c->e, 32);
	uint32_t N = lw_u32(c, t.bits);
	uint32_t pos = lw_op2(c, SpvOpBitwiseAnd, u32, c32, lw_u32(c, 0xff));
	uint32_t len = lw_op2(c, SpvOpBitwiseAnd, u32, d32, lw_u32(c, 0xff));
	uint32_t posc = umin(c, PT('u', 32), pos, N);
	uint32_t L = umin(c, PT('u', 32), len, lw_op2(c, SpvOpISub, u32, N, posc));
	uint32_t Lt = t.bits == 32 ? L : lw_op1(c, SpvOpUConvert, ty, L);
	uint32_t mask = shift(c, SpvOpShiftLeftLogical, PT('u', t.bits), low_mask(c, PT('u', t.bits), Lt), posc);
	uint32_t ins = shift(c, SpvOpShiftLeftLogical, PT('u', t.bits), a, posc);
	uint32_t keep = lw_op2(c, SpvOpBitwiseAnd, ty, base, lw_op1(c, SpvOpNot, ty, mask));
	return lw_op2(c, SpvOpBitwiseOr, ty, keep, lw_op2(c, SpvOpBitwiseAnd, ty, ins, mask));
}

static uint32_t brev(lw *c, ptype t, uint32_t v)
{
	static const uint64_t masks[] = {0x5555555555555555ull, 0x3333333333333333ull, 0x0f0f0f0f0f0f0f0full,
					 0x00ff00ff00ff00ffull, 0x0000ffff0000ffffull, 0x00000000ffffffffull};
	uint32_t ty = lw_type(c, t);
	for (unsigned i = 0, s = 1; s < t.bits; i++, s <<= 1) {
		uint32_t m = lw_const(c, t, masks[i]);
		uint32_t sh = lw_const(c, t, s);
		uint32_t lo = lw_op2(c, SpvOpShiftLeftLogical, ty, lw_op2(c, SpvOpBitwiseAnd, ty, v, m), sh);
		uint32_t hi = lw_op2(c, SpvOpBitwiseAnd, ty, lw_op2(c, SpvOpShiftRightLogical, ty, v, sh), m);
		v = lw_op2(c, SpvOpBitwiseOr, ty, lo, hi);
	}
	return v;
}

/* PTX division and remainder, with NVIDIA hardware's results where SPIR-V has none (measured on
 * an H200 by tests/gpu/spirv.sh): x / 0 and x % 0 give all ones, signed or not; INT_MIN / -1
 * wraps to INT_MIN with remainder 0. */
static uint32_t divrem(lw *c, bool rem, ptype t, uint32_t a, uint32_t b)
{
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	uint32_t zero = lw_op2(c, SpvOpIEqual, bl, b, lw_const(c, t, 0));
	uint32_t bad = zero, ovf = 0;
	if (t.k == 's') {
		uint32_t minv = lw_const(c, t, 1ull << (t.bits - 1));
		ovf = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpIEqual, bl, a, minv),
			     lw_op2(c, SpvOpIEqual, bl, b, lw_const(c, t, ~0ull)));
		bad = lw_op2(c, SpvOpLogicalOr, bl, zero, ovf);
	}
	uint32_t sb = lw_select(c, ty, bad, lw_const(c, t, 1), b);
	SpvOp op = rem ? (t.k == 's' ? SpvOpSRem : SpvOpUMod) : (t.k == 's' ? SpvOpSDiv : SpvOpUDiv);
	/* with b == -1 replaced by 1: a / 1 = INT_MIN is the wrapped quotient; the remainder is 0 */
	uint32_t r = lw_op2(c, op, ty, a, sb);
	if (ovf && rem)
		r = lw_select(c, ty, ovf, lw_const(c, t, 0), r);
	return lw_select(c, ty, zero, lw_const(c, t, ~0ull), r);
}

static uint32_t widen(lw *c, ptype t, uint32_t v)
{
	return lw_op1(c, t.k == 's' ? SpvOpSConvert : SpvOpUConvert, spv_t_int(c->e, t.bits * 2), v);
}

/* high half of a*b */
static uint32_t mul_hi(lw *c, ptype t, uint32_t a, uint32_t b)
{
	return lw_ext(c, lw_type(c, t), t.k == 's' ? OpenCLstd_SMul_hi : OpenCLstd_UMul_hi, 2, a, b);
}

static uint32_t mul24(lw *c, ptype t, bool hi, uint32_t a, uint32_t b)
{
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64);
	if (t.k == 's') {
		a = lw_op2(c, SpvOpShiftRightArithmetic, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, a, lw_u32(c, 8)), lw_u32(c, 8));
		b = lw_op2(c, SpvOpShiftRightArithmetic, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, b, lw_u32(c, 8)), lw_u32(c, 8));
	} else {
		a = lw_op2(c, SpvOpBitwiseAnd, u32, a, lw_u32(c, 0xffffff));
		b = lw_op2(c, SpvOpBitwiseAnd, u32, b, lw_u32(c, 0xffffff));
	}
	if (!hi)
		return lw_op2(c, SpvOpIMul, u32, a, b);
	uint32_t p = lw_op2(c, SpvOpIMul, u64, widen(c, t, a), widen(c, t, b));
	return lw_op1(c, SpvOpUConvert, u32, lw_op2(c, SpvOpShiftRightLogical, u64, p, lw_u64(c, 16)));
}

/* dp4a.{s32,u32}.{s32,u32} d, a, b, c: four byte products of a and b, plus c */
static int dp4a(lw *c, const ir_insn *in)
{
	ptype ta = lw_insn_type_n(in, 0), tb = lw_insn_type_n(in, 1);
	if (in->nops != 4 || !ptype_ok(ta) || !ptype_ok(tb))
		return lw_unsupported(c, in, "dp4a needs two types and three sources");
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t a = lw_read(c, &in->ops[1], PT('b', 32)), b = lw_read(c, &in->ops[2], PT('b', 32)),
		 acc = lw_read(c, &in->ops[3], PT('b', 32));
	if (!a || !b || !acc)
		return -1;
	for (unsigned i = 0; i < 4; i++) {
		uint32_t x[2] = {a, b};
		ptype tt[2] = {ta, tb};
		for (int k = 0; k < 2; k++) {
			uint32_t v = lw_op2(c, SpvOpShiftLeftLogical, u32, x[k], lw_u32(c, 24 - 8 * i));
			x[k] = lw_op2(c, tt[k].k == 's' ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical, u32, v, lw_u32(c, 24));
		}
		acc = lw_op2(c, SpvOpIAdd, u32, acc, lw_op2(c, SpvOpIMul, u32, x[0], x[1]));
	}
	return lw_write(c, &in->ops[0], PT('b', 32), acc) < 0 ? -1 : 1;
}

/* dp2a.{lo,hi}.{s32,u32}.{s32,u32} d, a, b, c: a's two 16-bit halves times two bytes of b (the low
 * or high pair), plus c */
static int dp2a(lw *c, const ir_insn *in)
{
	ptype ta = lw_insn_type_n(in, 0), tb = lw_insn_type_n(in, 1);
	bool hi = ir_insn_has_mod(in, ".hi");
	if (in->nops != 4 || !ptype_ok(ta) || !ptype_ok(tb))
		return lw_unsupported(c, in, "dp2a needs two types and three sources");
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t a = lw_read(c, &in->ops[1], PT('b', 32)), b = lw_read(c, &in->ops[2], PT('b', 32)),
		 acc = lw_read(c, &in->ops[3], PT('b', 32));
	if (!a || !b || !acc)
		return -1;
	SpvOp sa = ta.k == 's' ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical;
	SpvOp sb = tb.k == 's' ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical;
	for (unsigned i = 0; i < 2; i++) {
		uint32_t x = lw_op2(c, sa, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, a, lw_u32(c, 16 - 16 * i)), lw_u32(c, 16));
		unsigned byte = (hi ? 2 : 0) + i;
		uint32_t y = lw_op2(c, sb, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, b, lw_u32(c, 24 - 8 * byte)), lw_u32(c, 24));
		acc = lw_op2(c, SpvOpIAdd, u32, acc, lw_op2(c, SpvOpIMul, u32, x, y));
	}
	return lw_write(c, &in->ops[0], PT('b', 32), acc) < 0 ? -1 : 1;
}

int lw_int_arith(lw *c, const ir_insn *in)
{
	if (!strcmp(in->opcode, "dp4a"))
		return dp4a(c, in);
	if (!strcmp(in->opcode, "dp2a"))
		return dp2a(c, in);
	const char *op = in->opcode;
	ptype t = lw_insn_type(in);
	static const char *const mine[] = {"add", "sub", "mul", "mad", "mul24", "mad24", "div", "rem", "abs",
					   "neg", "min", "max", "and", "or", "xor", "not", "cnot", "shl", "shr",
					   "popc", "clz", "brev", "bfe", "bfi", "sad", NULL};
	bool known = false;
	for (const char *const *m = mine; *m; m++)
		known |= !strcmp(op, *m);
	if (!known || !ptype_ok(t) || t.k == 'f')
		return 0;
	if (in->nops < 2)
		return lw_unsupported(c, in, "too few operands");
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	const ir_operand *o = in->ops;

	if (t.k == 'p') { /* and/or/xor/not on predicates */
		uint32_t a = lw_read_pred(c, &o[1]);
		if (!strcmp(op, "not") || !strcmp(op, "cnot"))
			return lw_write(c, &o[0], t, lw_op1(c, SpvOpLogicalNot, bl, a)) < 0 ? -1 : 1;
		if (in->nops < 3)
			return lw_unsupported(c, in, "too few operands");
		uint32_t b = lw_read_pred(c, &o[2]);
		SpvOp sop = !strcmp(op, "and") ? SpvOpLogicalAnd : !strcmp(op, "or") ? SpvOpLogicalOr
			  : !strcmp(op, "xor") ? SpvOpLogicalNotEqual : SpvOpNop;
		if (sop == SpvOpNop)
			return lw_unsupported(c, in, "not a predicate operation");
		return lw_write(c, &o[0], t, lw_op2(c, sop, bl, a, b)) < 0 ? -1 : 1;
	}
	if (t.bits == 8 && strcmp(op, "cvt"))
		return lw_unsupported(c, in, "8-bit arithmetic does not exist in PTX");
	if (ir_insn_has_mod(in, ".cc") || !strcmp(op, "addc") || !strcmp(op, "subc"))
		return lw_unsupported(c, in, "carry chains (.cc) are not lowered");

	/* one-source operations */
	if (!strcmp(op, "abs") || !strcmp(op, "neg") || !strcmp(op, "not") || !strcmp(op, "cnot") ||
	    !strcmp(op, "popc") || !strcmp(op, "clz") || !strcmp(op, "brev")) {
		uint32_t a = lw_read(c, &o[1], t), r;
		if (!a)
			return -1;
		ptype rt = t;
		if (!strcmp(op, "abs"))
			r = lw_select(c, ty, lw_op2(c, SpvOpSLessThan, bl, a, lw_const(c, t, 0)),
				      lw_op1(c, SpvOpSNegate, ty, a), a);
		else if (!strcmp(op, "neg"))
			r = lw_op1(c, SpvOpSNegate, ty, a);
		else if (!strcmp(op, "not"))
			r = lw_op1(c, SpvOpNot, ty, a);
		else if (!strcmp(op, "cnot"))
			r = lw_select(c, ty, lw_op2(c, SpvOpIEqual, bl, a, lw_const(c, t, 0)), lw_const(c, t, 1),
				      lw_const(c, t, 0));
		else if (!strcmp(op, "brev"))
			r = brev(c, t, a);
		else {
			r = lw_ext(c, ty, !strcmp(op, "popc") ? OpenCLstd_Popcount : OpenCLstd_Clz, 1, a);
			if (t.bits != 32)
				r = lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 32), r);
			rt = PT('u', 32);
		}
		return lw_write(c, &o[0], rt, r) < 0 ? -1 : 1;
	}
	if (in->nops < 3)
		return lw_unsupported(c, in, "too few operands");
	bool wide = ir_insn_has_mod(in, ".wide"), hi = ir_insn_has_mod(in, ".hi");
	bool sat = ir_insn_has_mod(in, ".sat");
	if (wide && t.bits > 32)   /* PTX has .wide for 16- and 32-bit operands: no 128-bit product */
		return lw_unsupported(c, in, ".wide needs 16- or 32-bit operands");

	/* shifts take an unsigned 32-bit count whatever the type */
	if (!strcmp(op, "shl") || !strcmp(op, "shr")) {
		uint32_t a = lw_read(c, &o[1], t), n = lw_read(c, &o[2], PT('u', 32));
		if (!a || !n)
			return -1;
		SpvOp sop = !strcmp(op, "shl") ? SpvOpShiftLeftLogical
			  : t.k == 's' ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical;
		return lw_write(c, &o[0], t, shift(c, sop, t, a, n)) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "bfe")) {
		if (in->nops < 4)
			return lw_unsupported(c, in, "too few operands");
		uint32_t a = lw_read(c, &o[1], t), b = lw_read(c, &o[2], PT('u', 32)), d = lw_read(c, &o[3], PT('u', 32));
		if (!a || !b || !d)
			return -1;
		return lw_write(c, &o[0], t, bfe(c, t, a, b, d)) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "bfi")) {
		if (in->nops < 5)
			return lw_unsupported(c, in, "too few operands");
		uint32_t a = lw_read(c, &o[1], t), b = lw_read(c, &o[2], t), p = lw_read(c, &o[3], PT('u', 32)),
			 l = lw_read(c, &o[4], PT('u', 32));
		if (!a || !b || !p || !l)
			return -1;
		return lw_write(c, &o[0], t, bfi(c, t, a, b, p, l)) < 0 ? -1 : 1;
	}

	uint32_t a = lw_read(c, &o[1], t), b = lw_read(c, &o[2], t), r = 0;
	if (!a || !b)
		return -1;
	ptype rt = t;
	if (!strcmp(op, "add") || !strcmp(op, "sub")) {
		if (sat)
			r = lw_ext(c, ty, !strcmp(op, "add") ? OpenCLstd_SAdd_sat : OpenCLstd_SSub_sat, 2, a, b);
		else
			r = lw_op2(c, !strcmp(op, "add") ? SpvOpIAdd : SpvOpISub, ty, a, b);
	} else if (!strcmp(op, "mul") || !strcmp(op, "mad")) {
		if (wide) {
			rt = PT(t.k, t.bits * 2);
			r = lw_op2(c, SpvOpIMul, lw_type(c, rt), widen(c, t, a), widen(c, t, b));
		} else if (hi) {
			r = mul_hi(c, t, a, b);
		} else {
			r = lw_op2(c, SpvOpIMul, ty, a, b);
		}
		if (!strcmp(op, "mad")) {
			if (in->nops < 4)
				return lw_unsupported(c, in, "too few operands");
			uint32_t d = lw_read(c, &o[3], rt);
			if (!d)
				return -1;
			if (sat)
				r = lw_ext(c, lw_type(c, rt), OpenCLstd_SAdd_sat, 2, r, d);
			else
				r = lw_op2(c, SpvOpIAdd, lw_type(c, rt), r, d);
		}
	} else if (!strcmp(op, "mul24") || !strcmp(op, "mad24")) {
		if (t.bits != 32)
			return lw_unsupported(c, in, "24-bit multiply needs a 32-bit type");
		r = mul24(c, t, hi, a, b);
		if (!strcmp(op, "mad24")) {
			uint32_t d = in->nops > 3 ? lw_read(c, &o[3], t) : 0;
			if (!d)
				return -1;
			r = lw_op2(c, SpvOpIAdd, ty, r, d);
		}
	} else if (!strcmp(op, "div") || !strcmp(op, "rem")) {
		r = divrem(c, !strcmp(op, "rem"), t, a, b);
	} else if (!strcmp(op, "min") || !strcmp(op, "max")) {
		uint32_t lt = cmp_lt(c, t, a, b);
		r = !strcmp(op, "min") ? lw_select(c, ty, lt, a, b) : lw_select(c, ty, lt, b, a);
	} else if (!strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor")) {
		SpvOp sop = op[0] == 'a' ? SpvOpBitwiseAnd : op[0] == 'o' ? SpvOpBitwiseOr : SpvOpBitwiseXor;
		r = lw_op2(c, sop, ty, a, b);
	} else if (!strcmp(op, "sad")) {
		uint32_t d = in->nops > 3 ? lw_read(c, &o[3], t) : 0;
		if (!d)
			return -1;
		uint32_t lt = cmp_lt(c, t, a, b);
		uint32_t diff = lw_select(c, ty, lt, lw_op2(c, SpvOpISub, ty, b, a), lw_op2(c, SpvOpISub, ty, a, b));
		r = lw_op2(c, SpvOpIAdd, ty, diff, d);
	} else {
		return 0;
	}
	return lw_write(c, &o[0], rt, r) < 0 ? -1 : 1;
}
