/* IR to PTX text. A parsed node that is still as parsed (its fingerprint matches) is written
 * from its source text, so ptxas sees the module exactly as written (it embeds the PTX text in
 * the debug sections of modules with .loc). Any other node is printed canonically: one statement
 * per line, operands separated by ", ". The output buffer grows geometrically; no printf. */
#include "ptx-frontend/ptx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define outbuf ptx_outbuf

static void ob_grow(struct outbuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < need)
		cap *= 2;
	char *np = realloc(b->p, cap);
	if (!np) {
		fputs("gpuprobe: out of memory printing PTX\n", stderr);
		abort();
	}
	b->p = np;
	b->cap = cap;
}

static inline void ob_putn(struct outbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n + 1)
		ob_grow(b, n + 1);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void ob_puts(struct outbuf *b, const char *s) { ob_putn(b, s, strlen(s)); }

static inline void ob_putc(struct outbuf *b, char c)
{
	if (b->cap - b->len < 2)
		ob_grow(b, 2);
	b->p[b->len++] = c;
}

static void ob_putint(struct outbuf *b, int64_t v)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[n++] = '-';
	if (b->cap - b->len < (size_t)n + 1)
		ob_grow(b, (size_t)n + 1);
	while (n)
		b->p[b->len++] = tmp[--n];
}

static void print_operand(struct outbuf *b, const ir_operand *o);

static void print_elems(struct outbuf *b, const ir_operand *o, const char *sep)
{
	for (unsigned i = 0; i < o->nelems; i++) {
		if (i)
			ob_puts(b, sep);
		print_operand(b, &o->elems[i]);
	}
}

static void print_operand(struct outbuf *b, const ir_operand *o)
{
	switch (o->kind) {
	case IR_OPND_REG:
		if (o->neg)
			ob_putc(b, '!');
		ob_puts(b, o->name ? o->name : "");
		break;
	case IR_OPND_SYMBOL:
		if (o->neg)
			ob_putc(b, '!');
		ob_puts(b, o->name ? o->name : "");
		break;
	case IR_OPND_INT:
		if (o->text)
			ob_puts(b, o->text);
		else
			ob_putint(b, o->ival);
		break;
	case IR_OPND_FLOAT:
		ob_puts(b, o->text ? o->text : "0f00000000");
		break;
	case IR_OPND_ADDR:
		ob_putc(b, '[');
		if (o->name) {
			ob_puts(b, o->name);
			if (o->nelems) {
				for (unsigned i = 0; i < o->nelems; i++) {
					ob_puts(b, ", ");
					print_operand(b, &o->elems[i]);
				}
			} else if (o->ival) {
				ob_putc(b, '+');
				ob_putint(b, o->ival);
			}
		} else {
			ob_putint(b, o->ival);
		}
		ob_putc(b, ']');
		break;
	case IR_OPND_VEC:
		ob_putc(b, '{');
		print_elems(b, o, ", ");
		ob_putc(b, '}');
		break;
	case IR_OPND_LIST:
		ob_putc(b, '(');
		print_elems(b, o, ", ");
		ob_putc(b, ')');
		break;
	case IR_OPND_PAIR:
		print_elems(b, o, "|");
		break;
	case IR_OPND_RAW:
		ob_puts(b, o->name ? o->name : "");
		break;
	}
}

static void print_insn(struct outbuf *b, const ir_insn *in)
{
	ob_putc(b, '\t');
	if (in->guard) {
		ob_putc(b, '@');
		if (in->guard_neg)
			ob_putc(b, '!');
		ob_puts(b, in->guard);
		ob_putc(b, ' ');
	}
	ob_puts(b, in->opcode);
	for (unsigned i = 0; i < in->nmods; i++)
		ob_puts(b, in->mods[i]);
	for (unsigned i = 0; i < in->nops; i++) {
		ob_puts(b, i ? ", " : " \t");
		print_operand(b, &in->ops[i]);
	}
	ob_puts(b, ";\n");
}

/* One declaration without its trailing ';'. */
static void print_decl(struct outbuf *b, const ir_decl *d)
{
	bool sp = false;
#define WORD(s)                          \
	do {                             \
		if (sp)                  \
			ob_putc(b, ' '); \
		ob_puts(b, s);           \
		sp = true;               \
	} while (0)
	if (d->linkage)
		WORD(d->linkage);
	if (d->space)
		WORD(d->space);
	for (unsigned i = 0; i < d->nattrs; i++)
		WORD(d->attrs[i]);
	if (d->align) {
		WORD(".align ");
		ob_putint(b, d->align);
	}
	if (d->vec)
		WORD(d->vec);
	if (d->type)
		WORD(d->type);
	if (d->ptr_attrs)
		WORD(d->ptr_attrs);
#undef WORD
	if (d->name) {
		ob_puts(b, sp ? " \t" : "");
		ob_puts(b, d->name);
	}
	if (d->count > 0 && d->name) {
		ob_putc(b, '<');
		ob_putint(b, d->count);
		ob_putc(b, '>');
	}
	if (d->dims)
		ob_puts(b, d->dims);
	if (d->init) {
		ob_puts(b, " = ");
		ob_puts(b, d->init);
	}
}

void ptx_print_stmt_canonical(struct outbuf *b, const ir_stmt *s)
{
	switch (s->kind) {
	case IR_STMT_INSN:
		print_insn(b, &s->insn);
		break;
	case IR_STMT_LABEL:
		ob_puts(b, s->text);
		ob_puts(b, ":\n");
		break;
	case IR_STMT_DECL:
		ob_putc(b, '\t');
		print_decl(b, &s->decl);
		ob_puts(b, ";\n");
		break;
	case IR_STMT_DIRECTIVE:
		ob_putc(b, '\t');
		ob_puts(b, s->text);
		ob_putc(b, '\n');
		break;
	case IR_STMT_BLOCK_OPEN:
		ob_puts(b, "\t{\n");
		break;
	case IR_STMT_BLOCK_CLOSE:
		ob_puts(b, "\t}\n");
		break;
	}
}

static void print_params(struct outbuf *b, const ir_decl *p, unsigned n)
{
	ob_puts(b, "(\n");
	for (unsigned i = 0; i < n; i++) {
		ob_putc(b, '\t');
		print_decl(b, &p[i]);
		ob_puts(b, i + 1 < n ? ",\n" : "\n");
	}
	ob_putc(b, ')');
}

static void print_func(struct outbuf *b, const ir_func *f)
{
	if (f->linkage) {
		ob_puts(b, f->linkage);
		ob_putc(b, ' ');
	}
	ob_puts(b, f->is_entry ? ".entry " : ".func ");
	if (f->has_rets || f->nrets) {
		print_params(b, f->rets, f->nrets);
		ob_putc(b, ' ');
	}
	ob_puts(b, f->name);
	if (f->has_params || f->nparams)
		print_params(b, f->params, f->nparams);
	ob_putc(b, '\n');
	for (unsigned i = 0; i < f->nperf; i++) {
		ob_puts(b, f->perf[i]);
		ob_putc(b, '\n');
	}
	ob_puts(b, f->has_body ? "{\n" : ";\n");
}

void ptx_print_top_canonical(struct outbuf *b, const ir_top *t)
{
	switch (t->kind) {
	case IR_TOP_DIRECTIVE:
		ob_puts(b, t->text);
		ob_putc(b, '\n');
		break;
	case IR_TOP_DECL:
		print_decl(b, &t->decl);
		ob_puts(b, ";\n");
		break;
	case IR_TOP_FUNC:
		print_func(b, &t->func);
		break;
	}
}

void ptx_ob_free(struct outbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* Fingerprints: a hash over every field a node prints from, strings by address. A parsed node
 * whose fields a pass has changed (a new operand, another string, one more parameter) no longer
 * matches and is printed from its fields. Cheap: no formatting, no string reads. */
#define MIX(h, v) ((h) = (((h) << 7 | (h) >> 57) ^ (uint64_t)(v)) + 0x9e3779b97f4a7c15ull)
#define MIXP(h, p) MIX(h, (uintptr_t)(p))

static uint64_t fp_operand(uint64_t h, const ir_operand *o)
{
	MIX(h, (uint64_t)o->kind | (uint64_t)o->neg << 8 | (uint64_t)o->nelems << 32);
	MIXP(h, o->name);
	MIXP(h, o->text);
	MIX(h, o->ival);
	if (o->nelems) {
		MIXP(h, o->elems);
		for (unsigned i = 0; i < o->nelems; i++)
			h = fp_operand(h, &o->elems[i]);
	}
	return h;
}

static uint64_t fp_decl(uint64_t h, const ir_decl *d)
{
	MIXP(h, d->linkage);
	MIXP(h, d->space);
	MIXP(h, d->attrs);
	MIX(h, d->nattrs);
	for (unsigned i = 0; i < d->nattrs; i++)
		MIXP(h, d->attrs[i]);
	MIX(h, d->align);
	MIXP(h, d->vec);
	MIXP(h, d->type);
	MIXP(h, d->name);
	MIX(h, d->count);
	MIXP(h, d->dims);
	MIXP(h, d->init);
	MIXP(h, d->ptr_attrs);
	return h;
}

static uint32_t fold(uint64_t h)
{
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t ptx_stmt_fingerprint(const ir_stmt *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	MIX(h, s->kind);
	switch (s->kind) {
	case IR_STMT_INSN: {
		const ir_insn *in = &s->insn;
		MIXP(h, in->opcode);
		MIXP(h, in->mods);
		MIX(h, in->nmods);
		for (unsigned i = 0; i < in->nmods; i++)
			MIXP(h, in->mods[i]);
		MIXP(h, in->guard);
		MIX(h, in->guard_neg);
		MIXP(h, in->ops);
		MIX(h, in->nops);
		for (unsigned i = 0; i < in->nops; i++)
			h = fp_operand(h, &in->ops[i]);
		break;
	}
	case IR_STMT_DECL:
		h = fp_decl(h, &s->decl);
		break;
	case IR_STMT_LABEL:
	case IR_STMT_DIRECTIVE:
		MIXP(h, s->text);
		break;
	case IR_STMT_BLOCK_OPEN:
	case IR_STMT_BLOCK_CLOSE:
		break;
	}
	return fold(h);
}

uint32_t ptx_top_fingerprint(const ir_top *t)
{
	uint64_t h = 0xcbf29ce484222325ull;
	MIX(h, t->kind);
	switch (t->kind) {
	case IR_TOP_DIRECTIVE:
		MIXP(h, t->text);
		break;
	case IR_TOP_DECL:
		h = fp_decl(h, &t->decl);
		break;
	case IR_TOP_FUNC: {
		const ir_func *f = &t->func;
		MIX(h, f->is_entry);
		MIXP(h, f->linkage);
		MIXP(h, f->name);
		MIXP(h, f->rets);
		MIX(h, f->nrets);
		MIX(h, f->has_rets);
		for (unsigned i = 0; i < f->nrets; i++)
			h = fp_decl(h, &f->rets[i]);
		MIXP(h, f->params);
		MIX(h, f->nparams);
		MIX(h, f->has_params);
		for (unsigned i = 0; i < f->nparams; i++)
			h = fp_decl(h, &f->params[i]);
		MIXP(h, f->perf);
		MIX(h, f->nperf);
		for (unsigned i = 0; i < f->nperf; i++)
			MIXP(h, f->perf[i]);
		MIX(h, f->has_body);
		break;
	}
	}
	return fold(h);
}

/* Print one node: from its source text while it is as parsed (verbatim mode), else from its
 * fields. */
#define EMIT_NODE(b, node, canonical_fn, fingerprint_fn, verbatim)                      \
	do {                                                                            \
		if ((verbatim) && (node)->src && fingerprint_fn(node) == (node)->src_hash) \
			ob_putn((b), (node)->src, (node)->src_len);                     \
		else                                                                    \
			canonical_fn((b), (node));                                      \
	} while (0)

static char *print_module(const ir_module *m, size_t *len, bool verbatim)
{
	struct outbuf b = {0};
	ob_grow(&b, 1 << 16);
	for (const ir_top *t = m->first; t; t = t->next) {
		EMIT_NODE(&b, t, ptx_print_top_canonical, ptx_top_fingerprint, verbatim);
		if (t->kind != IR_TOP_FUNC || !t->func.has_body)
			continue;
		const ir_func *f = &t->func;
		for (const ir_stmt *s = f->first; s; s = s->next)
			EMIT_NODE(&b, s, ptx_print_stmt_canonical, ptx_stmt_fingerprint, verbatim);
		if (verbatim && f->end_src)
			ob_putn(&b, f->end_src, f->end_len);
		else
			ob_puts(&b, "}\n");
	}
	if (verbatim && m->tail_src)
		ob_putn(&b, m->tail_src, m->tail_len);
	b.p[b.len] = 0;
	if (len)
		*len = b.len;
	return b.p;
}

char *ptx_print(const ir_module *m, size_t *len) { return print_module(m, len, true); }

char *ptx_print_canonical(const ir_module *m, size_t *len) { return print_module(m, len, false); }
