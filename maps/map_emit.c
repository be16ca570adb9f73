/* The line-at-a-time IR writer of maps/ (see map_emit.h). */
#include "maps/map_emit.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && (isspace((unsigned char)s[n - 1]) || s[n - 1] == ';'))
		s[--n] = 0;
	return s;
}

/* Split s at top-level commas (not inside [] or ()). */
static unsigned split_top(char *s, char **parts, unsigned max)
{
	unsigned n = 0, depth = 0;
	char *start = s;
	for (char *p = s;; p++) {
		if (*p == '[' || *p == '(')
			depth++;
		else if (*p == ']' || *p == ')')
			depth--;
		if ((*p == ',' && !depth) || !*p) {
			int end = !*p;
			*p = 0;
			if (n < max)
				parts[n++] = trim(start);
			if (end)
				break;
			start = p + 1;
		}
	}
	return n;
}

static int operand(struct gp_emit *e, char *s, ir_operand *out)
{
	ir_module *m = e->m;
	if (*s == '[') {
		char *end = strrchr(s, ']');
		if (!end)
			return -1;
		*end = 0;
		char *base = trim(s + 1);
		char *plus = strpbrk(base, "+");
		long long off = 0;
		if (plus) {
			*plus = 0;
			off = strtoll(trim(plus + 1), NULL, 0);
			base = trim(base);
		}
		if (isdigit((unsigned char)*base)) {
			*out = ir_addr(m, NULL, strtoll(base, NULL, 0));
			return 0;
		}
		*out = ir_addr(m, base, off);
		return 0;
	}
	if (*s == '(') {
		char *end = strrchr(s, ')');
		if (!end)
			return -1;
		*end = 0;
		char *parts[8];
		unsigned n = *trim(s + 1) ? split_top(s + 1, parts, 8) : 0;
		out->kind = IR_OPND_LIST;
		out->nelems = n;
		out->elems = ir_alloc(m, (n ? n : 1) * sizeof(ir_operand));
		for (unsigned i = 0; i < n; i++)
			if (operand(e, parts[i], &out->elems[i]))
				return -1;
		return 0;
	}
	if (*s == '%') {
		*out = ir_reg(m, s);
		return 0;
	}
	if (isdigit((unsigned char)*s) || *s == '-') {
		char *end;
		long long v = strtoll(s, &end, 0);
		if (*end)
			return -1;
		*out = ir_int(v);
		return 0;
	}
	if (!*s)
		return -1;
	*out = ir_sym(m, s);
	return 0;
}

void gp_em(struct gp_emit *e, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *s = trim(buf);
	const char *guard = NULL;
	bool neg = false;
	if (*s == '@') {
		s++;
		if (*s == '!') {
			neg = true;
			s++;
		}
		char *sp = strpbrk(s, " \t");
		if (!sp)
			goto bad;
		*sp = 0;
		guard = ir_strdup(e->m, s);
		s = trim(sp + 1);
	}
	char *ops = strpbrk(s, " \t");
	if (ops)
		*ops++ = 0;
	char *dot = strchr(s, '.');
	const char *mods = "";
	if (dot) {
		mods = ir_strdup(e->m, dot);
		*dot = 0;
	}
	ir_operand o[8];
	unsigned n = 0;
	if (ops && *trim(ops)) {
		char *parts[8];
		n = split_top(trim(ops), parts, 8);
		for (unsigned i = 0; i < n; i++)
			if (operand(e, parts[i], &o[i]))
				goto bad;
	}
	ir_stmt *st = ir_insn_new(e->m, s, mods, n, o);
	st->insn.guard = guard;
	st->insn.guard_neg = neg;
	ir_stmt_append(e->f, st);
	return;
bad:
	if (!e->failed)
		fprintf(stderr, "gpuprobe: maps: internal error: cannot emit '%s'\n", buf);
	e->failed = 1;
}

void gp_em_label(struct gp_emit *e, const char *name)
{
	ir_stmt_append(e->f, ir_label_new(e->m, name));
}

static ir_decl param(ir_module *m, const char *name)
{
	return (ir_decl){.space = ".param", .type = ".b64", .name = ir_strdup(m, name), .count = -1};
}

ir_func *gp_em_func(ir_module *m, const char *name, unsigned nparams)
{
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	t->generated = true;
	ir_func *f = &t->func;
	f->name = ir_strdup(m, name);
	f->has_rets = true;
	f->nrets = 1;
	f->rets = ir_alloc(m, sizeof(ir_decl));
	f->rets[0] = param(m, "gp_ret");
	f->has_params = true;
	f->nparams = nparams;
	f->params = ir_alloc(m, (nparams ? nparams : 1) * sizeof(ir_decl));
	for (unsigned i = 0; i < nparams; i++)
		f->params[i] = param(m, ir_strfmt(m, "gp_a%u", i + 1));
	f->has_body = true;
	/* After the helpers already there (a helper may call an earlier one), before the rest. */
	ir_top *pos = m->first;
	while (pos && (pos->kind != IR_TOP_FUNC || !strncmp(pos->func.name, GP_EMIT_PREFIX,
							      strlen(GP_EMIT_PREFIX))))
		pos = pos->next;
	ir_top_insert_before(m, pos, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 48));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", "%r", 32));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%p", 16));
	return f;
}

void gp_em_call(struct gp_emit *e, const char *fn, const char *ret_reg, unsigned nargs,
		const char *const *args)
{
	ir_module *m = e->m;
	ir_stmt_append(e->f, ir_stmt_new(m, IR_STMT_BLOCK_OPEN));
	char list[256] = "";
	size_t len = 0;
	for (unsigned i = 0; i < nargs; i++) {
		ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
		d->generated = true;
		d->decl = (ir_decl){.space = ".param", .type = ".b64",
				    .name = ir_strfmt(m, "gp_c%u", i + 1), .count = -1};
		ir_stmt_append(e->f, d);
		gp_em(e, "st.param.b64 [gp_c%u], %s", i + 1, args[i]);
		len += snprintf(list + len, sizeof(list) - len, "%sgp_c%u", i ? ", " : "", i + 1);
	}
	ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
	d->generated = true;
	d->decl = (ir_decl){.space = ".param", .type = ".b64", .name = "gp_cr", .count = -1};
	ir_stmt_append(e->f, d);
	gp_em(e, "call.uni (gp_cr), %s, (%s)", fn, list);
	gp_em(e, "ld.param.b64 %s, [gp_cr]", ret_reg);
	ir_stmt_append(e->f, ir_stmt_new(m, IR_STMT_BLOCK_CLOSE));
}
