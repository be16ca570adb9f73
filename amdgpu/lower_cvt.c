/* mov (packing and unpacking vectors, addresses of variables and functions), cvt (integer
 * saturation, float rounding, PTX's float-to-integer results: saturating, NaN gives 0, except NaN
 * to s64 gives INT64_MIN), cvta, setp/set/selp/slct. */
#include "amdgpu/lower.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define B (c->b)

static LLVMValueRef half_to_float(al *c, LLVMValueRef bits16)
{
	return LLVMBuildFPExt(B, LLVMBuildBitCast(B, bits16, LLVMHalfTypeInContext(c->ctx), ""),
			      LLVMFloatTypeInContext(c->ctx), "");
}

/* A float value of type t (f16 as bits) as an LLVM float/double/half. */
static LLVMValueRef fval(al *c, LLVMValueRef v, atype t)
{
	if (t.bits == 16)
		return LLVMBuildBitCast(B, v, LLVMHalfTypeInContext(c->ctx), "");
	return v;
}

static LLVMValueRef mov_pack(al *c, const ir_insn *in, atype t)
{
	const ir_operand *s = &in->ops[1];
	unsigned n = s->nelems, eb = t.bits / n;
	LLVMTypeRef ty = al_ity(c, t.bits);
	LLVMValueRef r = LLVMConstNull(ty);
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef e = al_read(c, &s->elems[i], AT('b', eb));
		if (!e)
			return NULL;
		r = LLVMBuildOr(B, r, LLVMBuildShl(B, LLVMBuildZExt(B, e, ty, ""), LLVMConstInt(ty, i * eb, 0), ""), "");
	}
	return r;
}

static int lower_mov(al *c, const ir_insn *in)
{
	atype t = al_insn_type(in);
	if (!t.bits || t.bits == 128)
		return al_unsupported(c, in, "this type is not lowered");
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	const ir_operand *d = &in->ops[0], *s = &in->ops[1];
	if (s->kind == IR_OPND_VEC) {
		LLVMValueRef r = mov_pack(c, in, AT('b', t.bits));
		if (!r)
			return -1;
		return al_write(c, d, AT('b', t.bits), r) < 0 ? -1 : 1;
	}
	if (d->kind == IR_OPND_VEC) {
		LLVMValueRef v = al_read(c, s, AT('b', t.bits));
		if (!v)
			return -1;
		unsigned n = d->nelems, eb = t.bits / n;
		for (unsigned i = 0; i < n; i++) {
			LLVMValueRef e = LLVMBuildTrunc(B, LLVMBuildLShr(B, v, al_ci(c, t.bits, i * eb), ""), al_ity(c, eb), "");
			if (al_write(c, &d->elems[i], AT('b', eb), e) < 0)
				return -1;
		}
		return 1;
	}
	LLVMValueRef v = al_read(c, s, t);
	return al_write(c, d, t, v) < 0 ? -1 : 1;
}

static const char *irnd(const ir_insn *in)
{
	static const char *const r[] = {".rni", ".rzi", ".rmi", ".rpi", ".rn", ".rz", ".rm", ".rp", ".rna", NULL};
	for (int i = 0; r[i]; i++)
		if (al_mod(in, r[i]))
			return r[i];
	return NULL;
}

static LLVMValueRef round_int(al *c, LLVMValueRef v, const char *rnd)
{
	LLVMTypeRef ty = LLVMTypeOf(v);
	const char *name = !rnd || !strcmp(rnd, ".rzi") ? "llvm.trunc" : !strcmp(rnd, ".rni") ? "llvm.roundeven"
		: !strcmp(rnd, ".rmi") ? "llvm.floor" : "llvm.ceil";
	return al_intr(c, name, &ty, 1, 1, &v);
}

static LLVMValueRef flush(al *c, LLVMValueRef v)   /* f32 subnormal to signed zero */
{
	LLVMTypeRef f = LLVMTypeOf(v);
	LLVMValueRef a = al_intr(c, "llvm.fabs", &f, 1, 1, &v);
	LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, a, LLVMConstReal(f, 1.17549435082228750797e-38), "");
	LLVMValueRef args[2] = {LLVMConstReal(f, 0.0), v};
	LLVMValueRef z = al_intr(c, "llvm.copysign", &f, 1, 2, args);
	return LLVMBuildSelect(B, tiny, z, v, "");
}

LLVMValueRef al_saturate(al *c, LLVMValueRef v)   /* [0, 1], NaN to 0 */
{
	LLVMTypeRef f = LLVMTypeOf(v);
	LLVMValueRef gt0 = LLVMBuildFCmp(B, LLVMRealOGT, v, LLVMConstReal(f, 0.0), "");
	LLVMValueRef lt1 = LLVMBuildFCmp(B, LLVMRealOLT, v, LLVMConstReal(f, 1.0), "");
	return LLVMBuildSelect(B, gt0, LLVMBuildSelect(B, lt1, v, LLVMConstReal(f, 1.0), ""), LLVMConstReal(f, 0.0), "");
}

/* Directed rounding of a conversion, on any target: r is the round-to-nearest result; gt / lt say
 * whether r is above / below the exact value, xneg whether that value is negative. r moves one
 * step (its bits +-1; from zero to the smallest subnormal) where rounding mode rnd wants. */
LLVMValueRef al_directed_fix(al *c, LLVMValueRef r, char rnd, LLVMValueRef gt, LLVMValueRef lt, LLVMValueRef xneg)
{
	LLVMTypeRef ft = LLVMTypeOf(r);
	unsigned n = LLVMGetTypeKind(ft) == LLVMDoubleTypeKind ? 64 : LLVMGetTypeKind(ft) == LLVMHalfTypeKind ? 16 : 32;
	LLVMTypeRef it = al_ity(c, n);
	LLVMValueRef bits = LLVMBuildBitCast(B, r, it, "");
	LLVMValueRef sign = al_ci(c, n, 1ull << (n - 1));
	LLVMValueRef mag = LLVMBuildAnd(B, bits, LLVMBuildNot(B, sign, ""), "");
	LLVMValueRef zero = LLVMBuildICmp(B, LLVMIntEQ, mag, al_ci(c, n, 0), "");
	LLVMValueRef rneg = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, bits, sign, ""), al_ci(c, n, 0), "");
	LLVMValueRef dec = LLVMBuildSub(B, bits, al_ci(c, n, 1), "");
	LLVMValueRef inc = LLVMBuildSelect(B, zero, LLVMBuildSelect(B, xneg, LLVMBuildOr(B, sign, al_ci(c, n, 1), ""), al_ci(c, n, 1), ""),
					   LLVMBuildAdd(B, bits, al_ci(c, n, 1), ""), "");
	LLVMValueRef out;
	if (rnd == 'z') {
		LLVMValueRef above = LLVMBuildSelect(B, xneg, lt, gt, "");   /* |r| > |x| */
		out = LLVMBuildSelect(B, LLVMBuildAnd(B, above, LLVMBuildNot(B, zero, ""), ""), dec, bits, "");
	} else if (rnd == 'm') {
		out = LLVMBuildSelect(B, gt, LLVMBuildSelect(B, LLVMBuildAnd(B, LLVMBuildNot(B, rneg, ""), LLVMBuildNot(B, zero, ""), ""), dec, inc, ""), bits, "");
	} else {
		out = LLVMBuildSelect(B, lt, LLVMBuildSelect(B, LLVMBuildAnd(B, rneg, LLVMBuildNot(B, zero, ""), ""), dec, inc, ""), bits, "");
	}
	return LLVMBuildBitCast(B, out, ft, "");
}

static LLVMValueRef narrow_directed(al *c, LLVMValueRef x, LLVMTypeRef to, char rnd)
{
	LLVMValueRef r = LLVMBuildFPTrunc(B, x, to, "");
	LLVMValueRef back = LLVMBuildFPExt(B, r, LLVMTypeOf(x), "");
	LLVMValueRef gt = LLVMBuildFCmp(B, LLVMRealOGT, back, x, ""), lt = LLVMBuildFCmp(B, LLVMRealOLT, back, x, "");
	LLVMValueRef xneg = LLVMBuildFCmp(B, LLVMRealOLT, x, LLVMConstReal(LLVMTypeOf(x), 0.0), "");
	return al_directed_fix(c, r, rnd, gt, lt, xneg);
}

static LLVMValueRef int_to_float_directed(al *c, LLVMValueRef x, atype st, LLVMTypeRef ft, char rnd)
{
	bool sg = st.k == 's';
	unsigned n = st.bits;
	LLVMValueRef r = sg ? LLVMBuildSIToFP(B, x, ft, "") : LLVMBuildUIToFP(B, x, ft, "");
	/* r as an integer again (exact: r is an integer value); r past the integer range is above x */
	double lim = sg ? ldexp(1.0, (int)n - 1) : ldexp(1.0, (int)n);
	LLVMValueRef big = LLVMBuildFCmp(B, LLVMRealOGE, r, LLVMConstReal(ft, lim), "");
	LLVMTypeRef ovl[2] = {al_ity(c, n), ft};
	LLVMValueRef rb = al_intr(c, sg ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2, 1, &r);
	LLVMValueRef gt = LLVMBuildOr(B, big, LLVMBuildICmp(B, sg ? LLVMIntSGT : LLVMIntUGT, rb, x, ""), "");
	LLVMValueRef lt = LLVMBuildAnd(B, LLVMBuildNot(B, big, ""), LLVMBuildICmp(B, sg ? LLVMIntSLT : LLVMIntULT, rb, x, ""), "");
	LLVMValueRef xneg = sg ? LLVMBuildICmp(B, LLVMIntSLT, x, al_ci(c, n, 0), "") : al_ci(c, 1, 0);
	return al_directed_fix(c, r, rnd, gt, lt, xneg);
}

static int lower_cvt(al *c, const ir_insn *in)
{
	atype dt = al_insn_type_n(in, 0), st = al_insn_type_n(in, 1);
	if (!dt.bits || !st.bits)
		return al_unsupported(c, in, "needs a destination and a source type");
	for (unsigned i = 0; i < in->nmods; i++)
		if (strstr(in->mods[i], "bf16") || strstr(in->mods[i], "tf32") || strstr(in->mods[i], "e4m3") ||
		    strstr(in->mods[i], "e5m2") || strstr(in->mods[i], "x2") || strstr(in->mods[i], "e2m") ||
		    strstr(in->mods[i], "ue8m0"))
			return al_unsupported(c, in, "narrow float formats are not lowered");
	const char *rnd = irnd(in);
	bool sat = al_mod(in, ".sat"), ftz = al_mod(in, ".ftz");
	const ir_operand *d = &in->ops[0];
	atype sread = st.k == 'f' && st.bits == 16 ? AT('b', 16) : st;
	LLVMValueRef a = al_read(c, &in->ops[1], sread);
	if (!a)
		return -1;
	LLVMValueRef r;
	LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx);
	if (st.k != 'f' && dt.k != 'f') {
		unsigned sb = st.bits, db = dt.bits;
		r = a;
		if (sat) {
			/* clamp the source value into the destination's range */
			LLVMTypeRef w = al_ity(c, 65 > sb ? 65 : sb + 1);
			LLVMValueRef x = st.k == 's' ? LLVMBuildSExt(B, a, w, "") : LLVMBuildZExt(B, a, w, "");
			int64_t lo = dt.k == 's' ? -(int64_t)(1ull << (db - 1)) : 0;
			uint64_t hi = dt.k == 's' ? (1ull << (db - 1)) - 1 : db == 64 ? ~0ull : (1ull << db) - 1;
			LLVMValueRef klo = LLVMConstInt(w, (uint64_t)lo, 1);
			LLVMValueRef khi = LLVMConstInt(w, hi, 0);
			x = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, x, klo, ""), klo, x, "");
			x = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, x, khi, ""), khi, x, "");
			r = LLVMBuildTrunc(B, x, al_ity(c, db), "");
		} else {
			r = al_bits(c, a, st, AT(st.k, db));
		}
		return al_write(c, d, dt, r) < 0 ? -1 : 1;
	}
	if (st.k == 'f' && dt.k == 'f') {
		LLVMValueRef x = fval(c, a, st);
		if (ftz && st.bits == 32)
			x = flush(c, x);
		if (dt.bits > st.bits) {
			r = LLVMBuildFPExt(B, x, dt.bits == 64 ? LLVMDoubleTypeInContext(c->ctx) : f32, "");
		} else if (dt.bits < st.bits) {
			if (rnd && strcmp(rnd, ".rn") && strcmp(rnd, ".rna")) {
				r = narrow_directed(c, x, dt.bits == 16 ? LLVMHalfTypeInContext(c->ctx) : f32, rnd[2]);
				if (dt.bits == 16)
					r = LLVMBuildBitCast(B, r, al_ity(c, 16), "");
			} else {
				r = LLVMBuildFPTrunc(B, x, dt.bits == 16 ? LLVMHalfTypeInContext(c->ctx) : f32, "");
				if (dt.bits == 16)
					r = LLVMBuildBitCast(B, r, al_ity(c, 16), "");
			}
		} else {
			r = rnd && rnd[strlen(rnd) - 1] == 'i' ? round_int(c, x, rnd) : x;
			if (dt.bits == 16)
				r = LLVMBuildBitCast(B, r, al_ity(c, 16), "");
		}
		if (sat && dt.bits != 16)
			r = al_saturate(c, r);
		if (ftz && dt.bits == 32)
			r = flush(c, r);
		return al_write(c, d, dt.bits == 16 ? AT('b', 16) : dt, r) < 0 ? -1 : 1;
	}
	if (st.k == 'f') {   /* float to integer */
		LLVMValueRef x = st.bits == 16 ? half_to_float(c, a) : a;
		if (ftz && st.bits == 32)
			x = flush(c, x);
		x = round_int(c, x, rnd);
		LLVMTypeRef ovl[2] = {al_ity(c, dt.bits), LLVMTypeOf(x)};
		r = al_intr(c, dt.k == 's' ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2, 1, &x);
		if (dt.k == 's' && dt.bits == 64) {
			LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
			r = LLVMBuildSelect(B, nan, al_ci(c, 64, 1ull << 63), r, "");
		}
		return al_write(c, d, dt, r) < 0 ? -1 : 1;
	}
	/* integer to float */
	LLVMTypeRef ft = dt.bits == 64 ? LLVMDoubleTypeInContext(c->ctx) : dt.bits == 32 ? f32 : LLVMHalfTypeInContext(c->ctx);
	if (rnd && strcmp(rnd, ".rn")) {
		r = int_to_float_directed(c, a, st, ft, rnd[2]);
	} else {
		r = st.k == 's' ? LLVMBuildSIToFP(B, a, ft, "") : LLVMBuildUIToFP(B, a, ft, "");
	}
	if (sat && dt.bits != 16)
		r = al_saturate(c, r);
	if (dt.bits == 16)
		r = LLVMBuildBitCast(B, r, al_ity(c, 16), "");
	return al_write(c, d, dt.bits == 16 ? AT('b', 16) : dt, r) < 0 ? -1 : 1;
}

static int lower_cvta(al *c, const ir_insn *in)
{
	atype t = al_insn_type(in);
	bool to = al_mod(in, ".to");
	int as = al_mod(in, ".shared") ? AS_SHARED : al_mod(in, ".global") ? AS_GLOBAL : al_mod(in, ".local") ? AS_LOCAL
		: al_mod(in, ".const") ? AS_CONST : al_mod(in, ".param") ? AS_LOCAL : -1;
	if (as < 0 || !t.bits)
		return al_unsupported(c, in, "no state space");
	LLVMValueRef a = al_read(c, &in->ops[1], AT('u', 64));
	if (!a)
		return -1;
	LLVMValueRef p;
	if (to) {
		p = LLVMBuildAddrSpaceCast(B, al_to_ptr(c, a, AS_GENERIC), al_ptr(c, as), "");
	} else {
		p = LLVMBuildAddrSpaceCast(B, al_to_ptr(c, a, as), al_ptr(c, AS_GENERIC), "");
	}
	LLVMValueRef r = LLVMBuildPtrToInt(B, p, al_ity(c, 64), "");
	return al_write(c, &in->ops[0], AT('u', 64), al_bits(c, r, AT('u', 64), AT('u', t.bits))) < 0 ? -1 : 1;
}

/* setp/set's comparison of a and b (type t). */
static LLVMValueRef compare(al *c, const ir_insn *in, atype t, LLVMValueRef a, LLVMValueRef b)
{
	static const struct { const char *m; LLVMIntPredicate s, u; LLVMRealPredicate f; } tab[] = {
		{".eq", LLVMIntEQ, LLVMIntEQ, LLVMRealOEQ}, {".ne", LLVMIntNE, LLVMIntNE, LLVMRealONE},
		{".lt", LLVMIntSLT, LLVMIntULT, LLVMRealOLT}, {".le", LLVMIntSLE, LLVMIntULE, LLVMRealOLE},
		{".gt", LLVMIntSGT, LLVMIntUGT, LLVMRealOGT}, {".ge", LLVMIntSGE, LLVMIntUGE, LLVMRealOGE},
		{".lo", LLVMIntULT, LLVMIntULT, 0}, {".ls", LLVMIntULE, LLVMIntULE, 0},
		{".hi", LLVMIntUGT, LLVMIntUGT, 0}, {".hs", LLVMIntUGE, LLVMIntUGE, 0},
		{".equ", 0, 0, LLVMRealUEQ}, {".neu", 0, 0, LLVMRealUNE}, {".ltu", 0, 0, LLVMRealULT},
		{".leu", 0, 0, LLVMRealULE}, {".gtu", 0, 0, LLVMRealUGT}, {".geu", 0, 0, LLVMRealUGE},
		{".num", 0, 0, LLVMRealORD}, {".nan", 0, 0, LLVMRealUNO},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (!al_mod(in, tab[i].m))
			continue;
		if (t.k == 'f') {
			if (!tab[i].f)
				return NULL;
			if (t.bits == 16) {
				a = half_to_float(c, a);
				b = half_to_float(c, b);
			}
			return LLVMBuildFCmp(B, tab[i].f, a, b, "");
		}
		if (!tab[i].s)
			return NULL;
		return LLVMBuildICmp(B, t.k == 's' ? tab[i].s : tab[i].u, a, b, "");
	}
	return NULL;
}

static LLVMValueRef combine(al *c, const ir_insn *in, LLVMValueRef r, const ir_operand *pc)
{
	const char *bop = al_mod(in, ".and") ? "and" : al_mod(in, ".or") ? "or" : al_mod(in, ".xor") ? "xor" : NULL;
	if (!bop || !pc)
		return r;
	LLVMValueRef p = al_read_pred(c, pc);
	if (!p)
		return NULL;
	return bop[0] == 'a' ? LLVMBuildAnd(B, r, p, "") : bop[0] == 'o' ? LLVMBuildOr(B, r, p, "") : LLVMBuildXor(B, r, p, "");
}

static int lower_setp(al *c, const ir_insn *in, bool set)
{
	atype t = set ? al_insn_type_n(in, 1) : al_insn_type(in);
	atype dt = set ? al_insn_type_n(in, 0) : AT('p', 1);
	if (!t.bits || al_mod(in, ".f16x2") || al_mod(in, ".bf16") || al_mod(in, ".bf16x2"))
		return al_unsupported(c, in, "this type is not lowered");
	atype rt = t.k == 'f' && t.bits == 16 ? AT('b', 16) : t;
	LLVMValueRef a = al_read(c, &in->ops[1], rt), b = al_read(c, &in->ops[2], rt);
	if (!a || !b)
		return -1;
	LLVMValueRef r = compare(c, in, t, a, b);
	if (!r)
		return al_unsupported(c, in, "no such comparison for this type");
	const ir_operand *pc = in->nops > 3 ? &in->ops[3] : NULL;
	const ir_operand *d = &in->ops[0];
	if (set) {
		r = combine(c, in, r, pc);
		if (!r)
			return -1;
		if (dt.k == 'f' && dt.bits == 16)   /* f16 results travel as bits: 1.0 is 0x3c00 */
			return al_write(c, d, AT('b', 16), LLVMBuildSelect(B, r, al_ci(c, 16, 0x3c00), al_ci(c, 16, 0), "")) < 0 ? -1 : 1;
		if (!dt.bits)
			return al_unsupported(c, in, "this destination type is not lowered");
		LLVMValueRef one = dt.k == 'f' ? LLVMConstReal(al_ty(c, dt), 1.0) : LLVMConstAllOnes(al_ty(c, dt));
		return al_write(c, d, dt, LLVMBuildSelect(B, r, one, LLVMConstNull(al_ty(c, dt)), "")) < 0 ? -1 : 1;
	}
	if (d->kind == IR_OPND_PAIR && d->nelems == 2) {
		LLVMValueRef p = combine(c, in, r, pc), q = combine(c, in, LLVMBuildNot(B, r, ""), pc);
		if (!p || !q)
			return -1;
		if (al_write(c, &d->elems[0], AT('p', 1), p) < 0 || al_write(c, &d->elems[1], AT('p', 1), q) < 0)
			return -1;
		return 1;
	}
	r = combine(c, in, r, pc);
	return al_write(c, d, AT('p', 1), r) < 0 ? -1 : 1;
}

/* isspacep.SPACE p, a: whether generic address a lies in SPACE. */
static int lower_isspacep(al *c, const ir_insn *in)
{
	LLVMValueRef a = al_read(c, &in->ops[1], AT('u', 64));
	if (!a)
		return -1;
	LLVMValueRef p = al_to_ptr(c, a, AS_GENERIC), r;
	const char *sp = al_mod(in, ".global") ? "global" : al_mod(in, ".shared") ? "shared" : al_mod(in, ".local") ? "local"
		: al_mod(in, ".const") ? "const" : al_mod(in, ".param") ? "param" : NULL;
	if (!sp)
		return al_unsupported(c, in, "no such state space");
	if (c->target == AMDGPU_TARGET_NVPTX) {
		if (!strcmp(sp, "param"))
			return al_unsupported(c, in, "isspacep.param is not lowered");
		char name[48];
		snprintf(name, sizeof(name), "llvm.nvvm.isspacep.%s", sp);
		r = al_intr(c, name, NULL, 0, 1, &p);
	} else {
		LLVMValueRef sh = al_intr(c, "llvm.amdgcn.is.shared", NULL, 0, 1, &p);
		LLVMValueRef pr = al_intr(c, "llvm.amdgcn.is.private", NULL, 0, 1, &p);
		if (!sh || !pr)
			return -1;
		r = !strcmp(sp, "shared") ? sh : !strcmp(sp, "local") ? pr
			: !strcmp(sp, "param") ? al_ci(c, 1, 0)
			: LLVMBuildNot(B, LLVMBuildOr(B, sh, pr, ""), "");   /* global and const are global memory */
	}
	if (!r)
		return -1;
	return al_write(c, &in->ops[0], AT('p', 1), r) < 0 ? -1 : 1;
}

int al_convert(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "isspacep"))
		return lower_isspacep(c, in);
	if (!strcmp(op, "mov"))
		return lower_mov(c, in);
	if (!strcmp(op, "cvt"))
		return lower_cvt(c, in);
	if (!strcmp(op, "cvta"))
		return lower_cvta(c, in);
	if (!strcmp(op, "setp"))
		return lower_setp(c, in, false);
	if (!strcmp(op, "set"))
		return lower_setp(c, in, true);
	if (!strcmp(op, "selp")) {
		atype t = al_insn_type(in);
		if (t.k == 'f' && t.bits == 16)
			t = AT('b', 16);
		LLVMValueRef a = al_read(c, &in->ops[1], t), b = al_read(c, &in->ops[2], t), p = al_read_pred(c, &in->ops[3]);
		if (!a || !b || !p)
			return -1;
		return al_write(c, &in->ops[0], t, LLVMBuildSelect(B, p, a, b, "")) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "slct")) {
		atype t = al_insn_type_n(in, 0), ct = al_insn_type_n(in, 1);
		LLVMValueRef a = al_read(c, &in->ops[1], t), b = al_read(c, &in->ops[2], t), s = al_read(c, &in->ops[3], ct);
		if (!a || !b || !s)
			return -1;
		LLVMValueRef ge = ct.k == 'f' ? LLVMBuildFCmp(B, LLVMRealOGE, s, LLVMConstReal(al_ty(c, ct), 0.0), "")
					      : LLVMBuildICmp(B, LLVMIntSGE, s, LLVMConstNull(al_ty(c, ct)), "");
		return al_write(c, &in->ops[0], t, LLVMBuildSelect(B, ge, a, b, "")) < 0 ? -1 : 1;
	}
	return 0;
}
