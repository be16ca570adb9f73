/* Conversions to and from the narrow float formats, on the bits: tf32 (f32 with 10 mantissa
 * bits, cvt.{rna,rn,rz}.tf32.f32), bf16 (cvt.{rn,rz}.bf16.f32, cvt.rn.bf16x2.f32, cvt.f32.bf16)
 * and the fp8 pairs (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, cvt.rn.f16x2.{e4m3x2,e5m2x2}).
 * Rounding is to nearest even unless named (.rna: ties away from zero, .rz: toward zero);
 * .satfinite turns what would be infinite into the largest finite value of its sign, .relu
 * negative results into +0. NaN gives the format's canonical NaN. */
#include "spirv/lower.h"

#include <string.h>

static uint32_t u32c(lw *c, uint32_t v) { return lw_u32(c, v); }

/* f32 bits x -> its top (32 - drop) bits rounded (mode 'n' even, 'a' away, 'z' zero); the result
 * is shifted back down by drop. An overflow rounds into the infinity pattern, as it should. */
static uint32_t round_bits(lw *c, uint32_t x, unsigned drop, char mode)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t add;
	if (mode == 'z')
		add = u32c(c, 0);
	else if (mode == 'a')
		add = u32c(c, 1u << (drop - 1));
	else
		add = lw_op2(c, SpvOpIAdd, u32, u32c(c, (1u << (drop - 1)) - 1),
			     lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, x, u32c(c, drop)),
				    u32c(c, 1)));
	return lw_op2(c, SpvOpShiftRightLogical, u32, lw_op2(c, SpvOpIAdd, u32, x, add), u32c(c, drop));
}

static char mode_of(const ir_insn *in)
{
	if (ir_insn_has_mod(in, ".rna"))
		return 'a';
	if (ir_insn_has_mod(in, ".rz"))
		return 'z';
	return 'n';
}

/* f32 value f -> a format whose f32-shaped bits keep (32 - drop) bits (tf32: 13, bf16: 16),
 * returned as those top bits (bf16) or shifted back (tf32: back = true). */
static uint32_t f32_to_trunc(lw *c, const ir_insn *in, uint32_t f, unsigned drop, bool back)
{
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	char mode = mode_of(in);
	if (ir_insn_has_mod(in, ".relu"))
		f = lw_select(c, f32, lw_op2(c, SpvOpFOrdLessThan, bl, f, spv_c_float(c->e, 32, 0)), spv_c_float(c->e, 32, 0), f);
	uint32_t x = lw_op1(c, SpvOpBitcast, u32, f);
	uint32_t sign = lw_op2(c, SpvOpBitwiseAnd, u32, x, u32c(c, 0x80000000u));
	uint32_t mag = lw_op2(c, SpvOpBitwiseAnd, u32, x, u32c(c, 0x7fffffffu));
	uint32_t r = round_bits(c, mag, drop, mode);
	uint32_t inf = u32c(c, 0x7f800000u >> drop), maxf = u32c(c, (0x7f800000u >> drop) - 1);
	if (ir_insn_has_mod(in, ".satfinite"))
		r = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThanEqual, bl, r, inf), maxf, r);
	r = lw_op2(c, SpvOpBitwiseOr, u32, r, lw_op2(c, SpvOpShiftRightLogical, u32, sign, u32c(c, drop)));
	uint32_t nan = u32c(c, 0x7fffffffu >> drop);
	r = lw_select(c, u32, lw_op1(c, SpvOpIsNan, bl, f), nan, r);
	return back ? lw_op2(c, SpvOpShiftLeftLogical, u32, r, u32c(c, drop)) : r;
}

/* ---- fp8 ------------------------------------------------------------------------------------ */

struct fp8 {
	unsigned m, bias;
	uint32_t maxcode, nan; /* largest finite code (no sign), canonical NaN */
};
static const struct fp8 E4M3 = {3, 7, 0x7e, 0x7f}, E5M2 = {2, 15, 0x7b, 0x7f};

/* f32 -> fp8 code (8 bits in a u32), round to nearest even, saturating to the largest finite. */
static uint32_t f32_to_fp8(lw *c, uint32_t f, const struct fp8 *F, bool relu)
{
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	if (relu)
		f = lw_select(c, f32, lw_op2(c, SpvOpFOrdLessThan, bl, f, spv_c_float(c->e, 32, 0)), spv_c_float(c->e, 32, 0), f);
	uint32_t x = lw_op1(c, SpvOpBitcast, u32, f);
	uint32_t sign = lw_op2(c, SpvOpShiftRightLogical, u32, lw_op2(c, SpvOpBitwiseAnd, u32, x, u32c(c, 0x80000000u)),
			       u32c(c, 24));
	uint32_t mag = lw_op2(c, SpvOpBitwiseAnd, u32, x, u32c(c, 0x7fffffffu));
	uint32_t a = lw_op1(c, SpvOpBitcast, f32, mag);
	/* normal: round the f32 mantissa to m bits, rebias the exponent */
	uint32_t r = round_bits(c, mag, 23 - F->m, 'n');
	uint32_t normal = lw_op2(c, SpvOpISub, u32, r, u32c(c, (127u - F->bias) << F->m));
	/* below the smallest normal 2^(1-bias): rint(a * 2^(bias-1+m)), which reaches 2^m exactly
	 * where it rounds up into the smallest normal's code */
	float scale_f = 1.0f;
	for (unsigned i = 0; i < F->bias - 1 + F->m; i++)
		scale_f *= 2.0f;
	uint32_t scale_bits;
	memcpy(&scale_bits, &scale_f, 4);
	uint32_t q = lw_ext(c, f32, OpenCLstd_Rint, 1, lw_op2(c, SpvOpFMul, f32, a, spv_c_float(c->e, 32, scale_bits)));
	uint32_t sub = lw_op1(c, SpvOpConvertFToU, u32, q);
	uint32_t min_normal = (127u + 1u - F->bias) << 23;
	uint32_t code = lw_select(c, u32, lw_op2(c, SpvOpULessThan, bl, mag, u32c(c, min_normal)), sub, normal);
	/* saturate (infinity included), NaN */
	code = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThan, bl, code, u32c(c, F->maxcode)), u32c(c, F->maxcode), code);
	code = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThanEqual, bl, mag, u32c(c, 0x7f800000u)), u32c(c, F->maxcode), code);
	code = lw_op2(c, SpvOpBitwiseOr, u32, code, sign);
	return lw_select(c, u32, lw_op1(c, SpvOpIsNan, bl, f), u32c(c, F->nan), code);
}

/* fp8 code (low 8 bits of a u32) -> f32, exactly. */
static uint32_t fp8_to_f32(lw *c, uint32_t code, const struct fp8 *F, bool e4m3)
{
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	unsigned ebits = 7 - F->m;
	uint32_t sign = lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op2(c, SpvOpBitwiseAnd, u32, code, u32c(c, 0x80)),
			       u32c(c, 24));
	uint32_t ex = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, code, u32c(c, F->m)),
			     u32c(c, (1u << ebits) - 1));
	uint32_t man = lw_op2(c, SpvOpBitwiseAnd, u32, code, u32c(c, (1u << F->m) - 1));
	uint32_t normal = lw_op2(c, SpvOpBitwiseOr, u32,
				 lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op2(c, SpvOpIAdd, u32, ex, u32c(c, 127 - F->bias)),
					u32c(c, 23)),
				 lw_op2(c, SpvOpShiftLeftLogical, u32, man, u32c(c, 23 - F->m)));
	float scale_f = 1.0f;
	for (unsigned i = 0; i < F->bias - 1 + F->m; i++)
		scale_f /= 2.0f;
	uint32_t scale_bits;
	memcpy(&scale_bits, &scale_f, 4);
	uint32_t sub = lw_op1(c, SpvOpBitcast, u32,
			      lw_op2(c, SpvOpFMul, f32, lw_op1(c, SpvOpConvertUToF, f32, man), spv_c_float(c->e, 32, scale_bits)));
	uint32_t mag = lw_select(c, u32, lw_op2(c, SpvOpIEqual, bl, ex, u32c(c, 0)), sub, normal);
	uint32_t top = u32c(c, (1u << ebits) - 1);
	uint32_t special;
	if (e4m3) /* S.1111.111 is NaN; no infinity */
		special = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpIEqual, bl, ex, top),
				 lw_op2(c, SpvOpIEqual, bl, man, u32c(c, 7)));
	else /* exponent all ones: infinity or NaN, as in f16 */
		special = lw_op2(c, SpvOpIEqual, bl, ex, top);
	uint32_t sp = e4m3 ? u32c(c, 0x7fc00000u)
			   : lw_select(c, u32, lw_op2(c, SpvOpIEqual, bl, man, u32c(c, 0)), u32c(c, 0x7f800000u),
				       u32c(c, 0x7fc00000u));
	mag = lw_select(c, u32, special, sp, mag);
	return lw_op1(c, SpvOpBitcast, f32, lw_op2(c, SpvOpBitwiseOr, u32, mag, sign));
}

/* ---- dispatch -------------------------------------------------------------------------------- */

int lw_cvt_narrow(lw *c, const ir_insn *in)
{
	if (strcmp(in->opcode, "cvt"))
		return 0;
	/* the two types: destination, then source */
	const char *ty[2] = {NULL, NULL};
	unsigned nt = 0;
	static const char *const types[] = {".tf32", ".bf16", ".bf16x2", ".e4m3x2", ".e5m2x2", ".f32", ".f16x2", NULL};
	for (unsigned i = 0; i < in->nmods; i++) {
		bool is_type = ptype_ok(ptype_parse(in->mods[i]));
		for (const char *const *t = types; *t && !is_type; t++)
			is_type = !strcmp(in->mods[i], *t);
		if (is_type && nt < 2)
			ty[nt++] = in->mods[i];
	}
	if (nt != 2)
		return 0;
	bool narrow = false;
	for (unsigned i = 0; i < 2; i++)
		narrow |= !strcmp(ty[i], ".tf32") || !strncmp(ty[i], ".bf16", 5) || !strcmp(ty[i], ".e4m3x2") ||
			  !strcmp(ty[i], ".e5m2x2");
	if (!narrow)
		return 0;
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32);
	const ir_operand *o = in->ops;
	bool relu = ir_insn_has_mod(in, ".relu");
	if (!strcmp(ty[0], ".tf32") && !strcmp(ty[1], ".f32") && in->nops == 2) {
		uint32_t a = lw_read(c, &o[1], PT('f', 32));
		if (!a)
			return -1;
		return lw_write(c, &o[0], PT('b', 32), f32_to_trunc(c, in, a, 13, true)) < 0 ? -1 : 1;
	}
	if (!strcmp(ty[0], ".bf16") && !strcmp(ty[1], ".f32") && in->nops == 2) {
		uint32_t a = lw_read(c, &o[1], PT('f', 32));
		if (!a)
			return -1;
		uint32_t r = f32_to_trunc(c, in, a, 16, false);
		return lw_write(c, &o[0], PT('b', 16), lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 16), r)) < 0 ? -1 : 1;
	}
	if (!strcmp(ty[0], ".bf16x2") && !strcmp(ty[1], ".f32") && in->nops == 3) {
		uint32_t a = lw_read(c, &o[1], PT('f', 32)), b = a ? lw_read(c, &o[2], PT('f', 32)) : 0;
		if (!b)
			return -1;
		uint32_t hi = f32_to_trunc(c, in, a, 16, false), lo = f32_to_trunc(c, in, b, 16, false);
		uint32_t r = lw_op2(c, SpvOpBitwiseOr, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, hi, u32c(c, 16)), lo);
		return lw_write(c, &o[0], PT('b', 32), r) < 0 ? -1 : 1;
	}
	if (!strcmp(ty[0], ".f32") && !strcmp(ty[1], ".bf16") && in->nops == 2) {
		uint32_t a = lw_read(c, &o[1], PT('u', 16));
		if (!a)
			return -1;
		uint32_t r = lw_op1(c, SpvOpBitcast, f32,
				    lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op1(c, SpvOpUConvert, u32, a), u32c(c, 16)));
		return lw_write(c, &o[0], PT('f', 32), r) < 0 ? -1 : 1;
	}
	bool e4 = !strcmp(ty[0], ".e4m3x2") || !strcmp(ty[1], ".e4m3x2");
	const struct fp8 *F = e4 ? &E4M3 : &E5M2;
	if ((!strcmp(ty[0], ".e4m3x2") || !strcmp(ty[0], ".e5m2x2")) && !strcmp(ty[1], ".f32") && in->nops == 3) {
		if (!ir_insn_has_mod(in, ".satfinite"))
			return lw_unsupported(c, in, "fp8 conversions need .satfinite");
		uint32_t a = lw_read(c, &o[1], PT('f', 32)), b = a ? lw_read(c, &o[2], PT('f', 32)) : 0;
		if (!b)
			return -1;
		uint32_t hi = f32_to_fp8(c, a, F, relu), lo = f32_to_fp8(c, b, F, relu);
		uint32_t r = lw_op2(c, SpvOpBitwiseOr, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, hi, u32c(c, 8)), lo);
		return lw_write(c, &o[0], PT('b', 16), lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 16), r)) < 0 ? -1 : 1;
	}
	if (!strcmp(ty[0], ".f16x2") && (!strcmp(ty[1], ".e4m3x2") || !strcmp(ty[1], ".e5m2x2")) && in->nops == 2) {
		uint32_t a = lw_read(c, &o[1], PT('u', 16));
		if (!a)
			return -1;
		a = lw_op1(c, SpvOpUConvert, u32, a);
		uint32_t halves[2];
		for (unsigned h = 0; h < 2; h++) {
			uint32_t code = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, a, u32c(c, 8 * h)),
					       u32c(c, 0xff));
			uint32_t f = fp8_to_f32(c, code, F, e4);
			if (relu)
				f = lw_select(c, f32, lw_op2(c, SpvOpFOrdLessThan, spv_t_bool(c->e), f, spv_c_float(c->e, 32, 0)),
					      spv_c_float(c->e, 32, 0), f);
			halves[h] = lw_op1(c, SpvOpUConvert, u32, lw_f2h(c, f)); /* exact: f16 holds every fp8 */
		}
		uint32_t r = lw_op2(c, SpvOpBitwiseOr, u32, halves[0],
				    lw_op2(c, SpvOpShiftLeftLogical, u32, halves[1], u32c(c, 16)));
		return lw_write(c, &o[0], PT('b', 32), r) < 0 ? -1 : 1;
	}
	return lw_unsupported(c, in, "this conversion of a narrow float format is not lowered");
}
