/* Aggregated sites (instrument_internal.h, inst_merge_sites): which memory sites of a weighted
 * probe one call can count. A call at site A with weight N is exact for the N sites merged into
 * it when every thread that runs A runs each of them exactly once: so they lie in one
 * straight-line run of the application's statements, nothing between them can leave that run
 * (a branch, call, return, exit or trap; a label lets other paths in), and they are guarded
 * alike: no guard, or the same predicate, same sense, which nothing between them writes and no
 * `{` `}` scope between them may rename. The key (the context bytes the probe reads) must match too:
 * one weighted run then does what the N runs would. */
#include "ptx-frontend/instrument_internal.h"

#include <stdbool.h>
#include <string.h>

/* A `{` or `}`: control goes straight through, but a register declared inside may shadow a
 * guard's name outside (nvcc wraps every inline asm statement in braces: fma-cuda's hot loop has
 * four accesses between each two of them). */
static bool is_scope(const ir_stmt *s)
{
	return s->kind == IR_STMT_BLOCK_OPEN || s->kind == IR_STMT_BLOCK_CLOSE;
}

/* Whether control can enter or leave between statement s and the next one. */
static bool ends_run(const ir_stmt *s)
{
	switch (s->kind) {
	case IR_STMT_LABEL:
		return true;
	case IR_STMT_INSN: {
		const ir_insn *in = &s->insn;
		if (!in->info || !strcmp(in->opcode, "brkpt"))
			return true;   /* unknown: it may do anything */
		return in->info->flags & (IR_F_BRANCH | IR_F_CALL | IR_F_RET | IR_F_EXIT);
	}
	default:
		return false;   /* declarations, .loc and pragmas */
	}
}

/* Whether an operand names register r (or cannot be read: raw text). */
static bool names_reg(const ir_operand *o, const char *r)
{
	if (o->kind == IR_OPND_RAW)
		return true;
	if ((o->kind == IR_OPND_REG || o->kind == IR_OPND_ADDR) && o->name && !strcmp(o->name, r))
		return true;
	for (unsigned i = 0; i < o->nelems; i++)
		if (names_reg(&o->elems[i], r))
			return true;
	return false;
}

/* Whether instruction in may write register r: any operand naming it (reads included: cheaper to
 * over-approximate than to know every instruction's destinations). */
static bool may_write(const ir_insn *in, const char *r)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (names_reg(&in->ops[i], r))
			return true;
	return false;
}

struct group {
	size_t leader;            /* index in sites */
	const char *guard;        /* NULL: unguarded */
	bool neg;
};

static bool same_guard(const struct group *g, const ir_insn *in)
{
	if (!g->guard || !in->guard)
		return !g->guard && !in->guard;
	return g->neg == in->guard_neg && !strcmp(g->guard, in->guard);
}

void inst_merge_sites(ir_stmt *const *stmts, size_t nstmts, struct inst_msite *sites, size_t n)
{
	/* Open groups: at most one per (key, guard) of the current run; a small array searched
	 * linearly (a run holds a few dozen sites at most in real kernels). */
	enum { MAX_OPEN = 64 };
	struct group open[MAX_OPEN];
	size_t nopen = 0, k = 0;
	for (size_t i = 0; i < nstmts && k < n; i++) {
		const ir_stmt *s = stmts[i];
		if (ends_run(s)) {
			nopen = 0;
			/* a site at a statement that ends the run cannot exist (memory instructions do
			 * not branch), but keep the order: sites are matched to statements below */
		} else if (is_scope(s)) {
			for (size_t g = 0; g < nopen;) {   /* guarded groups: the name may change */
				if (open[g].guard)
					open[g] = open[--nopen];
				else
					g++;
			}
		}
		for (; k < n && sites[k].stmt == i; k++) {
			const ir_insn *in = &s->insn;
			size_t g = 0;
			while (g < nopen && !(same_guard(&open[g], in) &&
					      !memcmp(sites[open[g].leader].key, sites[k].key, sizeof(sites[k].key))))
				g++;
			if (g < nopen) {
				sites[open[g].leader].weight++;
				sites[k].weight = 0;
				sites[k].leader = open[g].leader;
				continue;
			}
			sites[k].weight = 1;
			sites[k].leader = k;
			if (nopen == MAX_OPEN)
				continue;   /* its own call: still exact */
			open[nopen++] = (struct group){k, in->guard, in->guard_neg};
		}
		if (s->kind != IR_STMT_INSN)
			continue;
		/* a guard written here: later sites under that name test another value */
		for (size_t g = 0; g < nopen;) {
			if (open[g].guard && may_write(&s->insn, open[g].guard))
				open[g] = open[--nopen];
			else
				g++;
		}
	}
	for (; k < n; k++) {
		sites[k].weight = 1;   /* not at a statement given (a caller's bug): each its own */
		sites[k].leader = k;
	}
}
