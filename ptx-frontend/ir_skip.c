/* The functions a code generator leaves out (ir_skip.h). */
#include "ptx-frontend/ir_skip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_skip__add(struct ir_skip *s, const char *name, const char *why)
{
	const char **names = realloc(s->names, (s->n + 1) * sizeof(*names));
	char **whys = realloc(s->why, (s->n + 1) * sizeof(*whys));
	char *w = strdup(why ? why : "?");
	if (!names || !whys || !w)
		abort();
	s->names = names;
	s->why = whys;
	s->names[s->n] = name;
	s->why[s->n++] = w;
}

static size_t index_of(const struct ir_skip *s, const char *name)
{
	for (size_t k = 0; k < s->n; k++)
		if (!strcmp(s->names[k], name))
			return k;
	return s->n;
}

bool ir_skip__has(const struct ir_skip *s, const char *name) { return index_of(s, name) < s->n; }

/* The first function in s that f names (a call's target, or an address taken), or NULL. */
static const char *refers_to(const ir_func *f, const struct ir_skip *s)
{
	for (ir_stmt *st = f->first; st; st = st->next) {
		if (st->kind != IR_STMT_INSN)
			continue;
		for (unsigned i = 0; i < st->insn.nops; i++) {
			const ir_operand *o = &st->insn.ops[i];
			if (o->kind != IR_OPND_SYMBOL && o->kind != IR_OPND_REG)
				continue;
			size_t k = index_of(s, o->name);
			if (k < s->n)
				return s->names[k];
		}
	}
	return NULL;
}

void ir_skip__close(struct ir_skip *s, const ir_module *m)
{
	for (bool grew = true; grew;) {
		grew = false;
		for (ir_top *t = m->first; t; t = t->next) {
			if (t->kind != IR_TOP_FUNC || !t->func.has_body || ir_skip__has(s, t->func.name))
				continue;
			const char *callee = refers_to(&t->func, s);
			if (!callee)
				continue;
			char buf[600];
			snprintf(buf, sizeof(buf), "needs %s, not lowered: %s", callee, s->why[index_of(s, callee)]);
			ir_skip__add(s, t->func.name, buf);
			grew = true;
		}
	}
}

static const ir_func *body_named(const ir_module *m, const char *name)
{
	for (ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_FUNC && t->func.has_body && !strcmp(t->func.name, name))
			return &t->func;
	return NULL;
}

int ir_skip__report(const struct ir_skip *s, const ir_module *m,
		    void (*skipped)(void *arg, const char *kernel, const char *why), void *arg, char *err,
		    size_t errlen)
{
	if (!s->n)
		return 0;
	size_t nbodies = 0, nkernels = 0, kernels_left_out = 0;
	for (ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_FUNC && t->func.has_body) {
			nbodies++;
			nkernels += t->func.is_entry;
			kernels_left_out += t->func.is_entry && ir_skip__has(s, t->func.name);
		}
	if (s->n >= nbodies || (nkernels && kernels_left_out == nkernels)) {
		snprintf(err, errlen, "%s", s->why[0]);
		return -ENOTSUP;
	}
	size_t n = (size_t)snprintf(err, errlen, "%zu function(s) left out:", s->n);
	for (size_t k = 0; k < s->n; k++) {
		const ir_func *f = body_named(m, s->names[k]);
		if (f && f->is_entry && skipped)
			skipped(arg, s->names[k], s->why[k]);
		if (n < errlen)
			n += (size_t)snprintf(err + n, errlen - n, "%s %s (%s)", k ? ";" : "", s->names[k], s->why[k]);
	}
	return 0;
}

void ir_skip__free(struct ir_skip *s)
{
	for (size_t k = 0; k < s->n; k++)
		free(s->why[k]);
	free(s->why);
	free(s->names);
	*s = (struct ir_skip){0};
}
