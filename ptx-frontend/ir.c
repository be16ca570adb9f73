/* IR construction and editing: the arena, node constructors and list surgery. */
#include "ptx-frontend/ir.h"
#include "ptx-frontend/ptx_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Chunks grow geometrically; a node never moves once allocated, so pointers stay valid. */
struct ir_chunk {
	struct ir_chunk *next;
	size_t used, cap;
	size_t mapped;          /* bytes mmap'd for this chunk, 0 when it came from malloc */
	max_align_t data[];
};

struct ir_arena {
	struct ir_chunk *head;
	size_t next_cap;
};

/* Big chunks (the IR of a large module) are mapped directly, 2 MiB aligned, and backed by
 * transparent huge pages where the kernel offers them on request: one fault per 2 MiB instead of
 * 512, and the memory goes back to the system when the module is freed. From 2 MiB: the chunk a
 * 200 KB module's instrumentation reaches (bench/instrument_time: 888 -> 680 page faults on
 * bench/overhead's module with the memory counter). Prefaulting smaller chunks as well
 * (MADV_POPULATE_WRITE) was measured too: no gain in a cold process, slower when warm. */
#define HUGE_CHUNK ((size_t)2 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
/* *bytes: asked, then given (a mapped chunk uses its whole rounded mapping). */
static struct ir_chunk *chunk_alloc(size_t *bytes_io)
{
	size_t bytes = *bytes_io;
	if (bytes < HUGE_CHUNK) {
		struct ir_chunk *c = malloc(bytes);
		if (c)
			c->mapped = 0;
		return c;
	}
	size_t len = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* trim to a 2 MiB aligned start */
	char *aligned = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	size_t tail = (size_t)(p + len + HUGE_PAGE - (aligned + len));
	if (tail)
		munmap(aligned + len, tail);
	madvise(aligned, len, MADV_HUGEPAGE);
	struct ir_chunk *c = (struct ir_chunk *)aligned;
	c->mapped = len;
	*bytes_io = len;
	return c;
}

static void chunk_free(struct ir_chunk *c)
{
	if (c->mapped)
		munmap(c, c->mapped);
	else
		free(c);
}

/* align is 1 for strings (packed back to back) and sizeof(max_align_t) for nodes. */
static void *arena_alloc_aligned(struct ir_arena *a, size_t size, size_t align)
{
	struct ir_chunk *c = a->head;
	size_t off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off > c->cap || c->cap - off < size) {
		size_t cap = a->next_cap > size ? a->next_cap : size;
		size_t bytes = sizeof(*c) + cap;
		c = chunk_alloc(&bytes);
		if (!c) {
			fputs("gpuprobe: out of memory building the IR\n", stderr);
			abort();
		}
		c->next = a->head;
		c->used = 0;
		c->cap = bytes - sizeof(*c);
		a->head = c;
		if (a->next_cap < (64u << 20))
			a->next_cap *= 2;
		off = 0;
	}
	void *p = (char *)c->data + off;
	c->used = off + size;
	return p;
}

static void *arena_alloc(struct ir_arena *a, size_t size)
{
	void *p = arena_alloc_aligned(a, size, sizeof(max_align_t));
	memset(p, 0, size);
	return p;
}

ir_module *ir_module_new(void)
{
	ir_module *m = calloc(1, sizeof(*m));
	struct ir_arena *a = calloc(1, sizeof(*a));
	if (!m || !a) {
		free(m);
		free(a);
		return NULL;
	}
	a->next_cap = 64 << 10;
	m->arena = a;
	return m;
}

void ir_module_free(ir_module *m)
{
	if (!m)
		return;
	struct ir_chunk *c = m->arena->head;
	while (c) {
		struct ir_chunk *n = c->next;
		chunk_free(c);
		c = n;
	}
	free(m->arena);
	free(m);
}

void *ir_alloc(ir_module *m, size_t size) { return arena_alloc(m->arena, size); }

void ir_arena_expect(ir_module *m, size_t bytes)
{
	if (bytes > (64u << 20))
		bytes = 64u << 20;   /* the cap of the geometric growth: address space, not memory */
	if (m->arena->next_cap < bytes)
		m->arena->next_cap = bytes;
}

const char *ir_strndup(ir_module *m, const char *s, size_t n)
{
	char *p = arena_alloc_aligned(m->arena, n + 1, 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

const char *ir_strdup(ir_module *m, const char *s) { return ir_strndup(m, s, strlen(s)); }

/* One vsnprintf into a stack buffer for the common short name; a second pass only for long
 * text. Strings need no alignment nor zeroing (they are packed like ir_strndup's). */
const char *ir_strfmt(ir_module *m, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof(buf))
		return ir_strndup(m, buf, (size_t)n);
	char *p = arena_alloc_aligned(m->arena, (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

ir_top *ir_top_new(ir_module *m, enum ir_top_kind kind)
{
	ir_top *t = ir_alloc(m, sizeof(*t));
	t->kind = kind;
	return t;
}

void ir_top_insert_before(ir_module *m, ir_top *pos, ir_top *t)
{
	if (!pos) {
		t->prev = m->last;
		t->next = NULL;
		if (m->last)
			m->last->next = t;
		else
			m->first = t;
		m->last = t;
		return;
	}
	t->next = pos;
	t->prev = pos->prev;
	if (pos->prev)
		pos->prev->next = t;
	else
		m->first = t;
	pos->prev = t;
}

void ir_top_append(ir_module *m, ir_top *t) { ir_top_insert_before(m, NULL, t); }

ir_top *ir_module_first_func(const ir_module *m)
{
	for (ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_FUNC)
			return t;
	return NULL;
}

ir_func *ir_module_find_func(const ir_module *m, const char *name)
{
	ir_func *decl = NULL;
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || strcmp(t->func.name, name))
			continue;
		if (t->func.has_body)
			return &t->func;
		decl = &t->func;
	}
	return decl;
}

ir_stmt *ir_stmt_new(ir_module *m, enum ir_stmt_kind kind)
{
	ir_stmt *s = ir_alloc(m, sizeof(*s));
	s->kind = kind;
	return s;
}

void ir_stmt_insert_before(ir_func *f, ir_stmt *pos, ir_stmt *s)
{
	if (!pos) {
		s->prev = f->last;
		s->next = NULL;
		if (f->last)
			f->last->next = s;
		else
			f->first = s;
		f->last = s;
		return;
	}
	s->next = pos;
	s->prev = pos->prev;
	if (pos->prev)
		pos->prev->next = s;
	else
		f->first = s;
	pos->prev = s;
}

void ir_stmt_append(ir_func *f, ir_stmt *s) { ir_stmt_insert_before(f, NULL, s); }

void ir_stmt_insert_after(ir_func *f, ir_stmt *pos, ir_stmt *s)
{
	ir_stmt_insert_before(f, pos ? pos->next : f->first, s);
}

void ir_stmt_remove(ir_func *f, ir_stmt *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		f->first = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		f->last = s->prev;
	s->prev = s->next = NULL;
}

ir_operand ir_reg(ir_module *m, const char *name)
{
	return (ir_operand){.kind = IR_OPND_REG, .name = ir_strdup(m, name)};
}

ir_operand ir_sym(ir_module *m, const char *name)
{
	return (ir_operand){.kind = IR_OPND_SYMBOL, .name = ir_strdup(m, name)};
}

ir_operand ir_int(int64_t v) { return (ir_operand){.kind = IR_OPND_INT, .ival = v}; }

ir_operand ir_addr(ir_module *m, const char *base, int64_t offset)
{
	return (ir_operand){.kind = IR_OPND_ADDR, .name = base ? ir_strdup(m, base) : NULL, .ival = offset};
}

/* Split ".global.u32" into ".global", ".u32". */
static void split_mods(ir_module *m, ir_insn *in, const char *mods)
{
	unsigned n = 0;
	for (const char *p = mods; *p; p++)
		n += *p == '.';
	in->mods = ir_alloc(m, (n ? n : 1) * sizeof(*in->mods));
	const char *p = mods;
	while (*p == '.') {
		const char *e = strchr(p + 1, '.');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		in->mods[in->nmods++] = ir_strndup(m, p, len);
		p += len;
	}
}

ir_stmt *ir_insn_new(ir_module *m, const char *opcode, const char *mods, unsigned nops,
		     const ir_operand *ops)
{
	ir_stmt *s = ir_stmt_new(m, IR_STMT_INSN);
	s->generated = true;
	s->insn.opcode = ir_strdup(m, opcode);
	split_mods(m, &s->insn, mods ? mods : "");
	s->insn.nops = nops;
	s->insn.ops = ir_alloc(m, (nops ? nops : 1) * sizeof(ir_operand));
	if (nops)
		memcpy(s->insn.ops, ops, nops * sizeof(ir_operand));
	s->insn.info = ir_insn_info_for(&s->insn);
	return s;
}

ir_stmt *ir_label_new(ir_module *m, const char *name)
{
	ir_stmt *s = ir_stmt_new(m, IR_STMT_LABEL);
	s->generated = true;
	s->text = ir_strdup(m, name);
	return s;
}

ir_stmt *ir_reg_decl_new(ir_module *m, const char *type, const char *name, int count)
{
	ir_stmt *s = ir_stmt_new(m, IR_STMT_DECL);
	s->generated = true;
	s->decl.space = ".reg";
	s->decl.type = ir_strdup(m, type);
	s->decl.name = ir_strdup(m, name);
	s->decl.count = count;
	return s;
}

unsigned ir_func_required_cluster(const ir_func *f)
{
	for (unsigned i = 0; i < f->nperf; i++) {
		unsigned x = 1, y = 1, z = 1;
		if (!strncmp(f->perf[i], ".reqnctapercluster", 18) &&
		    sscanf(f->perf[i] + 18, " %u , %u , %u", &x, &y, &z) >= 1)
			return x * y * z;
	}
	return 1;
}

bool ir_insn_has_mod(const ir_insn *insn, const char *mod)
{
	for (unsigned i = 0; i < insn->nmods; i++)
		if (!strcmp(insn->mods[i], mod))
			return true;
	return false;
}

void ir_top_remove(ir_module *m, ir_top *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		m->first = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		m->last = t->prev;
	t->prev = t->next = NULL;
}
