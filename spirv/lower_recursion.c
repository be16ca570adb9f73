/* Recursive device functions are refused: OpenCL C has no recursion, and PoCL's compiler, which
 * inlines every call into the kernel before it forms the work-item loops, recursed inside itself
 * on one until its thread's stack ran out (cuda-samples' interval: a segmentation fault after
 * 2.5 minutes of compiling, its 256 MiB stack spent). Each function on a cycle of direct calls
 * fails with one line naming the call that closes it; the kernels that need it are left out by
 * the usual rule (lower.c), so the module's other kernels still run. */
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

/* The call in v to a function of v's cycle (its line), for the message. */
static const ir_stmt *closing_call(const struct rec_graph *g, unsigned v, const bool *in_cycle, unsigned *to)
{
	for (const ir_stmt *s = g->c->funcs[v].f->first; s; s = s->next) {
		if (s->kind != IR_STMT_INSN || strcmp(s->insn.opcode, "call"))
			continue;
		int w = callee(g, &s->insn);
		if (w >= 0 && in_cycle[w]) {
			*to = (unsigned)w;
			return s;
		}
	}
	return NULL;
}

static void fail_cycle(struct rec_graph *g, const unsigned *members, unsigned n)
{
	lw *c = g->c;
	bool *in_cycle = calloc(c->nfuncs, sizeof(*in_cycle));
	if (!in_cycle)
		return;
	for (unsigned k = 0; k < n; k++)
		in_cycle[members[k]] = true;
	for (unsigned k = 0; k < n; k++) {
		struct lw_func_info *fi = &c->funcs[members[k]];
		if (fi->skip)
			continue;   /* left out already, by an earlier pass */
		unsigned to = members[k];
		const ir_stmt *s = closing_call(g, members[k], in_cycle, &to);
		char msg[640];
		snprintf(msg, sizeof(msg), "%u: recursion: %s calls %s%s; OpenCL has no recursion (PoCL's compiler "
			 "exhausts its stack on it)", s ? s->line : 0, fi->f->name, c->funcs[to].f->name,
			 to == members[k] ? " (itself)" : ", which calls it back");
		fi->failed = true;
		free(fi->fail_msg);
		fi->fail_msg = strdup(msg);
	}
	free(in_cycle);
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
		fail_cycle(g, g->stack + first, n);
	g->nstack = first;
}

void lw_refuse_recursion(lw *c)
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
