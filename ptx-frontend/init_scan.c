/* The elements of a variable's initializer (init_scan.h). */
#include "ptx-frontend/init_scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* PTX identifiers: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+ */
static bool is_identifier(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || ((s[0] == '_' || s[0] == '$' || s[0] == '%') && n > 1)))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '$')
			return false;
	return true;
}

static uint64_t f32_bits(double v)
{
	float f = (float)v;
	uint32_t r;
	memcpy(&r, &f, 4);
	return r;
}

enum ir_init_kind ir_init_next(const char **pp, char kind, unsigned bits, struct ir_init_elem *e)
{
	const char *p = *pp;
	while (*p && strchr(" {,\t\n\r}", *p))
		p++;
	*pp = p;
	if (!*p)
		return IR_INIT_END;
	memset(e, 0, sizeof(*e));
	char *end;
	enum ir_init_kind k = IR_INIT_VALUE;
	if (p[0] == '0' && strchr("fFdD", p[1]) && p[1]) {
		e->raw = strtoull(p + 2, &end, 16);
		if (end == p + 2)
			return IR_INIT_BAD;
		if (bits == 32 && (p[1] == 'd' || p[1] == 'D')) {
			double dv;
			memcpy(&dv, &e->raw, 8);
			e->raw = f32_bits(dv);
		}
	} else if (kind == 'f' && strpbrk(p, ".eE") && strpbrk(p, ".eE") < p + strcspn(p, ",}")) {
		double v = strtod(p, &end);
		if (end == p)
			return IR_INIT_BAD;
		if (bits == 32)
			e->raw = f32_bits(v);
		else
			memcpy(&e->raw, &v, 8);
	} else if (*p == '-' || isdigit((unsigned char)*p) || *p == '+') {
		/* strtoll saturates past 2^63-1: an unsigned literal is read as one */
		e->raw = *p == '-' ? (uint64_t)strtoll(p, &end, 0) : strtoull(p, &end, 0);
		if (end == p)
			return IR_INIT_BAD;
	} else {
		/* a symbol: generic(name) or name, then an optional +N / -N */
		e->generic = !strncmp(p, "generic(", 8);
		const char *q = e->generic ? p + 8 : p;
		size_t n = strcspn(q, e->generic ? ")" : " ,}+-\t\n\r");
		if (n >= sizeof(e->name) || !is_identifier(q, n) || (e->generic && q[n] != ')'))
			return IR_INIT_BAD;
		memcpy(e->name, q, n);
		q += n + e->generic;
		while (*q == ' ')
			q++;
		if (*q == '+' || *q == '-') {
			e->addend = strtoll(q, &end, 0);
			if (end == q + 1)
				return IR_INIT_BAD;
			q = end;
		}
		end = (char *)q;
		k = IR_INIT_SYMBOL;
	}
	p = end;
	while (*p == 'U' || *p == 'u' || *p == 'L' || *p == 'l')
		p++;
	*pp = p;
	return k;
}
