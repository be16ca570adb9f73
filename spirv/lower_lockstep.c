/* A kernel whose warp collectives part of a block may not reach, and that lower_diverge.c cannot
 * rewrite region by region (a rotated loop entered in its middle, a vote in a loop inside a
 * warp's branch: CUB's look-back scans, cooperative groups' ballot loops), runs in lock step:
 * the block's threads go through its basic blocks together, the lowest one first.
 *
 * Each thread keeps the number of the basic block it goes to next (blocks are numbered in text
 * order: a label, or the statement after a branch, a return or a block barrier begins one). A
 * round takes the smallest number any thread of the block holds (lw_block_min) and goes through
 * every block in order: the threads bound for the chosen one execute its instructions; the other
 * threads, and every thread in the other blocks, go through the collectives only, not live
 * (lw_collective_for_all), so that every barrier is reached by the whole work-group, under no
 * condition (PoCL forms its parallel regions from such barriers; a switch to the chosen block made
 * it fail its "incoming edges to non-entry block" check). The chosen block's branch sets the
 * thread's next block, a return sets "done"; rounds go on until every thread is done.
 *
 * The smallest block first is where divergent threads meet again: threads past a loop or a
 * branch wait (at a higher number) until those still inside reach them. A block barrier ends a
 * basic block: the dispatcher's own barriers order memory, and its continuation runs once no
 * thread is before it. A thread that spins waiting for another thread of its own block at a
 * higher block number would spin forever: no kernel of the corpus does that.
 *
 * The cost, per basic block run: a work-group minimum (four barriers) and every collective of the
 * kernel (two barriers each). Only such kernels pay it. */
#include "spirv/lower.h"

#include <stdlib.h>
#include <string.h>

static bool is_branch(const ir_insn *in)
{
	return !strcmp(in->opcode, "bra");
}

static bool is_return(const ir_insn *in)
{
	return !strcmp(in->opcode, "ret") || !strcmp(in->opcode, "exit");
}

/* bar.sync / barrier.sync / bar.cta.sync of the whole block (no thread count, not .red/.warp) */
static bool is_block_barrier(const ir_insn *in)
{
	if (strcmp(in->opcode, "bar") && strcmp(in->opcode, "barrier"))
		return false;
	if (ir_insn_has_mod(in, ".warp") || ir_insn_has_mod(in, ".red") || ir_insn_has_mod(in, ".arrive"))
		return false;
	return in->nops <= 1;
}

static bool ends_block(const ir_insn *in)
{
	return is_branch(in) || is_return(in) || is_block_barrier(in);
}

/* A kernel whose calls reach no collective (a callee's would run in one thread's code), with no
 * guarded collective, no indexed branch, and no branch to a label it does not have. */
bool lw_lockstep_ok(lw *c, const ir_func *f)
{
	if (!f->is_entry)
		return false;
	for (const ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &s->insn;
		if (!strcmp(in->opcode, "brx"))
			return false;
		if (lw_is_collective_insn(in) && in->guard && !lw_is_probe_collective(s))
			return false;
		if (is_branch(in) && (in->nops != 1 || in->ops[0].kind != IR_OPND_SYMBOL))
			return false;
		if (!strcmp(in->opcode, "call")) {
			for (unsigned i = 0; i < in->nops; i++) {
				if (in->ops[i].kind != IR_OPND_SYMBOL)
					continue;
				const ir_func *g = ir_module_find_func(c->m, in->ops[i].name);
				for (const ir_stmt *t = g ? g->first : NULL; t; t = t->next)
					if (t->kind == IR_STMT_INSN && lw_is_collective_insn(&t->insn) && !lw_is_probe_collective(t))
						return false;
				break;
			}
		}
	}
	return true;
}

struct lockstep {
	const ir_stmt **st;
	size_t n;
	unsigned *block;      /* st[i] begins block block[i] (0: it does not begin one) */
	unsigned nblocks;     /* numbers 1..nblocks; nblocks + 1 is "done" */
	uint32_t next;        /* Function u32: the thread's next block */
	unsigned *rank;       /* the number a text-order block runs under (order_blocks) */
};

/* The number block b (text order) runs under; past the last: done. */
static unsigned num(const struct lockstep *L, unsigned b)
{
	return b >= 1 && b <= L->nblocks ? L->rank[b] : L->nblocks + 1;
}

static unsigned block_of_label(const struct lockstep *L, const char *name)
{
	for (size_t i = 0; i < L->n; i++)
		if (L->st[i]->kind == IR_STMT_LABEL && !strcmp(L->st[i]->text, name))
			return L->block[i];
	return 0;
}

/* The block that begins at or after statement i (done past the end). */
static unsigned block_from(const struct lockstep *L, size_t i)
{
	for (; i < L->n; i++)
		if (L->block[i])
			return L->block[i];
	return L->nblocks + 1;
}

/* The order blocks run in when threads are at several: a topological order of the forward
 * edges (back edges: to a block on the depth-first path) that takes, among the blocks ready, the
 * one inside the most loops, then the first in the text. So a block runs after every block that
 * leads to it inside its loop (nvcc lays a rotated loop's body out before its condition, and text
 * order ran the loads' join before the loads, splitting the warp at its ballot), and a loop's
 * exits after its body. rank[b] for the text-order block b (1-based). */
static void order_blocks(const struct lockstep *L, unsigned *rank)
{
	unsigned nb = L->nblocks;
	unsigned (*succ)[2] = calloc(nb + 1, sizeof(*succ));
	unsigned *depth = calloc(nb + 1, sizeof(unsigned)), *indeg = calloc(nb + 1, sizeof(unsigned));
	unsigned char *back = calloc((nb + 1) * 2, 1), *state = calloc(nb + 1, 1), *placed = calloc(nb + 1, 1);
	unsigned *stack = malloc((nb + 1) * 2 * sizeof(unsigned)), *work = malloc((nb + 1) * sizeof(unsigned));
	/* successors: where each block's last statement goes */
	for (size_t i = 0; i < L->n; i++) {
		if (!L->block[i])
			continue;
		unsigned b = L->block[i];
		size_t j = i;
		while (j + 1 < L->n && !L->block[j + 1])
			j++;
		const ir_stmt *last = NULL;
		for (size_t k = i; k <= j; k++)
			if (L->st[k]->kind == IR_STMT_INSN && ends_block(&L->st[k]->insn)) {
				last = L->st[k];
				break;
			}
		unsigned fall = b < nb ? b + 1 : 0;
		if (!last || is_block_barrier(&last->insn)) {
			succ[b][0] = fall;
		} else if (is_branch(&last->insn)) {
			succ[b][0] = block_of_label(L, last->insn.ops[0].name);
			if (last->insn.guard)
				succ[b][1] = fall;
		}
	}
	/* back edges: depth-first from block 1 */
	unsigned sp = 0;
	if (nb) {
		stack[sp++] = 1;
		state[1] = 1;
	}
	while (sp) {
		unsigned b = stack[sp - 1], e = state[b] - 1;   /* state: 1 + next edge to follow, 3 done */
		if (e >= 2) {
			state[b] = 4;
			sp--;
			continue;
		}
		state[b]++;
		unsigned t = succ[b][e];
		if (!t)
			continue;
		if (state[t] >= 1 && state[t] <= 3)
			back[b * 2 + e] = 1;   /* to a block on the path */
		else if (!state[t]) {
			state[t] = 1;
			stack[sp++] = t;
		}
	}
	/* loop bodies: what reaches a back edge's source backwards without passing its header */
	for (unsigned b = 1; b <= nb; b++)
		for (unsigned e = 0; e < 2; e++) {
			if (!back[b * 2 + e])
				continue;
			unsigned h = succ[b][e], nw = 0;
			unsigned char *in = calloc(nb + 1, 1);
			in[h] = 1;
			if (!in[b])
				in[b] = 1, work[nw++] = b;
			while (nw) {
				unsigned x = work[--nw];
				for (unsigned p = 1; p <= nb; p++)
					for (unsigned f = 0; f < 2; f++)
						if (succ[p][f] == x && !in[p])
							in[p] = 1, work[nw++] = p;
			}
			for (unsigned x = 1; x <= nb; x++)
				depth[x] += in[x];
			free(in);
		}
	for (unsigned b = 1; b <= nb; b++)
		for (unsigned e = 0; e < 2; e++)
			if (succ[b][e] && !back[b * 2 + e] && state[b])
				indeg[succ[b][e]]++;
	unsigned pos = 0;
	for (;;) {
		unsigned best = 0;
		for (unsigned b = 1; b <= nb; b++)
			if (!placed[b] && state[b] && !indeg[b] && (!best || depth[b] > depth[best]))
				best = b;
		if (!best)
			break;
		placed[best] = 1;
		rank[best] = ++pos;
		for (unsigned e = 0; e < 2; e++)
			if (succ[best][e] && !back[best * 2 + e])
				indeg[succ[best][e]]--;
	}
	for (unsigned b = 1; b <= nb; b++)   /* unreachable, or in a cycle the rule missed: text order */
		if (!placed[b])
			rank[b] = ++pos;
	free(succ);
	free(depth);
	free(indeg);
	free(back);
	free(state);
	free(placed);
	free(stack);
	free(work);
}

/* next = v for the threads bound for this block (not skip). */
static void set_next(lw *c, const struct lockstep *L, uint32_t skip, uint32_t v)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t old = lw_op1(c, SpvOpLoad, u32, L->next);
	spv_op(&c->body, SpvOpStore, 2, L->next, lw_select(c, u32, skip, old, v));
}

int lw_lower_lockstep(lw *c, const ir_func *f, int (*lower_stmt)(lw *, const ir_stmt *),
		      int (*lower_insn)(lw *, const ir_insn *))
{
	struct lockstep L = {0};
	for (const ir_stmt *s = f->first; s; s = s->next)
		L.n++;
	L.st = malloc((L.n ? L.n : 1) * sizeof(*L.st));
	L.block = calloc(L.n ? L.n : 1, sizeof(*L.block));
	size_t i = 0;
	for (const ir_stmt *s = f->first; s; s = s->next)
		L.st[i++] = s;
	/* number the blocks: the first statement, labels, and what follows a block's end */
	bool begin = true;
	for (i = 0; i < L.n; i++) {
		const ir_stmt *s = L.st[i];
		if (s->kind == IR_STMT_LABEL || (begin && s->kind == IR_STMT_INSN)) {
			L.block[i] = ++L.nblocks;
			begin = false;
		}
		if (s->kind == IR_STMT_INSN && ends_block(&s->insn))
			begin = true;
	}
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	unsigned done = L.nblocks + 1;
	L.rank = calloc(L.nblocks + 2, sizeof(*L.rank));
	order_blocks(&L, L.rank);
	L.next = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), L.next,
	       (uint32_t)SpvStorageClassFunction);
	spv_op(&c->prologue, SpvOpStore, 2, L.next, lw_u32(c, num(&L, 1)));
	/* the dispatcher: the block's smallest next block, then every block in order, each run by
	 * the threads bound for it when it is that one: every thread goes through every block's
	 * collectives on every round, so that no barrier is under a condition (PoCL forms its
	 * parallel regions from barriers reached by the whole work-group) */
	uint32_t dispatch = spv_id(c->e), finish = spv_id(c->e), go = spv_id(c->e);
	lw_branch(c, dispatch);
	lw_label(c, dispatch);
	uint32_t cur = lw_block_min(c, lw_op1(c, SpvOpLoad, u32, L.next));
	lw_branch_cond(c, lw_op2(c, SpvOpIEqual, bl, cur, lw_u32(c, done)), finish, go);
	lw_label(c, go);
	int rc = 0;
	uint32_t skip = 0;
	bool open = false;   /* inside a block whose end is not yet written */
	for (i = 0; i < L.n && rc == 0; i++) {
		const ir_stmt *s = L.st[i];
		c->cur = s;
		if (L.block[i]) {
			if (open)   /* falling into the next block */
				set_next(c, &L, skip, lw_u32(c, num(&L, L.block[i])));
			lw_ensure_block(c);
			uint32_t b = lw_u32(c, num(&L, L.block[i]));
			skip = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpINotEqual, bl, cur, b),
				      lw_op2(c, SpvOpINotEqual, bl, lw_op1(c, SpvOpLoad, u32, L.next), b));
			open = true;
		}
		if (s->kind != IR_STMT_INSN) {
			if (s->kind != IR_STMT_LABEL)
				rc = lower_stmt(c, s) < 0 ? -1 : 0;   /* declarations, directives */
			continue;
		}
		if (!open)
			continue;   /* code after a block's end that no label begins: never reached */
		const ir_insn *in = &s->insn;
		if (ends_block(in)) {
			uint32_t to;
			if (is_return(in)) {
				to = lw_u32(c, done);
			} else if (is_block_barrier(in)) {
				to = lw_u32(c, num(&L, block_from(&L, i + 1)));
			} else {
				unsigned target = block_of_label(&L, in->ops[0].name);
				if (!target) {
					rc = lw_fail(c, "branch to unknown label %s", in->ops[0].name);
					break;
				}
				to = lw_u32(c, num(&L, target));
				if (in->guard) {
					uint32_t p = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->guard,
									      .neg = in->guard_neg}, PT('p', 1));
					if (!p) {
						rc = -1;
						break;
					}
					to = lw_select(c, u32, p, to, lw_u32(c, num(&L, block_from(&L, i + 1))));
				}
			}
			set_next(c, &L, skip, to);
			open = false;
			continue;
		}
		if (lw_is_collective_insn(in) && !lw_is_probe_collective(s)) {
			if (!strcmp(in->opcode, "bar") || !strcmp(in->opcode, "barrier"))
				rc = lower_insn(c, in) < 0 ? -1 : 0;   /* __syncwarp: a barrier, all reach it */
			else
				rc = lw_collective_for_all(c, in, skip, lower_insn) < 0 ? -1 : 0;
			continue;
		}
		/* the threads bound for this block execute it; the others go round */
		uint32_t run = spv_id(c->e), after = spv_id(c->e);
		lw_branch_cond(c, skip, after, run);
		lw_label(c, run);
		rc = lower_stmt(c, s) < 0 ? -1 : 0;
		lw_label(c, after);
	}
	if (rc == 0) {
		if (open)   /* the end of the body returns */
			set_next(c, &L, skip, lw_u32(c, done));
		lw_branch(c, dispatch);
		lw_label(c, finish);
		spv_op(&c->body, SpvOpReturn, 0);
		c->in_block = false;
	}
	free(L.st);
	free(L.block);
	free(L.rank);
	return rc;
}
