/* f16 and bf16 arithmetic (.f16, .bf16 and packed .f16x2, .bf16x2): each half is widened to f32 (vload_half), computed
 * there and rounded back once to nearest even (vstore_half_r). For add, sub, mul and min/max that
 * is exact: f32 has more than twice the bits of f16 plus two, so rounding twice equals rounding
 * once. fma goes through an f64 fma, which can round twice only in cases that need more than 53
 * bits of exact result. .ftz flushes f16 subnormals, .sat clamps to [0, 1]. */
#include "spirv/lower.h"

#include <string.h>

static uint32_t half_ptr(lw *c, uint32_t *slot)
{
	uint32_t i16 = spv_t_int(c->e, 16);
	spv_capability(c->e, SpvCapabilityFloat16Buffer);
	*slot = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, i16), *slot,
	       (uint32_t)SpvStorageClassFunction);
	return lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, spv_t_float(c->e, 16)), *slot);
}

uint32_t lw_h2f(lw *c, uint32_t bits16)
{
	uint32_t slot, hp = half_ptr(c, &slot);
	spv_op(&c->body, SpvOpStore, 2, slot, bits16);
	return lw_ext(c, spv_t_float(c->e, 32), OpenCLstd_Vload_half, 2, lw_u64(c, 0), hp);
}

static uint32_t f2h(lw *c, uint32_t f)
{
	uint32_t slot, hp = half_ptr(c, &slot);
	lw_ext(c, spv_t_void(c->e), OpenCLstd_Vstore_half_r, 4, f, lw_u64(c, 0), hp, (uint32_t)SpvFPRoundingModeRTE);
	return lw_op1(c, SpvOpLoad, spv_t_int(c->e, 16), slot);
}

uint32_t lw_f2h(lw *c, uint32_t f)
{
	return f2h(c, f);
}

/* |x| below f16's smallest normal (2^-14) -> zero of x's sign */
static uint32_t ftz16(lw *c, uint32_t x)
{
	uint32_t f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t a = lw_ext(c, f32, OpenCLstd_Fabs, 1, x);
	uint32_t small = lw_op2(c, SpvOpFOrdLessThan, bl, a, spv_c_float(c->e, 32, 0x38800000u));
	uint32_t z = lw_ext(c, f32, OpenCLstd_Copysign, 2, spv_c_float(c->e, 32, 0), x);
	return lw_select(c, f32, small, z, x);
}

/* bf16 (low 16 bits of a u32) -> f32, exactly; f32 -> bf16 to nearest even (NaN: 0x7fff) */
static uint32_t bf2f(lw *c, uint32_t bits)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	return lw_op1(c, SpvOpBitcast, spv_t_float(c->e, 32),
		      lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op1(c, SpvOpUConvert, u32, bits), lw_u32(c, 16)));
}

static uint32_t f2bf(lw *c, uint32_t f)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t x = lw_op1(c, SpvOpBitcast, u32, f);
	uint32_t odd = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, x, lw_u32(c, 16)), lw_u32(c, 1));
	uint32_t r = lw_op2(c, SpvOpShiftRightLogical, u32,
			    lw_op2(c, SpvOpIAdd, u32, x, lw_op2(c, SpvOpIAdd, u32, lw_u32(c, 0x7fff), odd)), lw_u32(c, 16));
	r = lw_select(c, u32, lw_op1(c, SpvOpIsNan, spv_t_bool(c->e), f), lw_u32(c, 0x7fff), r);
	return lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 16), r);
}

static uint32_t one(lw *c, const char *op, uint32_t *s, unsigned n, bool fz, bool sat, bool bf)
{
	uint32_t f32 = spv_t_float(c->e, 32), f64 = spv_t_float(c->e, 64), bl = spv_t_bool(c->e), r;
	for (unsigned i = 0; i < n; i++)
		if (fz)
			s[i] = ftz16(c, s[i]);
	if (!strcmp(op, "add"))
		r = lw_op2(c, SpvOpFAdd, f32, s[0], s[1]);
	else if (!strcmp(op, "sub"))
		r = lw_op2(c, SpvOpFSub, f32, s[0], s[1]);
	else if (!strcmp(op, "mul"))
		r = lw_op2(c, SpvOpFMul, f32, s[0], s[1]);
	else if (!strcmp(op, "fma")) {
		uint32_t a = lw_op1(c, SpvOpFConvert, f64, s[0]), b = lw_op1(c, SpvOpFConvert, f64, s[1]),
			 d = lw_op1(c, SpvOpFConvert, f64, s[2]);
		r = lw_op1(c, SpvOpFConvert, f32, lw_ext(c, f64, OpenCLstd_Fma, 3, a, b, d));
	} else if (!strcmp(op, "neg"))
		r = lw_op1(c, SpvOpFNegate, f32, s[0]);
	else if (!strcmp(op, "abs"))
		r = lw_ext(c, f32, OpenCLstd_Fabs, 1, s[0]);
	else { /* min/max: NaN only if both are; -0 below +0 */
		bool mx = !strcmp(op, "max");
		r = lw_ext(c, f32, mx ? OpenCLstd_Fmax : OpenCLstd_Fmin, 2, s[0], s[1]);
		uint32_t u32 = spv_t_int(c->e, 32);
		uint32_t z = lw_op1(c, SpvOpBitcast, f32, lw_op2(c, mx ? SpvOpBitwiseAnd : SpvOpBitwiseOr, u32,
								 lw_op1(c, SpvOpBitcast, u32, s[0]), lw_op1(c, SpvOpBitcast, u32, s[1])));
		r = lw_select(c, f32, lw_op2(c, SpvOpFOrdEqual, bl, s[0], s[1]), z, r);
	}
	if (sat) {
		uint32_t c0 = spv_c_float(c->e, 32, 0), c1 = spv_c_float(c->e, 32, 0x3f800000u);
		r = lw_select(c, f32, lw_op2(c, SpvOpFOrdGreaterThan, bl, r, c0),
			      lw_select(c, f32, lw_op2(c, SpvOpFOrdLessThan, bl, r, c1), r, c1), c0);
	}
	if (fz)
		r = ftz16(c, r);
	return bf ? f2bf(c, r) : f2h(c, r);
}

int lw_half(lw *c, const ir_insn *in)
{
	static const char *const ops[] = {"add", "sub", "mul", "fma", "neg", "abs", "min", "max", NULL};
	bool known = false;
	for (const char *const *o = ops; *o; o++)
		known |= !strcmp(in->opcode, *o);
	bool bf = ir_insn_has_mod(in, ".bf16") || ir_insn_has_mod(in, ".bf16x2");
	bool x2 = ir_insn_has_mod(in, ".f16x2") || ir_insn_has_mod(in, ".bf16x2");
	if (!known || (!x2 && !ir_insn_has_mod(in, ".f16") && !bf))
		return 0;
	for (unsigned i = 0; i < in->nmods; i++)
		if (strcmp(in->mods[i], ".f16") && strcmp(in->mods[i], ".f16x2") && strcmp(in->mods[i], ".rn") &&
		    strcmp(in->mods[i], ".ftz") && strcmp(in->mods[i], ".sat") && strcmp(in->mods[i], ".bf16") &&
		    strcmp(in->mods[i], ".bf16x2"))
			return lw_unsupported(c, in, bf ? "this bf16 modifier is not lowered" : "this f16 modifier is not lowered");
	unsigned n = !strcmp(in->opcode, "fma") ? 3 : !strcmp(in->opcode, "neg") || !strcmp(in->opcode, "abs") ? 1 : 2;
	if (in->nops != n + 1)
		return lw_unsupported(c, in, "wrong operand count");
	bool fz = ir_insn_has_mod(in, ".ftz"), sat = ir_insn_has_mod(in, ".sat");
	ptype t = x2 ? PT('b', 32) : PT('b', 16);
	uint32_t v[3], u32 = spv_t_int(c->e, 32), i16 = spv_t_int(c->e, 16);
	for (unsigned i = 0; i < n; i++)
		if (!(v[i] = lw_read(c, &in->ops[1 + i], t)))
			return -1;
	lw_ensure_block(c);
	uint32_t r;
	if (!x2) {
		uint32_t s[3];
		for (unsigned i = 0; i < n; i++)
			s[i] = bf ? bf2f(c, v[i]) : lw_h2f(c, v[i]);
		r = one(c, in->opcode, s, n, fz, sat, bf);
	} else {
		uint32_t half[2];
		for (unsigned h = 0; h < 2; h++) {
			uint32_t s[3];
			for (unsigned i = 0; i < n; i++) {
				uint32_t x = h ? lw_op2(c, SpvOpShiftRightLogical, u32, v[i], lw_u32(c, 16)) : v[i];
				s[i] = bf ? bf2f(c, lw_op1(c, SpvOpUConvert, i16, x)) : lw_h2f(c, lw_op1(c, SpvOpUConvert, i16, x));
			}
			half[h] = lw_op1(c, SpvOpUConvert, u32, one(c, in->opcode, s, n, fz, sat, bf));
		}
		r = lw_op2(c, SpvOpBitwiseOr, u32, half[0], lw_op2(c, SpvOpShiftLeftLogical, u32, half[1], lw_u32(c, 16)));
	}
	return lw_write(c, &in->ops[0], t, r) < 0 ? -1 : 1;
}
