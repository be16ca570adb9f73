/* Bit-level instructions nvcc emits for intrinsics and CUB: lop3 (any 3-input function from its
 * truth table), shf (funnel shifts), bfind, bmsk, prmt (byte permute), and carry chains
 * (add.cc/addc, sub.cc/subc, mad.cc/madc), whose carry flag is a per-function variable. */
#include "spirv/lower.h"

#include <string.h>

static int done(lw *c, const ir_operand *d, ptype t, uint32_t v)
{
	return lw_write(c, d, t, v) < 0 ? -1 : 1;
}

static int lop3(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	if (in->nops != 5 || in->ops[4].kind != IR_OPND_INT || in->ops[0].kind == IR_OPND_PAIR)
		return lw_unsupported(c, in, "lop3 needs four sources, the last an immediate truth table");
	uint32_t ty = lw_type(c, t);
	uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t), d = lw_read(c, &in->ops[3], t);
	if (!a || !b || !d)
		return -1;
	uint32_t na = lw_op1(c, SpvOpNot, ty, a), nb = lw_op1(c, SpvOpNot, ty, b), nd = lw_op1(c, SpvOpNot, ty, d);
	unsigned lut = (unsigned)in->ops[4].ival & 0xff;
	uint32_t r = lw_const(c, t, 0);
	/* bit i of the table is the result for a = i&4 (0xF0), b = i&2 (0xCC), c = i&1 (0xAA) */
	for (unsigned i = 0; i < 8; i++) {
		if (!(lut >> i & 1))
			continue;
		uint32_t term = lw_op2(c, SpvOpBitwiseAnd, ty, i & 4 ? a : na, i & 2 ? b : nb);
		term = lw_op2(c, SpvOpBitwiseAnd, ty, term, i & 1 ? d : nd);
		r = lw_op2(c, SpvOpBitwiseOr, ty, r, term);
	}
	return done(c, &in->ops[0], t, r);
}

static int shf(lw *c, const ir_insn *in)
{
	if (in->nops != 4)
		return lw_unsupported(c, in, "shf needs three sources");
	bool left = ir_insn_has_mod(in, ".l"), wrap = ir_insn_has_mod(in, ".wrap");
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], PT('b', 32)), b = lw_read(c, &in->ops[2], PT('b', 32)),
		 n = lw_read(c, &in->ops[3], PT('u', 32));
	if (!a || !b || !n)
		return -1;
	n = wrap ? lw_op2(c, SpvOpBitwiseAnd, u32, n, lw_u32(c, 31))
		 : lw_select(c, u32, lw_op2(c, SpvOpUGreaterThan, bl, n, lw_u32(c, 32)), lw_u32(c, 32), n);
	uint32_t x = lw_op2(c, SpvOpBitwiseOr, u64, lw_op2(c, SpvOpShiftLeftLogical, u64, lw_op1(c, SpvOpUConvert, u64, b), lw_u64(c, 32)),
			    lw_op1(c, SpvOpUConvert, u64, a));
	uint32_t n64 = lw_op1(c, SpvOpUConvert, u64, n), r;
	if (left)
		r = lw_op2(c, SpvOpShiftRightLogical, u64, lw_op2(c, SpvOpShiftLeftLogical, u64, x, n64), lw_u64(c, 32));
	else
		r = lw_op2(c, SpvOpShiftRightLogical, u64, x, n64);
	return done(c, &in->ops[0], PT('b', 32), lw_op1(c, SpvOpUConvert, u32, r));
}

static int bfind(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	if (in->nops != 2 || !ptype_ok(t))
		return lw_unsupported(c, in, "bfind needs a type and one source");
	uint32_t ty = lw_type(c, t), u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], t);
	if (!a)
		return -1;
	if (t.k == 's') /* the most significant bit that differs from the sign */
		a = lw_select(c, ty, lw_op2(c, SpvOpSLessThan, bl, a, lw_const(c, t, 0)), lw_op1(c, SpvOpNot, ty, a), a);
	uint32_t clz = lw_ext(c, ty, OpenCLstd_Clz, 1, a);
	if (t.bits != 32)
		clz = lw_op1(c, SpvOpUConvert, u32, clz);
	uint32_t pos = lw_op2(c, SpvOpISub, u32, lw_u32(c, t.bits - 1), clz);
	if (ir_insn_has_mod(in, ".shiftamt"))
		pos = lw_op2(c, SpvOpISub, u32, lw_u32(c, t.bits - 1), pos);
	uint32_t zero = lw_op2(c, SpvOpIEqual, bl, a, lw_const(c, t, 0));
	return done(c, &in->ops[0], PT('u', 32), lw_select(c, u32, zero, lw_u32(c, ~0u), pos));
}

static int bmsk(lw *c, const ir_insn *in)
{
	if (in->nops != 3)
		return lw_unsupported(c, in, "bmsk needs two sources");
	bool wrap = ir_insn_has_mod(in, ".wrap");
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], PT('u', 32)), b = lw_read(c, &in->ops[2], PT('u', 32));
	if (!a || !b)
		return -1;
	if (wrap) {
		a = lw_op2(c, SpvOpBitwiseAnd, u32, a, lw_u32(c, 31));
		b = lw_op2(c, SpvOpBitwiseAnd, u32, b, lw_u32(c, 31));
	} else {
		a = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThan, bl, a, lw_u32(c, 32)), lw_u32(c, 32), a);
		b = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThan, bl, b, lw_u32(c, 32)), lw_u32(c, 32), b);
	}
	uint32_t m = lw_op2(c, SpvOpISub, u64, lw_op2(c, SpvOpShiftLeftLogical, u64, lw_u64(c, 1), lw_op1(c, SpvOpUConvert, u64, b)),
			    lw_u64(c, 1));
	m = lw_op2(c, SpvOpShiftLeftLogical, u64, m, lw_op1(c, SpvOpUConvert, u64, a));
	return done(c, &in->ops[0], PT('b', 32), lw_op1(c, SpvOpUConvert, u32, m));
}

static int prmt(lw *c, const ir_insn *in)
{
	if (in->nops != 4)
		return lw_unsupported(c, in, "prmt needs three sources");
	for (unsigned i = 0; i < in->nmods; i++)
		if (strcmp(in->mods[i], ".b32"))
			return lw_unsupported(c, in, "only the default byte-selector mode is lowered");
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], PT('b', 32)), b = lw_read(c, &in->ops[2], PT('b', 32)),
		 s = lw_read(c, &in->ops[3], PT('b', 32));
	if (!a || !b || !s)
		return -1;
	uint32_t x = lw_op2(c, SpvOpBitwiseOr, u64, lw_op2(c, SpvOpShiftLeftLogical, u64, lw_op1(c, SpvOpUConvert, u64, b), lw_u64(c, 32)),
			    lw_op1(c, SpvOpUConvert, u64, a));
	uint32_t r = lw_u32(c, 0);
	for (unsigned i = 0; i < 4; i++) {
		uint32_t sel = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, s, lw_u32(c, 4 * i)), lw_u32(c, 15));
		uint32_t idx = lw_op2(c, SpvOpBitwiseAnd, u32, sel, lw_u32(c, 7));
		uint32_t sh = lw_op1(c, SpvOpUConvert, u64, lw_op2(c, SpvOpIMul, u32, idx, lw_u32(c, 8)));
		uint32_t byte = lw_op1(c, SpvOpUConvert, u32, lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpShiftRightLogical, u64, x, sh), lw_u64(c, 0xff)));
		uint32_t sign = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, byte, lw_u32(c, 0x80)), lw_u32(c, 0));
		uint32_t rep = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, sel, lw_u32(c, 8)), lw_u32(c, 0));
		byte = lw_select(c, u32, rep, lw_select(c, u32, sign, lw_u32(c, 0xff), lw_u32(c, 0)), byte);
		r = lw_op2(c, SpvOpBitwiseOr, u32, r, lw_op2(c, SpvOpShiftLeftLogical, u32, byte, lw_u32(c, 8 * i)));
	}
	return done(c, &in->ops[0], PT('b', 32), r);
}

/* add.cc, addc, sub.cc, subc, mad.cc, madc: the carry lives in a per-function u32 variable. */
static uint32_t carry_var(lw *c)
{
	if (!c->carry_var) {
		c->carry_var = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, spv_t_int(c->e, 32)),
		       c->carry_var, (uint32_t)SpvStorageClassFunction);
		spv_op(&c->prologue, SpvOpStore, 2, c->carry_var, lw_u32(c, 0));
	}
	return c->carry_var;
}

static int carry_chain(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	bool sets = ir_insn_has_mod(in, ".cc"), uses = op[strlen(op) - 1] == 'c' && strcmp(op, "sub") != 0;
	bool sub = !strncmp(op, "sub", 3), mad = !strncmp(op, "mad", 3);
	ptype t = lw_insn_type(in);
	t.k = 'u';
	if (in->nops < (mad ? 4u : 3u))
		return lw_unsupported(c, in, "too few operands");
	uint32_t ty = lw_type(c, t), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t);
	if (!a || !b)
		return -1;
	if (mad) {
		uint32_t d = lw_read(c, &in->ops[3], t);
		if (!d)
			return -1;
		a = ir_insn_has_mod(in, ".hi") ? lw_ext(c, ty, OpenCLstd_UMul_hi, 2, a, b) : lw_op2(c, SpvOpIMul, ty, a, b);
		b = d;
	}
	uint32_t cin = lw_const(c, t, 0), cinb = spv_c_bool(c->e, 0);
	if (uses) {
		uint32_t cv = lw_op1(c, SpvOpLoad, spv_t_int(c->e, 32), carry_var(c));
		cinb = lw_op2(c, SpvOpINotEqual, bl, cv, lw_u32(c, 0));
		cin = t.bits == 32 ? cv : lw_op1(c, SpvOpUConvert, ty, cv);
	}
	uint32_t r, cout;
	if (sub) {
		r = lw_op2(c, SpvOpISub, ty, lw_op2(c, SpvOpISub, ty, a, b), cin);
		cout = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpULessThan, bl, a, b),
			      lw_op2(c, SpvOpLogicalAnd, bl, cinb, lw_op2(c, SpvOpIEqual, bl, a, b)));
	} else {
		r = lw_op2(c, SpvOpIAdd, ty, lw_op2(c, SpvOpIAdd, ty, a, b), cin);
		cout = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpULessThan, bl, r, a),
			      lw_op2(c, SpvOpLogicalAnd, bl, cinb, lw_op2(c, SpvOpIEqual, bl, r, a)));
	}
	if (sets) {
		uint32_t u32 = spv_t_int(c->e, 32);
		spv_op(&c->body, SpvOpStore, 2, carry_var(c), lw_select(c, u32, cout, lw_u32(c, 1), lw_u32(c, 0)));
	}
	return done(c, &in->ops[0], t, r);
}

int lw_bits(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "lop3"))
		return lop3(c, in);
	if (!strcmp(op, "shf"))
		return shf(c, in);
	if (!strcmp(op, "bfind"))
		return bfind(c, in);
	if (!strcmp(op, "bmsk"))
		return bmsk(c, in);
	if (!strcmp(op, "prmt"))
		return prmt(c, in);
	if (!strcmp(op, "addc") || !strcmp(op, "subc") || !strcmp(op, "madc") ||
	    ((!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mad")) && ir_insn_has_mod(in, ".cc")))
		return carry_chain(c, in);
	return 0;
}
