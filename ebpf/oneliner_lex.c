/* The one-liner's tokens (ebpf/oneliner.h): attach points (read whole, up to a blank or '{'),
 * identifiers, @maps, integers (decimal, 0x hex) and operators. Every message names the column. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ebpf/oneliner_internal.h"

int ol_error(const char *src, size_t pos, char *err, size_t errlen, const char *fmt, ...)
{
	size_t line = 1, col = 1;
	int multi = strchr(src, '\n') != NULL;
	for (size_t i = 0; i < pos && src[i]; i++) {
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (err && errlen) {
		if (multi)
			snprintf(err, errlen, "line %zu, column %zu: %s", line, col, msg);
		else
			snprintf(err, errlen, "column %zu: %s", col, msg);
	}
	return -EINVAL;
}

void ol_tok_describe(const struct ol_token *t, char *buf, size_t len)
{
	switch (t->kind) {
	case T_EOF:
		snprintf(buf, len, "the end");
		break;
	case T_INT:
		snprintf(buf, len, "number %llu", (unsigned long long)t->value);
		break;
	case T_AT:
		snprintf(buf, len, "'@%s'", t->text);
		break;
	default:
		snprintf(buf, len, "'%s'", t->text);   /* operators keep their text */
		break;
	}
}

static const struct {
	const char *text;
	enum ol_tok kind;
} ops[] = {   /* longest first */
	{"&&", T_ANDAND}, {"||", T_OROR}, {"<<", T_SHL}, {">>", T_SHR}, {"<=", T_LE}, {">=", T_GE},
	{"==", T_EQ}, {"!=", T_NE}, {"{", T_LBRACE}, {"}", T_RBRACE}, {"[", T_LBRACK},
	{"]", T_RBRACK}, {"(", T_LPAREN}, {")", T_RPAREN}, {",", T_COMMA}, {";", T_SEMI},
	{"=", T_ASSIGN}, {"/", T_SLASH}, {"+", T_PLUS}, {"-", T_MINUS}, {"*", T_STAR},
	{"%", T_PERCENT}, {"&", T_AMP}, {"|", T_PIPE}, {"^", T_CARET}, {"~", T_TILDE},
	{"!", T_BANG}, {"<", T_LT}, {">", T_GT},
};

static int lex_attach(struct ol_lexer *lx, struct ol_token *t)
{
	const char *s = lx->src;
	size_t p = lx->pos, n = 0;
	if (s[p] == '"') {
		p++;
		while (s[p] && s[p] != '"') {
			if ((unsigned char)s[p] < 0x20)
				return ol_error(s, p, lx->err, lx->errlen, "an attach point has no control characters");
			if (n + 1 >= sizeof t->text)
				return ol_error(s, t->pos, lx->err, lx->errlen, "attach point longer than %zu characters",
						sizeof t->text - 1);
			t->text[n++] = s[p++];
		}
		if (s[p] != '"')
			return ol_error(s, t->pos, lx->err, lx->errlen, "expected '\"' to end the quoted attach point");
		p++;
	} else {
		while (s[p] && !isspace((unsigned char)s[p]) && s[p] != '{') {
			if ((unsigned char)s[p] < 0x20 || s[p] == 0x7f)
				return ol_error(s, p, lx->err, lx->errlen, "an attach point has no control characters");
			if (n + 1 >= sizeof t->text)
				return ol_error(s, t->pos, lx->err, lx->errlen, "attach point longer than %zu characters",
						sizeof t->text - 1);
			t->text[n++] = s[p++];
		}
	}
	t->text[n] = 0;
	t->kind = T_ATTACH;
	t->len = p - lx->pos;
	lx->pos = p;
	return 0;
}

int ol_lex(struct ol_lexer *lx, int mode_attach, struct ol_token *t)
{
	const char *s = lx->src;
	while (s[lx->pos] && isspace((unsigned char)s[lx->pos]))
		lx->pos++;
	memset(t, 0, sizeof *t);
	t->pos = lx->pos;
	char c = s[lx->pos];
	if (!c) {
		t->kind = T_EOF;
		return 0;
	}
	if (mode_attach && c != '{' && c != ';' && c != '}')
		return lex_attach(lx, t);
	if (isalpha((unsigned char)c) || c == '_' || c == '@') {
		size_t p = lx->pos + (c == '@'), n = 0;
		while (isalnum((unsigned char)s[p]) || s[p] == '_') {
			if (n + 1 >= 64)
				return ol_error(s, t->pos, lx->err, lx->errlen, "name longer than 63 characters");
			t->text[n++] = s[p++];
		}
		t->text[n] = 0;
		t->kind = c == '@' ? T_AT : T_IDENT;
		t->len = p - lx->pos;
		lx->pos = p;
		return 0;
	}
	if (isdigit((unsigned char)c)) {
		size_t p = lx->pos;
		uint64_t v = 0;
		int hex = c == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X');
		if (hex) {
			p += 2;
			if (!isxdigit((unsigned char)s[p]))
				return ol_error(s, t->pos, lx->err, lx->errlen, "expected hex digits after '0x'");
		}
		for (; hex ? isxdigit((unsigned char)s[p]) : isdigit((unsigned char)s[p]); p++) {
			unsigned d = isdigit((unsigned char)s[p]) ? (unsigned)(s[p] - '0')
								  : (unsigned)(tolower((unsigned char)s[p]) - 'a' + 10);
			unsigned base = hex ? 16 : 10;
			if (v > (UINT64_MAX - d) / base)
				return ol_error(s, t->pos, lx->err, lx->errlen, "number larger than 2^64-1");
			v = v * base + d;
		}
		if (isalnum((unsigned char)s[p]) || s[p] == '_')
			return ol_error(s, p, lx->err, lx->errlen, "unexpected '%c' in a number", s[p]);
		t->kind = T_INT;
		t->value = v;
		t->len = p - lx->pos;
		lx->pos = p;
		return 0;
	}
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		size_t l = strlen(ops[i].text);
		if (!strncmp(s + lx->pos, ops[i].text, l)) {
			t->kind = ops[i].kind;
			t->len = l;
			memcpy(t->text, ops[i].text, l + 1);
			lx->pos += l;
			return 0;
		}
	}
	if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
		return ol_error(s, t->pos, lx->err, lx->errlen, "unexpected byte 0x%02x", (unsigned char)c);
	return ol_error(s, t->pos, lx->err, lx->errlen, "unexpected '%c'", c);
}
