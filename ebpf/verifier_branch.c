/* Conditional jumps on scalars: whether the outcome is already decided by the ranges, and what
 * each side learns (x < 16 on the taken side bounds x for a later array access). A bound learnt
 * on a register also holds for every copy of it (same id), as clang often tests a copy. */
#include "ebpf/verifier_priv.h"

static bool ranges_disjoint(const struct gpv_reg *a, const struct gpv_reg *b)
{
	if (a->umin > b->umax || a->umax < b->umin || a->smin > b->smax || a->smax < b->smin)
		return true;
	return ((a->var.value ^ b->var.value) & ~(a->var.mask | b->var.mask)) != 0;
}

static int taken64(const struct gpv_reg *d, const struct gpv_reg *s, uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		if (reg_is_const(d) && reg_is_const(s))
			return d->var.value == s->var.value;
		return ranges_disjoint(d, s) ? 0 : -1;
	case BPF_JNE:
		if (reg_is_const(d) && reg_is_const(s))
			return d->var.value != s->var.value;
		return ranges_disjoint(d, s) ? 1 : -1;
	case BPF_JGT:
		if (d->umin > s->umax) return 1;
		if (d->umax <= s->umin) return 0;
		return -1;
	case BPF_JGE:
		if (d->umin >= s->umax) return 1;
		if (d->umax < s->umin) return 0;
		return -1;
	case BPF_JLT:
		if (d->umax < s->umin) return 1;
		if (d->umin >= s->umax) return 0;
		return -1;
	case BPF_JLE:
		if (d->umax <= s->umin) return 1;
		if (d->umin > s->umax) return 0;
		return -1;
	case BPF_JSGT:
		if (d->smin > s->smax) return 1;
		if (d->smax <= s->smin) return 0;
		return -1;
	case BPF_JSGE:
		if (d->smin >= s->smax) return 1;
		if (d->smax < s->smin) return 0;
		return -1;
	case BPF_JSLT:
		if (d->smax < s->smin) return 1;
		if (d->smin >= s->smax) return 0;
		return -1;
	case BPF_JSLE:
		if (d->smax <= s->smin) return 1;
		if (d->smin > s->smax) return 0;
		return -1;
	case BPF_JSET:
		if (d->var.value & s->var.value)
			return 1;
		if (!((d->var.value | d->var.mask) & (s->var.value | s->var.mask)))
			return 0;
		return -1;
	}
	return -1;
}

static bool is_signed_op(uint8_t op)
{
	return op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT || op == BPF_JSLE;
}

/* A 32-bit comparison equals the 64-bit one when both values are their own zero extension
 * (unsigned orders, equality) or sign extension (signed orders, equality). */
static bool cmp32_is_cmp64(const struct gpv_reg *d, const struct gpv_reg *s, uint8_t op)
{
	bool zext = d->umax <= UINT32_MAX && s->umax <= UINT32_MAX;
	bool sext = d->smin >= INT32_MIN && d->smax <= INT32_MAX && s->smin >= INT32_MIN &&
		    s->smax <= INT32_MAX;
	if (op == BPF_JEQ || op == BPF_JNE)
		return zext || sext;
	if (op == BPF_JSET)
		return false;
	return is_signed_op(op) ? sext : zext;
}

int gpv_branch_taken(const struct gpv_reg *dst, const struct gpv_reg *src, uint8_t op, bool is32)
{
	if (!is32)
		return taken64(dst, src, op);
	if (cmp32_is_cmp64(dst, src, op))
		return taken64(dst, src, op);
	/* the low halves, as the 64-bit values they compare like */
	struct gpv_reg d, s;
	reg_view32(dst, &d, is_signed_op(op));
	reg_view32(src, &s, is_signed_op(op));
	return taken64(&d, &s, op);
}

static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JGT: return BPF_JLE;
	case BPF_JLE: return BPF_JGT;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JSGT: return BPF_JSLE;
	case BPF_JSLE: return BPF_JSGT;
	case BPF_JSGE: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGE;
	}
	return op;
}

static uint64_t umaxv(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t uminv(uint64_t a, uint64_t b) { return a < b ? a : b; }
static int64_t smaxv(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t sminv(int64_t a, int64_t b) { return a < b ? a : b; }

/* d OP s holds; both scalars. Returns false when it cannot. */
static bool learn(struct gpv_reg *d, struct gpv_reg *s, uint8_t op)
{
	switch (op) {
	case BPF_JEQ: {
		struct gpv_reg m = *d;
		m.umin = umaxv(d->umin, s->umin);
		m.umax = uminv(d->umax, s->umax);
		m.smin = smaxv(d->smin, s->smin);
		m.smax = sminv(d->smax, s->smax);
		m.var = tnum_intersect(d->var, s->var);
		if ((d->var.value ^ s->var.value) & ~(d->var.mask | s->var.mask))
			return false;
		uint32_t did = d->id, sid = s->id;
		*d = m;
		d->id = did;
		m.id = sid;
		*s = m;
		break;
	}
	case BPF_JNE:
		if (reg_is_const(s)) {
			uint64_t c = s->var.value;
			if (reg_is_const(d) && d->var.value == c)
				return false;
			if (d->umin == c) d->umin++;
			else if (d->umax == c) d->umax--;
			if (d->smin == (int64_t)c) d->smin++;
			else if (d->smax == (int64_t)c) d->smax--;
		}
		break;
	case BPF_JGT:   /* d > s */
		if (s->umin == UINT64_MAX || d->umax == 0)
			return false;
		d->umin = umaxv(d->umin, s->umin + 1);
		s->umax = uminv(s->umax, d->umax - 1);
		break;
	case BPF_JGE:
		d->umin = umaxv(d->umin, s->umin);
		s->umax = uminv(s->umax, d->umax);
		break;
	case BPF_JLT:
		return learn(s, d, BPF_JGT);
	case BPF_JLE:
		return learn(s, d, BPF_JGE);
	case BPF_JSGT:
		if (s->smin == INT64_MAX || d->smax == INT64_MIN)
			return false;
		d->smin = smaxv(d->smin, s->smin + 1);
		s->smax = sminv(s->smax, d->smax - 1);
		break;
	case BPF_JSGE:
		d->smin = smaxv(d->smin, s->smin);
		s->smax = sminv(s->smax, d->smax);
		break;
	case BPF_JSLT:
		return learn(s, d, BPF_JSGT);
	case BPF_JSLE:
		return learn(s, d, BPF_JSGE);
	case BPF_JSET:
		break;   /* some bit in common: nothing simple to learn */
	case 0xff:  /* JSET not taken: the tested bits are all zero */
		if (reg_is_const(s))
			d->var = tnum_and(d->var, tnum_const(~s->var.value));
		break;
	}
	if (d->umin > d->umax || d->smin > d->smax || s->umin > s->umax || s->smin > s->smax)
		return false;
	reg_sync_bounds(d);
	reg_sync_bounds(s);
	return reg_bounds_sane(d) && reg_bounds_sane(s);
}

/* r's low 32 bits are now known to be v (a 32-bit view, zero- or sign-extended, after a
 * comparison): keep the bound on them (has32) and their known bits. */
static void learn32(struct gpv_reg *r, const struct gpv_reg *v)
{
	if (r->type != T_SCALAR)
		return;
	uint64_t lo = 0, hi = UINT32_MAX;
	if (v->umax <= UINT32_MAX) {                     /* zero-extended, or non-negative */
		lo = v->umin;
		hi = v->umax;
	} else if (v->smax < 0 && v->smin >= INT32_MIN) { /* negative as s32 */
		lo = (uint32_t)v->smin;
		hi = (uint32_t)v->smax;
	}
	uint32_t olo, ohi;
	reg_bounds32(r, &olo, &ohi);
	lo = lo > olo ? lo : olo;
	hi = hi < ohi ? hi : ohi;
	struct tnum low = tnum_cast(v->var, 4);
	r->var = tnum_intersect(r->var, (struct tnum){low.value, low.mask | 0xffffffff00000000ULL});
	if (lo > 0 || hi < UINT32_MAX) {
		r->has32 = 1;
		r->u32min = (uint32_t)lo;
		r->u32max = (uint32_t)hi;
	}
	reg_sync_bounds(r);
	if (lo > hi)
		r->umin = 1, r->umax = 0;   /* impossible: reg_bounds_sane says so */
}

struct copy_bounds {
	const struct gpv_reg *from;
};

static void copy_to_same_id(struct gpv_reg *r, void *arg)
{
	const struct gpv_reg *from = ((struct copy_bounds *)arg)->from;
	if (r != from && r->type == T_SCALAR && r->id == from->id) {
		*r = *from;
	}
}

bool gpv_refine(struct gpv_state *st, struct gpv_reg *dst, struct gpv_reg *src, uint8_t op,
		bool is32, bool taken, bool src_is_imm)
{
	uint8_t cond = op;
	if (!taken)
		cond = op == BPF_JSET ? 0xff : negate(op);
	if (is32 && !cmp32_is_cmp64(dst, src, op)) {
		/* only the low halves are compared: what is learnt bounds the low 32 bits */
		int t = gpv_branch_taken(dst, src, op, true);
		if (t >= 0)
			return t == (int)taken;
		bool sext = is_signed_op(op);
		struct gpv_reg d32, s32;
		reg_view32(dst, &d32, sext);
		reg_view32(src, &s32, sext);
		if (!learn(&d32, &s32, cond))
			return false;
		learn32(dst, &d32);
		if (!src_is_imm) {
			learn32(src, &s32);
			dst->precise = 0;
			src->precise = 0;
		}
		if (!reg_bounds_sane(dst) || !reg_bounds_sane(src))
			return false;
		struct copy_bounds cb = {dst};
		if (dst->id)
			gpv_for_each_reg(st, copy_to_same_id, &cb);
		if (!src_is_imm && src->id) {
			cb.from = src;
			gpv_for_each_reg(st, copy_to_same_id, &cb);
		}
		return true;
	}
	struct gpv_reg d = *dst, s = *src;
	if (!learn(&d, &s, cond))
		return false;
	if (!src_is_imm) {
		/* the new ranges depend on both registers: a later use must mark both precise
		 * (a register already precise would skip the walk back through this branch) */
		d.precise = 0;
		s.precise = 0;
	}
	*dst = d;
	if (!src_is_imm)
		*src = s;
	struct copy_bounds cb = {dst};
	if (dst->id)
		gpv_for_each_reg(st, copy_to_same_id, &cb);
	if (!src_is_imm && src->id) {
		cb.from = src;
		gpv_for_each_reg(st, copy_to_same_id, &cb);
	}
	return true;
}

struct null_mark {
	uint32_t id;
	bool is_null;
};

static void mark_null(struct gpv_reg *r, void *arg)
{
	struct null_mark *m = arg;
	if ((r->type != T_PTR_MAP_VALUE_OR_NULL && r->type != T_PTR_MEM_OR_NULL) || r->id != m->id)
		return;
	if (m->is_null) {
		reg_mark_const(r, 0);
		return;
	}
	r->type = r->type == T_PTR_MAP_VALUE_OR_NULL ? T_PTR_MAP_VALUE : T_PTR_MEM;
	r->id = 0;
}

void gpv_mark_null_checked(struct gpv_state *st, uint32_t id, bool is_null)
{
	struct null_mark m = {id, is_null};
	gpv_for_each_reg(st, mark_null, &m);
}
