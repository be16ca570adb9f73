/* The PTX lexer: hand-written, one pass, no allocation. Tokens point into the source.
 * Comments (// and block) and whitespace are skipped but remembered as space_before/nl_before,
 * which the parser needs for modifiers (ld.global: no space) and line-based directives (.loc). */
#include "ptx-frontend/ptx_internal.h"

#include <string.h>

/* Character classes, one table lookup each. */
enum { C_ALPHA = 1, C_DIGIT = 2, C_SYM = 4 /* _ $ */, C_PCT = 8 /* % */, C_SPACE = 16 };
static const unsigned char cls[256] = {
	['a' ... 'z'] = C_ALPHA, ['A' ... 'Z'] = C_ALPHA, ['0' ... '9'] = C_DIGIT,
	['_'] = C_SYM, ['$'] = C_SYM, ['%'] = C_PCT,
	[' '] = C_SPACE, ['\t'] = C_SPACE, ['\r'] = C_SPACE, ['\f'] = C_SPACE, ['\v'] = C_SPACE,
};

#define IS_FOLLOW(c) (cls[(unsigned char)(c)] & (C_ALPHA | C_DIGIT | C_SYM))

void ptx_lex_init(struct ptx_lexer *lx, const char *src, size_t len)
{
	lx->src = lx->cur = lx->line_start = src;
	lx->end = src + len;
	lx->line = 1;
	lx->error = NULL;
}

static void newline(struct ptx_lexer *lx, const char *after)
{
	lx->line++;
	lx->line_start = after;
}

/* Skip blanks and comments; report what was crossed. Returns false on an unterminated comment. */
static bool skip_trivia(struct ptx_lexer *lx, bool *nl, bool *sp)
{
	const char *p = lx->cur, *e = lx->end;
	while (p < e) {
		unsigned char c = (unsigned char)*p;
		if (cls[c] & C_SPACE) {
			*sp = true;
			p++;
		} else if (c == '\n') {
			*nl = *sp = true;
			newline(lx, ++p);
		} else if (c == '/' && p + 1 < e && p[1] == '/') {
			*sp = true;
			p += 2;
			const char *q = memchr(p, '\n', (size_t)(e - p));
			p = q ? q : e;
		} else if (c == '/' && p + 1 < e && p[1] == '*') {
			*sp = true;
			p += 2;
			for (;;) {
				if (p + 1 >= e) {
					lx->cur = e;
					return false;
				}
				if (p[0] == '*' && p[1] == '/') {
					p += 2;
					break;
				}
				if (*p == '\n') {
					*nl = true;
					newline(lx, p + 1);
				}
				p++;
			}
		} else {
			break;
		}
	}
	lx->cur = p;
	return true;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void ptx_lex_next(struct ptx_lexer *lx, struct ptx_tok *t)
{
	bool nl = false, sp = false;
	const char *comment_start = lx->cur;
	uint32_t cline = lx->line;
	const char *cline_start = lx->line_start;
	bool ok = skip_trivia(lx, &nl, &sp);
	const char *p = lx->cur, *e = lx->end;
	t->nl_before = nl;
	t->space_before = sp;
	t->p = p;
	t->line = lx->line;
	t->col = (uint32_t)(p - lx->line_start) + 1;
	t->len = 0;
	if (!ok) {
		t->kind = TK_ERROR;
		t->p = comment_start;
		t->line = cline;
		t->col = (uint32_t)(comment_start - cline_start) + 1;
		lx->error = "unterminated comment";
		return;
	}
	if (p >= e) {
		t->kind = TK_EOF;
		return;
	}
	unsigned char c = (unsigned char)*p;
	const char *q = p + 1;
	if (cls[c] & (C_ALPHA | C_SYM | C_PCT)) {
		while (q < e && IS_FOLLOW(*q))
			q++;
		t->kind = TK_IDENT;
	} else if (c == '.' && q < e && (IS_FOLLOW(*q))) {
		/* .name, with ::sub parts (.L2::cache_hint, .shared::cluster) */
		for (;;) {
			while (q < e && IS_FOLLOW(*q))
				q++;
			if (q + 2 < e && q[0] == ':' && q[1] == ':' && IS_FOLLOW(q[2]))
				q += 2;
			else
				break;
		}
		t->kind = TK_DOT;
	} else if (cls[c] & C_DIGIT) {
		t->kind = TK_INT;
		if (c == '0' && q < e && (*q == 'x' || *q == 'X')) {
			q++;
			while (q < e && is_hex(*q))
				q++;
		} else if (c == '0' && q < e && (*q == 'f' || *q == 'F' || *q == 'd' || *q == 'D') &&
			   q + 1 < e && is_hex(q[1])) {
			q++;
			while (q < e && is_hex(*q))
				q++;
			t->kind = TK_FLOAT;
		} else if (c == '0' && q < e && (*q == 'b' || *q == 'B') && q + 1 < e &&
			   (q[1] == '0' || q[1] == '1')) {
			q++;
			while (q < e && (*q == '0' || *q == '1'))
				q++;
		} else {
			while (q < e && (cls[(unsigned char)*q] & C_DIGIT))
				q++;
			if (q < e && *q == '.' && q + 1 < e && (cls[(unsigned char)q[1]] & C_DIGIT)) {
				t->kind = TK_FLOAT;
				q++;
				while (q < e && (cls[(unsigned char)*q] & C_DIGIT))
					q++;
			}
			if (q < e && (*q == 'e' || *q == 'E')) {
				const char *r = q + 1;
				if (r < e && (*r == '+' || *r == '-'))
					r++;
				if (r < e && (cls[(unsigned char)*r] & C_DIGIT)) {
					t->kind = TK_FLOAT;
					q = r;
					while (q < e && (cls[(unsigned char)*q] & C_DIGIT))
						q++;
				}
			}
		}
		if (t->kind == TK_INT && q < e && (*q == 'U' || *q == 'u'))
			q++;
		if (q < e && (IS_FOLLOW(*q))) {
			while (q < e && IS_FOLLOW(*q))
				q++;
			t->kind = TK_ERROR;
			t->len = (uint32_t)(q - p);
			lx->cur = q;
			lx->error = "malformed number";
			return;
		}
	} else if (c == '"') {
		while (q < e && *q != '"' && *q != '\n') {
			if (*q == '\\' && q + 1 < e && q[1] != '\n')
				q++;
			q++;
		}
		if (q >= e || *q != '"') {
			t->kind = TK_ERROR;
			lx->error = "unterminated string";
			lx->cur = q;
			return;
		}
		q++;
		t->kind = TK_STRING;
	} else if (c >= 0x21 && c < 0x7f) {
		t->kind = TK_PUNCT;
	} else {
		t->kind = TK_ERROR;
		lx->error = c == 0 ? "unexpected NUL byte" : "unexpected character";
		t->len = 1;
		lx->cur = q;
		return;
	}
	t->len = (uint32_t)(q - p);
	lx->cur = q;
}

const char *ptx_lex_trailing_end(const char *p, const char *end)
{
	const char *q = p;
	while (q < end) {
		if (*q == ' ' || *q == '\t' || *q == '\r') {
			q++;
		} else if (*q == '\n') {
			return q + 1;
		} else if (*q == '/' && q + 1 < end && q[1] == '/') {
			const char *n = memchr(q, '\n', (size_t)(end - q));
			return n ? n + 1 : end;
		} else if (*q == '/' && q + 1 < end && q[1] == '*') {
			const char *r = q + 2;
			while (r + 1 < end && !(r[0] == '*' && r[1] == '/') && *r != '\n')
				r++;
			if (r + 1 >= end || *r == '\n')
				return p;
			q = r + 2;
		} else {
			return p;
		}
	}
	return end;
}

const char *ptx_lex_skip_block(struct ptx_lexer *lx)
{
	const char *p = lx->cur, *e = lx->end;
	int depth = 1;
	while (p < e) {
		char c = *p;
		if (c == '\n') {
			newline(lx, ++p);
		} else if (c == '{') {
			depth++;
			p++;
		} else if (c == '}') {
			p++;
			if (--depth == 0) {
				lx->cur = p;
				return p;
			}
		} else if (c == '/' && p + 1 < e && p[1] == '/') {
			const char *q = memchr(p, '\n', (size_t)(e - p));
			p = q ? q : e;
		} else if (c == '/' && p + 1 < e && p[1] == '*') {
			p += 2;
			while (p + 1 < e && !(p[0] == '*' && p[1] == '/')) {
				if (*p == '\n')
					newline(lx, p + 1);
				p++;
			}
			p = p + 1 < e ? p + 2 : e;
		} else if (c == '"') {
			p++;
			while (p < e && *p != '"' && *p != '\n')
				p += (*p == '\\' && p + 1 < e && p[1] != '\n') ? 2 : 1;
			if (p < e && *p == '"')
				p++;
		} else {
			p++;
		}
	}
	lx->cur = e;
	return NULL;
}
