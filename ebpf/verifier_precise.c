/* Precision tracking, as the Linux verifier does it. Most scalars never influence a safety
 * decision (an accumulator that is only returned, a value only stored into a map). Kept states
 * compare such scalars by type alone, so paths that differ only in them prune each other; without
 * that a branchy program's paths multiply at every branch.
 *
 * A scalar becomes precise when its range decides something: it moves a pointer, sizes a helper's
 * memory, decides a branch. Then the instructions that produced it are walked backwards along the
 * path (the trace), through the kept states on the way, marking in each the registers and stack
 * slots it was computed from. A path pruned against a kept state marks in its own ancestors what
 * that state had precise. Backtracking across a BPF-to-BPF call or return marks every scalar
 * precise instead (simple and safe). */
#include "ebpf/verifier_priv.h"

#include <errno.h>
#include <stdlib.h>

#define CHUNK_ENTRIES 16384

struct gpv_trace_chunk {
	struct gpv_trace_chunk *next;
	struct gpv_trace e[CHUNK_ENTRIES];
};

int gpv_trace_append(struct gpv_env *env, int idx)
{
	return gpv_trace_add(env, &env->cur, idx);
}

int gpv_trace_add(struct gpv_env *env, struct gpv_state *st, int idx)
{
	if (!env->chunks || env->chunk_used == CHUNK_ENTRIES) {
		struct gpv_trace_chunk *c = malloc(sizeof(*c));
		if (!c)
			return gpv_reject(env, -ENOMEM, "out of memory");
		c->next = env->chunks;
		env->chunks = c;
		env->chunk_used = 0;
	}
	struct gpv_trace *t = &env->chunks->e[env->chunk_used++];
	t->prev = st->tail;
	t->idx = idx;
	t->slot = env->tr_slot;
	t->frame = env->tr_frame;
	t->flags = env->tr_flags;
	st->tail = t;
	return 0;
}

void gpv_trace_free(struct gpv_env *env)
{
	while (env->chunks) {
		struct gpv_trace_chunk *n = env->chunks->next;
		free(env->chunks);
		env->chunks = n;
	}
}

/* What still needs precision: registers of the active frame and stack slots of every frame. */
struct pset {
	uint16_t regs;
	uint64_t slots[GPV_MAX_FRAMES];
};

static bool pset_empty(const struct pset *p)
{
	if (p->regs)
		return false;
	for (int i = 0; i < GPV_MAX_FRAMES; i++)
		if (p->slots[i])
			return false;
	return true;
}

static void mark_all_in_state(struct gpv_state *st)
{
	for (int f = 0; f <= st->curframe; f++) {
		struct gpv_frame *fr = st->frame[f];
		for (int i = 0; i < 11; i++)
			if (fr->regs[i].type == T_SCALAR)
				fr->regs[i].precise = 1;
		for (int i = 0; i < fr->nslots; i++)
			if (fr->slots[i].type[0] == S_SPILL && fr->slots[i].spill.type == T_SCALAR)
				fr->slots[i].spill.precise = 1;
	}
}

static void mark_all_precise(struct gpv_env *env)
{
	mark_all_in_state(&env->cur);
	for (struct gpv_checkpoint *cp = env->cur.parent; cp && !cp->all_precise; cp = cp->st.parent) {
		if (cp->phantom) {
			cp->ph_regs = 0x7ff;
			for (int f = 0; f < GPV_MAX_FRAMES; f++)
				cp->ph_slots[f] = ~0ULL;
		} else {
			mark_all_in_state(&cp->st);
		}
		cp->all_precise = 1;
	}
}

#define BIT(r) ((uint16_t)(1u << (r)))

/* One instruction backwards: which registers/slots the needed ones came from.
 * false: a call or return was crossed (the caller falls back to marking everything). */
static bool backtrack_insn(struct gpv_env *env, const struct gpv_trace *t, struct pset *p)
{
	const struct bpf_insn *insn = &env->insns[t->idx];
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	uint16_t d = BIT(insn->dst_reg), s = BIT(insn->src_reg);
	bool x = BPF_SRC(insn->code) == BPF_X;
	uint64_t slotbit = t->slot >= 0 ? 1ULL << t->slot : 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (!(p->regs & d))
			return true;
		if (op == BPF_MOV) {
			p->regs &= (uint16_t)~d;
			if (x)
				p->regs |= s;
		} else if (x && op != BPF_NEG && op != BPF_END) {
			p->regs |= s;
		}
		return true;
	case BPF_LD:
		p->regs &= (uint16_t)~d;
		return true;
	case BPF_LDX:
		if (!(p->regs & d))
			return true;
		p->regs &= (uint16_t)~d;
		if (t->flags & TR_FILL)
			p->slots[t->frame] |= slotbit;
		return true;
	case BPF_ST:
	case BPF_STX:
		if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC) {
			if (insn->imm == BPF_CMPXCHG)
				p->regs &= (uint16_t)~BIT(0);
			else if (insn->imm & BPF_FETCH)
				p->regs &= (uint16_t)~s;
		}
		if ((t->flags & TR_STACK_WRITE) && (p->slots[t->frame] & slotbit)) {
			p->slots[t->frame] &= ~slotbit;
			if ((t->flags & TR_SPILL) && cls == BPF_STX && BPF_MODE(insn->code) == BPF_MEM)
				p->regs |= s;
		}
		return true;
	default:
		if (op == BPF_CALL) {
			if (insn->src_reg == BPF_PSEUDO_CALL)
				return false;
			p->regs &= (uint16_t)~0x3f;
			return true;
		}
		if (op == BPF_EXIT)
			return false;
		if (op != BPF_JA && x && (p->regs & (d | s)))
			p->regs |= d | s;
		return true;
	}
}

struct id_mark {
	uint32_t id;
};

static void mark_same_id(struct gpv_reg *r, void *arg)
{
	if (r->type == T_SCALAR && r->id == ((struct id_mark *)arg)->id)
		r->precise = 1;
}

static bool apply_phantom(struct gpv_checkpoint *cp, const struct pset *p)
{
	bool changed = (p->regs & ~cp->ph_regs) != 0;
	cp->ph_regs |= p->regs;
	for (int f = 0; f < GPV_MAX_FRAMES; f++) {
		changed |= (p->slots[f] & ~cp->ph_slots[f]) != 0;
		cp->ph_slots[f] |= p->slots[f];
	}
	return changed;
}

/* Mark the needed ones in a kept state; returns true when something was newly marked. */
static bool apply(struct gpv_state *st, const struct pset *p)
{
	bool changed = false;
	struct gpv_frame *fr = st->frame[st->curframe];
	for (int i = 0; i < 11; i++) {
		struct gpv_reg *r = &fr->regs[i];
		if (!(p->regs & BIT(i)) || r->type != T_SCALAR || r->precise)
			continue;
		r->precise = 1;
		changed = true;
		if (r->id) {   /* copies share bounds learnt by a branch */
			struct id_mark m = {r->id};
			gpv_for_each_reg(st, mark_same_id, &m);
		}
	}
	for (int f = 0; f <= st->curframe; f++) {
		struct gpv_frame *g = st->frame[f];
		for (int i = 0; i < g->nslots && i < 64; i++) {
			if (!(p->slots[f] & (1ULL << i)))
				continue;
			struct gpv_reg *r = &g->slots[i].spill;
			if (g->slots[i].type[0] != S_SPILL || r->type != T_SCALAR || r->precise)
				continue;
			r->precise = 1;
			changed = true;
		}
	}
	return changed;
}

static void backtrack(struct gpv_env *env, struct pset p)
{
	apply(&env->cur, &p);
	int frame = env->cur.curframe;
	const struct gpv_trace *t = env->cur.tail;
	struct gpv_checkpoint *cp = env->cur.parent;
	for (;;) {
		const struct gpv_trace *boundary = cp ? cp->st.tail : NULL;
		while (t && t != boundary) {
			if (++env->bt_steps > GPV_MAX_BACKTRACK_STEPS || !backtrack_insn(env, t, &p)) {
				mark_all_precise(env);
				return;
			}
			if (pset_empty(&p))
				return;
			t = t->prev;
		}
		if (!cp)
			return;
		if (cp->st.curframe != frame) {
			mark_all_precise(env);
			return;
		}
		if (cp->all_precise)
			return;
		if (!(cp->phantom ? apply_phantom(cp, &p) : apply(&cp->st, &p)))
			return;   /* already precise there: marked back from it before */
		cp = cp->st.parent;
	}
}

void gpv_mark_precise(struct gpv_env *env, int regno)
{
	struct gpv_reg *r = &cur_regs(env)[regno];
	if (r->type != T_SCALAR || r->precise)
		return;   /* precise already: its origins were marked when it became so */
	struct pset p = {0};
	p.regs = BIT(regno);
	backtrack(env, p);
}

/* A path was pruned against `old`: what old needed precise, this path's ancestors need too. */
void gpv_propagate_precision(struct gpv_env *env, const struct gpv_state *old)
{
	struct pset p = {0};
	for (int f = 0; f <= old->curframe; f++) {
		const struct gpv_frame *fr = old->frame[f];
		for (int i = 0; i < 11; i++) {
			if (fr->regs[i].type != T_SCALAR || !fr->regs[i].precise)
				continue;
			if (f != old->curframe) {
				mark_all_precise(env);
				return;
			}
			if (!env->cur.frame[f]->regs[i].precise)
				p.regs |= BIT(i);
		}
		for (int i = 0; i < fr->nslots && i < 64; i++)
			if (fr->slots[i].type[0] == S_SPILL && fr->slots[i].spill.type == T_SCALAR &&
			    fr->slots[i].spill.precise)
				p.slots[f] |= 1ULL << i;
	}
	if (!pset_empty(&p))
		backtrack(env, p);
}
