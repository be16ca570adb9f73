/* Verifier states: copies (a state per pending branch and per kept checkpoint), and the two
 * comparisons that make exploration finite:
 *  - pruning: a new state at an instruction is covered by a fully explored one kept there when
 *    every value the new one can hold, the old one could too (old registers never read count as
 *    matching anything); the path stops, being proven safe already;
 *  - looping: a new state equal to one of its own ancestors at the same instruction can go round
 *    that loop forever. */
#include "ebpf/verifier_priv.h"

#include <stdlib.h>
#include <string.h>

static size_t frame_bytes(int nslots)
{
	return sizeof(struct gpv_frame) + (size_t)nslots * sizeof(struct gpv_slot);
}

struct gpv_frame *gpv_frame_new(int callsite, int subprog)
{
	struct gpv_frame *f = calloc(1, frame_bytes(0));
	if (!f)
		return NULL;
	for (int i = 0; i < 11; i++)
		reg_mark_not_init(&f->regs[i]);
	f->callsite = callsite;
	f->subprog = subprog;
	return f;
}

int gpv_frame_grow(struct gpv_state *st, int fno, int nslots)
{
	struct gpv_frame *f = st->frame[fno];
	if (nslots <= f->nslots)
		return 0;
	struct gpv_frame *g = realloc(f, frame_bytes(nslots));
	if (!g)
		return -1;
	memset(&g->slots[g->nslots], 0, (size_t)(nslots - g->nslots) * sizeof(struct gpv_slot));
	g->nslots = nslots;
	st->frame[fno] = g;
	return 0;
}

int gpv_state_copy(struct gpv_state *dst, const struct gpv_state *src)
{
	*dst = *src;
	for (int i = 0; i <= src->curframe; i++) {
		size_t b = frame_bytes(src->frame[i]->nslots);
		dst->frame[i] = malloc(b);
		if (!dst->frame[i]) {
			dst->curframe = i - 1;
			gpv_state_free(dst);
			return -1;
		}
		memcpy(dst->frame[i], src->frame[i], b);
	}
	for (int i = src->curframe + 1; i < GPV_MAX_FRAMES; i++)
		dst->frame[i] = NULL;
	return 0;
}

void gpv_state_free(struct gpv_state *st)
{
	for (int i = 0; i <= st->curframe && i < GPV_MAX_FRAMES; i++) {
		free(st->frame[i]);
		st->frame[i] = NULL;
	}
	st->curframe = -1;
}

void gpv_for_each_reg(struct gpv_state *st, void (*fn)(struct gpv_reg *, void *), void *arg)
{
	for (int f = 0; f <= st->curframe; f++) {
		struct gpv_frame *fr = st->frame[f];
		for (int i = 0; i < 11; i++)
			fn(&fr->regs[i], arg);
		for (int i = 0; i < fr->nslots; i++)
			if (fr->slots[i].type[0] == S_SPILL)
				fn(&fr->slots[i].spill, arg);
	}
}

struct id_count {
	uint32_t ids[64];
	int counts[64];
	int n;
};

static void count_id(struct gpv_reg *r, void *arg)
{
	struct id_count *c = arg;
	if (r->type != T_SCALAR || !r->id)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->ids[i] == r->id) {
			c->counts[i]++;
			return;
		}
	if (c->n < 64) {
		c->ids[c->n] = r->id;
		c->counts[c->n++] = 1;
	}
}

static void drop_lonely_id(struct gpv_reg *r, void *arg)
{
	struct id_count *c = arg;
	if (r->type != T_SCALAR || !r->id)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->ids[i] == r->id && c->counts[i] == 1)
			r->id = 0;
}

/* Forget what a kept state holds in registers that are never read again, and scalar ids no
 * other register shares: both only stop later states from matching it. */
void gpv_clear_dead(struct gpv_env *env, struct gpv_state *st, int idx)
{
	for (int f = 0; f <= st->curframe; f++) {
		uint16_t live;
		if (f == st->curframe)
			live = env->live[idx];
		else
			live = env->live[st->frame[f + 1]->callsite + 1];
		for (int i = 0; i < 10; i++)
			if (!(live & (1u << i)))
				reg_mark_not_init(&st->frame[f]->regs[i]);
	}
	struct id_count c = {.n = 0};
	gpv_for_each_reg(st, count_id, &c);
	gpv_for_each_reg(st, drop_lonely_id, &c);
}

struct idmap {
	uint32_t old[64], cur[64];
	int n;
};

static bool same_ids(struct idmap *m, uint32_t o, uint32_t c)
{
	if (!o)
		return true;   /* the old state relied on no link */
	if (!c)
		return false;
	for (int i = 0; i < m->n; i++) {
		if (m->old[i] == o)
			return m->cur[i] == c;
		if (m->cur[i] == c)
			return false;
	}
	if (m->n == 64)
		return false;
	m->old[m->n] = o;
	m->cur[m->n++] = c;
	return true;
}

static bool var_within(const struct gpv_reg *o, const struct gpv_reg *c)
{
	if (!(o->umin <= c->umin && o->umax >= c->umax && o->smin <= c->smin && o->smax >= c->smax &&
	      tnum_in(o->var, c->var)))
		return false;
	if (!o->has32)
		return true;
	uint32_t olo, ohi, clo, chi;   /* the old low half's bound must hold for the new one */
	reg_bounds32(o, &olo, &ohi);
	reg_bounds32(c, &clo, &chi);
	return olo <= clo && ohi >= chi;
}

static bool var_equal(const struct gpv_reg *o, const struct gpv_reg *c)
{
	return o->umin == c->umin && o->umax == c->umax && o->smin == c->smin && o->smax == c->smax &&
	       o->var.value == c->var.value && o->var.mask == c->var.mask && o->has32 == c->has32 &&
	       (!o->has32 || (o->u32min == c->u32min && o->u32max == c->u32max));
}

static bool regsafe(const struct gpv_reg *o, const struct gpv_reg *c, struct idmap *m, bool exact)
{
	if (o->type == T_NOT_INIT)
		return true;
	if (o->type != c->type)
		return false;
	if (o->type == T_SCALAR) {
		if (!exact && !o->precise)
			return true;   /* its value never decided anything on the explored paths */
		if (!(exact ? var_equal(o, c) : var_within(o, c)))
			return false;
		return same_ids(m, o->id, c->id);
	}
	if (o->off != c->off || o->map != c->map || o->frameno != c->frameno || o->mem_size != c->mem_size)
		return false;
	if (!(exact ? var_equal(o, c) : var_within(o, c)))
		return false;
	if (!same_ids(m, o->ref_obj_id, c->ref_obj_id))
		return false;
	if (o->type == T_PTR_MAP_VALUE_OR_NULL || o->type == T_PTR_MEM_OR_NULL)
		return o->id && same_ids(m, o->id, c->id);
	return true;
}

static bool unknown_scalar(const struct gpv_reg *r)
{
	if (r->type == T_SCALAR && !r->precise)
		return true;
	return r->type == T_SCALAR && !r->id && !r->has32 && r->var.mask == ~0ULL && r->umin == 0 &&
	       r->umax == UINT64_MAX && r->smin == INT64_MIN && r->smax == INT64_MAX;
}

static bool stack_safe(const struct gpv_frame *o, const struct gpv_frame *c, struct idmap *m, bool exact)
{
	static const struct gpv_slot empty;
	for (int i = 0; i < o->nslots; i++) {
		const struct gpv_slot *os = &o->slots[i];
		const struct gpv_slot *cs = i < c->nslots ? &c->slots[i] : &empty;
		if (os->type[0] == S_SPILL) {
			if (cs->type[0] == S_SPILL) {
				if (!regsafe(&os->spill, &cs->spill, m, exact))
					return false;
				continue;
			}
			if (exact || !unknown_scalar(&os->spill))
				return false;
			for (int j = 0; j < 8; j++)
				if (cs->type[j] != S_MISC)
					return false;
			continue;
		}
		for (int j = 0; j < 8; j++) {
			if (os->type[j] == S_INVALID)
				continue;
			if (cs->type[j] == S_MISC)
				continue;
			if (cs->type[j] == S_SPILL && cs->spill.type == T_SCALAR && !exact)
				continue;
			return false;
		}
	}
	return true;
}

bool gpv_states_equal(struct gpv_env *env, const struct gpv_state *old, const struct gpv_state *cur,
		      bool exact)
{
	(void)env;
	if (old->curframe != cur->curframe || old->nrefs != cur->nrefs)
		return false;
	struct idmap m = {.n = 0};
	for (int f = 0; f <= old->curframe; f++) {
		const struct gpv_frame *of = old->frame[f], *cf = cur->frame[f];
		if (of->callsite != cf->callsite)
			return false;
		for (int i = 0; i < 11; i++)
			if (!regsafe(&of->regs[i], &cf->regs[i], &m, exact))
				return false;
		if (!stack_safe(of, cf, &m, exact))
			return false;
	}
	for (int i = 0; i < old->nrefs; i++)
		if (!same_ids(&m, old->refs[i], cur->refs[i]))
			return false;
	return true;
}
