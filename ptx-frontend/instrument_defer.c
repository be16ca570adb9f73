/* Deferred sites (instrument.h, gp_inst_probe.deferred): in a kernel, an additive probe's sites
 * add their weight to a per-thread accumulator of their class (sites whose read context bytes
 * are equal), and every ret and exit branches to one flush that calls the probe once per class
 * with the accumulated count as its weight. docs/architecture.md says why that is exact. */
#include "ptx-frontend/instrument_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFER_MAX_CLASSES 64
#define DEFER_MAX_REGS 4   /* a probe's first classes count in registers, the rest in .local */

_Static_assert(CTX_WORDS <= 32, "site_words.set has a bit per context word");

struct deferred {
	const struct gp_inst_probe *p;
	size_t nclasses;
	struct site_words cls[DEFER_MAX_CLASSES];   /* each class's words, as its first site's */
};

void inst_words_set(struct site_words *sw, size_t off, uint32_t v)
{
	sw->w[off / 4] = v;
	sw->set |= 1u << (off / 4);
}

/* Bytes of context word i the probe reads, as a mask of the word. */
static uint32_t read_mask(const struct gp_inst_probe *p, unsigned i)
{
	uint32_t m = 0;
	for (unsigned b = 0; b < 4; b++) {
		unsigned off = 4 * i + b;
		if (p->ctx_key[off / 64] >> (off % 64) & 1)
			m |= 0xffu << (8 * b);
	}
	return m;
}

/* Two sites of one class: every context byte the probe reads is equal (thread ids aside, which
 * are the thread's at both). */
static bool same_class(const struct gp_inst_probe *p, const struct site_words *a,
		       const struct site_words *b)
{
	for (unsigned i = 0; i < CTX_WORDS; i++) {
		uint32_t m = read_mask(p, i);
		uint32_t x = a->set >> i & 1 ? a->w[i] & m : 0, y = b->set >> i & 1 ? b->w[i] & m : 0;
		if (x != y)
			return false;
	}
	return true;
}

/* The function's state for deferred probe p; NULL where p's sites keep their calls. */
struct deferred *inst_deferred_of(struct fn *fn, const struct gp_inst_probe *p)
{
	if (!p->deferred || !p->weighted || !fn->is_kernel || !fn->defer_ok)
		return NULL;
	for (size_t i = 0; i < fn->ndefers; i++)
		if (fn->defers[i].p == p)
			return &fn->defers[i];
	struct deferred *g = realloc(fn->defers, (fn->ndefers + 1) * sizeof(*g));
	if (!g)
		return NULL;   /* out of memory: calls, as without deferral */
	fn->defers = g;
	memset(&g[fn->ndefers], 0, sizeof(*g));
	g[fn->ndefers].p = p;
	return &g[fn->ndefers++];
}

/* Accumulator c of deferred probe d (index di of the function's): the first DEFER_MAX_REGS in
 * registers, the rest in a .local array (no stack frame for a probe of few classes). */
static void acc_load(struct inst_emit *e, const char *g, size_t di, size_t c, const char *to)
{
	if (c < DEFER_MAX_REGS)
		ie_insn(e, "%smov.u64 %s, %%__gp_a%zu_%zu", g, to, di, c);
	else
		ie_insn(e, "%sld.local.u64 %s, [__gp_acc%zu+%zu]", g, to, di, 8 * (c - DEFER_MAX_REGS));
}

static void acc_store(struct inst_emit *e, const char *g, size_t di, size_t c, const char *from)
{
	if (c < DEFER_MAX_REGS)
		ie_insn(e, "%smov.u64 %%__gp_a%zu_%zu, %s", g, di, c, from);
	else
		ie_insn(e, "%sst.local.u64 [__gp_acc%zu+%zu], %s", g, di, 8 * (c - DEFER_MAX_REGS), from);
}

/* Count a site of deferred probe d with words sw, weight w, before statement s (under the guard
 * of instruction guard, if any). False when d has no room for another class: the site then
 * calls its probe as it would without deferral. */
bool inst_defer_site(struct fn *fn, struct deferred *d, ir_stmt *s, const ir_insn *guard,
		       const struct site_words *sw, unsigned w)
{
	size_t c = 0;
	while (c < d->nclasses && !same_class(d->p, &d->cls[c], sw))
		c++;
	if (c == d->nclasses) {
		if (c == DEFER_MAX_CLASSES)
			return false;
		d->cls[d->nclasses++] = *sw;
	}
	size_t di = (size_t)(d - fn->defers);
	struct inst_emit e = inst_at(fn, s);
	const char *g = guard && guard->guard
		? ir_strfmt(fn->m, "@%s%s ", guard->guard_neg ? "!" : "", guard->guard) : "";
	if (c < DEFER_MAX_REGS) {
		ie_insn(&e, "%sadd.u64 %%__gp_a%zu_%zu, %%__gp_a%zu_%zu, %u", g, di, c, di, c, w);
	} else {
		acc_load(&e, g, di, c, "%__gp_d2");
		ie_insn(&e, "%sadd.u64 %%__gp_d2, %%__gp_d2, %u", g, w);
		acc_store(&e, g, di, c, "%__gp_d2");
	}
	fn->st->sites++;
	fn->st->deferred++;
	return true;
}

static size_t thread_off(enum gp_attach_kind k)
{
	return k == GP_ATTACH_MEM ? offsetof(struct gp_mem_ctx, thread)
	     : offsetof(struct gp_bb_ctx, thread);
}

/* The flush's context for the class whose index %__gp_s2 holds: each word the sites set and
 * the probe reads, chosen from the classes' constants; the thread's ids. */
static void fill_class(struct fn *fn, struct inst_emit *e, const struct deferred *d)
{
	const struct gp_inst_probe *p = d->p;
	for (unsigned i = 0; i < CTX_WORDS; i++) {
		if (!(d->cls[0].set >> i & 1) || !read_mask(p, i) || !inst_ctx_read(e, 4 * i, 1))
			continue;
		ie_insn(e, "mov.u32 %%__gp_s1, %u", d->cls[0].w[i]);
		for (size_t c = 1; c < d->nclasses; c++) {
			if (d->cls[c].w[i] == d->cls[0].w[i])
				continue;
			ie_insn(e, "setp.eq.u32 %%__gp_q1, %%__gp_s2, %zu", c);
			ie_insn(e, "selp.b32 %%__gp_s1, %u, %%__gp_s1, %%__gp_q1", d->cls[c].w[i]);
		}
		ie_insn(e, "st.local.u32 [__gp_ctx+%u], %%__gp_s1", 4 * i);
	}
	inst_fill_thread(fn, e, (unsigned)thread_off(p->attach));
}

/* Deferred probe di's flush: a loop over its classes (one call site, whatever their number),
 * each skipped when the thread counted none, else the probe's runs as weighted calls of at most
 * 2^31-1 runs each (the weight is 32 bits), the first of weight 1 where the probe's first run
 * may differ (gp_inst_probe.first_run). */
static void flush_probe(struct fn *fn, struct inst_emit *e, size_t di)
{
	const struct deferred *d = &fn->defers[di];
	const struct gp_inst_probe *p = d->p;
	const char *top = inst_new_label(fn), *next = inst_new_label(fn), *more = inst_new_label(fn);
	e->ctx_unread = p->ctx_unread;
	e->warp_sync = p->warp_sync;
	e->reconverge = p->reconverge;
	ie_insn(e, "mov.u32 %%__gp_s2, 0");
	ie_label(e, top);
	ie_insn(e, "mov.u64 %%__gp_d2, %%__gp_a%zu_0", di);
	for (size_t c = 1; c < d->nclasses && c < DEFER_MAX_REGS; c++) {
		ie_insn(e, "setp.eq.u32 %%__gp_q1, %%__gp_s2, %zu", c);
		ie_insn(e, "selp.b64 %%__gp_d2, %%__gp_a%zu_%zu, %%__gp_d2, %%__gp_q1", di, c);
	}
	if (d->nclasses > DEFER_MAX_REGS) {   /* the .local slot s2 - DEFER_MAX_REGS */
		const char *reg = inst_new_label(fn);
		ie_insn(e, "setp.lt.u32 %%__gp_q1, %%__gp_s2, %d", DEFER_MAX_REGS);
		ie_insn(e, "@%%__gp_q1 bra %s", reg);
		ie_insn(e, "mov.u64 %%__gp_d1, __gp_acc%zu", di);
		ie_insn(e, "mul.wide.u32 %%__gp_d2, %%__gp_s2, 8");
		ie_insn(e, "add.u64 %%__gp_d1, %%__gp_d1, %%__gp_d2");
		ie_insn(e, "ld.local.u64 %%__gp_d2, [%%__gp_d1+%d]", -8 * DEFER_MAX_REGS);
		ie_label(e, reg);
	}
	ie_insn(e, "setp.eq.u64 %%__gp_q1, %%__gp_d2, 0");
	ie_insn(e, "@%%__gp_q1 bra %s", next);
	if (p->first_run) {
		e->weight = 1;
		e->weight_reg = NULL;
		fill_class(fn, e, d);
		inst_call_probe(fn, e, p->func);
		fn->st->sites--;   /* the flush's calls are not sites */
		ie_insn(e, "sub.u64 %%__gp_d2, %%__gp_d2, 1");
		ie_insn(e, "setp.eq.u64 %%__gp_q1, %%__gp_d2, 0");
		ie_insn(e, "@%%__gp_q1 bra %s", next);
	}
	ie_label(e, more);
	ie_insn(e, "min.u64 %%__gp_d3, %%__gp_d2, 2147483647");
	ie_insn(e, "cvt.u32.u64 %%__gp_s3, %%__gp_d3");
	e->weight_reg = "%__gp_s3";
	fill_class(fn, e, d);
	inst_call_probe(fn, e, p->func);
	fn->st->sites--;
	e->weight_reg = NULL;
	ie_insn(e, "sub.u64 %%__gp_d2, %%__gp_d2, %%__gp_d3");
	ie_insn(e, "setp.ne.u64 %%__gp_q1, %%__gp_d2, 0");
	ie_insn(e, "@%%__gp_q1 bra %s", more);
	ie_label(e, next);
	ie_insn(e, "add.u32 %%__gp_s2, %%__gp_s2, 1");
	ie_insn(e, "setp.lt.u32 %%__gp_q1, %%__gp_s2, %zu", d->nclasses);
	ie_insn(e, "@%%__gp_q1 bra %s", top);
}

/* After every site of the kernel: the accumulators' declarations and zeroing at entry, every
 * ret and exit of the kernel turned into a branch to one flush at the end of the body, which
 * leaves with ret. */
void inst_finish_deferred(struct fn *fn)
{
	size_t used = 0;
	for (size_t di = 0; di < fn->ndefers; di++)
		used += fn->defers[di].nclasses;
	if (!used)
		return;
	struct inst_emit e = inst_at(fn, fn->f->first);
	for (size_t di = 0; di < fn->ndefers; di++) {
		size_t n = fn->defers[di].nclasses;
		if (n)
			ie_decl(&e, ".reg", ".b64", ir_strfmt(fn->m, "%%__gp_a%zu_", di),
				(int)(n < DEFER_MAX_REGS ? n : DEFER_MAX_REGS), 0, NULL);
		if (n > DEFER_MAX_REGS)
			ie_decl(&e, ".local", ".b8", ir_strfmt(fn->m, "__gp_acc%zu", di), -1, 8,
				ir_strfmt(fn->m, "[%zu]", 8 * (n - DEFER_MAX_REGS)));
	}
	/* zeroed before everything the sites put at the kernel's first statement */
	ir_stmt *first = fn->f->first;
	while (first && first->kind != IR_STMT_INSN && first->kind != IR_STMT_LABEL &&
	       first->kind != IR_STMT_BLOCK_OPEN)
		first = first->next;
	e = inst_at(fn, first);
	ie_insn(&e, "mov.u64 %%__gp_d2, 0");
	for (size_t di = 0; di < fn->ndefers; di++)
		for (size_t c = 0; c < fn->defers[di].nclasses; c++)
			acc_store(&e, "", di, c, "%__gp_d2");
	const char *flush = inst_new_label(fn);
	for (size_t i = 0; i < fn->n; i++) {
		ir_stmt *s = fn->stmts[i];
		if (s->kind != IR_STMT_INSN || !inst_is_leave(&s->insn))
			continue;
		e = inst_at(fn, s);
		if (s->insn.guard)
			ie_insn(&e, "@%s%s bra %s", s->insn.guard_neg ? "!" : "", s->insn.guard, flush);
		else
			ie_insn(&e, "bra %s", flush);
		ir_stmt_remove(fn->f, s);
	}
	e = inst_at(fn, NULL);
	ie_label(&e, flush);
	for (size_t di = 0; di < fn->ndefers; di++)
		if (fn->defers[di].nclasses)
			flush_probe(fn, &e, di);
	ie_insn(&e, "ret");
}

