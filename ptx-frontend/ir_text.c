/* ir_insn_from_text (ir.h): one line of PTX-like text into an instruction statement. The code
 * generators (the instrumentation passes, the maps runtime's device helpers) write what they emit
 * as the PTX it becomes, so they read like PTX; this is the one reader of that text. It knows the
 * operand forms generated code uses: %reg, integers, symbols, [base], [base+off], [imm] and
 * (a, b) lists, and an optional guard "@%p" or "@!%p". */
#include "ptx-frontend/ir.h"

#include <ctype.h>
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

/* Split s at commas outside brackets and parentheses; empty parts are dropped. */
static unsigned split_top(char *s, char **out, unsigned max)
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
			if (*strip(start)) {
				if (n == max)
					return max + 1;   /* too many: the caller fails */
				out[n++] = strip(start);
			}
			if (last)
				return n;
			start = p + 1;
		}
	}
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;
	*v = strtoll(s, &end, 0);
	return *s && !*strip(end) ? 0 : -1;
}

static int parse_operand(ir_module *m, char *s, ir_operand *o)
{
	int64_t v;
	if (*s == '[') {
		char *close = strrchr(s, ']');
		if (!close)
			return -1;
		*close = 0;
		char *base = strip(s + 1);
		int64_t off = 0;
		char *plus = strchr(base, '+');
		if (plus) {
			*plus = 0;
			if (parse_int(strip(plus + 1), &off))
				return -1;
			base = strip(base);
		}
		if (isdigit((unsigned char)*base)) {
			if (parse_int(base, &v))
				return -1;
			*o = ir_addr(m, NULL, v + off);
		} else {
			if (!*base)
				return -1;
			*o = ir_addr(m, base, off);
		}
		return 0;
	}
	if (*s == '(') {
		char *close = strrchr(s, ')');
		if (!close)
			return -1;
		*close = 0;
		char *parts[8];
		unsigned n = split_top(s + 1, parts, 8);
		if (n > 8)
			return -1;
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
	/* An integer; other literals that start like one (0f3F800000) are kept as written. */
	if ((isdigit((unsigned char)*s) || *s == '-') && !parse_int(s, &v)) {
		*o = ir_int(v);
		return 0;
	}
	if (!*s)
		return -1;
	*o = ir_sym(m, s);
	return 0;
}

ir_stmt *ir_insn_from_text(ir_module *m, const char *text)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	if (!buf)
		return NULL;
	memcpy(buf, text, len + 1);
	ir_stmt *st = NULL;
	char *s = strip(buf);
	const char *guard = NULL;
	bool neg = false;
	if (*s == '@') {
		s++;
		if (*s == '!') {
			neg = true;
			s++;
		}
		char *g = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (!*s || s == g)
			goto out;
		*s++ = 0;
		guard = ir_strdup(m, g);
		s = strip(s);
	}
	char *opc = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = 0;
	if (!*opc)
		goto out;
	char *dot = strchr(opc, '.');
	const char *mods = "";
	if (dot) {
		mods = ir_strdup(m, dot);
		*dot = 0;
	}
	char *parts[8];
	unsigned n = split_top(s, parts, 8);
	if (n > 8)
		goto out;
	ir_operand ops[8];
	for (unsigned i = 0; i < n; i++)
		if (parse_operand(m, parts[i], &ops[i]))
			goto out;
	st = ir_insn_new(m, opc, mods, n, ops);
	st->insn.guard = guard;
	st->insn.guard_neg = neg;
out:
	free(buf);
	return st;
}
