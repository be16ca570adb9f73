/* Data movement and conversions: mov (with vector pack/unpack), cvt with PTX's rounding and
 * saturation (float-to-integer saturates and maps NaN to 0, always), cvta, and the
 * predicate-producing and -consuming instructions setp, set, selp, slct. */
#include "spirv/lower.h"

#include <string.h>

static const char *const irnd[] = {".rni", ".rzi", ".rmi", ".rpi", NULL};
static const char *const frnd[] = {".rn", ".rz", ".rm", ".rp", NULL};

static SpvFPRoundingMode fmode(const char *m)
{
	if (!m || !strcmp(m, ".rn") || !strcmp(m, ".rni"))
		return SpvFPRoundingModeRTE;
	if (!strcmp(m, ".rz") || !strcmp(m, ".rzi"))
		return SpvFPRoundingModeRTZ;
	if (!strcmp(m, ".rm") || !strcmp(m, ".rmi"))
		return SpvFPRoundingModeRTN;
	return SpvFPRoundingModeRTP;
}

static uint32_t ftz32(lw *c, uint32_t x)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t bits = lw_op1(c, SpvOpBitcast, u32, x);
	uint32_t sub = lw_op2(c, SpvOpIEqual, spv_t_bool(c->e), lw_op2(c, SpvOpBitwiseAnd, u32, bits, lw_u32(c, 0x7f800000)),
			      lw_u32(c, 0));
	uint32_t z = lw_op2(c, SpvOpBitwiseAnd, u32, bits, lw_u32(c, 0x80000000));
	return lw_op1(c, SpvOpBitcast, spv_t_float(c->e, 32), lw_select(c, u32, sub, z, bits));
}

static uint32_t fsat(lw *c, ptype t, uint32_t x)
{
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	uint64_t one = t.bits == 32 ? 0x3f800000u : 0x3ff0000000000000ull;
	uint32_t c1 = lw_const(c, t, one), c0 = lw_const(c, t, 0);
	uint32_t gt0 = lw_op2(c, SpvOpFOrdGreaterThan, bl, x, c0);
	uint32_t lt1 = lw_op2(c, SpvOpFOrdLessThan, bl, x, c1);
	return lw_select(c, ty, gt0, lw_select(c, ty, lt1, x, c1), c0);
}

static uint32_t round_integral(lw *c, ptype t, uint32_t x, const char *m)
{
	uint32_t ty = lw_type(c, t);
	enum OpenCLstd_Entrypoints f = !strcmp(m, ".rni") ? OpenCLstd_Rint : !strcmp(m, ".rzi") ? OpenCLstd_Trunc
				     : !strcmp(m, ".rmi") ? OpenCLstd_Floor : OpenCLstd_Ceil;
	return lw_ext(c, ty, f, 1, x);
}

/* Clamp integer v (already at least as wide as both types, extended by s's signedness) into d. */
static uint32_t int_sat(lw *c, uint32_t v, ptype s, ptype d, ptype w)
{
	uint32_t ty = lw_type(c, w), bl = spv_t_bool(c->e);
	uint64_t dmax = d.k == 's' ? (1ull << (d.bits - 1)) - 1 : (d.bits == 64 ? ~0ull : (1ull << d.bits) - 1);
	int64_t dmin = d.k == 's' ? -(int64_t)(1ull << (d.bits - 1)) : 0;
	if (s.k == 's') {
		if (!(d.k == 'u' && d.bits >= w.bits)) { /* else the top of d is beyond signed w */
			uint32_t gt = lw_op2(c, SpvOpSGreaterThan, bl, v, lw_const(c, w, dmax));
			v = lw_select(c, ty, gt, lw_const(c, w, dmax), v);
		}
		uint32_t lt = lw_op2(c, SpvOpSLessThan, bl, v, lw_const(c, w, (uint64_t)dmin));
		v = lw_select(c, ty, lt, lw_const(c, w, (uint64_t)dmin), v);
	} else {
		uint32_t gt = lw_op2(c, SpvOpUGreaterThan, bl, v, lw_const(c, w, dmax));
		v = lw_select(c, ty, gt, lw_const(c, w, dmax), v);
	}
	return v;
}

/* f16 <-> f32/f64 through OpenCL's vload_half/vstore_half_r on a private 16-bit slot: exact and
 * correctly rounded (rn/rz/rm/rp), without cl_khr_fp16. Integer <-> f16 is not lowered. */
static int half_cvt(lw *c, const ir_insn *in, ptype d, ptype s)
{
	bool to_half = d.k == 'f' && d.bits == 16;
	ptype other = to_half ? s : d;
	if (other.k != 'f' || other.bits == 16 || ir_insn_has_mod(in, ".sat") || ir_insn_has_mod(in, ".relu") ||
	    ir_insn_has_mod(in, ".satfinite"))
		return lw_unsupported(c, in, "only plain conversions between f16 and f32/f64 are lowered");
	uint32_t i16 = spv_t_int(c->e, 16);
	spv_capability(c->e, SpvCapabilityFloat16Buffer);
	uint32_t half = spv_t_float(c->e, 16);
	uint32_t slot = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, i16), slot,
	       (uint32_t)SpvStorageClassFunction);
	uint32_t hp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, half), slot);
	uint32_t a = lw_read(c, &in->ops[1], to_half ? s : PT('b', 16));
	if (!a)
		return -1;
	if (to_half) {
		if (ir_insn_has_mod(in, ".ftz") && s.bits == 32)
			a = ftz32(c, a);
		const char *fr = lw_insn_mod_in(in, frnd);
		uint32_t mode = fmode(fr);
		/* the rounding mode is a literal operand */
		lw_ext(c, spv_t_void(c->e), OpenCLstd_Vstore_half_r, 4, a, lw_u64(c, 0), hp, mode);
		uint32_t bits = lw_op1(c, SpvOpLoad, i16, slot);
		return lw_write(c, &in->ops[0], PT('b', 16), bits) < 0 ? -1 : 1;
	}
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpStore, 2, slot, a);
	uint32_t f = lw_ext(c, spv_t_float(c->e, 32), OpenCLstd_Vload_half, 2, lw_u64(c, 0), hp);
	if (d.bits == 64)
		f = lw_op1(c, SpvOpFConvert, spv_t_float(c->e, 64), f);
	else if (ir_insn_has_mod(in, ".ftz"))
		f = ftz32(c, f);
	return lw_write(c, &in->ops[0], d, f) < 0 ? -1 : 1;
}

static int lower_cvt(lw *c, const ir_insn *in)
{
	ptype d = lw_insn_type_n(in, 0), s = lw_insn_type_n(in, 1);
	if (!ptype_ok(d) || !ptype_ok(s) || in->nops < 2)
		return lw_unsupported(c, in, "cvt needs a destination and a source type");
	if ((d.k == 'f' && d.bits == 16) || (s.k == 'f' && s.bits == 16))
		return half_cvt(c, in, d, s);
	bool sat = ir_insn_has_mod(in, ".sat"), fz = ir_insn_has_mod(in, ".ftz");
	const char *ir = lw_insn_mod_in(in, irnd), *fr = lw_insn_mod_in(in, frnd);
	uint32_t a = lw_read(c, &in->ops[1], s), r;
	if (!a)
		return -1;
	uint32_t dt = lw_type(c, d);
	if (s.k == 'f' && fz && s.bits == 32)
		a = ftz32(c, a);
	if (s.k != 'f' && d.k != 'f') {
		ptype w = PT(s.k == 's' ? 's' : 'u', s.bits > d.bits ? s.bits : d.bits);
		uint32_t v = lw_convert_bits(c, a, s, w);
		if (sat)
			v = int_sat(c, v, s, d, w);
		r = lw_convert_bits(c, v, w, PT(d.k, d.bits));
	} else if (s.k == 'f' && d.k == 'f') {
		if (ir)
			a = round_integral(c, s, a, ir);
		if (s.bits == d.bits) {
			r = a;
		} else {
			r = lw_op1(c, SpvOpFConvert, dt, a);
			if (d.bits < s.bits && fr && fmode(fr) != SpvFPRoundingModeRTE)
				spv_decorate(c->e, r, SpvDecorationFPRoundingMode, 1, (uint32_t)fmode(fr));
		}
		if (sat)
			r = fsat(c, d, r);
		if (fz && d.bits == 32)
			r = ftz32(c, r);
	} else if (s.k == 'f') {
		/* float to integer: round as asked, then saturate (NaN -> 0) as PTX always does */
		a = round_integral(c, s, a, ir ? ir : ".rzi");
		r = lw_op1(c, d.k == 's' ? SpvOpConvertFToS : SpvOpConvertFToU, dt, a);
		spv_decorate(c->e, r, SpvDecorationSaturatedConversion, 0);
		if (d.k == 's' && d.bits == 64) /* NVIDIA gives INT64_MIN for NaN here (H200, measured) */
			r = lw_select(c, dt, lw_op1(c, SpvOpIsNan, spv_t_bool(c->e), a), lw_const(c, d, 1ull << 63), r);
	} else {
		r = lw_op1(c, s.k == 's' ? SpvOpConvertSToF : SpvOpConvertUToF, dt, a);
		if (fr && fmode(fr) != SpvFPRoundingModeRTE)
			spv_decorate(c->e, r, SpvDecorationFPRoundingMode, 1, (uint32_t)fmode(fr));
		if (sat)
			r = fsat(c, d, r);
	}
	return lw_write(c, &in->ops[0], d, r) < 0 ? -1 : 1;
}

static int lower_mov(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	if (!ptype_ok(t) || in->nops != 2)
		return lw_unsupported(c, in, "mov needs a type and two operands");
	const ir_operand *d = &in->ops[0], *a = &in->ops[1];
	if (a->kind == IR_OPND_VEC || d->kind == IR_OPND_VEC) {
		const ir_operand *v = a->kind == IR_OPND_VEC ? a : d;
		unsigned n = v->nelems;
		if (!n || t.bits % n)
			return lw_unsupported(c, in, "vector operand does not split the type evenly");
		ptype et = PT('b', t.bits / n);
		uint32_t ty = lw_type(c, PT('b', t.bits));
		if (a->kind == IR_OPND_VEC) { /* pack: element 0 is the low part */
			uint32_t acc = lw_const(c, PT('b', t.bits), 0);
			for (unsigned i = 0; i < n; i++) {
				uint32_t e = lw_read(c, &v->elems[i], et);
				if (!e)
					return -1;
				e = lw_op1(c, SpvOpUConvert, ty, e);
				if (i)
					e = lw_op2(c, SpvOpShiftLeftLogical, ty, e, lw_const(c, PT('b', t.bits), i * et.bits));
				acc = lw_op2(c, SpvOpBitwiseOr, ty, acc, e);
			}
			return lw_write(c, d, PT('b', t.bits), acc) < 0 ? -1 : 1;
		}
		uint32_t src = lw_read(c, a, PT('b', t.bits));
		if (!src)
			return -1;
		for (unsigned i = 0; i < n; i++) {
			uint32_t e = i ? lw_op2(c, SpvOpShiftRightLogical, ty, src, lw_const(c, PT('b', t.bits), i * et.bits)) : src;
			e = lw_op1(c, SpvOpUConvert, lw_type(c, et), e);
			if (lw_write(c, &v->elems[i], et, e) < 0)
				return -1;
		}
		return 1;
	}
	uint32_t v = lw_read(c, a, t);
	if (!v)
		return -1;
	return lw_write(c, d, t, v) < 0 ? -1 : 1;
}

static int lower_cvta(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	if (in->nops != 2 || !ptype_ok(t))
		return lw_unsupported(c, in, "cvta needs a type and two operands");
	bool to = ir_insn_has_mod(in, ".to");
	uint32_t a = lw_read(c, &in->ops[1], PT('u', 64));
	if (!a)
		return -1;
	uint32_t u64 = spv_t_int(c->e, 64);
	if (ir_insn_has_mod(in, ".shared")) {
		if (!c->shared_window)
			return lw_unsupported(c, in, "the module declares no .shared variable");
		uint32_t base = lw_op1(c, SpvOpConvertPtrToU, u64, c->shared_window);
		a = to ? lw_op2(c, SpvOpISub, u64, a, base) : lw_op2(c, SpvOpIAdd, u64, base, a);
	}
	/* global, local, const and param addresses are the target's own flat addresses already */
	return lw_write(c, &in->ops[0], PT('u', 64), a) < 0 ? -1 : 1;
}

/* The comparison of setp/set: returns a bool. */
static uint32_t compare(lw *c, const ir_insn *in, ptype t, uint32_t a, uint32_t b)
{
	static const char *const cmps[] = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs",
					   ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan", NULL};
	const char *m = lw_insn_mod_in(in, cmps);
	if (!m) {
		lw_unsupported(c, in, "unknown comparison");
		return 0;
	}
	m++;
	uint32_t bl = spv_t_bool(c->e);
	if (t.k == 'f') {
		static const struct { const char *n; SpvOp op; } f[] = {
			{"eq", SpvOpFOrdEqual}, {"ne", SpvOpFOrdNotEqual}, {"lt", SpvOpFOrdLessThan},
			{"le", SpvOpFOrdLessThanEqual}, {"gt", SpvOpFOrdGreaterThan}, {"ge", SpvOpFOrdGreaterThanEqual},
			{"equ", SpvOpFUnordEqual}, {"neu", SpvOpFUnordNotEqual}, {"ltu", SpvOpFUnordLessThan},
			{"leu", SpvOpFUnordLessThanEqual}, {"gtu", SpvOpFUnordGreaterThan},
			{"geu", SpvOpFUnordGreaterThanEqual}, {"num", SpvOpOrdered}, {"nan", SpvOpUnordered},
		};
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (!strcmp(m, f[i].n))
				return lw_op2(c, f[i].op, bl, a, b);
	} else {
		bool sg = t.k == 's';
		static const struct { const char *n; SpvOp s, u; } q[] = {
			{"eq", SpvOpIEqual, SpvOpIEqual}, {"ne", SpvOpINotEqual, SpvOpINotEqual},
			{"lt", SpvOpSLessThan, SpvOpULessThan}, {"le", SpvOpSLessThanEqual, SpvOpULessThanEqual},
			{"gt", SpvOpSGreaterThan, SpvOpUGreaterThan}, {"ge", SpvOpSGreaterThanEqual, SpvOpUGreaterThanEqual},
			{"lo", SpvOpULessThan, SpvOpULessThan}, {"ls", SpvOpULessThanEqual, SpvOpULessThanEqual},
			{"hi", SpvOpUGreaterThan, SpvOpUGreaterThan}, {"hs", SpvOpUGreaterThanEqual, SpvOpUGreaterThanEqual},
		};
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
			if (!strcmp(m, q[i].n))
				return lw_op2(c, sg ? q[i].s : q[i].u, bl, a, b);
	}
	lw_unsupported(c, in, "comparison does not apply to this type");
	return 0;
}

/* .and/.or/.xor with a third predicate operand. */
static uint32_t combine(lw *c, const ir_insn *in, uint32_t r, const ir_operand *cop)
{
	static const char *const bops[] = {".and", ".or", ".xor", NULL};
	const char *b = lw_insn_mod_in(in, bops);
	if (!b || !cop)
		return r;
	uint32_t p = lw_read_pred(c, cop);
	if (!p)
		return 0;
	SpvOp op = !strcmp(b, ".and") ? SpvOpLogicalAnd : !strcmp(b, ".or") ? SpvOpLogicalOr : SpvOpLogicalNotEqual;
	return lw_op2(c, op, spv_t_bool(c->e), r, p);
}

/* f16 and f16x2 comparisons: halves widened to f32 (exact), compared there. */
static int half_compare(lw *c, const ir_insn *in, bool x2, uint32_t r[2])
{
	uint32_t u32 = spv_t_int(c->e, 32), i16 = spv_t_int(c->e, 16);
	uint32_t a = lw_read(c, &in->ops[1], PT('b', x2 ? 32 : 16)), b = lw_read(c, &in->ops[2], PT('b', x2 ? 32 : 16));
	if (!a || !b)
		return -1;
	for (unsigned h = 0; h < (x2 ? 2u : 1u); h++) {
		uint32_t ah = x2 ? lw_op1(c, SpvOpUConvert, i16, h ? lw_op2(c, SpvOpShiftRightLogical, u32, a, lw_u32(c, 16)) : a) : a;
		uint32_t bh = x2 ? lw_op1(c, SpvOpUConvert, i16, h ? lw_op2(c, SpvOpShiftRightLogical, u32, b, lw_u32(c, 16)) : b) : b;
		uint32_t fa = lw_h2f(c, ah), fb = lw_h2f(c, bh);
		if (!(r[h] = compare(c, in, PT('f', 32), fa, fb)))
			return -1;
	}
	return 0;
}

static int lower_setp(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	if (in->nops < 3 || (!ptype_ok(t) && !ir_insn_has_mod(in, ".f16x2")))
		return lw_unsupported(c, in, "setp needs a type and three operands");
	if ((t.bits == 16 && t.k == 'f') || ir_insn_has_mod(in, ".f16x2")) {
		bool x2 = ir_insn_has_mod(in, ".f16x2");
		if (ir_insn_has_mod(in, ".ftz"))
			return lw_unsupported(c, in, "f16 comparisons with .ftz are not lowered");
		uint32_t r[2];
		if (half_compare(c, in, x2, r) < 0)
			return -1;
		const ir_operand *d = &in->ops[0];
		const ir_operand *cop = in->nops > 3 ? &in->ops[3] : NULL;
		if (x2) { /* p gets the low halves' result, q the high halves' */
			if (d->kind != IR_OPND_PAIR || d->nelems != 2)
				return lw_unsupported(c, in, "setp.f16x2 needs a p|q destination");
			uint32_t p = combine(c, in, r[0], cop), q = combine(c, in, r[1], cop);
			if (!p || !q || lw_write(c, &d->elems[0], PT('p', 1), p) < 0 || lw_write(c, &d->elems[1], PT('p', 1), q) < 0)
				return -1;
			return 1;
		}
		uint32_t p = combine(c, in, r[0], cop);
		if (!p)
			return -1;
		if (d->kind == IR_OPND_PAIR && d->nelems == 2) {
			uint32_t q = combine(c, in, lw_op1(c, SpvOpLogicalNot, spv_t_bool(c->e), r[0]), cop);
			return !q || lw_write(c, &d->elems[0], PT('p', 1), p) < 0 || lw_write(c, &d->elems[1], PT('p', 1), q) < 0 ? -1 : 1;
		}
		return lw_write(c, d, PT('p', 1), p) < 0 ? -1 : 1;
	}
	uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t);
	if (!a || !b)
		return -1;
	if (t.k == 'f' && ir_insn_has_mod(in, ".ftz") && t.bits == 32)
		a = ftz32(c, a), b = ftz32(c, b);
	uint32_t r = compare(c, in, t, a, b);
	if (!r)
		return -1;
	uint32_t bl = spv_t_bool(c->e);
	const ir_operand *cop = in->nops > 3 ? &in->ops[3] : NULL;
	uint32_t p = combine(c, in, r, cop);
	if (!p)
		return -1;
	const ir_operand *d = &in->ops[0];
	if (d->kind == IR_OPND_PAIR && d->nelems == 2) {
		uint32_t q = combine(c, in, lw_op1(c, SpvOpLogicalNot, bl, r), cop);
		if (!q || lw_write(c, &d->elems[0], PT('p', 1), p) < 0 || lw_write(c, &d->elems[1], PT('p', 1), q) < 0)
			return -1;
		return 1;
	}
	return lw_write(c, d, PT('p', 1), p) < 0 ? -1 : 1;
}

static int lower_set(lw *c, const ir_insn *in)
{
	ptype d = lw_insn_type_n(in, 0), s = lw_insn_type_n(in, 1);
	bool sx2 = in->nmods && !strcmp(in->mods[in->nmods - 1], ".f16x2");
	if (sx2 || (s.k == 'f' && s.bits == 16)) {
		/* set.CMP.{f16,f16x2,u32,s32}.{f16,f16x2}: 1.0 (f16 0x3c00) or all ones per half, else 0 */
		bool dx2 = in->nmods >= 2 && !strcmp(in->mods[in->nmods - 2], ".f16x2");
		bool dhalf = dx2 || (d.k == 'f' && d.bits == 16);
		if (ir_insn_has_mod(in, ".ftz") || lw_insn_mod_in(in, (const char *const[]){".and", ".or", ".xor", NULL}))
			return lw_unsupported(c, in, "f16 set with .ftz or a predicate combination is not lowered");
		uint32_t r[2], u32 = spv_t_int(c->e, 32);
		if (half_compare(c, in, sx2, r) < 0)
			return -1;
		uint32_t one = dhalf ? 0x3c00u : 0xffffu, v;
		if (sx2) {
			uint32_t lo = lw_select(c, u32, r[0], lw_u32(c, one), lw_u32(c, 0));
			uint32_t hi = lw_select(c, u32, r[1], lw_u32(c, one << 16), lw_u32(c, 0));
			v = lw_op2(c, SpvOpBitwiseOr, u32, lo, hi);
			return lw_write(c, &in->ops[0], PT('b', 32), v) < 0 ? -1 : 1;
		}
		if (dhalf)
			return lw_write(c, &in->ops[0], PT('b', 16), lw_select(c, spv_t_int(c->e, 16), r[0], spv_c_int(c->e, 16, one),
										 spv_c_int(c->e, 16, 0))) < 0 ? -1 : 1;
		v = lw_select(c, u32, r[0], lw_u32(c, ~0u), lw_u32(c, 0));
		return lw_write(c, &in->ops[0], PT('b', 32), v) < 0 ? -1 : 1;
	}
	if (in->nops < 3 || !ptype_ok(d) || !ptype_ok(s))
		return lw_unsupported(c, in, "set needs two types and three operands");
	uint32_t a = lw_read(c, &in->ops[1], s), b = lw_read(c, &in->ops[2], s);
	if (!a || !b)
		return -1;
	uint32_t r = compare(c, in, s, a, b);
	if (!r || !(r = combine(c, in, r, in->nops > 3 ? &in->ops[3] : NULL)))
		return -1;
	uint64_t one = d.k == 'f' ? 0x3f800000u : 0xffffffffu;
	uint32_t v = lw_select(c, lw_type(c, d), r, lw_const(c, d, one), lw_const(c, d, 0));
	return lw_write(c, &in->ops[0], d, v) < 0 ? -1 : 1;
}

/* isspacep.SPACE p, a: is generic address a in SPACE? Shared: inside the shared window (exact).
 * Local: reported false, so code that guards atomics on the stack (ebpf/lower) takes the native
 * atomic, which a flat private space (CPUs, PoCL) carries out. Global: neither shared nor local. */
static int lower_isspacep(lw *c, const ir_insn *in)
{
	if (in->nops != 2)
		return lw_unsupported(c, in, "isspacep needs two operands");
	uint32_t a = lw_read(c, &in->ops[1], PT('u', 64));
	if (!a)
		return -1;
	uint32_t bl = spv_t_bool(c->e), u64 = spv_t_int(c->e, 64);
	uint32_t in_shared = spv_c_bool(c->e, 0);
	if (c->shared_window) {
		uint32_t base = lw_op1(c, SpvOpConvertPtrToU, u64, c->shared_window);
		uint32_t off = lw_op2(c, SpvOpISub, u64, a, base);
		in_shared = lw_op2(c, SpvOpULessThan, bl, off, lw_u64(c, (c->shared_size + 15) & ~15ull));
	}
	uint32_t r;
	if (ir_insn_has_mod(in, ".shared"))
		r = in_shared;
	else if (ir_insn_has_mod(in, ".global"))
		r = lw_op1(c, SpvOpLogicalNot, bl, in_shared);
	else if (ir_insn_has_mod(in, ".local") || ir_insn_has_mod(in, ".const") || ir_insn_has_mod(in, ".param"))
		r = spv_c_bool(c->e, 0);
	else
		return lw_unsupported(c, in, "unknown state space");
	return lw_write(c, &in->ops[0], PT('p', 1), r) < 0 ? -1 : 1;
}

int lw_convert(lw *c, const ir_insn *in)
{
	if (!strcmp(in->opcode, "isspacep"))
		return lower_isspacep(c, in);
	const char *op = in->opcode;
	if (!strcmp(op, "cvt"))
		return lower_cvt(c, in);
	if (!strcmp(op, "mov"))
		return lower_mov(c, in);
	if (!strcmp(op, "cvta"))
		return lower_cvta(c, in);
	if (!strcmp(op, "setp"))
		return lower_setp(c, in);
	if (!strcmp(op, "set"))
		return lower_set(c, in);
	if (!strcmp(op, "selp")) {
		ptype t = lw_insn_type(in);
		if (in->nops != 4 || !ptype_ok(t))
			return lw_unsupported(c, in, "selp needs a type and four operands");
		uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t), p = lw_read_pred(c, &in->ops[3]);
		if (!a || !b || !p)
			return -1;
		return lw_write(c, &in->ops[0], t, lw_select(c, lw_type(c, t), p, a, b)) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "slct")) {
		ptype t = lw_insn_type_n(in, 0), ct = lw_insn_type_n(in, 1);
		if (in->nops != 4 || !ptype_ok(t) || !ptype_ok(ct))
			return lw_unsupported(c, in, "slct needs two types and four operands");
		uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t), x = lw_read(c, &in->ops[3], ct);
		if (!a || !b || !x)
			return -1;
		uint32_t bl = spv_t_bool(c->e);
		uint32_t ge = ct.k == 'f' ? lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, x, lw_const(c, ct, 0))
					  : lw_op2(c, SpvOpSGreaterThanEqual, bl, x, lw_const(c, ct, 0));
		return lw_write(c, &in->ops[0], t, lw_select(c, lw_type(c, t), ge, a, b)) < 0 ? -1 : 1;
	}
	return 0;
}
