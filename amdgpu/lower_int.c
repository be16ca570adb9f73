/* Integer arithmetic and bit operations, with PTX's results where LLVM leaves them undefined:
 * x/0 and x%0 give all ones, INT_MIN/-1 gives INT_MIN (and % gives 0), shifts past the width
 * give 0 (or the sign), bfe/bfi clamp their fields; the carry flag of add.cc/addc chains is an i1. */
#include "amdgpu/lower.h"

#include <string.h>

#define B (c->b)

static LLVMValueRef mask_bits(al *c, unsigned n, LLVMValueRef k)   /* k (iN) low bits set, k <= n */
{
	LLVMValueRef all = LLVMConstAllOnes(al_ity(c, n));
	LLVMValueRef full = LLVMBuildICmp(B, LLVMIntUGE, k, al_ci(c, n, n), "");
	LLVMValueRef safe = LLVMBuildSelect(B, full, al_ci(c, n, 0), k, "");
	LLVMValueRef m = LLVMBuildSub(B, LLVMBuildShl(B, al_ci(c, n, 1), safe, ""), al_ci(c, n, 1), "");
	return LLVMBuildSelect(B, full, all, m, "");
}

static LLVMValueRef divrem(al *c, bool rem, atype t, LLVMValueRef a, LLVMValueRef b)
{
	unsigned n = t.bits;
	LLVMValueRef zero = LLVMBuildICmp(B, LLVMIntEQ, b, al_ci(c, n, 0), "");
	LLVMValueRef bs = LLVMBuildSelect(B, zero, al_ci(c, n, 1), b, "");
	LLVMValueRef r;
	if (t.k == 's') {
		LLVMValueRef ovf = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, a, al_ci(c, n, 1ull << (n - 1)), ""),
						LLVMBuildICmp(B, LLVMIntEQ, b, LLVMConstAllOnes(al_ity(c, n)), ""), "");
		bs = LLVMBuildSelect(B, ovf, al_ci(c, n, 1), bs, "");
		r = rem ? LLVMBuildSRem(B, a, bs, "") : LLVMBuildSDiv(B, a, bs, "");
		if (rem)
			r = LLVMBuildSelect(B, ovf, al_ci(c, n, 0), r, "");
	} else {
		r = rem ? LLVMBuildURem(B, a, bs, "") : LLVMBuildUDiv(B, a, bs, "");
	}
	return LLVMBuildSelect(B, zero, LLVMConstAllOnes(al_ity(c, n)), r, "");
}

/* The high half of a*b (or the whole product for .wide), signedness of t. */
static LLVMValueRef mul_wide(al *c, atype t, LLVMValueRef a, LLVMValueRef b, bool hi)
{
	unsigned n = t.bits;
	LLVMTypeRef w = al_ity(c, 2 * n);
	a = t.k == 's' ? LLVMBuildSExt(B, a, w, "") : LLVMBuildZExt(B, a, w, "");
	b = t.k == 's' ? LLVMBuildSExt(B, b, w, "") : LLVMBuildZExt(B, b, w, "");
	LLVMValueRef p = LLVMBuildMul(B, a, b, "");
	if (hi)
		return LLVMBuildTrunc(B, LLVMBuildLShr(B, p, al_ci(c, 2 * n, n), ""), al_ity(c, n), "");
	return p;
}

static LLVMValueRef shift(al *c, const char *op, atype t, LLVMValueRef a, LLVMValueRef b32)
{
	unsigned n = t.bits;
	LLVMValueRef big = LLVMBuildICmp(B, LLVMIntUGE, b32, al_ci(c, 32, n), "");
	LLVMValueRef s = LLVMBuildSelect(B, big, al_ci(c, 32, n - 1), b32, "");
	s = n == 32 ? s : n > 32 ? LLVMBuildZExt(B, s, al_ity(c, n), "") : LLVMBuildTrunc(B, s, al_ity(c, n), "");
	if (!strcmp(op, "shl"))
		return LLVMBuildSelect(B, big, al_ci(c, n, 0), LLVMBuildShl(B, a, s, ""), "");
	if (t.k == 's')
		return LLVMBuildAShr(B, a, s, "");
	return LLVMBuildSelect(B, big, al_ci(c, n, 0), LLVMBuildLShr(B, a, s, ""), "");
}

static LLVMValueRef carry_in(al *c, unsigned n)
{
	if (!c->carry) {
		c->carry = LLVMBuildAlloca(c->ab, al_ity(c, 1), "carry");
		LLVMBuildStore(c->ab, al_ci(c, 1, 0), c->carry);
	}
	return LLVMBuildZExt(B, LLVMBuildLoad2(B, al_ity(c, 1), c->carry, ""), al_ity(c, n), "");
}

static void carry_out(al *c, LLVMValueRef wide, unsigned n)
{
	if (!c->carry) {
		c->carry = LLVMBuildAlloca(c->ab, al_ity(c, 1), "carry");
		LLVMBuildStore(c->ab, al_ci(c, 1, 0), c->carry);
	}
	LLVMBuildStore(B, LLVMBuildTrunc(B, LLVMBuildLShr(B, wide, al_ci(c, 2 * n, n), ""), al_ity(c, 1), ""), c->carry);
}

/* bfe: bits pos.. of a, len of them (PTX clamps both), sign-filled for .s types */
static LLVMValueRef bfe(al *c, atype t, LLVMValueRef a, LLVMValueRef b, LLVMValueRef l)
{
	unsigned n = t.bits;
	LLVMTypeRef ty = al_ity(c, n);
	LLVMValueRef pos = LLVMBuildAnd(B, b, al_ci(c, 32, 0xff), "");
	LLVMValueRef len = LLVMBuildAnd(B, l, al_ci(c, 32, 0xff), "");
	LLVMValueRef msb = al_ci(c, 32, n - 1);
	LLVMValueRef pos_c = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, pos, msb, ""), msb, pos, "");
	LLVMValueRef avail = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, pos, msb, ""), al_ci(c, 32, 0),
					     LLVMBuildSub(B, al_ci(c, 32, n), pos, ""), "");
	LLVMValueRef k = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntULT, len, avail, ""), len, avail, "");
	LLVMValueRef pz = n == 32 ? pos_c : LLVMBuildZExt(B, pos_c, ty, "");
	LLVMValueRef kz = n == 32 ? k : LLVMBuildZExt(B, k, ty, "");
	LLVMValueRef x = LLVMBuildLShr(B, a, pz, "");
	LLVMValueRef m = mask_bits(c, n, kz);
	LLVMValueRef r = LLVMBuildAnd(B, x, m, "");
	if (t.k != 's')
		return r;
	/* sign: bit min(pos+len-1, msb) of a; 0 when len is 0 */
	LLVMValueRef top = LLVMBuildSub(B, LLVMBuildAdd(B, pos, len, ""), al_ci(c, 32, 1), "");
	top = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, top, msb, ""), msb, top, "");
	LLVMValueRef tz = n == 32 ? top : LLVMBuildZExt(B, top, ty, "");
	LLVMValueRef sbit = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, tz, ""), al_ity(c, 1), "");
	sbit = LLVMBuildAnd(B, sbit, LLVMBuildICmp(B, LLVMIntNE, len, al_ci(c, 32, 0), ""), "");
	return LLVMBuildSelect(B, sbit, LLVMBuildOr(B, r, LLVMBuildNot(B, m, ""), ""), r, "");
}

static LLVMValueRef bfi(al *c, unsigned n, LLVMValueRef a, LLVMValueRef b, LLVMValueRef p, LLVMValueRef l)
{
	LLVMTypeRef ty = al_ity(c, n);
	LLVMValueRef pos = LLVMBuildAnd(B, p, al_ci(c, 32, 0xff), "");
	LLVMValueRef len = LLVMBuildAnd(B, l, al_ci(c, 32, 0xff), "");
	LLVMValueRef out = LLVMBuildICmp(B, LLVMIntUGE, pos, al_ci(c, 32, n), "");
	LLVMValueRef avail = LLVMBuildSelect(B, out, al_ci(c, 32, 0), LLVMBuildSub(B, al_ci(c, 32, n), pos, ""), "");
	LLVMValueRef k = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntULT, len, avail, ""), len, avail, "");
	LLVMValueRef ps = LLVMBuildSelect(B, out, al_ci(c, 32, 0), pos, "");
	LLVMValueRef pz = n == 32 ? ps : LLVMBuildZExt(B, ps, ty, "");
	LLVMValueRef kz = n == 32 ? k : LLVMBuildZExt(B, k, ty, "");
	LLVMValueRef m = LLVMBuildShl(B, mask_bits(c, n, kz), pz, "");
	return LLVMBuildOr(B, LLVMBuildAnd(B, b, LLVMBuildNot(B, m, ""), ""),
			   LLVMBuildAnd(B, LLVMBuildShl(B, a, pz, ""), m, ""), "");
}

/* prmt (default mode): each result byte picks one of the eight bytes of {b, a} by a nibble of c,
 * replicating its sign bit when the nibble's bit 3 is set. */
static LLVMValueRef prmt(al *c, const ir_insn *in, LLVMValueRef a, LLVMValueRef b, LLVMValueRef s)
{
	static const char *const modes[] = {".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
	for (size_t i = 0; i < 6; i++)
		if (al_mod(in, modes[i])) {
			/* the selector of each mode as default-mode nibbles */
			LLVMValueRef sel = LLVMBuildAnd(B, s, al_ci(c, 32, 3), "");
			static const uint32_t f4e[4] = {0x3210, 0x4321, 0x5432, 0x6543};
			static const uint32_t b4e[4] = {0x5674, 0x6745, 0x7456, 0x4567};
			static const uint32_t rc8[4] = {0x0000, 0x1111, 0x2222, 0x3333};
			static const uint32_t ecl[4] = {0x3210, 0x3211, 0x3222, 0x3333};
			static const uint32_t ecr[4] = {0x0000, 0x1110, 0x2210, 0x3210};
			static const uint32_t rc16[4] = {0x1010, 0x3232, 0x1010, 0x3232};
			const uint32_t *tab[] = {f4e, b4e, rc8, ecl, ecr, rc16};
			LLVMValueRef v = al_ci(c, 32, tab[i][0]);
			for (unsigned k = 1; k < 4; k++)
				v = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, sel, al_ci(c, 32, k), ""),
						    al_ci(c, 32, tab[i][k]), v, "");
			s = v;
			break;
		}
	LLVMTypeRef i64 = al_ity(c, 64);
	LLVMValueRef both = LLVMBuildOr(B, LLVMBuildZExt(B, a, i64, ""),
					LLVMBuildShl(B, LLVMBuildZExt(B, b, i64, ""), al_ci(c, 64, 32), ""), "");
	LLVMValueRef r = al_ci(c, 32, 0);
	for (unsigned k = 0; k < 4; k++) {
		LLVMValueRef nib = LLVMBuildAnd(B, LLVMBuildLShr(B, s, al_ci(c, 32, 4 * k), ""), al_ci(c, 32, 0xf), "");
		LLVMValueRef idx = LLVMBuildAnd(B, nib, al_ci(c, 32, 7), "");
		LLVMValueRef byte = LLVMBuildTrunc(B, LLVMBuildLShr(B, both,
			LLVMBuildZExt(B, LLVMBuildMul(B, idx, al_ci(c, 32, 8), ""), i64, ""), ""), al_ity(c, 8), "");
		LLVMValueRef rep = LLVMBuildAShr(B, byte, LLVMConstInt(al_ity(c, 8), 7, 0), "");
		LLVMValueRef sg = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, nib, al_ci(c, 32, 8), ""), al_ci(c, 32, 0), "");
		if (!(al_mod(in, ".f4e") || al_mod(in, ".b4e") || al_mod(in, ".rc8") || al_mod(in, ".ecl") ||
		      al_mod(in, ".ecr") || al_mod(in, ".rc16")))
			byte = LLVMBuildSelect(B, sg, rep, byte, "");
		r = LLVMBuildOr(B, r, LLVMBuildShl(B, LLVMBuildZExt(B, byte, al_ity(c, 32), ""), al_ci(c, 32, 8 * k), ""), "");
	}
	return r;
}

static LLVMValueRef bfind(al *c, const ir_insn *in, atype t, LLVMValueRef a)
{
	unsigned n = t.bits;
	LLVMValueRef x = a;
	if (t.k == 's')
		x = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, al_ci(c, n, 0), ""), LLVMBuildNot(B, a, ""), a, "");
	LLVMTypeRef ty = al_ity(c, n);
	LLVMValueRef args[2] = {x, al_ci(c, 1, 0)};
	LLVMValueRef lz = al_intr(c, "llvm.ctlz", &ty, 1, 2, args);
	lz = n == 32 ? lz : LLVMBuildTrunc(B, lz, al_ity(c, 32), "");
	LLVMValueRef none = LLVMBuildICmp(B, LLVMIntEQ, x, al_ci(c, n, 0), "");
	LLVMValueRef idx = LLVMBuildSub(B, al_ci(c, 32, n - 1), lz, "");
	if (al_mod(in, ".shiftamt"))
		idx = lz;
	return LLVMBuildSelect(B, none, al_ci(c, 32, 0xffffffffu), idx, "");
}

int al_int(al *c, const ir_insn *in)
{
	static const char *const mine[] = {"add", "sub", "mul", "mad", "mul24", "mad24", "div", "rem", "abs",
		"neg", "min", "max", "and", "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfe",
		"bfi", "bfind", "prmt", "lop3", "shf", "addc", "subc", "sad", "madc", "bmsk", NULL};
	const char *op = in->opcode;
	size_t i;
	for (i = 0; mine[i] && strcmp(mine[i], op); i++)
		;
	if (!mine[i])
		return 0;
	atype t = al_insn_type(in);
	if (t.k == 'f' || al_mod(in, ".f16x2") || al_mod(in, ".bf16x2"))
		return 0;     /* float family */
	if (!t.bits || t.bits > 64 || (in->nmods && (al_mod(in, ".u16x2") || al_mod(in, ".s16x2"))))
		return al_unsupported(c, in, "this type is not lowered");
	/* operands each operation reads (the parser takes any count): d and its sources */
	static const char *const unary[] = {"abs", "neg", "not", "cnot", "popc", "clz", "brev", "bfind", NULL};
	static const char *const ternary[] = {"mad", "mad24", "madc", "sad", "bfe", "prmt", "shf", NULL};
	unsigned need = 3;
	for (i = 0; unary[i]; i++)
		need = strcmp(unary[i], op) ? need : 2;
	for (i = 0; ternary[i]; i++)
		need = strcmp(ternary[i], op) ? need : 4;
	if (!strcmp(op, "bfi") || !strcmp(op, "lop3"))
		need = 5;
	if (in->nops < need)
		return al_unsupported(c, in, "too few operands");
	unsigned n = t.bits;
	const ir_operand *d = &in->ops[0];
	LLVMValueRef a = NULL, b = NULL, r = NULL;
	if (t.k == 'p') {   /* and/or/xor/not on predicates */
		a = al_read(c, &in->ops[1], t);
		if (!a)
			return -1;
		if (!strcmp(op, "not") || !strcmp(op, "cnot"))
			return al_write(c, d, t, LLVMBuildNot(B, a, "")) < 0 ? -1 : 1;
		b = al_read(c, &in->ops[2], t);
		if (!b)
			return -1;
		r = !strcmp(op, "and") ? LLVMBuildAnd(B, a, b, "") : !strcmp(op, "or") ? LLVMBuildOr(B, a, b, "")
			: !strcmp(op, "xor") ? LLVMBuildXor(B, a, b, "") : NULL;
		if (!r)
			return al_unsupported(c, in, "not a predicate operation");
		return al_write(c, d, t, r) < 0 ? -1 : 1;
	}
	atype bt = AT(t.k == 'b' ? 'u' : t.k, n);
	bool shift_op = !strcmp(op, "shl") || !strcmp(op, "shr");
	if (in->nops >= 2 && !(!strcmp(op, "bfe") || !strcmp(op, "bfi")) && !(!strcmp(op, "shf"))) {
		a = al_read(c, &in->ops[1], bt);
		if (!a)
			return -1;
	}
	if (in->nops >= 3 && !shift_op && strcmp(op, "bfe") && strcmp(op, "bfi") && strcmp(op, "shf") &&
	    strcmp(op, "prmt") && strcmp(op, "mul24") && strcmp(op, "mad24")) {
		b = al_read(c, &in->ops[2], bt);
		if (!b)
			return -1;
	}
	atype rt = t;
	if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "addc") || !strcmp(op, "subc")) {
		bool add = op[0] == 'a';
		bool cc = al_mod(in, ".cc"), cin = !strcmp(op, "addc") || !strcmp(op, "subc");
		if (al_mod(in, ".sat")) {
			LLVMTypeRef ty = al_ity(c, n);
			LLVMValueRef args[2] = {a, b};
			r = al_intr(c, add ? "llvm.sadd.sat" : "llvm.ssub.sat", &ty, 1, 2, args);
		} else if (cc || cin) {
			LLVMTypeRef w = al_ity(c, 2 * n);
			LLVMValueRef wa = LLVMBuildZExt(B, a, w, ""), wb = LLVMBuildZExt(B, b, w, "");
			LLVMValueRef s = add ? LLVMBuildAdd(B, wa, wb, "") : LLVMBuildSub(B, wa, wb, "");
			if (cin) {
				LLVMValueRef ci = carry_in(c, 2 * n);
				s = add ? LLVMBuildAdd(B, s, ci, "") : LLVMBuildSub(B, s, ci, "");
			}
			if (cc)
				carry_out(c, s, n);
			r = LLVMBuildTrunc(B, s, al_ity(c, n), "");
		} else {
			r = add ? LLVMBuildAdd(B, a, b, "") : LLVMBuildSub(B, a, b, "");
		}
	} else if (!strcmp(op, "bmsk")) {   /* bmsk.{clamp,wrap}.b32 d, pos, len: len bits from pos */
		a = al_read(c, &in->ops[1], AT('u', 32));
		b = al_read(c, &in->ops[2], AT('u', 32));
		if (!a || !b)
			return -1;
		if (al_mod(in, ".wrap")) {
			a = LLVMBuildAnd(B, a, al_ci(c, 32, 31), "");
			b = LLVMBuildAnd(B, b, al_ci(c, 32, 31), "");
		}
		LLVMValueRef out = LLVMBuildICmp(B, LLVMIntUGE, a, al_ci(c, 32, 32), "");
		LLVMValueRef avail = LLVMBuildSelect(B, out, al_ci(c, 32, 0), LLVMBuildSub(B, al_ci(c, 32, 32), a, ""), "");
		LLVMValueRef k = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntULT, b, avail, ""), b, avail, "");
		LLVMValueRef m = LLVMBuildShl(B, mask_bits(c, 32, k), LLVMBuildSelect(B, out, al_ci(c, 32, 0), a, ""), "");
		return al_write(c, d, AT('b', 32), m) < 0 ? -1 : 1;
	} else if (!strcmp(op, "mul") || !strcmp(op, "mad") || !strcmp(op, "madc")) {
		bool wide = al_mod(in, ".wide"), hi = al_mod(in, ".hi");
		if (wide) {
			r = mul_wide(c, t, a, b, false);
			rt = AT(t.k, 2 * n);
		} else if (hi) {
			r = mul_wide(c, t, a, b, true);
		} else {
			r = LLVMBuildMul(B, a, b, "");
		}
		if (op[1] == 'a') {
			LLVMValueRef e = al_read(c, &in->ops[3], AT(bt.k, rt.bits));
			if (!e)
				return -1;
			if (al_mod(in, ".sat") && hi) {
				LLVMTypeRef ty = al_ity(c, n);
				LLVMValueRef args[2] = {r, e};
				r = al_intr(c, "llvm.sadd.sat", &ty, 1, 2, args);
			} else if (al_mod(in, ".cc") || !strcmp(op, "madc")) {   /* madc adds the carry flag */
				LLVMTypeRef w = al_ity(c, 2 * rt.bits);
				LLVMValueRef s = LLVMBuildAdd(B, LLVMBuildZExt(B, r, w, ""), LLVMBuildZExt(B, e, w, ""), "");
				if (!strcmp(op, "madc"))
					s = LLVMBuildAdd(B, s, carry_in(c, 2 * rt.bits), "");
				if (al_mod(in, ".cc"))
					carry_out(c, s, rt.bits);
				r = LLVMBuildTrunc(B, s, al_ity(c, rt.bits), "");
			} else {
				r = LLVMBuildAdd(B, r, e, "");
			}
		}
	} else if (!strcmp(op, "mul24") || !strcmp(op, "mad24")) {
		a = al_read(c, &in->ops[1], bt);
		b = al_read(c, &in->ops[2], bt);
		if (!a || !b)
			return -1;
		LLVMValueRef a24 = t.k == 's' ? LLVMBuildAShr(B, LLVMBuildShl(B, a, al_ci(c, 32, 8), ""), al_ci(c, 32, 8), "")
					      : LLVMBuildAnd(B, a, al_ci(c, 32, 0xffffff), "");
		LLVMValueRef b24 = t.k == 's' ? LLVMBuildAShr(B, LLVMBuildShl(B, b, al_ci(c, 32, 8), ""), al_ci(c, 32, 8), "")
					      : LLVMBuildAnd(B, b, al_ci(c, 32, 0xffffff), "");
		if (al_mod(in, ".hi")) {
			LLVMValueRef p = mul_wide(c, t, a24, b24, false);
			r = LLVMBuildTrunc(B, LLVMBuildLShr(B, p, al_ci(c, 64, 16), ""), al_ity(c, 32), "");
		} else {
			r = LLVMBuildMul(B, a24, b24, "");
		}
		if (op[1] == 'a') {
			LLVMValueRef e = al_read(c, &in->ops[3], bt);
			if (!e)
				return -1;
			r = LLVMBuildAdd(B, r, e, "");
		}
	} else if (!strcmp(op, "div") || !strcmp(op, "rem")) {
		r = divrem(c, op[0] == 'r', bt, a, b);
	} else if (!strcmp(op, "abs")) {
		r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, al_ci(c, n, 0), ""), LLVMBuildNeg(B, a, ""), a, "");
	} else if (!strcmp(op, "neg")) {
		r = LLVMBuildNeg(B, a, "");
	} else if (!strcmp(op, "min") || !strcmp(op, "max")) {
		bool mn = op[1] == 'i';
		LLVMIntPredicate p = t.k == 's' ? (mn ? LLVMIntSLT : LLVMIntSGT) : (mn ? LLVMIntULT : LLVMIntUGT);
		r = LLVMBuildSelect(B, LLVMBuildICmp(B, p, a, b, ""), a, b, "");
	} else if (!strcmp(op, "and")) {
		r = LLVMBuildAnd(B, a, b, "");
	} else if (!strcmp(op, "or")) {
		r = LLVMBuildOr(B, a, b, "");
	} else if (!strcmp(op, "xor")) {
		r = LLVMBuildXor(B, a, b, "");
	} else if (!strcmp(op, "not")) {
		r = LLVMBuildNot(B, a, "");
	} else if (!strcmp(op, "cnot")) {
		r = LLVMBuildZExt(B, LLVMBuildICmp(B, LLVMIntEQ, a, al_ci(c, n, 0), ""), al_ity(c, n), "");
	} else if (shift_op) {
		b = al_read(c, &in->ops[2], AT('u', 32));
		if (!b)
			return -1;
		r = shift(c, op, t, a, b);
	} else if (!strcmp(op, "popc") || !strcmp(op, "clz")) {
		LLVMTypeRef ty = al_ity(c, n);
		LLVMValueRef args[2] = {a, al_ci(c, 1, 0)};
		r = op[0] == 'p' ? al_intr(c, "llvm.ctpop", &ty, 1, 1, args) : al_intr(c, "llvm.ctlz", &ty, 1, 2, args);
		r = al_bits(c, r, AT('u', n), AT('u', 32));
		rt = AT('u', 32);
	} else if (!strcmp(op, "brev")) {
		LLVMTypeRef ty = al_ity(c, n);
		r = al_intr(c, "llvm.bitreverse", &ty, 1, 1, &a);
	} else if (!strcmp(op, "bfe")) {
		a = al_read(c, &in->ops[1], bt);
		b = al_read(c, &in->ops[2], AT('u', 32));
		LLVMValueRef l = al_read(c, &in->ops[3], AT('u', 32));
		if (!a || !b || !l)
			return -1;
		r = bfe(c, t, a, b, l);
	} else if (!strcmp(op, "bfi")) {
		a = al_read(c, &in->ops[1], bt);
		b = al_read(c, &in->ops[2], bt);
		LLVMValueRef p = al_read(c, &in->ops[3], AT('u', 32));
		LLVMValueRef l = al_read(c, &in->ops[4], AT('u', 32));
		if (!a || !b || !p || !l)
			return -1;
		r = bfi(c, n, a, b, p, l);
	} else if (!strcmp(op, "bfind")) {
		r = bfind(c, in, t, a);
		rt = AT('u', 32);
	} else if (!strcmp(op, "prmt")) {
		b = al_read(c, &in->ops[2], AT('u', 32));
		LLVMValueRef s = al_read(c, &in->ops[3], AT('u', 32));
		if (!b || !s)
			return -1;
		r = prmt(c, in, a, b, s);
	} else if (!strcmp(op, "lop3")) {
		LLVMValueRef cc = al_read(c, &in->ops[3], bt);
		if (!cc)
			return -1;
		if (in->ops[4].kind != IR_OPND_INT)
			return al_unsupported(c, in, "a look-up table that is not an immediate");
		unsigned lut = (unsigned)in->ops[4].ival & 0xff;
		r = al_ci(c, n, 0);
		for (unsigned k = 0; k < 8; k++)
			if (lut >> k & 1) {
				LLVMValueRef x = k & 4 ? a : LLVMBuildNot(B, a, "");
				LLVMValueRef y = k & 2 ? b : LLVMBuildNot(B, b, "");
				LLVMValueRef z = k & 1 ? cc : LLVMBuildNot(B, cc, "");
				r = LLVMBuildOr(B, r, LLVMBuildAnd(B, LLVMBuildAnd(B, x, y, ""), z, ""), "");
			}
	} else if (!strcmp(op, "shf")) {
		a = al_read(c, &in->ops[1], AT('u', 32));
		b = al_read(c, &in->ops[2], AT('u', 32));
		LLVMValueRef s = al_read(c, &in->ops[3], AT('u', 32));
		if (!a || !b || !s)
			return -1;
		bool left = al_mod(in, ".l");
		LLVMTypeRef i64 = al_ity(c, 64);
		LLVMValueRef both = LLVMBuildOr(B, LLVMBuildZExt(B, a, i64, ""),
						LLVMBuildShl(B, LLVMBuildZExt(B, b, i64, ""), al_ci(c, 64, 32), ""), "");
		LLVMValueRef k = al_mod(in, ".wrap") ? LLVMBuildAnd(B, s, al_ci(c, 32, 31), "")
			: LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, s, al_ci(c, 32, 32), ""), al_ci(c, 32, 32), s, "");
		k = LLVMBuildZExt(B, k, i64, "");
		r = left ? LLVMBuildTrunc(B, LLVMBuildLShr(B, LLVMBuildShl(B, both, k, ""), al_ci(c, 64, 32), ""), al_ity(c, 32), "")
			 : LLVMBuildTrunc(B, LLVMBuildLShr(B, both, k, ""), al_ity(c, 32), "");
		rt = AT('b', 32);
	} else if (!strcmp(op, "sad")) {
		LLVMValueRef e = al_read(c, &in->ops[3], bt);
		if (!e)
			return -1;
		LLVMIntPredicate p = t.k == 's' ? LLVMIntSLT : LLVMIntULT;
		LLVMValueRef lt = LLVMBuildICmp(B, p, a, b, "");
		r = LLVMBuildAdd(B, e, LLVMBuildSelect(B, lt, LLVMBuildSub(B, b, a, ""), LLVMBuildSub(B, a, b, ""), ""), "");
	} else {
		return al_unsupported(c, in, "not lowered");
	}
	return al_write(c, d, rt, r) < 0 ? -1 : 1;
}
