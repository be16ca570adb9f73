/* The attach-point passes (instrument.h): find the sites of each probe in the selected functions
 * and splice in the code that fills the context and calls the probe. Sites are found on the
 * application's statements only (a snapshot taken before anything is inserted), so probes never
 * see each other's code. This file selects the functions, takes the snapshot and hands each
 * probe to its attach point's file (instrument_entry_exit.c, _mem.c, _barrier.c, _bb.c), whose
 * sites are built from instrument_site.c's pieces; then tidies the function
 * (instrument_defer.c's flush, instrument_reconverge.c, an unused context buffer). */
#include "ptx-frontend/instrument.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- selection ----------------------------------------------------------------------------- */

/* gp_instrument_glob: ptx-frontend/kernel_match.c (the one kernel-matching rule) */

static int on_kernels(enum gp_attach_kind k)
{
	return k == GP_ATTACH_KERNEL_ENTRY || k == GP_ATTACH_KERNEL_EXIT ||
	       k == GP_ATTACH_BLOCK_BEGIN || k == GP_ATTACH_BLOCK_END || k == GP_ATTACH_MEM ||
	       k == GP_ATTACH_BARRIER || k == GP_ATTACH_BASIC_BLOCK;
}

static int on_funcs(enum gp_attach_kind k)
{
	return k == GP_ATTACH_FUNC_ENTRY || k == GP_ATTACH_FUNC_EXIT;
}

static int ours(const ir_func *f)
{
	return f->name && !strncmp(f->name, "__gp", 4);
}

static int selects(const ir_func *f, const struct gp_inst_probe *p)
{
	if (!f->has_body || !f->name || ours(f))
		return 0;
	if (on_kernels(p->attach) ? !f->is_entry : on_funcs(p->attach) ? f->is_entry : 1)
		return 0;
	char *dem = demangle(f->name);
	int ok = gp_instrument_glob(p->glob, f->name, dem);
	if (ok && f->is_entry && p->selected)
		ok = p->selected(p->user, f->name, dem);
	free(dem);
	return ok;
}

int gp_instrument_matches(const ir_module *m, const struct gp_inst_probe *p)
{
	for (ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_FUNC && selects(&t->func, p))
			return 1;
	return 0;
}

/* ---- per-function state (struct fn: instrument_internal.h) ------------------------------- */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The registers and the context buffer, once per instrumented function. */
static void prepare(struct fn *fn, const unsigned *bend, size_t nbend)
{
	struct inst_emit e = inst_at(fn, fn->f->first);
	ie_decl(&e, ".reg", ".b64", "%__gp_d", 4, 0, NULL);
	ie_decl(&e, ".reg", ".b32", "%__gp_s", 4, 0, NULL);
	ie_decl(&e, ".reg", ".b32", "%__gp_wm", -1, 0, NULL);
	ie_decl(&e, ".reg", ".b32", "%__gp_wo", -1, 0, NULL);
	ie_decl(&e, ".reg", ".pred", "%__gp_q", 2, 0, NULL);
	ie_decl(&e, ".local", ".b8", "__gp_ctx", -1, 8, ir_strfmt(fn->m, "[%d]", CTX_BYTES));
	for (size_t i = 0; i < nbend; i++)
		ie_decl(&e, ".shared", ".b32", ir_strfmt(fn->m, "__gp_bend%u", bend[i]), -1, 4, NULL);
	fn->st->functions++;
}

static int instrument_one(struct fn *fn, const struct gp_inst_probe *p, unsigned k)
{
	switch (p->attach) {
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_FUNC_ENTRY:
		inst_site_entry(fn, p, k);
		return 0;
	case GP_ATTACH_BLOCK_END:
		inst_site_entry(fn, p, k);
		/* fallthrough */
	case GP_ATTACH_KERNEL_EXIT:
	case GP_ATTACH_FUNC_EXIT:
		inst_sites_leave(fn, p, k);
		return 0;
	case GP_ATTACH_MEM:
		return inst_sites_mem(fn, p);
	case GP_ATTACH_BARRIER:
		inst_sites_barrier(fn, p);
		return 0;
	case GP_ATTACH_BASIC_BLOCK:
		inst_sites_bb(fn, p);
		return 0;
	default:
		return 0;
	}
}

static bool names_sym(const ir_operand *o, const char *sym)
{
	if ((o->kind == IR_OPND_ADDR || o->kind == IR_OPND_SYMBOL) && o->name && !strcmp(o->name, sym))
		return true;
	for (unsigned i = 0; i < o->nelems; i++)
		if (names_sym(&o->elems[i], sym))
			return true;
	return false;
}

/* The context buffer's declaration, when no probe site of the function fills or passes it
 * (probes that read no context): ptxas reserves a declared .local array in the stack frame even
 * when nothing uses it (bench/overhead's memory counter: 128 bytes of frame in every kernel). */
static void drop_unused_ctx(ir_func *f)
{
	ir_stmt *decl = NULL;
	for (ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind == IR_STMT_DECL && s->generated && s->decl.name &&
		    !strcmp(s->decl.name, "__gp_ctx"))
			decl = s;
		if (s->kind == IR_STMT_INSN)
			for (unsigned i = 0; i < s->insn.nops; i++)
				if (names_sym(&s->insn.ops[i], "__gp_ctx"))
					return;
	}
	if (decl)
		ir_stmt_remove(f, decl);
}

static int instrument_func(ir_module *m, ir_func *f, const struct gp_inst_probe *p, size_t n,
			   unsigned *labels, struct gp_inst_stats *st, int defer_ok)
{
	unsigned *which = calloc(n + 1, sizeof(*which)), *bend = calloc(n + 1, sizeof(*bend));
	size_t nwhich = 0, nbend = 0;
	struct fn fn = {.m = m, .f = f, .hash = name_hash(f->name), .is_kernel = f->is_entry,
			.labels = labels, .st = st, .defer_ok = defer_ok && f->is_entry};
	int rc = -ENOMEM;
	if (!which || !bend)
		goto out;
	for (size_t k = 0; k < n; k++)
		if (selects(f, &p[k])) {
			which[nwhich++] = (unsigned)k;
			if (p[k].attach == GP_ATTACH_BLOCK_END)
				bend[nbend++] = (unsigned)k;
		}
	rc = 0;
	if (!nwhich)
		goto out;
	for (ir_stmt *s = f->first; s; s = s->next)
		fn.n++;
	fn.stmts = calloc(fn.n + 1, sizeof(*fn.stmts));
	fn.index = calloc(fn.n + 1, sizeof(*fn.index));
	rc = -ENOMEM;
	if (!fn.stmts || !fn.index)
		goto out;
	size_t i = 0;
	unsigned insn = 0;
	for (ir_stmt *s = f->first; s; s = s->next, i++) {
		fn.stmts[i] = s;
		fn.index[i] = s->kind == IR_STMT_INSN ? insn++ : insn;
		if (!fn.entry && (s->kind == IR_STMT_INSN || s->kind == IR_STMT_LABEL ||
				  s->kind == IR_STMT_BLOCK_OPEN))
			fn.entry = s;
	}
	prepare(&fn, bend, nbend);
	for (size_t w = 0; w < nwhich; w++)
		if ((rc = instrument_one(&fn, &p[which[w]], which[w])))
			goto out;
	inst_finish_deferred(&fn);
	inst_reuse_site_masks(f);
	inst_drop_syncs_before_return(f);
	drop_unused_ctx(f);
	rc = 0;
out:
	free(fn.defers);
	free(fn.stmts);
	free(fn.index);
	free(which);
	free(bend);
	return rc;
}

/* Whether a device function of m executes `exit`: a thread that leaves there does not pass its
 * kernel's flush of deferred sites. */
static bool callee_exits(const ir_module *m)
{
	for (const ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || t->func.is_entry || !t->func.has_body)
			continue;
		for (const ir_stmt *s = t->func.first; s; s = s->next)
			if (s->kind == IR_STMT_INSN && !strcmp(s->insn.opcode, "exit"))
				return true;
	}
	return false;
}

int gp_instrument_module(ir_module *m, const struct gp_inst_probe *p, size_t n,
			 struct gp_inst_stats *stats, char *err, size_t errlen)
{
	struct gp_inst_stats local = {0};
	struct gp_inst_stats *st = stats ? stats : &local;
	memset(st, 0, sizeof(*st));
	for (size_t k = 0; k < n; k++)
		if (!on_kernels(p[k].attach) && !on_funcs(p[k].attach)) {
			snprintf(err, errlen, "probe %s: attach point has no device sites", p[k].func);
			return -EINVAL;
		}
	unsigned labels = 0;
	int defer_ok = !callee_exits(m);
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC)
			continue;
		int rc = instrument_func(m, &t->func, p, n, &labels, st, defer_ok);
		if (rc) {
			snprintf(err, errlen, "instrumenting %s: out of memory", t->func.name);
			return rc;
		}
	}
	return 0;
}

void gp_instrument_hoist(ir_module *m, ir_top *after)
{
	ir_top *first_app = NULL;
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind == IR_TOP_FUNC && !ours(&t->func)) {
			first_app = t;
			break;
		}
		if (t == after)
			break;
	}
	if (!first_app || !after)
		return;
	ir_top *t = after->next;
	while (t) {
		ir_top *next = t->next;
		ir_top_remove(m, t);
		ir_top_insert_before(m, first_app, t);
		t = next;
	}
}
