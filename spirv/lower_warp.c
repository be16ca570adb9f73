/* Warp collectives by emulation: a 32-lane warp is 32 consecutive linear thread indices of the
 * work-group, as in CUDA. Each collective publishes its operand in a work-group scratch array
 * between two barriers and reads its lanes back, so PTX's exact results (source-lane rules,
 * clamps, segment masks, the valid predicate, partial last warps) hold on any OpenCL target,
 * whatever its sub-group size. The price: every thread of the block must reach the collective,
 * which is how warp-shuffle reductions are written. In divergent code the threads that skip the
 * region are brought through its collectives (lower_diverge.c): they publish too, flagged not
 * live, so a vote, redux, match or activemask counts only the live lanes, and what the
 * collective writes is not kept for them. */
#include "spirv/lower.h"

#include <string.h>

#define SCRATCH_WORDS 1024 /* CUDA's largest block */

static uint32_t scratch_ptr(lw *c, uint32_t idx)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	if (!c->warp_scratch) {
		uint32_t at = spv_t_array(c->e, u32, spv_c_int(c->e, 32, SCRATCH_WORDS));
		c->warp_scratch = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassWorkgroup, at), c->warp_scratch,
		       (uint32_t)SpvStorageClassWorkgroup);
		spv_name(c->e, c->warp_scratch, "gpuprobe_warp_scratch");
	}
	return lw_op2(c, SpvOpInBoundsAccessChain, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), c->warp_scratch, idx);
}

static uint32_t live_ptr(lw *c, uint32_t idx)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	if (!c->warp_live) {
		uint32_t at = spv_t_array(c->e, u32, spv_c_int(c->e, 32, SCRATCH_WORDS));
		c->warp_live = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassWorkgroup, at), c->warp_live,
		       (uint32_t)SpvStorageClassWorkgroup);
		spv_name(c->e, c->warp_live, "gpuprobe_warp_live");
	}
	return lw_op2(c, SpvOpInBoundsAccessChain, spv_t_ptr(c->e, SpvStorageClassWorkgroup, u32), c->warp_live, idx);
}

struct warp { uint32_t lt, lane, base, wsize, active; };

/* Publish v (u32) for the warp; returns the thread's place. need_live: the result depends on
 * which lanes take part (vote, redux, match, activemask): inside a divergent region w.active
 * then holds only the lanes that did not skip it. */
static struct warp publish_live(lw *c, uint32_t v, bool need_live)
{
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	struct warp w;
	w.lt = lw_linear_tid(c);
	w.lane = lw_op2(c, SpvOpBitwiseAnd, u32, w.lt, lw_u32(c, 31));
	w.base = lw_op2(c, SpvOpISub, u32, w.lt, w.lane);
	uint32_t left = lw_op2(c, SpvOpISub, u32, lw_block_threads(c), w.base);
	w.wsize = lw_select(c, u32, lw_op2(c, SpvOpULessThan, bl, left, lw_u32(c, 32)), left, lw_u32(c, 32));
	uint32_t m = lw_op2(c, SpvOpISub, u32,
			    lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1), lw_op2(c, SpvOpBitwiseAnd, u32, w.wsize, lw_u32(c, 31))),
			    lw_u32(c, 1));
	w.active = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThanEqual, bl, w.wsize, lw_u32(c, 32)), lw_u32(c, ~0u), m);
	need_live = need_live && c->warp_skip;
	lw_barrier(c);
	spv_op(&c->body, SpvOpStore, 2, scratch_ptr(c, w.lt), v);
	if (need_live)
		spv_op(&c->body, SpvOpStore, 2, live_ptr(c, w.lt),
		       lw_select(c, u32, c->warp_skip, lw_u32(c, 0), lw_u32(c, 1)));
	lw_barrier(c);
	if (need_live) {   /* the lanes of the warp that did not skip the region */
		uint32_t live = lw_u32(c, 0);
		for (unsigned i = 0; i < 32; i++) {
			uint32_t f = lw_op1(c, SpvOpLoad, u32, live_ptr(c, lw_op2(c, SpvOpIAdd, u32, w.base, lw_u32(c, i))));
			live = lw_op2(c, SpvOpBitwiseOr, u32, live,
				      lw_op2(c, SpvOpShiftLeftLogical, u32, lw_op2(c, SpvOpBitwiseAnd, u32, f, lw_u32(c, 1)),
					     lw_u32(c, i)));
		}
		w.active = lw_op2(c, SpvOpBitwiseAnd, u32, w.active, live);
	}
	return w;
}

static struct warp publish(lw *c, uint32_t v)
{
	return publish_live(c, v, false);
}

static uint32_t lane_value(lw *c, struct warp *w, unsigned i)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	return lw_op1(c, SpvOpLoad, u32, scratch_ptr(c, lw_op2(c, SpvOpIAdd, u32, w->base, lw_u32(c, i))));
}

static int lower_shfl(lw *c, const ir_insn *in)
{
	static const char *const modes[] = {".up", ".down", ".bfly", ".idx", NULL};
	const char *mode = lw_insn_mod_in(in, modes);
	if (!mode || in->nops < 4)
		return lw_unsupported(c, in, "shfl needs a mode and four operands");
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	ptype t = PT('b', 32);
	uint32_t a = lw_read(c, &in->ops[1], t), b = lw_read(c, &in->ops[2], t), cc = lw_read(c, &in->ops[3], t);
	if (!a || !b || !cc)
		return -1;
	struct warp w = publish(c, a);
	uint32_t bval = lw_op2(c, SpvOpBitwiseAnd, u32, b, lw_u32(c, 31));
	uint32_t cval = lw_op2(c, SpvOpBitwiseAnd, u32, cc, lw_u32(c, 31));
	uint32_t seg = lw_op2(c, SpvOpBitwiseAnd, u32, lw_op2(c, SpvOpShiftRightLogical, u32, cc, lw_u32(c, 8)), lw_u32(c, 31));
	uint32_t nseg = lw_op1(c, SpvOpNot, u32, seg);
	uint32_t minl = lw_op2(c, SpvOpBitwiseAnd, u32, w.lane, seg);
	uint32_t maxl = lw_op2(c, SpvOpBitwiseOr, u32, minl, lw_op2(c, SpvOpBitwiseAnd, u32, cval, nseg));
	uint32_t j, pval;
	if (!strcmp(mode, ".up")) {
		j = lw_op2(c, SpvOpISub, u32, w.lane, bval);
		pval = lw_op2(c, SpvOpSGreaterThanEqual, bl, j, maxl);
	} else {
		if (!strcmp(mode, ".down"))
			j = lw_op2(c, SpvOpIAdd, u32, w.lane, bval);
		else if (!strcmp(mode, ".bfly"))
			j = lw_op2(c, SpvOpBitwiseXor, u32, w.lane, bval);
		else
			j = lw_op2(c, SpvOpBitwiseOr, u32, minl, lw_op2(c, SpvOpBitwiseAnd, u32, bval, nseg));
		pval = lw_op2(c, SpvOpSLessThanEqual, bl, j, maxl);
	}
	/* a source lane past the end of a partial warp does not exist: keep the own value */
	uint32_t exists = lw_op2(c, SpvOpULessThan, bl, j, w.wsize);
	uint32_t src = lw_select(c, u32, lw_op2(c, SpvOpLogicalAnd, bl, pval, exists), j, w.lane);
	uint32_t v = lw_op1(c, SpvOpLoad, u32, scratch_ptr(c, lw_op2(c, SpvOpIAdd, u32, w.base, src)));
	const ir_operand *d = &in->ops[0];
	if (d->kind == IR_OPND_PAIR && d->nelems == 2)
		return lw_write(c, &d->elems[0], t, v) < 0 || lw_write(c, &d->elems[1], PT('p', 1), pval) < 0 ? -1 : 1;
	return lw_write(c, d, t, v) < 0 ? -1 : 1;
}

/* The mask operand, if written (vote.sync/redux.sync), else all lanes. */
static uint32_t member_mask(lw *c, const ir_insn *in, unsigned idx)
{
	if (idx < in->nops)
		return lw_read(c, &in->ops[idx], PT('b', 32));
	return lw_u32(c, ~0u);
}

static int lower_vote(lw *c, const ir_insn *in)
{
	static const char *const modes[] = {".all", ".any", ".uni", ".ballot", NULL};
	const char *mode = lw_insn_mod_in(in, modes);
	if (!mode || in->nops < 2)
		return lw_unsupported(c, in, "vote needs a mode and two operands");
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t p = lw_read_pred(c, &in->ops[1]);
	uint32_t mm = member_mask(c, in, 2);
	if (!p || !mm)
		return -1;
	struct warp w = publish_live(c, lw_select(c, u32, p, lw_u32(c, 1), lw_u32(c, 0)), true);
	uint32_t ballot = lw_u32(c, 0);
	for (unsigned i = 0; i < 32; i++) {
		uint32_t v = lane_value(c, &w, i);
		ballot = lw_op2(c, SpvOpBitwiseOr, u32, ballot, lw_op2(c, SpvOpShiftLeftLogical, u32,
									lw_op2(c, SpvOpBitwiseAnd, u32, v, lw_u32(c, 1)), lw_u32(c, i)));
	}
	uint32_t mask = lw_op2(c, SpvOpBitwiseAnd, u32, mm, w.active);
	ballot = lw_op2(c, SpvOpBitwiseAnd, u32, ballot, mask);
	if (!strcmp(mode, ".ballot"))
		return lw_write(c, &in->ops[0], PT('b', 32), ballot) < 0 ? -1 : 1;
	uint32_t r;
	uint32_t none = lw_op2(c, SpvOpIEqual, bl, ballot, lw_u32(c, 0));
	uint32_t all = lw_op2(c, SpvOpIEqual, bl, ballot, mask);
	if (!strcmp(mode, ".all"))
		r = all;
	else if (!strcmp(mode, ".any"))
		r = lw_op1(c, SpvOpLogicalNot, bl, none);
	else
		r = lw_op2(c, SpvOpLogicalOr, bl, none, all);
	return lw_write(c, &in->ops[0], PT('p', 1), r) < 0 ? -1 : 1;
}

static int lower_redux(lw *c, const ir_insn *in)
{
	static const char *const ops[] = {".add", ".min", ".max", ".and", ".or", ".xor", NULL};
	const char *op = lw_insn_mod_in(in, ops);
	ptype t = lw_insn_type(in);
	if (!op || !ptype_ok(t) || t.bits != 32 || t.k == 'f' || in->nops < 2)
		return lw_unsupported(c, in, "redux needs an integer operation on 32 bits");
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], t), mm = member_mask(c, in, 2);
	if (!a || !mm)
		return -1;
	struct warp w = publish_live(c, a, true);
	uint32_t mask = lw_op2(c, SpvOpBitwiseAnd, u32, mm, w.active);
	uint64_t ident = !strcmp(op, ".and") ? ~0ull : !strcmp(op, ".min") ? (t.k == 's' ? 0x7fffffffu : ~0u)
		       : !strcmp(op, ".max") ? (t.k == 's' ? 0x80000000u : 0) : 0;
	uint32_t acc = lw_u32(c, (uint32_t)ident);
	for (unsigned i = 0; i < 32; i++) {
		uint32_t v = lane_value(c, &w, i);
		uint32_t in_mask = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, mask, lw_u32(c, 1u << i)),
					  lw_u32(c, 0));
		v = lw_select(c, u32, in_mask, v, lw_u32(c, (uint32_t)ident));
		if (!strcmp(op, ".add"))
			acc = lw_op2(c, SpvOpIAdd, u32, acc, v);
		else if (!strcmp(op, ".and"))
			acc = lw_op2(c, SpvOpBitwiseAnd, u32, acc, v);
		else if (!strcmp(op, ".or"))
			acc = lw_op2(c, SpvOpBitwiseOr, u32, acc, v);
		else if (!strcmp(op, ".xor"))
			acc = lw_op2(c, SpvOpBitwiseXor, u32, acc, v);
		else {
			SpvOp lt = t.k == 's' ? SpvOpSLessThan : SpvOpULessThan;
			uint32_t less = lw_op2(c, lt, bl, v, acc);
			acc = !strcmp(op, ".min") ? lw_select(c, u32, less, v, acc) : lw_select(c, u32, less, acc, v);
		}
	}
	return lw_write(c, &in->ops[0], t, acc) < 0 ? -1 : 1;
}

/* match.any.sync.b32 d, a, mask: the lanes holding the same value; match.all d|p: the mask if
 * all hold it, else 0 (p says which). 64-bit values compare both halves. */
static int lower_match(lw *c, const ir_insn *in)
{
	ptype t = lw_insn_type(in);
	bool all = ir_insn_has_mod(in, ".all");
	if (!ptype_ok(t) || (t.bits != 32 && t.bits != 64) || in->nops < 2 || (!all && !ir_insn_has_mod(in, ".any")))
		return lw_unsupported(c, in, "match needs .any or .all and a 32- or 64-bit type");
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t a = lw_read(c, &in->ops[1], t), mm = member_mask(c, in, 2);
	if (!a || !mm)
		return -1;
	uint32_t halves[2] = {a, 0};
	unsigned nh = 1;
	if (t.bits == 64) {
		uint32_t u64 = spv_t_int(c->e, 64);
		halves[0] = lw_op1(c, SpvOpUConvert, u32, a);
		halves[1] = lw_op1(c, SpvOpUConvert, u32, lw_op2(c, SpvOpShiftRightLogical, u64, a, lw_u64(c, 32)));
		nh = 2;
	}
	uint32_t same[32];
	struct warp w = {0};
	for (unsigned h = 0; h < nh; h++) {
		w = publish_live(c, halves[h], h + 1 == nh);
		for (unsigned i = 0; i < 32; i++) {
			uint32_t eq = lw_op2(c, SpvOpIEqual, bl, lane_value(c, &w, i), halves[h]);
			same[i] = h ? lw_op2(c, SpvOpLogicalAnd, bl, same[i], eq) : eq;
		}
	}
	uint32_t mask = lw_op2(c, SpvOpBitwiseAnd, u32, mm, w.active), r = lw_u32(c, 0);
	for (unsigned i = 0; i < 32; i++)
		r = lw_op2(c, SpvOpBitwiseOr, u32, r, lw_select(c, u32, same[i], lw_u32(c, 1u << i), lw_u32(c, 0)));
	r = lw_op2(c, SpvOpBitwiseAnd, u32, r, mask);
	const ir_operand *d = &in->ops[0];
	if (!all)
		return lw_write(c, d, PT('b', 32), r) < 0 ? -1 : 1;
	uint32_t p = lw_op2(c, SpvOpIEqual, bl, r, mask);
	uint32_t v = lw_select(c, u32, p, mask, lw_u32(c, 0));
	if (d->kind == IR_OPND_PAIR && d->nelems == 2)
		return lw_write(c, &d->elems[0], PT('b', 32), v) < 0 || lw_write(c, &d->elems[1], PT('p', 1), p) < 0 ? -1 : 1;
	return lw_write(c, d, PT('b', 32), v) < 0 ? -1 : 1;
}

/* A work-group reduction of v (u32) by the atomic op, from init: a word thread 0 sets between
 * barriers. Every thread of the block must reach it. */
static uint32_t block_reduce(lw *c, uint32_t v, SpvOp op, uint32_t init)
{
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t lt = lw_linear_tid(c);
	lw_barrier(c);
	uint32_t set_it = spv_id(c->e), go = spv_id(c->e);
	lw_branch_cond(c, lw_op2(c, SpvOpIEqual, bl, lt, lw_u32(c, 0)), set_it, go);
	lw_label(c, set_it);
	spv_op(&c->body, SpvOpStore, 2, scratch_ptr(c, lw_u32(c, 0)), lw_u32(c, init));   /* word 0: no warp collective is in flight here */
	lw_label(c, go);
	lw_barrier(c);
	uint32_t old = spv_id(c->e);
	spv_op(&c->body, op, 6, u32, old, scratch_ptr(c, lw_u32(c, 0)), lw_u32(c, SpvScopeWorkgroup), lw_u32(c, 0), v);
	lw_barrier(c);
	uint32_t n = lw_op1(c, SpvOpLoad, u32, scratch_ptr(c, lw_u32(c, 0)));
	lw_barrier(c);
	return n;
}

/* How many threads of the block have p. */
static uint32_t block_count(lw *c, uint32_t p)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	return block_reduce(c, lw_select(c, u32, p, lw_u32(c, 1), lw_u32(c, 0)), SpvOpAtomicIAdd, 0);
}

uint32_t lw_block_min(lw *c, uint32_t v)
{
	return block_reduce(c, v, SpvOpAtomicUMin, ~0u);
}

uint32_t lw_block_any(lw *c, uint32_t p)
{
	return lw_op2(c, SpvOpINotEqual, spv_t_bool(c->e), block_count(c, p), lw_u32(c, 0));
}

/* bar.red.popc.u32 d, 0, p / bar.red.and|or.pred d, 0, p: a block-wide count (block_count). */
static int lower_bar_red(lw *c, const ir_insn *in)
{
	bool popc = ir_insn_has_mod(in, ".popc"), and_ = ir_insn_has_mod(in, ".and");
	if (in->nops < 3 || (!popc && !and_ && !ir_insn_has_mod(in, ".or")))
		return lw_unsupported(c, in, "bar.red needs popc, and or or, a barrier and a predicate");
	if (in->nops > 3 && in->ops[2].kind != IR_OPND_INT)
		return lw_unsupported(c, in, "bar.red with a thread count is not lowered");
	uint32_t p = lw_read_pred(c, &in->ops[in->nops - 1]);
	if (!p)
		return -1;
	uint32_t bl = spv_t_bool(c->e);
	uint32_t n = block_count(c, p);
	if (popc)
		return lw_write(c, &in->ops[0], PT('u', 32), n) < 0 ? -1 : 1;
	uint32_t r = and_ ? lw_op2(c, SpvOpIEqual, bl, n, lw_block_threads(c)) : lw_op2(c, SpvOpINotEqual, bl, n, lw_u32(c, 0));
	return lw_write(c, &in->ops[0], PT('p', 1), r) < 0 ? -1 : 1;
}

/* A probe's collective that part of a block may not reach (lw_lane_alone): the thread is a warp
 * of its own, as CUDA allows any activemask to be (independent thread scheduling): activemask,
 * match and ballot give its own lane's bit, a reduction or shuffle its own value, with no
 * barrier. A probe's warp-aggregated counter then adds once per lane, the same sum. */
static int lower_lane_alone(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t me = lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1),
			     lw_op2(c, SpvOpBitwiseAnd, u32, lw_linear_tid(c), lw_u32(c, 31)));
	const ir_operand *d = in->nops ? &in->ops[0] : NULL;
	if (!strcmp(op, "bar") || !strcmp(op, "barrier"))
		return 1;
	if (!d || in->nops < 2)
		return !strcmp(op, "activemask") && d ? (lw_write(c, d, PT('b', 32), me) < 0 ? -1 : 1)
						     : lw_unsupported(c, in, "a probe's warp collective without operands");
	if (!strcmp(op, "vote")) {
		uint32_t p = lw_read_pred(c, &in->ops[1]);
		if (!p)
			return -1;
		if (ir_insn_has_mod(in, ".ballot"))
			return lw_write(c, d, PT('b', 32), lw_select(c, u32, p, me, lw_u32(c, 0))) < 0 ? -1 : 1;
		uint32_t r = ir_insn_has_mod(in, ".uni") ? spv_c_bool(c->e, 1) : p;
		return lw_write(c, d, PT('p', 1), r) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "match")) {
		if (d->kind == IR_OPND_PAIR && d->nelems == 2)
			return lw_write(c, &d->elems[0], PT('b', 32), me) < 0 ||
			       lw_write(c, &d->elems[1], PT('p', 1), spv_c_bool(c->e, 1)) < 0 ? -1 : 1;
		return lw_write(c, d, PT('b', 32), me) < 0 ? -1 : 1;
	}
	/* shfl and redux: the own value (a shuffle from another lane: the predicate says invalid) */
	ptype t = !strcmp(op, "redux") ? lw_insn_type(in) : PT('b', 32);
	uint32_t a = lw_read(c, &in->ops[1], t);
	if (!a)
		return -1;
	if (d->kind == IR_OPND_PAIR && d->nelems == 2)
		return lw_write(c, &d->elems[0], t, a) < 0 || lw_write(c, &d->elems[1], PT('p', 1), spv_c_bool(c->e, 0)) < 0
			       ? -1 : 1;
	return lw_write(c, d, t, a) < 0 ? -1 : 1;
}

int lw_warp(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (c->cur && &c->cur->insn == in && lw_lane_alone(c, c->cur))
		return lower_lane_alone(c, in);
	if (!strcmp(op, "shfl"))
		return lower_shfl(c, in);
	if (!strcmp(op, "vote"))
		return lower_vote(c, in);
	if (!strcmp(op, "redux"))
		return lower_redux(c, in);
	if (!strcmp(op, "activemask") && c->warp_skip) {   /* in a divergent region: the live lanes */
		struct warp w = publish_live(c, lw_u32(c, 0), true);
		return lw_write(c, &in->ops[0], PT('b', 32), w.active) < 0 ? -1 : 1;
	}
	if (!strcmp(op, "activemask")) {
		uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
		uint32_t lt = lw_linear_tid(c);
		uint32_t base = lw_op2(c, SpvOpISub, u32, lt, lw_op2(c, SpvOpBitwiseAnd, u32, lt, lw_u32(c, 31)));
		uint32_t left = lw_op2(c, SpvOpISub, u32, lw_block_threads(c), base);
		uint32_t m = lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1),
							    lw_op2(c, SpvOpBitwiseAnd, u32, left, lw_u32(c, 31))), lw_u32(c, 1));
		uint32_t r = lw_select(c, u32, lw_op2(c, SpvOpUGreaterThanEqual, bl, left, lw_u32(c, 32)), lw_u32(c, ~0u), m);
		return lw_write(c, &in->ops[0], PT('b', 32), r) < 0 ? -1 : 1;
	}
	if ((!strcmp(op, "bar") || !strcmp(op, "barrier")) && ir_insn_has_mod(in, ".warp")) {
		/* The instrumentation's own (a probe site's reconvergence bracket, a probe's lanes
		 * meeting before a warp helper) only keeps NVIDIA's lanes together; emulated warps are
		 * converged at their collectives, and a site inside the application's divergent code
		 * (vectorAdd's `if (i < n)`) is not reached by every thread: a barrier there ran the
		 * sites, and the loads after them, for the threads the branch had left out
		 * (own_driver_probes: 100352 loads counted for 100000, vectorAdd crashed). */
		if ((c->cur && c->cur->generated) || (in->nops && in->ops[0].kind == IR_OPND_REG &&
							  !strncmp(in->ops[0].name, "%__gp", 5)))
			return 1;   /* ours: generated here, or named so in PTX printed and read again */
		/* __syncwarp orders the lanes' shared-memory accesses: where a block's threads run
		 * one after another between barriers (PoCL), a lane must not read a neighbour's
		 * store before that neighbour made it, so it is a work-group barrier, reached by
		 * every thread of the block like the other collectives; a guarded one cannot be. */
		if (in->guard)
			return lw_unsupported(c, in, "a guarded bar.warp.sync (__syncwarp) is not lowered");
		lw_barrier(c);
		return 1;
	}
	if (!strcmp(op, "match"))
		return lower_match(c, in);
	if ((!strcmp(op, "bar") || !strcmp(op, "barrier")) && ir_insn_has_mod(in, ".red"))
		return lower_bar_red(c, in);
	return 0;
}
