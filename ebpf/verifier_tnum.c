/* Known-bits numbers (tnums) and the range bookkeeping of scalar registers.
 * A scalar is described twice: by its known bits and by unsigned and signed ranges. Each view
 * tightens the other (reg_sync_bounds), which is what lets "x & 7" index an 8-byte array and
 * "if x < 16" bound a later access. */
#include "ebpf/verifier_priv.h"

struct tnum tnum_const(uint64_t v)
{
	return (struct tnum){v, 0};
}

struct tnum tnum_unknown(void)
{
	return (struct tnum){0, ~0ULL};
}

/* The smallest tnum holding every value of [min, max]: the bits above the highest differing bit
 * are known. */
struct tnum tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max;
	if (min > max)
		return tnum_unknown();
	if (!chi)
		return tnum_const(min);
	int bits = 64 - __builtin_clzll(chi);
	if (bits >= 64)
		return tnum_unknown();
	uint64_t delta = (1ULL << bits) - 1;
	return (struct tnum){min & ~delta, delta};
}

struct tnum tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sum_mask = a.mask + b.mask, sum_val = a.value + b.value;
	/* bits where a carry could differ between the lowest and highest possible sums */
	uint64_t carries = (sum_mask + sum_val) ^ sum_val;
	uint64_t unknown = carries | a.mask | b.mask;
	return (struct tnum){sum_val & ~unknown, unknown};
}

struct tnum tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t diff = a.value - b.value;
	uint64_t hi = diff + a.mask, lo = diff - b.mask;
	uint64_t unknown = (hi ^ lo) | a.mask | b.mask;
	return (struct tnum){diff & ~unknown, unknown};
}

struct tnum tnum_and(struct tnum a, struct tnum b)
{
	uint64_t may_a = a.value | a.mask, may_b = b.value | b.mask;
	uint64_t v = a.value & b.value;
	return (struct tnum){v, may_a & may_b & ~v};
}

struct tnum tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value;
	return (struct tnum){v, (a.mask | b.mask) & ~v};
}

struct tnum tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t unknown = a.mask | b.mask;
	return (struct tnum){(a.value ^ b.value) & ~unknown, unknown};
}

struct tnum tnum_lshift(struct tnum a, unsigned k)
{
	return (struct tnum){a.value << k, a.mask << k};
}

struct tnum tnum_rshift(struct tnum a, unsigned k)
{
	return (struct tnum){a.value >> k, a.mask >> k};
}

struct tnum tnum_arshift(struct tnum a, unsigned k, unsigned width)
{
	if (width == 32)
		return (struct tnum){(uint32_t)((int32_t)a.value >> k), (uint32_t)((int32_t)a.mask >> k)};
	return (struct tnum){(uint64_t)((int64_t)a.value >> k), (uint64_t)((int64_t)a.mask >> k)};
}

/* Long multiplication, one bit of a at a time: a known 1 adds b's unknown bits, an unknown bit
 * adds every bit b might have. */
struct tnum tnum_mul(struct tnum a, struct tnum b)
{
	uint64_t known = a.value * b.value;
	struct tnum acc = tnum_const(0);
	while (a.value || a.mask) {
		if (a.value & 1)
			acc = tnum_add(acc, (struct tnum){0, b.mask});
		else if (a.mask & 1)
			acc = tnum_add(acc, (struct tnum){0, b.value | b.mask});
		a = tnum_rshift(a, 1);
		b = tnum_lshift(b, 1);
	}
	return tnum_add(tnum_const(known), acc);
}

struct tnum tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, unknown = a.mask & b.mask;
	return (struct tnum){v & ~unknown, unknown};
}

struct tnum tnum_cast(struct tnum a, unsigned bytes)
{
	if (bytes >= 8)
		return a;
	uint64_t keep = (1ULL << (bytes * 8)) - 1;
	return (struct tnum){a.value & keep, a.mask & keep};
}

bool tnum_is_const(struct tnum a)
{
	return !a.mask;
}

/* inner's values all belong to outer */
bool tnum_in(struct tnum outer, struct tnum inner)
{
	if (inner.mask & ~outer.mask)
		return false;
	return (inner.value & ~outer.mask) == outer.value;
}

bool tnum_is_aligned(struct tnum a, uint64_t size)
{
	if (!size)
		return true;
	return !((a.value | a.mask) & (size - 1));
}

void reg_mark_not_init(struct gpv_reg *r)
{
	*r = (struct gpv_reg){0};
	r->type = T_NOT_INIT;
}

void reg_mark_unknown(struct gpv_reg *r)
{
	*r = (struct gpv_reg){0};
	r->type = T_SCALAR;
	r->var = tnum_unknown();
	r->umin = 0;
	r->umax = UINT64_MAX;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
}

void reg_mark_const(struct gpv_reg *r, uint64_t v)
{
	*r = (struct gpv_reg){0};
	r->type = T_SCALAR;
	r->var = tnum_const(v);
	r->umin = r->umax = v;
	r->smin = r->smax = (int64_t)v;
}

/* An unknown value of `bytes` bytes, zero- or sign-extended to 64 bits. */
void reg_mark_unknown_width(struct gpv_reg *r, unsigned bytes, bool sign_extend)
{
	reg_mark_unknown(r);
	if (bytes >= 8)
		return;
	unsigned bits = bytes * 8;
	if (sign_extend) {
		r->smin = -(1LL << (bits - 1));
		r->smax = (1LL << (bits - 1)) - 1;
	} else {
		r->var = tnum_cast(r->var, bytes);
		r->umax = (1ULL << bits) - 1;
	}
	reg_sync_bounds(r);
}

bool reg_is_const(const struct gpv_reg *r)
{
	return r->type == T_SCALAR && tnum_is_const(r->var);
}

bool reg_is_pointer(const struct gpv_reg *r)
{
	return r->type != T_NOT_INIT && r->type != T_SCALAR;
}

static uint64_t umax64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t umin64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static int64_t smax64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t smin64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Ranges from known bits. */
static void bounds_from_tnum(struct gpv_reg *r)
{
	uint64_t lo = r->var.value, hi = r->var.value | r->var.mask;
	const uint64_t sign = 1ULL << 63;
	int64_t slo, shi;
	if (r->var.mask & sign) {           /* sign unknown: most negative and most positive */
		slo = (int64_t)(r->var.value | sign);
		shi = (int64_t)((r->var.value | r->var.mask) & ~sign);
	} else {
		slo = (int64_t)lo;
		shi = (int64_t)hi;
	}
	r->umin = umax64(r->umin, lo);
	r->umax = umin64(r->umax, hi);
	r->smin = smax64(r->smin, slo);
	r->smax = smin64(r->smax, shi);
}

/* Signed and unsigned ranges inform each other where the signed range does not straddle 0. */
static void bounds_deduce(struct gpv_reg *r)
{
	if (r->smin >= 0 || r->smax < 0) {
		/* same sign throughout: the two orders agree */
		uint64_t lo = umax64((uint64_t)r->smin, r->umin);
		uint64_t hi = umin64((uint64_t)r->smax, r->umax);
		r->umin = lo;
		r->umax = hi;
		r->smin = (int64_t)lo;
		r->smax = (int64_t)hi;
		return;
	}
	if ((int64_t)r->umax >= 0) {        /* all values non-negative as signed */
		r->smin = (int64_t)r->umin;
		r->umax = umin64((uint64_t)r->smax, r->umax);
		r->smax = (int64_t)r->umax;
	} else if ((int64_t)r->umin < 0) {  /* all values negative as signed */
		r->umin = umax64((uint64_t)r->smin, r->umin);
		r->smin = (int64_t)r->umin;
		r->smax = (int64_t)r->umax;
	}
}

void reg_sync_bounds(struct gpv_reg *r)
{
	bounds_from_tnum(r);
	bounds_deduce(r);
	if (r->umin <= r->umax)
		r->var = tnum_intersect(r->var, tnum_range(r->umin, r->umax));
	bounds_from_tnum(r);
}

/* False when the ranges or bits contradict each other: the path holding it cannot happen. */
bool reg_bounds_sane(const struct gpv_reg *r)
{
	if (r->type != T_SCALAR)
		return true;
	if (r->umin > r->umax || r->smin > r->smax)
		return false;
	if (r->var.value & r->var.mask)
		return false;
	uint64_t lo = r->var.value, hi = r->var.value | r->var.mask;
	if (lo > r->umax || hi < r->umin)
		return false;
	return true;
}

/* What is known of the low 32 bits: the 64-bit ranges when they fit in (or stay within) one
 * 4 GiB window, the known bits, and what a 32-bit comparison taught (has32). */
void reg_bounds32(const struct gpv_reg *r, uint32_t *lo, uint32_t *hi)
{
	uint64_t l = 0, h = UINT32_MAX;
	if ((r->umin >> 32) == (r->umax >> 32)) {
		l = (uint32_t)r->umin;
		h = (uint32_t)r->umax;
	}
	struct tnum t = tnum_cast(r->var, 4);
	l = umax64(l, t.value);
	h = umin64(h, t.value | t.mask);
	if (r->has32) {
		l = umax64(l, r->u32min);
		h = umin64(h, r->u32max);
	}
	if (l > h) {   /* contradictory (a path that cannot happen): claim nothing */
		l = 0;
		h = UINT32_MAX;
	}
	*lo = (uint32_t)l;
	*hi = (uint32_t)h;
}

void reg_view32(const struct gpv_reg *r, struct gpv_reg *out, bool sext)
{
	uint32_t lo, hi;
	reg_bounds32(r, &lo, &hi);
	struct tnum t = tnum_cast(r->var, 4);
	reg_mark_unknown(out);
	if (!sext || hi <= INT32_MAX) {
		out->var = t;
		out->umin = lo;
		out->umax = hi;
	} else if (lo > INT32_MAX) {        /* all negative as s32 */
		const uint64_t up = 0xffffffff00000000ULL;
		out->var = (struct tnum){t.value | up, t.mask};
		out->umin = up | lo;
		out->umax = up | hi;
	} else {
		const uint64_t up = 0xffffffff00000000ULL;
		out->var = (struct tnum){t.value, t.mask | up};
		if (!(t.mask & 0x80000000u))   /* bit 31 known: so are the upper bits */
			out->var = (t.value & 0x80000000u) ? (struct tnum){t.value | up, t.mask}
							 : t;
		out->smin = INT32_MIN;
		out->smax = INT32_MAX;
	}
	reg_sync_bounds(out);
	if (!reg_bounds_sane(out)) {
		reg_mark_unknown(out);
		if (!sext) {
			out->var = tnum_cast(out->var, 4);
			out->umax = UINT32_MAX;
		} else {
			out->smin = INT32_MIN;
			out->smax = INT32_MAX;
		}
		reg_sync_bounds(out);
	}
}

/* The result of a 32-bit operation: the upper half is zero; the low half keeps what is known of
 * it (a bound learnt by a 32-bit comparison becomes the 64-bit bound, as Linux's coercion). */
void reg_zext32(struct gpv_reg *r)
{
	uint32_t lo, hi;
	reg_bounds32(r, &lo, &hi);
	struct tnum t = tnum_cast(r->var, 4);
	if (r->umax > UINT32_MAX)
		reg_mark_unknown(r);   /* a new value: no longer a copy of anything */
	r->has32 = 0;
	r->u32min = r->u32max = 0;
	r->var = t;
	r->umin = lo;
	r->umax = hi;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
	reg_sync_bounds(r);
}
