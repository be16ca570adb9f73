/* The PTX parser: tokens to IR. Recursive descent with one token of lookahead; an error unwinds
 * with longjmp (the arena owns everything, so nothing leaks). Instructions are parsed generically;
 * directives it does not model are kept whole as text. Each parsed node also keeps its source
 * text, so the printer can reproduce the module exactly (see ir.h: src). */
#include "ptx-frontend/ptx_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of IR (nodes, operands, strings, the text copy) per byte of PTX text, about: measured on
 * bench/overhead's module (187 KB of PTX, 2.1 MB of IR). */
#define IR_PER_TEXT_BYTE 12

struct parser {
	struct ptx_lexer lx;
	struct ptx_tok tok;       /* current token */
	const char *prev_end;     /* end of the previous token */
	const char *mark;         /* start of the next node's source text */
	ir_module *m;
	uint32_t loc_line;
	uint16_t loc_file;
	char *err;
	size_t errlen;
	jmp_buf fail;
	/* growable scratch arrays for operands and modifiers */
	const char **mods;
	unsigned mods_cap;
	struct opbuf {
		ir_operand *v;
		unsigned n, cap;
	} ops;
	struct intern_slot {
		const char *s;
		uint32_t len;
		uint64_t hash;
	} *interned;
	unsigned nintern, intern_cap;
	unsigned depth;           /* operand nesting */
};

static _Noreturn void fail_at(struct parser *ps, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static _Noreturn void fail_at(struct parser *ps, uint32_t line, uint32_t col, const char *fmt, ...)
{
	if (ps->err && ps->errlen) {
		int n = snprintf(ps->err, ps->errlen, "%u:%u: ", line, col);
		if (n >= 0 && (size_t)n < ps->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	longjmp(ps->fail, 1);
}

/* A token quoted for a message: at most 32 characters. */
static const char *tok_desc(struct parser *ps, const struct ptx_tok *t, char *buf, size_t n)
{
	if (t->kind == TK_EOF)
		return "end of file";
	unsigned len = t->len > 32 ? 32 : t->len;
	snprintf(buf, n, "'%.*s'", (int)len, t->p);
	return buf;
}

static _Noreturn void fail_expected(struct parser *ps, const char *what)
{
	char b[48];
	fail_at(ps, ps->tok.line, ps->tok.col, "expected %s, found %s", what,
		tok_desc(ps, &ps->tok, b, sizeof(b)));
}

static void next(struct parser *ps)
{
	ps->prev_end = ps->tok.p + ps->tok.len;
	ptx_lex_next(&ps->lx, &ps->tok);
	if (ps->tok.kind == TK_ERROR)
		fail_at(ps, ps->tok.line, ps->tok.col, "%s", ps->lx.error);
}

static inline bool is_punct(const struct ptx_tok *t, char c)
{
	return t->kind == TK_PUNCT && t->p[0] == c;
}

static inline bool tok_is(const struct ptx_tok *t, const char *s)
{
	size_t n = strlen(s);
	return t->len == n && !memcmp(t->p, s, n);
}

static void expect_punct(struct parser *ps, char c)
{
	if (!is_punct(&ps->tok, c)) {
		char what[8] = {'\'', c, '\'', 0};
		fail_expected(ps, what);
	}
	next(ps);
}

/* The few distinct words that recur on every line (opcodes, modifiers, state spaces, types) are
 * interned: one copy per module, which keeps the IR small. Open addressing, grown at half full. */
static const char *intern(struct parser *ps, const char *p, uint32_t n)
{
	/* long names (mangled C++ symbols) are cheaper to copy than to hash and compare */
	if (n > 24)
		return ir_strndup(ps->m, p, n);
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	if (ps->nintern * 2 >= ps->intern_cap) {
		unsigned cap = ps->intern_cap ? ps->intern_cap * 2 : 4096;
		struct intern_slot *nt = calloc(cap, sizeof(*nt));
		if (!nt) {
			fputs("gpuprobe: out of memory parsing PTX\n", stderr);
			abort();
		}
		for (unsigned i = 0; i < ps->intern_cap; i++) {
			struct intern_slot *o = &ps->interned[i];
			if (!o->s)
				continue;
			unsigned j = (unsigned)o->hash & (cap - 1);
			while (nt[j].s)
				j = (j + 1) & (cap - 1);
			nt[j] = *o;
		}
		free(ps->interned);
		ps->interned = nt;
		ps->intern_cap = cap;
	}
	unsigned mask = ps->intern_cap - 1, j = (unsigned)h & mask;
	for (;;) {
		struct intern_slot *e = &ps->interned[j];
		if (!e->s) {
			e->s = ir_strndup(ps->m, p, n);
			e->len = n;
			e->hash = h;
			ps->nintern++;
			return e->s;
		}
		if (e->hash == h && e->len == n) {
			uint32_t i = 0; /* short: a loop beats a call to memcmp */
			while (i < n && e->s[i] == p[i])
				i++;
			if (i == n)
				return e->s;
		}
		j = (j + 1) & mask;
	}
}

static const char *tok_str(struct parser *ps, const struct ptx_tok *t)
{
	return intern(ps, t->p, t->len);
}

/* Names (registers, symbols, literals): many distinct values, a copy is cheaper than a lookup
 * in a table that outgrows the cache. */
static const char *name_str(struct parser *ps, const struct ptx_tok *t)
{
	return ir_strndup(ps->m, t->p, t->len);
}

static const char *slice(struct parser *ps, const char *from, const char *to)
{
	return ir_strndup(ps->m, from, (size_t)(to - from));
}

/* The node that just ended (its last token ended at prev_end) takes the source text from the
 * mark through its trailing comment and newline. */
static void take_src(struct parser *ps, const char **src, uint32_t *len)
{
	const char *end = ptx_lex_trailing_end(ps->prev_end, ps->lx.end);
	/* the lexer is already past the current token: never take beyond its start */
	if (ps->tok.kind != TK_EOF && end > ps->tok.p)
		end = ps->prev_end;
	*src = ps->mark;
	*len = (uint32_t)(end - ps->mark);
	ps->mark = end;
}

static void finish_stmt(struct parser *ps, ir_stmt *s)
{
	take_src(ps, &s->src, &s->src_len);
	s->src_hash = ptx_stmt_fingerprint(s);
}

static void finish_top(struct parser *ps, ir_top *t)
{
	take_src(ps, &t->src, &t->src_len);
	t->src_hash = ptx_top_fingerprint(t);
}

/* ---- directives kept as text ------------------------------------------------------------- */

/* From the current token (a directive) to the end of the statement: through ';' at nesting depth
 * 0, or up to the last token of the line when the line ends first (.loc, .file, .version). */
static const char *directive_text(struct parser *ps)
{
	const char *start = ps->tok.p;
	uint32_t line = ps->tok.line, col = ps->tok.col;
	int depth = 0;
	next(ps);
	for (;;) {
		if (ps->tok.kind == TK_EOF) {
			if (depth)
				fail_at(ps, line, col, "unterminated directive");
			break;
		}
		if (depth == 0 && ps->tok.nl_before)
			break;
		if (ps->tok.kind == TK_PUNCT) {
			char c = ps->tok.p[0];
			if (c == '(' || c == '{' || c == '[')
				depth++;
			else if (c == ')' || c == '}' || c == ']') {
				if (--depth < 0)
					break;
			} else if (c == ';' && depth == 0) {
				next(ps);
				break;
			}
		}
		next(ps);
	}
	return slice(ps, start, ps->prev_end);
}

/* .section NAME { ... }: everything through the matching brace. */
static const char *section_text(struct parser *ps)
{
	const char *start = ps->tok.p;
	uint32_t line = ps->tok.line, col = ps->tok.col;
	next(ps);
	while (ps->tok.kind == TK_DOT || ps->tok.kind == TK_IDENT || is_punct(&ps->tok, ','))
		next(ps);
	if (!is_punct(&ps->tok, '{'))
		return slice(ps, start, ps->prev_end);
	const char *end = ptx_lex_skip_block(&ps->lx);
	if (!end)
		fail_at(ps, line, col, "unterminated .section (missing '}')");
	ps->tok.p = end - 1;
	ps->tok.len = 1;
	next(ps);
	return slice(ps, start, end);
}

/* ---- declarations ------------------------------------------------------------------------ */

static bool is_space_dir(const struct ptx_tok *t)
{
	return tok_is(t, ".reg") || tok_is(t, ".local") || tok_is(t, ".shared") ||
	       tok_is(t, ".global") || tok_is(t, ".const") || tok_is(t, ".param") ||
	       tok_is(t, ".tex") || tok_is(t, ".sreg");
}

static bool is_linkage(const struct ptx_tok *t)
{
	return tok_is(t, ".visible") || tok_is(t, ".extern") || tok_is(t, ".weak") ||
	       tok_is(t, ".common");
}

static bool is_type_name(const char *p, uint32_t n)
{
	if (n < 3 || p[0] != '.')
		return false;
	switch (p[1]) {
	case 'b': case 'u': case 's': case 'f':
		if (n >= 5 && p[1] == 'b' && p[2] == 'f' && p[3] == '1' && p[4] == '6')
			return true; /* .bf16, .bf16x2 */
		if (p[1] == 's' && n == 10 && !memcmp(p, ".surfref", 8))
			return true;
		if (p[1] == 's' && n == 11 && !memcmp(p, ".samplerref", 11))
			return true;
		for (uint32_t i = 2; i < n; i++)
			if (!((p[i] >= '0' && p[i] <= '9') || p[i] == 'x'))
				return false;
		return p[2] >= '0' && p[2] <= '9';
	case 'p':
		return n == 5 && !memcmp(p, ".pred", 5);
	case 't':
		return n == 7 && !memcmp(p, ".texref", 7);
	case 'e':
		return (n == 5 || n == 7) && (!memcmp(p, ".e4m3", 5) || !memcmp(p, ".e5m2", 5));
	}
	return false;
}

static unsigned parse_uint(struct parser *ps, const char *what)
{
	if (ps->tok.kind != TK_INT)
		fail_expected(ps, what);
	unsigned long v = strtoul(ps->tok.p, NULL, 0);
	next(ps);
	return (unsigned)v;
}

/* The part of a declaration up to (not including) its name: [linkage] space attrs .align vec type
 * .ptr... Stops at the name. */
static void decl_prefix(struct parser *ps, ir_decl *d)
{
	const char *attrs[16];
	unsigned na = 0;
	d->count = -1;
	if (is_linkage(&ps->tok)) {
		d->linkage = tok_str(ps, &ps->tok);
		next(ps);
	}
	if (ps->tok.kind != TK_DOT)
		fail_expected(ps, "a state space");
	d->space = tok_str(ps, &ps->tok);
	next(ps);
	while (ps->tok.kind == TK_DOT) {
		const struct ptx_tok *t = &ps->tok;
		if (tok_is(t, ".align")) {
			next(ps);
			d->align = parse_uint(ps, "an alignment");
		} else if (tok_is(t, ".v2") || tok_is(t, ".v4") || tok_is(t, ".v8")) {
			if (d->vec)
				fail_at(ps, t->line, t->col, "second vector width in a declaration");
			d->vec = tok_str(ps, t);
			next(ps);
		} else if (is_type_name(t->p, t->len)) {
			if (d->type)
				fail_at(ps, t->line, t->col, "second type in a declaration");
			d->type = tok_str(ps, t);
			next(ps);
		} else if (tok_is(t, ".ptr")) {
			const char *start = t->p;
			next(ps);
			while (ps->tok.kind == TK_DOT || ps->tok.kind == TK_INT)
				next(ps);
			d->ptr_attrs = slice(ps, start, ps->prev_end);
		} else {
			/* .attribute(.managed), .unified(...) and anything else: kept as written */
			const char *start = t->p;
			next(ps);
			if (is_punct(&ps->tok, '(') && !ps->tok.space_before) {
				int depth = 0;
				do {
					if (ps->tok.kind == TK_EOF)
						fail_expected(ps, "')'");
					if (is_punct(&ps->tok, '('))
						depth++;
					else if (is_punct(&ps->tok, ')'))
						depth--;
					next(ps);
				} while (depth);
			}
			if (na == 16)
				fail_at(ps, ps->tok.line, ps->tok.col, "too many declaration attributes");
			attrs[na++] = slice(ps, start, ps->prev_end);
		}
	}
	if (na) {
		d->attrs = ir_alloc(ps->m, na * sizeof(*d->attrs));
		memcpy(d->attrs, attrs, na * sizeof(*d->attrs));
		d->nattrs = na;
	}
}

/* Name, <count>, [dims], = init. The declaration ends before ',' or ';' or ')'. */
static void decl_name(struct parser *ps, ir_decl *d)
{
	if (ps->tok.kind != TK_IDENT)
		fail_expected(ps, "a name in the declaration");
	d->name = name_str(ps, &ps->tok);
	next(ps);
	d->count = -1;
	if (is_punct(&ps->tok, '<')) {
		next(ps);
		d->count = (int)parse_uint(ps, "a register count");
		expect_punct(ps, '>');
	}
	if (is_punct(&ps->tok, '[')) {
		const char *start = ps->tok.p;
		while (is_punct(&ps->tok, '[')) {
			next(ps);
			if (ps->tok.kind == TK_INT)
				next(ps);
			expect_punct(ps, ']');
		}
		d->dims = slice(ps, start, ps->prev_end);
	}
	if (is_punct(&ps->tok, '=')) {
		next(ps);
		const char *start = ps->tok.p;
		int depth = 0;
		for (;;) {
			if (ps->tok.kind == TK_EOF)
				fail_expected(ps, "';' after the initializer");
			if (ps->tok.kind == TK_PUNCT) {
				char c = ps->tok.p[0];
				if (c == '{' || c == '(')
					depth++;
				else if (c == '}' || c == ')')
					depth--;
				else if (depth <= 0 && (c == ';' || c == ','))
					break;
			}
			next(ps);
		}
		if (ps->prev_end <= start)
			fail_expected(ps, "an initializer");
		d->init = slice(ps, start, ps->prev_end);
	}
}

/* A whole declaration statement: one or more names sharing the prefix, ending with ';'.
 * Calls emit(d) for each. */
typedef void (*decl_sink)(struct parser *ps, const ir_decl *d, void *ctx, bool last);

static void parse_decl_stmt(struct parser *ps, decl_sink emit, void *ctx)
{
	ir_decl proto = {0};
	decl_prefix(ps, &proto);
	for (;;) {
		ir_decl d = proto;
		decl_name(ps, &d);
		if (is_punct(&ps->tok, ',')) {
			next(ps);
			emit(ps, &d, ctx, false);
			continue;
		}
		expect_punct(ps, ';');
		emit(ps, &d, ctx, true);
		return;
	}
}

/* ---- operands ---------------------------------------------------------------------------- */

static void opbuf_push(struct opbuf *b, ir_operand o)
{
	if (b->n == b->cap) {
		unsigned cap = b->cap ? b->cap * 2 : 8;
		ir_operand *nv = realloc(b->v, cap * sizeof(*nv));
		if (!nv) {
			fputs("gpuprobe: out of memory parsing PTX\n", stderr);
			abort();
		}
		b->v = nv;
		b->cap = cap;
	}
	b->v[b->n++] = o;
}

static ir_operand *opbuf_commit(struct parser *ps, struct opbuf *b, unsigned from)
{
	unsigned n = b->n - from;
	ir_operand *v = ir_alloc(ps->m, (n ? n : 1) * sizeof(*v));
	if (n)
		memcpy(v, b->v + from, n * sizeof(*v));
	b->n = from;
	return v;
}

static int64_t int_value(const char *p, uint32_t n)
{
	bool neg = false;
	if (n && *p == '-') {
		neg = true;
		p++;
		n--;
	}
	uint64_t v = 0;
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		for (uint32_t i = 2; i < n; i++) {
			char c = p[i];
			if (c == 'U' || c == 'u')
				break;
			v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		}
	} else if (n > 2 && p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		for (uint32_t i = 2; i < n && (p[i] == '0' || p[i] == '1'); i++)
			v = v * 2 + (uint64_t)(p[i] - '0');
	} else if (n > 1 && p[0] == '0') {
		for (uint32_t i = 1; i < n && p[i] >= '0' && p[i] <= '7'; i++)
			v = v * 8 + (uint64_t)(p[i] - '0');
	} else {
		for (uint32_t i = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++)
			v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return neg ? (int64_t)(0 - v) : (int64_t)v;
}

static bool ends_operand(const struct ptx_tok *t)
{
	if (t->kind == TK_EOF)
		return true;
	if (t->kind != TK_PUNCT)
		return false;
	char c = t->p[0];
	return c == ',' || c == ';' || c == '}' || c == ')' || c == ']';
}

/* Anything the structured forms do not cover, from start to the end of the operand. */
static ir_operand raw_from(struct parser *ps, const char *start)
{
	int depth = 0;
	for (;;) {
		if (ps->tok.kind == TK_EOF)
			fail_expected(ps, "';'");
		if (ps->tok.kind == TK_PUNCT) {
			char c = ps->tok.p[0];
			if (c == '(' || c == '{' || c == '[')
				depth++;
			else if (c == ')' || c == '}' || c == ']') {
				if (depth == 0)
					break;
				depth--;
			} else if (depth == 0 && (c == ',' || c == ';'))
				break;
		}
		next(ps);
	}
	if (ps->prev_end <= start)
		fail_expected(ps, "an operand");
	return (ir_operand){.kind = IR_OPND_RAW, .name = slice(ps, start, ps->prev_end)};
}

static ir_operand parse_operand(struct parser *ps, struct opbuf *ob);

/* Inside an open bracket: skip through its matching close; the statement must not end first. */
static void skip_to_close(struct parser *ps, char close)
{
	int depth = 1;
	for (;;) {
		if (ps->tok.kind == TK_EOF || is_punct(&ps->tok, ';')) {
			char what[8] = {'\'', close, '\'', 0};
			fail_expected(ps, what);
		}
		if (ps->tok.kind == TK_PUNCT) {
			char c = ps->tok.p[0];
			if (c == '(' || c == '{' || c == '[')
				depth++;
			else if ((c == ')' || c == '}' || c == ']') && --depth == 0) {
				if (c != close) {
					char what[8] = {'\'', close, '\'', 0};
					fail_expected(ps, what);
				}
				next(ps);
				return;
			}
		}
		next(ps);
	}
}

/* An operand the structured forms do not cover, whose opening bracket is still open: kept as
 * text through its close and anything after it. */
static ir_operand raw_bracketed(struct parser *ps, const char *start, char close)
{
	skip_to_close(ps, close);
	if (ends_operand(&ps->tok))
		return (ir_operand){.kind = IR_OPND_RAW, .name = slice(ps, start, ps->prev_end)};
	return raw_from(ps, start);
}

/* A register name with its adjacent .parts (%tid.x, %envreg3). */
static const char *reg_name(struct parser *ps)
{
	const char *start = ps->tok.p;
	next(ps);
	while (ps->tok.kind == TK_DOT && !ps->tok.space_before)
		next(ps);
	return slice(ps, start, ps->prev_end);
}

static ir_operand parse_address(struct parser *ps, struct opbuf *ob, const char *start)
{
	next(ps); /* [ */
	ir_operand o = {.kind = IR_OPND_ADDR};
	if (ps->tok.kind == TK_IDENT) {
		if (ps->tok.p[0] == '%') {
			o.name = reg_name(ps);
		} else {
			o.name = name_str(ps, &ps->tok);
			next(ps);
		}
		if (is_punct(&ps->tok, '+') || is_punct(&ps->tok, '-')) {
			bool minus = ps->tok.p[0] == '-';
			next(ps);
			if (is_punct(&ps->tok, '-')) {
				minus = !minus;
				next(ps);
			}
			if (ps->tok.kind != TK_INT)
				return raw_bracketed(ps, start, ']');
			int64_t v = int_value(ps->tok.p, ps->tok.len);
			o.ival = minus ? -v : v;
			next(ps);
		} else if (is_punct(&ps->tok, ',')) {
			unsigned from = ob->n;
			while (is_punct(&ps->tok, ',')) {
				next(ps);
				opbuf_push(ob, parse_operand(ps, ob));
			}
			o.nelems = ob->n - from;
			o.elems = opbuf_commit(ps, ob, from);
		}
	} else if (ps->tok.kind == TK_INT) {
		o.ival = int_value(ps->tok.p, ps->tok.len);
		next(ps);
	} else {
		return raw_bracketed(ps, start, ']');
	}
	if (!is_punct(&ps->tok, ']'))
		return raw_bracketed(ps, start, ']');
	next(ps);
	return o;
}

/* Operands nest ({..}, [..], (..), !): bounded, so hostile input cannot exhaust the stack. */
#define MAX_OPERAND_DEPTH 32

static ir_operand parse_primary(struct parser *ps, struct opbuf *ob)
{
	const char *start = ps->tok.p;
	if (++ps->depth > MAX_OPERAND_DEPTH)
		fail_at(ps, ps->tok.line, ps->tok.col, "operand nested too deeply");
	const struct ptx_tok *t = &ps->tok;
	ir_operand o = {0};
	if (t->kind == TK_IDENT) {
		if (t->p[0] == '%') {
			o.kind = IR_OPND_REG;
			o.name = reg_name(ps);
		} else {
			o.kind = IR_OPND_SYMBOL;
			o.name = name_str(ps, t);
			next(ps);
		}
	} else if (t->kind == TK_INT) {
		o.kind = IR_OPND_INT;
		o.text = name_str(ps, t);
		o.ival = int_value(t->p, t->len);
		next(ps);
	} else if (t->kind == TK_FLOAT) {
		o.kind = IR_OPND_FLOAT;
		o.text = name_str(ps, t);
		next(ps);
	} else if (is_punct(t, '-')) {
		next(ps);
		if ((ps->tok.kind == TK_INT || ps->tok.kind == TK_FLOAT) && !ps->tok.space_before) {
			o.kind = ps->tok.kind == TK_INT ? IR_OPND_INT : IR_OPND_FLOAT;
			o.text = slice(ps, start, ps->tok.p + ps->tok.len);
			if (o.kind == IR_OPND_INT)
				o.ival = int_value(o.text, (uint32_t)strlen(o.text));
			next(ps);
		} else {
			return raw_from(ps, start);
		}
	} else if (is_punct(t, '!')) {
		next(ps);
		if (ps->tok.kind != TK_IDENT)
			return raw_from(ps, start);
		o = parse_primary(ps, ob);
		ps->depth--;
		o.neg = true;
	} else if (is_punct(t, '[')) {
		return parse_address(ps, ob, start);
	} else if (is_punct(t, '{') || is_punct(t, '(')) {
		char close = t->p[0] == '{' ? '}' : ')';
		o.kind = close == '}' ? IR_OPND_VEC : IR_OPND_LIST;
		next(ps);
		unsigned from = ob->n;
		if (!is_punct(&ps->tok, close)) {
			for (;;) {
				opbuf_push(ob, parse_operand(ps, ob));
				if (!is_punct(&ps->tok, ','))
					break;
				next(ps);
			}
		}
		if (!is_punct(&ps->tok, close)) {
			ob->n = from;
			return raw_bracketed(ps, start, close);
		}
		next(ps);
		o.nelems = ob->n - from;
		o.elems = opbuf_commit(ps, ob, from);
	} else {
		return raw_from(ps, start);
	}
	return o;
}

static ir_operand parse_operand(struct parser *ps, struct opbuf *ob)
{
	const char *start = ps->tok.p;
	if (ends_operand(&ps->tok))
		fail_expected(ps, "an operand");
	ir_operand o = parse_primary(ps, ob);
	ps->depth--;
	if (is_punct(&ps->tok, '|')) {
		next(ps);
		ir_operand pair[2] = {o, parse_primary(ps, ob)};
		ps->depth--;
		o = (ir_operand){.kind = IR_OPND_PAIR, .nelems = 2};
		o.elems = ir_alloc(ps->m, sizeof(pair));
		memcpy(o.elems, pair, sizeof(pair));
	}
	if (!ends_operand(&ps->tok)) {
		/* an expression (sym+8, a*b): kept as text; two operands side by side: an error */
		if (ps->tok.kind != TK_PUNCT)
			fail_expected(ps, "',' or ';' after an operand");
		return raw_from(ps, start);
	}
	return o;
}

/* ---- statements -------------------------------------------------------------------------- */

struct body {
	ir_func *f;
};

static ir_stmt *new_stmt(struct parser *ps, enum ir_stmt_kind kind, const struct ptx_tok *at)
{
	ir_stmt *s = ir_stmt_new(ps->m, kind);
	s->line = at->line;
	s->col = at->col;
	s->src_line = ps->loc_line;
	s->src_file = ps->loc_file;
	return s;
}

static void emit_body_decl(struct parser *ps, const ir_decl *d, void *ctx, bool last)
{
	struct body *b = ctx;
	ir_stmt *s = ir_stmt_new(ps->m, IR_STMT_DECL);
	s->decl = *d;
	s->src_line = ps->loc_line;
	s->src_file = ps->loc_file;
	ir_stmt_append(b->f, s);
	if (last) {
		finish_stmt(ps, s);
	} else {
		/* a multi-name declaration: the last statement carries the source text, the others
		 * an empty one, so an untouched declaration prints exactly as written */
		s->src = ps->mark;
		s->src_hash = ptx_stmt_fingerprint(s);
	}
}

/* An instruction whose opcode token (op) has just been consumed; s was started at its first
 * token (the guard or the opcode). */
static void parse_insn_rest(struct parser *ps, struct body *b, ir_stmt *s, const struct ptx_tok *op)
{
	ir_insn *in = &s->insn;
	in->opcode = tok_str(ps, op);
	unsigned nm = 0;
	while (ps->tok.kind == TK_DOT && !ps->tok.space_before) {
		if (nm == ps->mods_cap) {
			ps->mods_cap = ps->mods_cap ? ps->mods_cap * 2 : 16;
			const char **nmods = realloc(ps->mods, ps->mods_cap * sizeof(*nmods));
			if (!nmods)
				abort();
			ps->mods = nmods;
		}
		ps->mods[nm++] = tok_str(ps, &ps->tok);
		next(ps);
	}
	if (nm) {
		in->mods = ir_alloc(ps->m, nm * sizeof(*in->mods));
		memcpy(in->mods, ps->mods, nm * sizeof(*in->mods));
		in->nmods = nm;
	}
	unsigned from = ps->ops.n;
	if (!is_punct(&ps->tok, ';')) {
		for (;;) {
			opbuf_push(&ps->ops, parse_operand(ps, &ps->ops));
			if (!is_punct(&ps->tok, ','))
				break;
			next(ps);
		}
	}
	if (!is_punct(&ps->tok, ';'))
		fail_expected(ps, "',' or ';' after an operand");
	next(ps);
	in->nops = ps->ops.n - from;
	in->ops = opbuf_commit(ps, &ps->ops, from);
	in->info = ir_insn_info_for(in);
	ir_stmt_append(b->f, s);
	finish_stmt(ps, s);
}

static void parse_guarded_insn(struct parser *ps, struct body *b)
{
	ir_stmt *s = new_stmt(ps, IR_STMT_INSN, &ps->tok);
	ir_insn *in = &s->insn;
	next(ps); /* @ */
	if (is_punct(&ps->tok, '!')) {
		in->guard_neg = true;
		next(ps);
	}
	if (ps->tok.kind != TK_IDENT)
		fail_expected(ps, "a predicate after '@'");
	in->guard = name_str(ps, &ps->tok);
	next(ps);
	if (ps->tok.kind != TK_IDENT || ps->tok.p[0] == '%')
		fail_expected(ps, "an instruction");
	struct ptx_tok op = ps->tok;
	next(ps);
	parse_insn_rest(ps, b, s, &op);
}

/* .loc FILE LINE COL ...: remember the source position for the statements that follow. */
static void note_loc(struct parser *ps, const char *text)
{
	const char *p = text + 4;
	char *e;
	unsigned long file = strtoul(p, &e, 10);
	unsigned long line = strtoul(e, NULL, 10);
	ps->loc_file = (uint16_t)file;
	ps->loc_line = (uint32_t)line;
}

static void parse_body(struct parser *ps, ir_func *f, uint32_t open_line, uint32_t open_col)
{
	struct body b = {.f = f};
	int depth = 0;
	for (;;) {
		struct ptx_tok *t = &ps->tok;
		if (t->kind == TK_EOF) {
			fail_at(ps, open_line, open_col, "unterminated function body (missing '}')");
		}
		if (is_punct(t, '{')) {
			ir_stmt *s = new_stmt(ps, IR_STMT_BLOCK_OPEN, t);
			next(ps);
			ir_stmt_append(f, s);
			finish_stmt(ps, s);
			depth++;
		} else if (is_punct(t, '}')) {
			if (depth == 0) {
				next(ps);
				take_src(ps, &f->end_src, &f->end_len);
				break;
			}
			ir_stmt *s = new_stmt(ps, IR_STMT_BLOCK_CLOSE, t);
			next(ps);
			ir_stmt_append(f, s);
			finish_stmt(ps, s);
			depth--;
		} else if (t->kind == TK_DOT && is_space_dir(t)) {
			parse_decl_stmt(ps, emit_body_decl, &b);
		} else if (t->kind == TK_DOT) {
			ir_stmt *s = new_stmt(ps, IR_STMT_DIRECTIVE, t);
			bool loc = tok_is(t, ".loc");
			s->text = directive_text(ps);
			if (loc) {
				note_loc(ps, s->text);
				s->src_line = ps->loc_line;
				s->src_file = ps->loc_file;
			}
			ir_stmt_append(f, s);
			finish_stmt(ps, s);
		} else if (t->kind == TK_IDENT && t->p[0] != '%') {
			/* a label, or an instruction */
			struct ptx_tok id = *t;
			next(ps);
			if (is_punct(&ps->tok, ':')) {
				ir_stmt *s = new_stmt(ps, IR_STMT_LABEL, &id);
				s->text = name_str(ps, &id);
				next(ps);
				ir_stmt_append(f, s);
				finish_stmt(ps, s);
			} else {
				ir_stmt *s = new_stmt(ps, IR_STMT_INSN, &id);
				parse_insn_rest(ps, &b, s, &id);
			}
		} else if (is_punct(t, '@')) {
			parse_guarded_insn(ps, &b);
		} else {
			fail_expected(ps, "an instruction, label, declaration or directive");
		}
	}
}

/* ---- functions and module ---------------------------------------------------------------- */

/* ( decl, decl ) */
static void param_list(struct parser *ps, ir_decl **out, unsigned *n)
{
	expect_punct(ps, '(');
	ir_decl tmp[64];
	ir_decl *v = tmp;
	unsigned cnt = 0, cap = 64;
	bool heap = false;
	if (!is_punct(&ps->tok, ')')) {
		for (;;) {
			if (cnt == cap) {
				ir_decl *nv = ir_alloc(ps->m, cap * 2 * sizeof(*nv));
				memcpy(nv, v, cnt * sizeof(*nv));
				v = nv;
				cap *= 2;
				heap = true;
			}
			ir_decl d = {0};
			decl_prefix(ps, &d);
			decl_name(ps, &d);
			v[cnt++] = d;
			if (!is_punct(&ps->tok, ','))
				break;
			next(ps);
		}
	}
	expect_punct(ps, ')');
	if (cnt) {
		*out = heap ? v : ir_alloc(ps->m, cnt * sizeof(**out));
		if (!heap)
			memcpy(*out, v, cnt * sizeof(**out));
	}
	*n = cnt;
}

static void parse_func(struct parser *ps, ir_top *top, const char *linkage)
{
	ir_func *f = &top->func;
	f->linkage = linkage;
	f->is_entry = tok_is(&ps->tok, ".entry");
	next(ps);
	if (is_punct(&ps->tok, '(')) {
		f->has_rets = true;
		param_list(ps, &f->rets, &f->nrets);
	}
	if (ps->tok.kind != TK_IDENT)
		fail_expected(ps, "a function name");
	f->name = tok_str(ps, &ps->tok);
	next(ps);
	if (is_punct(&ps->tok, '(')) {
		f->has_params = true;
		param_list(ps, &f->params, &f->nparams);
	}
	const char *perf[32];
	unsigned np = 0;
	while (ps->tok.kind == TK_DOT) {
		const char *start = ps->tok.p;
		bool pragma = tok_is(&ps->tok, ".pragma");
		next(ps);
		while (ps->tok.kind != TK_DOT && ps->tok.kind != TK_EOF && !is_punct(&ps->tok, '{') &&
		       !is_punct(&ps->tok, ';'))
			next(ps);
		if (pragma && is_punct(&ps->tok, ';'))
			next(ps);
		if (np == 32)
			fail_at(ps, ps->tok.line, ps->tok.col, "too many performance directives");
		perf[np++] = slice(ps, start, ps->prev_end);
	}
	if (np) {
		f->perf = ir_alloc(ps->m, np * sizeof(*f->perf));
		memcpy(f->perf, perf, np * sizeof(*f->perf));
		f->nperf = np;
	}
	uint32_t ol = ps->tok.line, oc = ps->tok.col;
	bool body = is_punct(&ps->tok, '{');
	/* One signature and one body per name (ptxas: "duplicate definition"; a prototype that
	 * differs from its function): passes key functions by name and take the first's signature. */
	for (const ir_top *t = ps->m->first; t && t != top; t = t->next) {
		if (t->kind != IR_TOP_FUNC || strcmp(t->func.name, f->name))
			continue;
		if (body && t->func.has_body)
			fail_at(ps, ol, oc, "function %s is defined twice (first at line %u)", f->name, t->line);
		if (t->func.nparams != f->nparams || t->func.nrets != f->nrets)
			fail_at(ps, ol, oc, "function %s: %u parameter(s) and %u return value(s) here, %u and %u at line %u",
				f->name, f->nparams, f->nrets, t->func.nparams, t->func.nrets, t->line);
	}
	if (is_punct(&ps->tok, ';')) {
		next(ps);
		finish_top(ps, top);
		return;
	}
	if (!body)
		fail_expected(ps, "'{' or ';' after the function signature");
	f->has_body = true;
	next(ps);
	finish_top(ps, top);
	ps->loc_line = 0;
	ps->loc_file = 0;
	parse_body(ps, f, ol, oc);
}

struct top_ctx {
	uint32_t line;
};

static void emit_top_decl(struct parser *ps, const ir_decl *d, void *ctx, bool last)
{
	struct top_ctx *c = ctx;
	ir_top *t = ir_top_new(ps->m, IR_TOP_DECL);
	t->decl = *d;
	t->line = c->line;
	ir_top_append(ps->m, t);
	if (last) {
		finish_top(ps, t);
	} else {
		t->src = ps->mark;
		t->src_hash = ptx_top_fingerprint(t);
	}
}

static void module_fields(struct parser *ps, const char *text)
{
	ir_module *m = ps->m;
	if (!strncmp(text, ".version", 8)) {
		const char *p = text + 8;
		while (*p == ' ' || *p == '\t')
			p++;
		m->version = p;
	} else if (!strncmp(text, ".target", 7) && !m->target) {
		const char *p = text + 7;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t,\n/");
		m->target = ir_strndup(m, p, n);
	} else if (!strncmp(text, ".address_size", 13)) {
		m->address_size = (unsigned)strtoul(text + 13, NULL, 10);
	}
}

static void parse_module(struct parser *ps)
{
	for (;;) {
		struct ptx_tok *t = &ps->tok;
		if (t->kind == TK_EOF)
			break;
		uint32_t line = t->line;
		if (t->kind == TK_DOT) {
			const char *linkage = NULL;
			struct ptx_lexer save = ps->lx;
			struct ptx_tok first = *t;
			const char *pe = ps->prev_end;
			if (is_linkage(t)) {
				linkage = tok_str(ps, t);
				next(ps);
			}
			if (tok_is(&ps->tok, ".entry") || tok_is(&ps->tok, ".func")) {
				ir_top *top = ir_top_new(ps->m, IR_TOP_FUNC);
				top->line = line;
				ir_top_append(ps->m, top);
				parse_func(ps, top, linkage);
				continue;
			}
			if (linkage || is_space_dir(&ps->tok)) {
				ps->lx = save;
				ps->tok = first;
				ps->prev_end = pe;
				struct top_ctx c = {line};
				parse_decl_stmt(ps, emit_top_decl, &c);
				continue;
			}
			ir_top *top = ir_top_new(ps->m, IR_TOP_DIRECTIVE);
			top->line = line;
			top->text = tok_is(t, ".section") ? section_text(ps) : directive_text(ps);
			module_fields(ps, top->text);
			ir_top_append(ps->m, top);
			finish_top(ps, top);
		} else if (is_punct(t, '@')) {
			/* @@DWARF lines of older -G output: kept whole */
			ir_top *top = ir_top_new(ps->m, IR_TOP_DIRECTIVE);
			top->line = line;
			top->text = directive_text(ps);
			ir_top_append(ps->m, top);
			finish_top(ps, top);
		} else {
			fail_expected(ps, "a directive, declaration or function");
		}
	}
	ps->m->tail_src = ps->mark;
	ps->m->tail_len = (uint32_t)(ps->lx.end - ps->mark);
}

ir_module *ptx_parse(const char *text, size_t len, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	if (len > UINT32_MAX - 1) {
		if (err)
			snprintf(err, errlen, "1:1: module too large");
		return NULL;
	}
	/* PTX from a fatbin carries trailing NULs: the text ends at the first of them. A NUL
	 * anywhere else (even in a comment) is an error: nodes are NUL-terminated strings. */
	while (len && text[len - 1] == 0)
		len--;
	const char *nul = memchr(text, 0, len);
	if (nul) {
		uint32_t line = 1;
		const char *ls = text;
		for (const char *q = text; q < nul; q++)
			if (*q == '\n') {
				line++;
				ls = q + 1;
			}
		if (err && errlen)
			snprintf(err, errlen, "%u:%u: unexpected NUL byte", line, (unsigned)(nul - ls) + 1);
		return NULL;
	}
	ir_module *m = ir_module_new();
	if (!m) {
		if (err)
			snprintf(err, errlen, "1:1: out of memory");
		return NULL;
	}
	/* The module owns a copy of the text: parsed nodes point into it. */
	const char *copy = ir_strndup(m, text, len);
	/* The IR of a module takes about IR_PER_TEXT_BYTE times its text. */
	ir_arena_expect(m, len * IR_PER_TEXT_BYTE);
	struct parser *ps = calloc(1, sizeof(*ps));
	if (!ps) {
		ir_module_free(m);
		return NULL;
	}
	ps->m = m;
	ps->err = err;
	ps->errlen = errlen;
	ps->mark = copy;
	ptx_lex_init(&ps->lx, copy, len);
	if (setjmp(ps->fail)) {
		free(ps->interned);
		free(ps->mods);
		free(ps->ops.v);
		free(ps);
		ir_module_free(m);
		return NULL;
	}
	ps->prev_end = copy;
	ptx_lex_next(&ps->lx, &ps->tok);
	if (ps->tok.kind == TK_ERROR)
		fail_at(ps, ps->tok.line, ps->tok.col, "%s", ps->lx.error);
	parse_module(ps);
	free(ps->interned);
	free(ps->mods);
	free(ps->ops.v);
	free(ps);
	return m;
}
