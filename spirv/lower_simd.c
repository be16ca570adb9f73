/* SIMD integer instructions on packed lanes of a 32-bit register: the video instructions
 * vadd2/4, vsub2/4, vabsdiff2/4, vmin2/4, vmax2/4, vavrg2/4 (signed or unsigned lanes by their
 * source types, .sat clamping each lane, .add summing the lanes into c, otherwise the lanes of
 * d are the results) and the packed add/sub/min/max .u16x2/.s16x2 (min/max with .relu).
 * Operand selectors and masks (a.b3210, d.h1) are not lowered: one error names them.
 * Also fns.b32 (__fns: the position of the n-th set bit from a base, up or down), by a loop. */
#include "spirv/lower.h"

#include <string.h>

/* lane i (bits wide) of x, extended to 32 bits by sign */
static uint32_t lane(lw *c, uint32_t x, unsigned i, unsigned bits, bool sgn)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t v = lw_op2(c, SpvOpShiftLeftLogical, u32, x, lw_u32(c, 32 - bits * (i + 1)));
	return lw_op2(c, sgn ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical, u32, v, lw_u32(c, 32 - bits));
}

static uint32_t clamp(lw *c, uint32_t v, int32_t lo, int32_t hi)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	return lw_ext(c, u32, OpenCLstd_SClamp, 3, v, lw_u32(c, (uint32_t)lo), lw_u32(c, (uint32_t)hi));
}

static int has_selector(const ir_insn *in)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].kind == IR_OPND_REG && strchr(in->ops[i].name, '.') && strncmp(in->ops[i].name, "%tid", 4) &&
		    strncmp(in->ops[i].name, "%ntid", 5) && strncmp(in->ops[i].name, "%ctaid", 6) &&
		    strncmp(in->ops[i].name, "%nctaid", 7))
			return 1;
	return 0;
}

/* fns.b32 d, mask, base, offset: offset > 0: the offset-th set bit at or above base; < 0: the
 * -offset-th at or below base; 0: base if its bit is set; 0xffffffff when there is none. */
static int fns(lw *c, const ir_insn *in)
{
	if (in->nops != 4)
		return lw_unsupported(c, in, "wrong operand count");
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t mask = lw_read(c, &in->ops[1], PT('b', 32)), base = mask ? lw_read(c, &in->ops[2], PT('u', 32)) : 0;
	uint32_t off = base ? lw_read(c, &in->ops[3], PT('s', 32)) : 0;
	if (!off)
		return -1;
	uint32_t pv = spv_id(c->e), nv = spv_id(c->e), dv = spv_id(c->e);
	for (unsigned i = 0; i < 3; i++)
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), (uint32_t[]){pv, nv, dv}[i],
		       (uint32_t)SpvStorageClassFunction);
	uint32_t up = lw_op2(c, SpvOpSGreaterThanEqual, bl, off, lw_u32(c, 0));
	uint32_t step = lw_select(c, u32, up, lw_u32(c, 1), lw_u32(c, ~0u));
	/* n = |offset|, at least 1 (offset 0 asks for base itself) */
	uint32_t n = lw_ext(c, u32, OpenCLstd_SAbs, 1, off);
	uint32_t zero = lw_op2(c, SpvOpIEqual, bl, off, lw_u32(c, 0));
	n = lw_select(c, u32, zero, lw_u32(c, 1), n);
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpStore, 2, pv, base);
	spv_op(&c->body, SpvOpStore, 2, nv, n);
	spv_op(&c->body, SpvOpStore, 2, dv, lw_u32(c, ~0u));
	uint32_t head = spv_id(c->e), body = spv_id(c->e), hit = spv_id(c->e), next = spv_id(c->e), done = spv_id(c->e);
	lw_label(c, head);
	uint32_t p = lw_op1(c, SpvOpLoad, u32, pv);
	uint32_t more = lw_op2(c, SpvOpULessThan, bl, p, lw_u32(c, 32)); /* -1 wraps above 31 */
	/* offset 0 looks at base only */
	uint32_t p_ok = lw_op2(c, SpvOpLogicalAnd, bl, more,
			       lw_op2(c, SpvOpLogicalOr, bl, lw_op1(c, SpvOpLogicalNot, bl, zero), lw_op2(c, SpvOpIEqual, bl, p, base)));
	lw_branch_cond(c, p_ok, body, done);
	lw_label(c, body);
	uint32_t bit = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, mask, p), lw_u32(c, 1));
	uint32_t cnt = lw_op2(c, SpvOpISub, u32, lw_op1(c, SpvOpLoad, u32, nv), bit);
	spv_op(&c->body, SpvOpStore, 2, nv, cnt);
	lw_branch_cond(c, lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpIEqual, bl, bit, lw_u32(c, 1)),
				 lw_op2(c, SpvOpIEqual, bl, cnt, lw_u32(c, 0))), hit, next);
	lw_label(c, hit);
	spv_op(&c->body, SpvOpStore, 2, dv, p);
	lw_branch(c, done);
	lw_label(c, next);
	spv_op(&c->body, SpvOpStore, 2, pv, lw_op2(c, SpvOpIAdd, u32, p, step));
	lw_branch(c, head);
	lw_label(c, done);
	return lw_write(c, &in->ops[0], PT('b', 32), lw_op1(c, SpvOpLoad, u32, dv)) < 0 ? -1 : 1;
}

int lw_simd(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "fns"))
		return fns(c, in);
	static const char *const video[] = {"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vavrg", NULL};
	unsigned lanes = 0, bits = 0;
	const char *base = NULL;
	size_t n = strlen(op);
	if (n > 1 && (op[n - 1] == '2' || op[n - 1] == '4')) {
		for (const char *const *v = video; *v; v++)
			if (strlen(*v) == n - 1 && !strncmp(op, *v, n - 1))
				base = *v;
		if (base) {
			lanes = op[n - 1] - '0';
			bits = 32 / lanes;
		}
	}
	bool packed = false;
	if (!base && (ir_insn_has_mod(in, ".u16x2") || ir_insn_has_mod(in, ".s16x2")) &&
	    (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "min") || !strcmp(op, "max"))) {
		base = op;
		lanes = 2;
		bits = 16;
		packed = true;
	}
	if (!base)
		return 0;
	if (has_selector(in))
		return lw_unsupported(c, in, "operand selectors and masks of SIMD instructions are not lowered");
	uint32_t u32 = spv_t_int(c->e, 32);
	bool sat = ir_insn_has_mod(in, ".sat"), add = ir_insn_has_mod(in, ".add"), relu = ir_insn_has_mod(in, ".relu");
	bool sa, sb, sd;
	if (packed) {
		sa = sb = sd = ir_insn_has_mod(in, ".s16x2");
	} else {
		/* .dtype.atype.btype */
		ptype t0 = lw_insn_type_n(in, 0), t1 = lw_insn_type_n(in, 1), t2 = lw_insn_type_n(in, 2);
		if (!ptype_ok(t0) || !ptype_ok(t1) || !ptype_ok(t2))
			return lw_unsupported(c, in, "needs .dtype.atype.btype");
		sd = t0.k == 's';
		sa = t1.k == 's';
		sb = t2.k == 's';
	}
	unsigned nsrc = packed ? 2 : 3;
	if (in->nops != nsrc + 1)
		return lw_unsupported(c, in, "wrong operand count");
	uint32_t a = lw_read(c, &in->ops[1], PT('b', 32)), b = a ? lw_read(c, &in->ops[2], PT('b', 32)) : 0;
	uint32_t cc = (b && !packed) ? lw_read(c, &in->ops[3], PT('b', 32)) : b;
	if (!cc)
		return -1;
	int32_t lo = sd ? -(1 << (bits - 1)) : 0, hi = sd ? (1 << (bits - 1)) - 1 : (int32_t)((1u << bits) - 1);
	uint32_t r = lw_u32(c, 0), sum = cc;
	for (unsigned i = 0; i < lanes; i++) {
		uint32_t x = lane(c, a, i, bits, sa), y = lane(c, b, i, bits, sb), v;
		if (!strcmp(base, "vadd") || !strcmp(base, "add"))
			v = lw_op2(c, SpvOpIAdd, u32, x, y);
		else if (!strcmp(base, "vsub") || !strcmp(base, "sub"))
			v = lw_op2(c, SpvOpISub, u32, x, y);
		else if (!strcmp(base, "vabsdiff"))
			v = lw_ext(c, u32, OpenCLstd_SAbs, 1, lw_op2(c, SpvOpISub, u32, x, y));
		else if (!strcmp(base, "vmin") || !strcmp(base, "min"))
			v = lw_ext(c, u32, OpenCLstd_SMin, 2, x, y); /* lanes are extended: a signed compare fits both */
		else if (!strcmp(base, "vmax") || !strcmp(base, "max"))
			v = lw_ext(c, u32, OpenCLstd_SMax, 2, x, y);
		else /* vavrg: (x + y + 1) >> 1, rounding up */
			v = lw_op2(c, SpvOpShiftRightArithmetic, u32, lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpIAdd, u32, x, y), lw_u32(c, 1)),
				   lw_u32(c, 1));
		if (relu)
			v = lw_ext(c, u32, OpenCLstd_SMax, 2, v, lw_u32(c, 0));
		if (sat)
			v = clamp(c, v, lo, hi);
		if (add) {
			sum = lw_op2(c, SpvOpIAdd, u32, sum, v);
		} else {
			uint32_t m = lw_op2(c, SpvOpBitwiseAnd, u32, v, lw_u32(c, bits == 32 ? ~0u : (1u << bits) - 1));
			r = lw_op2(c, SpvOpBitwiseOr, u32, r, lw_op2(c, SpvOpShiftLeftLogical, u32, m, lw_u32(c, i * bits)));
		}
	}
	return lw_write(c, &in->ops[0], PT('b', 32), add ? sum : r) < 0 ? -1 : 1;
}
