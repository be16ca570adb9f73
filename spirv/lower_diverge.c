/* bar.warp.sync (__syncwarp) inside divergent code. The warp emulation makes it a work-group
 * barrier (lower_warp.c), which every thread of the block must reach; code such as
 *
 *	@%p bra $L_join;      threads that skip: lanes 16..63 of dxtc's 16-lane tiles
 *	S0  bar.warp.sync  S1  bar.warp.sync  S2
 *	$L_join:
 *
 * reaches it in some threads only, which is undefined behaviour for OpenCL (PoCL compiled dxtc's
 * kernel to an empty function). Where every barrier of such a region is on every path through it
 * (no branch of the region jumps across it), the threads that skip go through the same barriers
 * instead, skipping only the code between them:
 *
 *	skip = p; skip ? C1 : S0;  C1: barrier; skip ? C2 : S1;  C2: barrier; skip ? join : S2
 *
 * A region qualifies when its guarded branch jumps forward, its code has no other way in or out
 * (its branches stay inside it or go to the join; nothing outside branches into it; no return,
 * call or indexed branch), and its only collectives are unguarded bar.warp.sync. Anything else
 * is left as it was.
 *
 * LLVM's NVPTX backend lays the same region out the other way round (amdgpu/'s round trip):
 *
 *	@%p bra $L_region;  bra.uni $L_join;  $L_region:  S0 bar.warp.sync ...  $L_join:
 *
 * which is the region above skipped where %p is false: the pair is read as `@!%p bra $L_join`. */
#include "spirv/lower.h"

#include <stdlib.h>
#include <string.h>

static bool is_warp_sync(const ir_insn *in)
{
	return (!strcmp(in->opcode, "bar") || !strcmp(in->opcode, "barrier")) && ir_insn_has_mod(in, ".warp") &&
	       !ir_insn_has_mod(in, ".red");
}

/* Instructions that must be reached by the whole block (the emulated collectives and barriers),
 * or that leave the region some other way: a region holding one is not rewritten. */
static bool blocks_rewrite(const ir_insn *in)
{
	static const char *const ops[] = {"shfl", "vote", "match", "redux", "wmma", "ldmatrix", "stmatrix", "mma",
					  "mbarrier", "bar", "barrier", "ret", "exit", "call", "brx", "cp", "elect",
					  "activemask", "griddepcontrol", "tcgen05", "wgmma"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(in->opcode, ops[i]))
			return true;
	return false;
}

static const char *bra_target(const ir_stmt *s)
{
	if (s->kind != IR_STMT_INSN || strcmp(s->insn.opcode, "bra") || s->insn.nops != 1 ||
	    s->insn.ops[0].kind != IR_OPND_SYMBOL)
		return NULL;
	return s->insn.ops[0].name;
}

static void add_action(lw *c, const ir_stmt *s, int kind, uint32_t var, uint32_t own, uint32_t next)
{
	c->diverge = realloc(c->diverge, (c->ndiverge + 1) * sizeof(*c->diverge));
	c->diverge[c->ndiverge++] = (struct lw_diverge){.s = s, .kind = kind, .var = var, .own = own, .next = next};
}

/* One region: the guarded branch at index i to the label at index t; pair: st[i] is the
 * unguarded branch of LLVM's layout and st[i - 1] the guarded one that jumps over it (to i + 1). */
static void plan_region(lw *c, const ir_stmt *const *st, size_t n, const long *target, size_t i, size_t t,
			bool pair)
{
	size_t nbar = 0;
	for (size_t j = i + 1; j < t; j++) {
		const ir_stmt *s = st[j];
		if (s->kind != IR_STMT_INSN)
			continue;
		if (is_warp_sync(&s->insn)) {
			if (s->insn.guard)
				return;
			nbar++;
			continue;
		}
		if (!strcmp(s->insn.opcode, "bra")) {
			if (target[j] < 0 || (size_t)target[j] <= i || (size_t)target[j] > t)
				return; /* leaves the region (or an unknown label) */
			continue;
		}
		if (blocks_rewrite(&s->insn))
			return;
	}
	if (!nbar)
		return;
	/* nothing outside branches into the region (but the pair's own guarded branch) */
	for (size_t j = 0; j < n; j++)
		if ((j < i || j >= t) && target[j] > (long)i && target[j] < (long)t && !(pair && j == i - 1))
			return;
	/* every barrier is on every path: no branch of the region jumps across it */
	for (size_t b = i + 1; b < t; b++) {
		if (st[b]->kind != IR_STMT_INSN || !is_warp_sync(&st[b]->insn))
			continue;
		for (size_t j = i + 1; j < t; j++) {
			if (target[j] < 0)
				continue;
			size_t lo = j < (size_t)target[j] ? j : (size_t)target[j];
			size_t hi = j < (size_t)target[j] ? (size_t)target[j] : j;
			if (lo < b && b < hi)
				return;
		}
	}
	uint32_t var = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, spv_t_bool(c->e)), var,
	       (uint32_t)SpvStorageClassFunction);
	/* the branch goes to the first barrier's label; each barrier's skip goes to the next one's,
	 * the last one's to the join (own == 0: the existing label of st[t]) */
	uint32_t next = spv_id(c->e);
	if (pair) {   /* the guarded branch decides (skip where its guard is false); the other goes */
		add_action(c, st[i - 1], LW_DIVERGE_BRANCH, var, 0, next);
		c->diverge[c->ndiverge - 1].negate = true;
		add_action(c, st[i], LW_DIVERGE_DROP, var, 0, 0);
	} else {
		add_action(c, st[i], LW_DIVERGE_BRANCH, var, 0, next);
	}
	for (size_t b = i + 1; b < t; b++) {
		if (st[b]->kind != IR_STMT_INSN || !is_warp_sync(&st[b]->insn))
			continue;
		uint32_t own = next;
		next = --nbar ? spv_id(c->e) : 0;
		add_action(c, st[b], LW_DIVERGE_BARRIER, var, own, next);
	}
	c->diverge[c->ndiverge - 1].join = st[t]->text;
}

void lw_plan_divergent_barriers(lw *c, const ir_func *f)
{
	c->ndiverge = 0;
	size_t n = 0;
	for (const ir_stmt *s = f->first; s; s = s->next)
		n++;
	if (!n)
		return;
	const ir_stmt **st = malloc(n * sizeof(*st));
	long *target = malloc(n * sizeof(*target));
	size_t k = 0;
	bool any = false;
	for (const ir_stmt *s = f->first; s; s = s->next) {
		any |= s->kind == IR_STMT_INSN && is_warp_sync(&s->insn);
		st[k++] = s;
	}
	for (size_t j = 0; j < n && any; j++) {
		const char *name = bra_target(st[j]);
		target[j] = -1;
		if (!name)
			continue;
		for (size_t l = 0; l < n; l++)
			if (st[l]->kind == IR_STMT_LABEL && !strcmp(st[l]->text, name)) {
				target[j] = (long)l;
				break;
			}
		if (target[j] < 0)
			target[j] = -2; /* a label we cannot see: treated as leaving every region */
	}
	for (size_t j = 0; j < n && any; j++) {
		if (st[j]->kind != IR_STMT_INSN || target[j] <= (long)j)
			continue;
		if (st[j]->insn.guard)
			plan_region(c, st, n, target, j, (size_t)target[j], false);
		else if (j > 0 && j + 1 < n && st[j - 1]->kind == IR_STMT_INSN && st[j - 1]->insn.guard &&
			 target[j - 1] == (long)(j + 1))   /* LLVM's layout: @p bra A; bra B; A: */
			plan_region(c, st, n, target, j, (size_t)target[j], true);
	}
	free(st);
	free(target);
}

static uint32_t join_id(lw *c, const struct lw_diverge *d)
{
	if (d->next)
		return d->next;
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].name, d->join))
			return c->labels[i].id;
	return 0;
}

/* 1: s was lowered here; 0: not part of a rewritten region; -1: error. */
int lw_divergent_stmt(lw *c, const ir_stmt *s, int (*lower_insn)(lw *, const ir_insn *))
{
	const struct lw_diverge *d = NULL;
	for (size_t i = 0; i < c->ndiverge && !d; i++)
		if (c->diverge[i].s == s)
			d = &c->diverge[i];
	if (!d)
		return 0;
	uint32_t bl = spv_t_bool(c->e);
	if (d->kind == LW_DIVERGE_DROP)
		return 1;   /* the pair's unguarded branch: its guarded one decided */
	if (d->kind == LW_DIVERGE_BRANCH) {
		const ir_insn *in = &s->insn;
		uint32_t p = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->guard,
						      .neg = in->guard_neg != d->negate},
				     PT('p', 1));
		if (!p)
			return -1;
		spv_op(&c->body, SpvOpStore, 2, d->var, p);
		uint32_t fall = spv_id(c->e);
		lw_branch_cond(c, p, d->next, fall);
		lw_label(c, fall);
		return 1;
	}
	lw_label(c, d->own);
	if (lower_insn(c, &s->insn) < 0)
		return -1;
	uint32_t to = join_id(c, d);
	if (!to)
		return lw_fail(c, "branch to unknown label %s", d->join);
	lw_ensure_block(c);
	uint32_t skip = spv_id(c->e);
	spv_op(&c->body, SpvOpLoad, 3, bl, skip, d->var);
	uint32_t fall = spv_id(c->e);
	lw_branch_cond(c, skip, to, fall);
	lw_label(c, fall);
	return 1;
}
