/* Recursion: OpenCL C has none, and PoCL's compiler, which inlines every call into the kernel
 * before it forms the work-item loops, recursed inside itself on it until its thread's stack ran
 * out (cuda-samples' interval: a segmentation fault after 2.5 minutes of compiling, its 256 MiB
 * stack spent). So the calls between the functions of each cycle of direct calls are not made:
 * each becomes a note in the driver's trap word (4: the launch fails, as a trap does) where a
 * thread reaches it, and the thread goes on with the call's results undefined. What never
 * reaches such a call runs as written: interval's kernel picks one of three implementations at
 * run time and only the third recurses. (Until 2026-11-28 the functions of a cycle, and every
 * kernel that calls them, were left out of the module.) */
#include "spirv/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec_graph {
	lw *c;
	const char **names;   /* sorted function names, for the callee lookup */
	unsigned *of_name;    /* names[i] is c->funcs[of_name[i]] */
	unsigned *index, *low, *stack, nstack, next;
	bool *on_stack;
};

static int by_name(const void *a, const void *b, void *arg)
{
	const char *const *names = arg;
	return strcmp(names[*(const unsigned *)a], names[*(const unsigned *)b]);
}

static int callee(const struct rec_graph *g, const ir_insn *in)
{
	for (unsigned i = 0; i < in->nops; i++) {
		if (in->ops[i].kind != IR_OPND_SYMBOL && in->ops[i].kind != IR_OPND_REG)
			continue;
		size_t lo = 0, hi = g->c->nfuncs;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			int d = strcmp(g->names[mid], in->ops[i].name);
			if (!d)
				return (int)g->of_name[mid];
			if (d < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return -1;   /* the first named operand is the callee (lower_call) */
	}
	return -1;
}

/* Every call in a function of the cycle to a function of the same cycle is cut: cutting them all
 * leaves no cycle, and calls into the cycle from outside it still run its functions once. */
static void cut_cycle(struct rec_graph *g, const unsigned *members, unsigned n)
{
	lw *c = g->c;
	bool *in_cycle = calloc(c->nfuncs, sizeof(*in_cycle));
	if (!in_cycle)
		return;
	for (unsigned k = 0; k < n; k++)
		in_cycle[members[k]] = true;
	for (unsigned k = 0; k < n; k++) {
		const struct lw_func_info *fi = &c->funcs[members[k]];
		for (const ir_stmt *s = fi->f->first; s; s = s->next) {
			if (s->kind != IR_STMT_INSN || strcmp(s->insn.opcode, "call"))
				continue;
			int w = callee(g, &s->insn);
			if (w < 0 || !in_cycle[w])
				continue;
			const ir_insn **grown = realloc(c->rec_calls, (c->nrec_calls + 1) * sizeof(*grown));
			if (!grown)
				break;
			(c->rec_calls = grown)[c->nrec_calls++] = &s->insn;
			lw_add_note(c, fi->f->name, s->line,
				    "recursion: %s calls %s%s; OpenCL has no recursion, so this call is not made: a thread "
				    "that reaches it fails the launch (CUDA_ERROR_LAUNCH_FAILED)", fi->f->name,
				    c->funcs[w].f->name, (unsigned)w == members[k] ? " (itself)" : ", which calls it back");
		}
	}
	free(in_cycle);
}

bool lw_is_recursive_call(const lw *c, const ir_insn *in)
{
	for (size_t i = 0; i < c->nrec_calls; i++)
		if (c->rec_calls[i] == in)
			return true;
	return false;
}

/* Tarjan's strongly connected components: a component of several functions, or of one that
 * calls itself, is a cycle. */
static void visit(struct rec_graph *g, unsigned v)
{
	lw *c = g->c;
	g->index[v] = g->low[v] = ++g->next;
	g->stack[g->nstack++] = v;
	g->on_stack[v] = true;
	bool self = false;
	for (const ir_stmt *s = c->funcs[v].f->first; s; s = s->next) {
		if (s->kind != IR_STMT_INSN || strcmp(s->insn.opcode, "call"))
			continue;
		int w = callee(g, &s->insn);
		if (w < 0 || !c->funcs[w].f->has_body)
			continue;
		self |= (unsigned)w == v;
		if (!g->index[w]) {
			visit(g, (unsigned)w);
			if (g->low[w] < g->low[v])
				g->low[v] = g->low[w];
		} else if (g->on_stack[w] && g->index[w] < g->low[v]) {
			g->low[v] = g->index[w];
		}
	}
	if (g->low[v] != g->index[v])
		return;
	unsigned first = g->nstack;
	do
		g->on_stack[g->stack[--first]] = false;
	while (g->stack[first] != v);
	unsigned n = g->nstack - first;
	if (n > 1 || self)
		cut_cycle(g, g->stack + first, n);
	g->nstack = first;
}

void lw_cut_recursion(lw *c)
{
	size_t n = c->nfuncs;
	struct rec_graph g = {.c = c};
	const char **byidx = calloc(n ? n : 1, sizeof(*byidx));
	g.names = calloc(n ? n : 1, sizeof(*g.names));
	g.of_name = calloc(n ? n : 1, sizeof(*g.of_name));
	g.index = calloc(n ? n : 1, sizeof(*g.index));
	g.low = calloc(n ? n : 1, sizeof(*g.low));
	g.stack = calloc(n ? n : 1, sizeof(*g.stack));
	g.on_stack = calloc(n ? n : 1, sizeof(*g.on_stack));
	if (byidx && g.names && g.of_name && g.index && g.low && g.stack && g.on_stack) {
		for (size_t i = 0; i < n; i++) {
			byidx[i] = c->funcs[i].f->name;
			g.of_name[i] = (unsigned)i;
		}
		qsort_r(g.of_name, n, sizeof(*g.of_name), by_name, byidx);
		for (size_t i = 0; i < n; i++)
			g.names[i] = byidx[g.of_name[i]];
		for (size_t v = 0; v < n; v++)
			if (!g.index[v] && c->funcs[v].f->has_body)
				visit(&g, (unsigned)v);
	}
	free(byidx);
	free(g.names);
	free(g.of_name);
	free(g.index);
	free(g.low);
	free(g.stack);
	free(g.on_stack);
}
