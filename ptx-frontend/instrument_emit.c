/* The line writer of the instrumentation passes (instrument_internal.h). */
#include "ptx-frontend/instrument_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *strip(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && (isspace((unsigned char)s[n - 1]) || s[n - 1] == ';'))
		s[--n] = 0;
	return s;
}

static void put(struct inst_emit *e, ir_stmt *s)
{
	s->generated = true;
	ir_stmt_insert_before(e->f, e->pos, s);
}

/* Operand list split at commas outside brackets and parentheses. */
static unsigned split(char *s, char **out, unsigned max)
{
	unsigned n = 0;
	int depth = 0;
	char *start = s;
	for (char *p = s;; p++) {
		if (*p == '[' || *p == '(')
			depth++;
		else if (*p == ']' || *p == ')')
			depth--;
		if (!*p || (*p == ',' && !depth)) {
			int last = !*p;
			*p = 0;
			if (n < max && *strip(start))
				out[n++] = strip(start);
			if (last)
				return n;
			start = p + 1;
		}
	}
}

static int parse_operand(ir_module *m, char *s, ir_operand *o)
{
	if (*s == '[') {
		char *close = strchr(s, ']');
		if (!close)
			return -1;
		*close = 0;
		char *base = strip(s + 1);
		int64_t off = 0;
		char *plus = strchr(base, '+');
		if (plus) {
			*plus = 0;
			off = strtoll(strip(plus + 1), NULL, 0);
			base = strip(base);
		}
		*o = isdigit((unsigned char)*base) ? ir_addr(m, NULL, strtoll(base, NULL, 0))
						   : ir_addr(m, base, off);
		return 0;
	}
	if (*s == '(') {
		char *close = strrchr(s, ')');
		if (!close)
			return -1;
		*close = 0;
		char *parts[8];
		unsigned n = split(s + 1, parts, 8);
		memset(o, 0, sizeof(*o));
		o->kind = IR_OPND_LIST;
		o->nelems = n;
		o->elems = ir_alloc(m, (n ? n : 1) * sizeof(ir_operand));
		for (unsigned i = 0; i < n; i++)
			if (parse_operand(m, parts[i], &o->elems[i]))
				return -1;
		return 0;
	}
	if (*s == '%') {
		*o = ir_reg(m, s);
		return 0;
	}
	if (isdigit((unsigned char)*s) || *s == '-') {
		*o = ir_int(strtoll(s, NULL, 0));
		return 0;
	}
	*o = ir_sym(m, s);
	return 0;
}

void ie_insn(struct inst_emit *e, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line)) {
		e->failed = 1;
		return;
	}
	char *s = strip(line);
	const char *guard = NULL;
	int neg = 0;
	if (*s == '@') {
		s++;
		if (*s == '!') {
			neg = 1;
			s++;
		}
		guard = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		*s++ = 0;
		s = strip(s);
	}
	char *opc = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = 0;
	char *dot = strchr(opc, '.');
	const char *mods = "";
	if (dot) {
		mods = ir_strdup(e->m, dot);
		*dot = 0;
	}
	char *parts[8];
	unsigned n = split(s, parts, 8);
	ir_operand ops[8];
	for (unsigned i = 0; i < n; i++)
		if (parse_operand(e->m, parts[i], &ops[i])) {
			e->failed = 1;
			return;
		}
	ir_stmt *st = ir_insn_new(e->m, opc, mods, n, ops);
	if (guard) {
		st->insn.guard = ir_strdup(e->m, guard);
		st->insn.guard_neg = neg;
	}
	put(e, st);
}

void ie_label(struct inst_emit *e, const char *name)
{
	put(e, ir_label_new(e->m, name));
}

void ie_block(struct inst_emit *e, int open)
{
	put(e, ir_stmt_new(e->m, open ? IR_STMT_BLOCK_OPEN : IR_STMT_BLOCK_CLOSE));
}

void ie_decl(struct inst_emit *e, const char *space, const char *type, const char *name,
	     int count, unsigned align, const char *dims)
{
	ir_stmt *s = ir_reg_decl_new(e->m, type, name, count);
	s->decl.space = ir_strdup(e->m, space);
	s->decl.align = align;
	if (dims)
		s->decl.dims = ir_strdup(e->m, dims);
	put(e, s);
}
