/* The attach-point passes (instrument.h): find the sites of each probe in the selected functions
 * and splice in the code that fills the context and calls the probe. Sites are found on the
 * application's statements only (a snapshot taken before anything is inserted), so probes never
 * see each other's code. */
#include "ptx-frontend/instrument.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <errno.h>
#include <fnmatch.h>
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

const char *inst_new_label(struct fn *fn)
{
	return ir_strfmt(fn->m, "__gp_L%u", (*fn->labels)++);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Width in bits of a register from the function's .reg declarations; 64 when unknown. */
static unsigned reg_bits(const ir_func *f, const char *name)
{
	for (ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind != IR_STMT_DECL || !s->decl.space || strcmp(s->decl.space, ".reg") ||
		    !s->decl.name || !s->decl.type)
			continue;
		const ir_decl *d = &s->decl;
		size_t len = strlen(d->name);
		int match;
		if (d->count > 0) {
			const char *rest = name + len;
			match = !strncmp(name, d->name, len) && *rest;
			for (const char *c = rest; match && *c; c++)
				match = *c >= '0' && *c <= '9';
			match = match && (unsigned long)atol(rest) < (unsigned long)d->count;
		} else {
			match = !strcmp(name, d->name);
		}
		if (!match)
			continue;
		const char *t = d->type;
		if (!strcmp(t, ".pred"))
			return 1;
		int bits = atoi(t + 2);
		return bits > 0 ? (unsigned)bits : 64;
	}
	return 64;
}

/* Bytes of a kernel parameter declaration (type size times dims) and its alignment. */
static size_t param_bytes(const ir_decl *d, size_t *align)
{
	size_t sz = d->type && d->type[0] ? (size_t)atoi(d->type + 2) / 8 : 0;
	if (!sz)
		sz = 1;
	*align = d->align ? d->align : sz;
	if (d->dims)
		for (const char *p = strchr(d->dims, '['); p; p = strchr(p + 1, '['))
			sz *= (size_t)strtoul(p + 1, NULL, 10);
	return sz;
}

static uint32_t params_size(const ir_func *f)
{
	size_t off = 0;
	for (unsigned i = 0; i < f->nparams; i++) {
		size_t al;
		size_t sz = param_bytes(&f->params[i], &al);
		if (al)
			off = (off + al - 1) / al * al;
		off += sz;
	}
	return (uint32_t)off;
}

struct inst_emit inst_at(struct fn *fn, ir_stmt *pos)
{
	return (struct inst_emit){.m = fn->m, .f = fn->f, .pos = pos};
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

/* Whether the probe may read the n 4-byte words of the context at byte off. */
int inst_ctx_read(const struct inst_emit *e, unsigned off, unsigned n)
{
	return off / 4 + n > 64 || ((e->ctx_unread >> (off / 4)) & ((1ull << n) - 1)) != ((1ull << n) - 1);
}

static void st32(struct inst_emit *e, unsigned off, const char *src)
{
	if (!inst_ctx_read(e, off, 1))
		return;
	ie_insn(e, "mov.u32 %%__gp_s0, %s", src);
	ie_insn(e, "st.local.u32 [__gp_ctx+%u], %%__gp_s0", off);
}

void inst_st32i(struct inst_emit *e, unsigned off, uint32_t v)
{
	if (!inst_ctx_read(e, off, 1))
		return;
	ie_insn(e, "mov.u32 %%__gp_s0, %u", v);
	ie_insn(e, "st.local.u32 [__gp_ctx+%u], %%__gp_s0", off);
}

static void st64(struct inst_emit *e, unsigned off, const char *src)
{
	if (!inst_ctx_read(e, off, 2))
		return;
	ie_insn(e, "mov.u64 %%__gp_d1, %s", src);
	ie_insn(e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1", off);
}

static void fill_dim3(struct inst_emit *e, unsigned off, const char *sreg)
{
	static const char xyz[] = "xyz";
	for (int i = 0; i < 3; i++)
		st32(e, off + 4u * i, ir_strfmt(e->m, "%s.%c", sreg, xyz[i]));
}

void inst_fill_thread(struct fn *fn, struct inst_emit *e, unsigned off)
{
	fill_dim3(e, off + offsetof(struct gp_thread_ids, block_idx), "%ctaid");
	fill_dim3(e, off + offsetof(struct gp_thread_ids, thread_idx), "%tid");
	st32(e, off + offsetof(struct gp_thread_ids, sm_id), "%smid");
	st32(e, off + offsetof(struct gp_thread_ids, warp_id), "%warpid");
	st32(e, off + offsetof(struct gp_thread_ids, lane_id), "%laneid");
	inst_st32i(e, off + offsetof(struct gp_thread_ids, kernel_hash), fn->is_kernel ? fn->hash : 0);
}

void inst_call_probe(struct fn *fn, struct inst_emit *e, const char *func)
{
	if (e->ctx_unread == ~0ull) {
		ie_insn(e, "mov.u64 %%__gp_d0, 0");   /* the probe reads no context */
	} else {
		ie_insn(e, "mov.u64 %%__gp_d0, __gp_ctx");
		ie_insn(e, "cvta.local.u64 %%__gp_d0, %%__gp_d0");
	}
	/* A site of a probe that can branch reconverges the lanes that entered it before the
	 * application's next instruction: map code branches (a hash insert, a spin on a busy slot),
	 * and independent thread scheduling need not bring the lanes together again by itself. Application code after an entry site may hold an aligned
	 * barrier (bar.sync is barrier.sync.aligned: the first lanes of a warp to arrive mark the
	 * whole warp's arrival), so a warp left split by the probe let the other warps of fft-cuda's
	 * blocks pass __syncthreads before the lane that inserted the map's key had written its
	 * shared-memory transpose: one block of results wrong per insert (H100, 2026-11-25).
	 * The mask is captured before the call; reuse_site_masks may drop the capture. A
	 * straight-line probe needs neither: its lanes leave as they came, and a bar.warp.sync after
	 * each of CUB's onesweep kernel's 360 out-of-line calls made ptxas fail (C7600). */
	bool sync = e->warp_sync || e->reconverge;
	if (sync)
		ie_insn(e, "activemask.b32 %%__gp_wm");
	ie_block(e, 1);
	ie_decl(e, ".param", ".b64", "__gp_arg", -1, 0, NULL);
	ie_decl(e, ".param", ".b64", "__gp_ret", -1, 0, NULL);
	ie_insn(e, "st.param.b64 [__gp_arg], %%__gp_d0");
	const char *wt = "";
	if (e->weight_reg || e->weight) {
		/* the runs this call stands for (gp_inst_probe.weighted), or a flush's accumulated
		 * count in a register (deferred sites) */
		ie_decl(e, ".param", ".b32", "__gp_wt", -1, 0, NULL);
		if (e->weight_reg)
			ie_insn(e, "st.param.b32 [__gp_wt], %s", e->weight_reg);
		else
			ie_insn(e, "st.param.b32 [__gp_wt], %u", e->weight);
		wt = ", __gp_wt";
	}
	if (e->warp_sync) {   /* the probe's warp helpers match over this mask (gp_lower_opts) */
		ie_decl(e, ".param", ".b32", "__gp_warg", -1, 0, NULL);
		ie_insn(e, "st.param.b32 [__gp_warg], %%__gp_wm");
		ie_insn(e, "call (__gp_ret), %s, (__gp_arg, __gp_warg%s)", func, wt);
	} else {
		ie_insn(e, "call (__gp_ret), %s, (__gp_arg%s)", func, wt);
	}
	ie_block(e, 0);
	if (sync)
		ie_insn(e, "bar.warp.sync %%__gp_wm");
	fn->st->sites++;
}

/* A site that runs its probe on some lanes only (a guarded instruction's, thread 0's, the
 * block's last thread's) brackets the branch around it: the lanes there before it
 * (%__gp_wo, kept apart from the probe's own %__gp_wm) meet again after it, for the reason
 * call_probe gives. */
static void outer_open(struct inst_emit *e)
{
	if (e->warp_sync || e->reconverge)
		ie_insn(e, "activemask.b32 %%__gp_wo");
}

static void outer_close(struct inst_emit *e)
{
	if (e->warp_sync || e->reconverge)
		ie_insn(e, "bar.warp.sync %%__gp_wo");
}

/* Skip what follows when the instruction's guard is false; returns the label to place after. */
static const char *guard_skip(struct fn *fn, struct inst_emit *e, const ir_insn *in)
{
	if (!in->guard)
		return NULL;
	const char *l = inst_new_label(fn);
	outer_open(e);
	ie_insn(e, "@%s%s bra %s", in->guard_neg ? "" : "!", in->guard, l);
	return l;
}

static void end_skip(struct inst_emit *e, const char *l)
{
	if (l) {
		ie_label(e, l);
		outer_close(e);
	}
}

/* %__gp_q0 = (this thread is not thread (0,0,0)). */
static void not_thread0(struct inst_emit *e)
{
	ie_insn(e, "mov.u32 %%__gp_s0, %%tid.x");
	ie_insn(e, "mov.u32 %%__gp_s1, %%tid.y");
	ie_insn(e, "or.b32 %%__gp_s0, %%__gp_s0, %%__gp_s1");
	ie_insn(e, "mov.u32 %%__gp_s1, %%tid.z");
	ie_insn(e, "or.b32 %%__gp_s0, %%__gp_s0, %%__gp_s1");
	ie_insn(e, "setp.ne.u32 %%__gp_q0, %%__gp_s0, 0");
}

/* PTX ISA >= 7.7 (cvta.param) */
static int has_cvta_param(const ir_module *m)
{
	unsigned maj = 0, min = 0;
	return m->version && sscanf(m->version, "%u.%u", &maj, &min) == 2 &&
	       (maj > 7 || (maj == 7 && min >= 7));
}

/* ctx->params: the generic address of the kernel's parameter buffer (its first parameter's
 * address, cvta.param, PTX 7.7+); 0 for device functions, kernels without parameters and older
 * PTX. Only filled when the probe reads it (ctx_read). */
static void fill_params(struct fn *fn, struct inst_emit *e, unsigned off)
{
	const ir_func *f = fn->f;
	if (!f->is_entry || !f->nparams || !f->params[0].name || !has_cvta_param(e->m)) {
		st64(e, off, "0");
		return;
	}
	if (!inst_ctx_read(e, off, 2))
		return;
	ie_insn(e, "mov.u64 %%__gp_d1, %s", f->params[0].name);
	ie_insn(e, "cvta.param.u64 %%__gp_d1, %%__gp_d1");
	ie_insn(e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1", off);
}

static void kernel_ctx_call(struct fn *fn, struct inst_emit *e, const char *func)
{
	fill_params(fn, e, offsetof(struct gp_kernel_ctx, params));
	inst_st32i(e, offsetof(struct gp_kernel_ctx, params_size), params_size(fn->f));
	fill_dim3(e, offsetof(struct gp_kernel_ctx, grid_dim), "%nctaid");
	fill_dim3(e, offsetof(struct gp_kernel_ctx, block_dim), "%ntid");
	inst_fill_thread(fn, e, offsetof(struct gp_kernel_ctx, thread));
	st64(e, offsetof(struct gp_kernel_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, e, func);
}

static void block_ctx_call(struct fn *fn, struct inst_emit *e, const char *func)
{
	fill_dim3(e, offsetof(struct gp_block_ctx, grid_dim), "%nctaid");
	fill_dim3(e, offsetof(struct gp_block_ctx, block_dim), "%ntid");
	inst_fill_thread(fn, e, offsetof(struct gp_block_ctx, thread));
	st64(e, offsetof(struct gp_block_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, e, func);
}

int inst_is_leave(const ir_insn *in)
{
	return in->info && (in->info->flags & (IR_F_RET | IR_F_EXIT)) && strcmp(in->opcode, "trap");
}

static int is_barrier(const ir_insn *in)
{
	if (strcmp(in->opcode, "bar") && strcmp(in->opcode, "barrier"))
		return 0;
	return !ir_insn_has_mod(in, ".warp") && !ir_insn_has_mod(in, ".arrive") &&
	       !ir_insn_has_mod(in, ".red") && !ir_insn_has_mod(in, ".cluster");
}

/* The kind of a memory instruction, as gpu/mem's filters name it (GP_MEM_PLAIN, _ASYNC,
 * _MATRIX), or 0 for an instruction that has no memory site: ld, ldu, st, atom, red are plain
 * (their .async forms, st.async and red.async, are async); cp.async, cp.async.bulk{,.tensor} and
 * cp.reduce.async.bulk{,.tensor} are async; ldmatrix, stmatrix, wmma.load and wmma.store are
 * matrix. */
static unsigned mem_kind(const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "ld") || !strcmp(op, "ldu") || !strcmp(op, "st") || !strcmp(op, "atom") ||
	    !strcmp(op, "red"))
		return in->info && (in->info->flags & IR_F_ASYNC) ? GP_MEM_ASYNC : GP_MEM_PLAIN;
	if (!strcmp(op, "cp"))
		return ir_insn_has_mod(in, ".prefetch") ? 0 : GP_MEM_ASYNC;
	if (!strcmp(op, "ldmatrix") || !strcmp(op, "stmatrix") || !strcmp(op, "wmma"))
		return GP_MEM_MATRIX;
	return 0;
}

/* ---- the sites of each kind ------------------------------------------------------------- */

static void site_entry(struct fn *fn, const struct gp_inst_probe *p, unsigned k)
{
	struct inst_emit e = inst_at(fn, fn->entry);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	if (p->attach == GP_ATTACH_KERNEL_ENTRY) {
		kernel_ctx_call(fn, &e, p->func);
	} else if (p->attach == GP_ATTACH_BLOCK_BEGIN) {
		const char *l = inst_new_label(fn);
		outer_open(&e);
		not_thread0(&e);
		ie_insn(&e, "@%%__gp_q0 bra %s", l);
		block_ctx_call(fn, &e, p->func);
		ie_label(&e, l);
		outer_close(&e);
	} else if (p->attach == GP_ATTACH_BLOCK_END) {
		/* Thread 0 zeroes the counter; the barrier orders that before any thread's exit.
		 * Every thread of the block executes the kernel's first instruction, converged. */
		const char *l = inst_new_label(fn);
		ie_insn(&e, "activemask.b32 %%__gp_wo");   /* bar.sync is aligned: meet first */
		not_thread0(&e);
		ie_insn(&e, "@%%__gp_q0 bra %s", l);
		ie_insn(&e, "mov.u32 %%__gp_s0, 0");
		ie_insn(&e, "st.shared.u32 [__gp_bend%u], %%__gp_s0", k);
		ie_label(&e, l);
		ie_insn(&e, "bar.warp.sync %%__gp_wo");
		ie_insn(&e, "bar.sync 0");
	} else if (p->attach == GP_ATTACH_FUNC_ENTRY) {
		unsigned nargs = 0;
		for (unsigned i = 0; i < fn->f->nparams && nargs < 8; i++) {
			const ir_decl *d = &fn->f->params[i];
			unsigned bits = d->type ? (unsigned)atoi(d->type + 2) : 0;
			if (d->dims || (bits != 32 && bits != 64) || !d->name)
				continue;
			unsigned off = offsetof(struct gp_func_ctx, args) + 8 * nargs++;
			if (bits == 32) {
				ie_insn(&e, "ld.param.b32 %%__gp_s0, [%s]", d->name);
				ie_insn(&e, "cvt.u64.u32 %%__gp_d1, %%__gp_s0");
			} else {
				ie_insn(&e, "ld.param.b64 %%__gp_d1, [%s]", d->name);
			}
			ie_insn(&e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1", off);
		}
		for (unsigned i = nargs; i < 8; i++)
			st64(&e, offsetof(struct gp_func_ctx, args) + 8 * i, "0");
		inst_st32i(&e, offsetof(struct gp_func_ctx, func_hash), fn->hash);
		inst_st32i(&e, offsetof(struct gp_func_ctx, nargs), nargs);
		st64(&e, offsetof(struct gp_func_ctx, ret), "0");
		inst_fill_thread(fn, &e, offsetof(struct gp_func_ctx, thread));
		inst_call_probe(fn, &e, p->func);
	}
}

static void site_leave(struct fn *fn, const struct gp_inst_probe *p, unsigned k, ir_stmt *s)
{
	struct inst_emit e = inst_at(fn, s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	const char *skip = guard_skip(fn, &e, &s->insn);
	if (p->attach == GP_ATTACH_KERNEL_EXIT) {
		kernel_ctx_call(fn, &e, p->func);
	} else if (p->attach == GP_ATTACH_BLOCK_END) {
		const char *l = inst_new_label(fn);
		if (!skip)
			outer_open(&e);   /* else guard_skip opened it, end_skip closes it */
		ie_insn(&e, "atom.shared.add.u32 %%__gp_s0, [__gp_bend%u], 1", k);
		ie_insn(&e, "add.u32 %%__gp_s0, %%__gp_s0, 1");
		ie_insn(&e, "mov.u32 %%__gp_s1, %%ntid.x");
		ie_insn(&e, "mov.u32 %%__gp_s2, %%ntid.y");
		ie_insn(&e, "mul.lo.u32 %%__gp_s1, %%__gp_s1, %%__gp_s2");
		ie_insn(&e, "mov.u32 %%__gp_s2, %%ntid.z");
		ie_insn(&e, "mul.lo.u32 %%__gp_s1, %%__gp_s1, %%__gp_s2");
		ie_insn(&e, "setp.ne.u32 %%__gp_q0, %%__gp_s0, %%__gp_s1");
		ie_insn(&e, "@%%__gp_q0 bra %s", l);
		block_ctx_call(fn, &e, p->func);
		ie_label(&e, l);
		if (!skip)
			outer_close(&e);
	} else if (p->attach == GP_ATTACH_FUNC_EXIT) {
		for (unsigned i = 0; i < 8; i++)
			st64(&e, offsetof(struct gp_func_ctx, args) + 8 * i, "0");
		inst_st32i(&e, offsetof(struct gp_func_ctx, func_hash), fn->hash);
		inst_st32i(&e, offsetof(struct gp_func_ctx, nargs), 0);
		st64(&e, offsetof(struct gp_func_ctx, ret), "0");
		inst_fill_thread(fn, &e, offsetof(struct gp_func_ctx, thread));
		inst_call_probe(fn, &e, p->func);
	}
	end_skip(&e, skip);
}

static unsigned space_bit(enum ir_space s)
{
	switch (s) {
	case IR_SPACE_GLOBAL: return GP_MEM_GLOBAL;
	case IR_SPACE_SHARED: return GP_MEM_SHARED;
	case IR_SPACE_LOCAL: return GP_MEM_LOCAL;
	case IR_SPACE_GENERIC: return GP_MEM_GENERIC;
	default: return 0;
	}
}

static unsigned space_value(enum ir_space s)
{
	switch (s) {
	case IR_SPACE_GLOBAL: return GP_SPACE_GLOBAL;
	case IR_SPACE_SHARED: return GP_SPACE_SHARED;
	case IR_SPACE_LOCAL: return GP_SPACE_LOCAL;
	default: return GP_SPACE_GENERIC;
	}
}

/* The value of a 32-bit byte count operand: an immediate, or a register the same basic block
 * set from one with mov (cp.async.bulk's size is usually `mov.u32 %r8, 4096` just before);
 * 0 when it is not a constant there. The context's size stays a site constant (nvidia/ctx_use.c
 * counts it among the warp-uniform bytes). */
static unsigned const_count(const struct fn *fn, size_t i, const ir_insn *in, int op)
{
	if (op < 0 || (unsigned)op >= in->nops)
		return 0;
	const ir_operand *o = &in->ops[op];
	if (o->kind == IR_OPND_INT)
		return o->ival > 0 && o->ival <= UINT32_MAX ? (unsigned)o->ival : 0;
	if (o->kind != IR_OPND_REG || !o->name)
		return 0;
	while (i-- > 0) {
		const ir_stmt *t = fn->stmts[i];
		if (t->kind == IR_STMT_LABEL)
			return 0;
		if (t->kind != IR_STMT_INSN)
			continue;
		const ir_insn *w = &t->insn;
		if (!w->info || (w->info->flags & (IR_F_BRANCH | IR_F_CALL | IR_F_RET | IR_F_EXIT)))
			return 0;
		int ndst = w->info->ndst;
		for (int d = 0; d < ndst && (unsigned)d < w->nops; d++) {
			const ir_operand *x = &w->ops[d];
			if (!(x->kind == IR_OPND_REG && x->name && !strcmp(x->name, o->name)))
				continue;
			if (!strcmp(w->opcode, "mov") && !w->guard && w->nops == 2 &&
			    w->ops[1].kind == IR_OPND_INT && w->ops[1].ival > 0 &&
			    w->ops[1].ival <= UINT32_MAX)
				return (unsigned)w->ops[1].ival;
			return 0;
		}
	}
	return 0;
}

/* One side of a memory instruction: an address operand, its space, direction and size. */
struct mem_side {
	int op;
	enum ir_space space;
	enum ir_access_dir dir;
	unsigned size;
};

/* The sites of a memory instruction (at most two, each one site):
 *   ld/ldu/st/atom/red, st.async, red.async   the access (one address)
 *   cp.async, cp.async.bulk (global -> shared) a load at the source, then a store at the
 *                                             shared destination; size: the bytes copied
 *                                             (cp-size; a bulk copy's count when it is a
 *                                             constant, else 0)
 *   cp.async.bulk, cp.reduce.async.bulk        (shared -> global) a load at the shared source,
 *                                             then the global store (reduce: atomic)
 *   cp.async.bulk.tensor (TMA), loads         a load whose address is the tensor map's (the
 *                                             CUtensorMap the copy reads; size 0: the box is in
 *                                             the map), then a store at the shared destination
 *   cp{.reduce}.async.bulk.tensor, stores     a load at the shared source (size 0), then the
 *                                             global side: the tensor map's address (store;
 *                                             reduce: atomic)
 *   ldmatrix / stmatrix                       this lane's row address in shared memory; size:
 *                                             the bytes the lane receives or gives (4 per matrix)
 *   wmma.load / wmma.store                    the matrix's base address (the same in every lane);
 *                                             size: the bytes of the lane's fragment */
static unsigned mem_sides(const struct fn *fn, size_t i, const ir_insn *in, struct mem_side *out)
{
	struct ir_mem_access acc;
	if (!ir_insn_mem_access(in, &acc))
		return 0;
	const char *name = in->info ? in->info->opcode : "";
	int tensor = !strcmp(name, "cp.async.bulk.tensor") ||
		     !strcmp(name, "cp.reduce.async.bulk.tensor");
	int bulk = tensor || !strcmp(name, "cp.async.bulk") || !strcmp(name, "cp.reduce.async.bulk");
	int reduce = !strncmp(name, "cp.reduce", 9);
	unsigned size = acc.size;
	if (bulk && !tensor)
		size = const_count(fn, i, in, 2);
	else if (tensor)
		size = 0;
	if (!strcmp(name, "cp.async") || (bulk && acc.dst_addr_op >= 0)) {
		/* into shared memory: the source read, then the destination write */
		out[0] = (struct mem_side){acc.addr_op, acc.space, IR_ACCESS_READ, size};
		out[1] = (struct mem_side){acc.dst_addr_op, acc.dst_space, IR_ACCESS_WRITE, size};
		return acc.dst_addr_op >= 0 ? 2 : 1;
	}
	if (bulk) {
		/* out of shared memory: operand 1 is the shared source, operand 0 the global side */
		out[0] = (struct mem_side){1, IR_SPACE_SHARED, IR_ACCESS_READ, size};
		out[1] = (struct mem_side){0, IR_SPACE_GLOBAL, reduce ? IR_ACCESS_RMW : IR_ACCESS_WRITE,
					   size};
		return 2;
	}
	out[0] = (struct mem_side){acc.addr_op, acc.space, acc.dir, size};
	return 1;
}

/* One memory site: the access's side and the context words the site fills (gp_mem_ctx's size,
 * space|dir|kind, insn_index, line: the site constants). */
struct mem_site {
	ir_stmt *s;
	size_t stmt;               /* index in fn->stmts */
	const ir_operand *addr;
	uint32_t words[4];         /* gp_mem_ctx bytes 8..23, as st32i stores them */
};

/* Whether the side is a site of probe p: its space, direction and kind pass the filter, and its
 * address is one the site can compute. */
static bool mem_site_of(struct fn *fn, const struct gp_inst_probe *p, size_t i, unsigned kind,
			const struct mem_side *side, struct mem_site *out)
{
	ir_stmt *s = fn->stmts[i];
	const ir_insn *in = &s->insn;
	unsigned sb = space_bit(side->space);
	unsigned db = side->dir == IR_ACCESS_READ ? GP_MEM_LOAD
		    : side->dir == IR_ACCESS_WRITE ? GP_MEM_STORE : GP_MEM_ATOMIC;
	unsigned filter = p->mem_filter;
	if (!(filter & GP_MEM_ALL_SPACES))
		filter |= GP_MEM_ALL_SPACES;
	if (!(filter & GP_MEM_ALL_DIRS))
		filter |= GP_MEM_ALL_DIRS;
	if (!(filter & GP_MEM_ALL_KINDS))
		filter |= GP_MEM_ALL_KINDS;
	if (!sb || !(filter & sb) || !(filter & db) || !(filter & kind))
		return false;
	if (side->op < 0 || (unsigned)side->op >= in->nops)
		return false;
	const ir_operand *a = &in->ops[side->op];
	/* [base] or [base+offset]; a tensor copy's [tensorMap, {coordinates}]: the map's address */
	if (a->kind != IR_OPND_ADDR || (a->nelems && (!a->name || a->ival)))
		return false;
	unsigned dirv = db == GP_MEM_LOAD ? GP_DIR_LOAD : db == GP_MEM_STORE ? GP_DIR_STORE : GP_DIR_ATOMIC;
	unsigned kindv = kind == GP_MEM_ASYNC ? GP_MEM_KIND_ASYNC
		       : kind == GP_MEM_MATRIX ? GP_MEM_KIND_MATRIX : GP_MEM_KIND_PLAIN;
	*out = (struct mem_site){.s = s, .stmt = i, .addr = a};
	out->words[0] = side->size;
	/* space, dir and kind are one little-endian u32 */
	out->words[1] = space_value(side->space) | dirv << 8 | kindv << 16;
	out->words[2] = fn->index[i];
	out->words[3] = s->src_line;
	return true;
}

/* The site's code: the guard's skip, the context, the call. weight: the runs the call stands for
 * (weighted probes; ignored otherwise). */
static void site_mem_emit(struct fn *fn, const struct gp_inst_probe *p, const struct mem_site *ms,
			  unsigned weight)
{
	const ir_insn *in = &ms->s->insn;
	const ir_operand *a = ms->addr;
	struct inst_emit e = inst_at(fn, ms->s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	e.weight = p->weighted ? weight : 0;
	const char *skip = guard_skip(fn, &e, in);
	if (!a->name) {
		ie_insn(&e, "mov.u64 %%__gp_d1, %lld", (long long)a->ival);
	} else {
		if (a->name[0] == '%' && reg_bits(fn->f, a->name) == 32)
			ie_insn(&e, "cvt.u64.u32 %%__gp_d1, %s", a->name);
		else if (a->name[0] == '%')
			ie_insn(&e, "mov.b64 %%__gp_d1, %s", a->name);
		else
			ie_insn(&e, "mov.u64 %%__gp_d1, %s", a->name);
		if (a->ival)
			ie_insn(&e, "add.s64 %%__gp_d1, %%__gp_d1, %lld", (long long)a->ival);
	}
	if (inst_ctx_read(&e, offsetof(struct gp_mem_ctx, addr), 2))
		ie_insn(&e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1",
			(unsigned)offsetof(struct gp_mem_ctx, addr));
	for (unsigned w = 0; w < 4; w++)
		inst_st32i(&e, offsetof(struct gp_mem_ctx, size) + 4 * w, ms->words[w]);
	inst_fill_thread(fn, &e, offsetof(struct gp_mem_ctx, thread));
	inst_call_probe(fn, &e, p->func);
	end_skip(&e, skip);
}

static void site_mem(struct fn *fn, const struct gp_inst_probe *p, size_t i)
{
	ir_stmt *s = fn->stmts[i];
	unsigned kind = mem_kind(&s->insn);
	struct mem_side sides[2];
	unsigned n = kind ? mem_sides(fn, i, &s->insn, sides) : 0;
	struct mem_site ms;
	for (unsigned k = 0; k < n; k++)
		if (mem_site_of(fn, p, i, kind, &sides[k], &ms))
			site_mem_emit(fn, p, &ms, 1);
}

/* A weighted probe's memory sites (gp_inst_probe.weighted): found first, then merged per basic
 * block (instrument_merge.c) and emitted, each call with the count of the sites it stands for. */
static int sites_mem_weighted(struct fn *fn, const struct gp_inst_probe *p)
{
	size_t cap = 64, n = 0;
	struct mem_site *ms = malloc(cap * sizeof(*ms));
	struct inst_msite *key = NULL;
	if (!ms)
		return -ENOMEM;
	for (size_t i = 0; i < fn->n; i++) {
		ir_stmt *s = fn->stmts[i];
		if (s->kind != IR_STMT_INSN)
			continue;
		unsigned kind = mem_kind(&s->insn);
		struct mem_side sides[2];
		unsigned ns = kind ? mem_sides(fn, i, &s->insn, sides) : 0;
		for (unsigned k = 0; k < ns; k++) {
			if (n == cap) {
				struct mem_site *g = realloc(ms, (cap *= 2) * sizeof(*ms));
				if (!g) {
					free(ms);
					return -ENOMEM;
				}
				ms = g;
			}
			if (mem_site_of(fn, p, i, kind, &sides[k], &ms[n]))
				n++;
		}
	}
	if (n && !(key = calloc(n, sizeof(*key)))) {
		free(ms);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		key[k].stmt = ms[k].stmt;
		/* the context bytes 8..23 (size, space|dir|kind, insn_index, line) the probe reads;
		 * the others are the same at every site of a thread (its ids) or never read by an
		 * additive probe (the address: ebpf/verifier_additive.c) */
		for (unsigned b = 0; b < 16; b++) {
			unsigned off = offsetof(struct gp_mem_ctx, size) + b;
			if (p->ctx_key[off / 64] >> (off % 64) & 1)
				key[k].key[b] = (uint8_t)(ms[k].words[b / 4] >> (8 * (b % 4)));
		}
	}
	inst_merge_sites(fn->stmts, fn->n, key, n);
	struct deferred *d = inst_deferred_of(fn, p);
	for (size_t k = 0; k < n; k++) {
		if (d) {   /* the group's count into its class's accumulator; the first run is the flush's */
			struct site_words sw = {0};
			for (unsigned w = 0; w < 4; w++)
				inst_words_set(&sw, offsetof(struct gp_mem_ctx, size) + 4 * w, ms[k].words[w]);
			if (!key[k].weight) {
				fn->st->merged++;
				continue;
			}
			if (inst_defer_site(fn, d, ms[k].s, &ms[k].s->insn, &sw, key[k].weight))
				continue;
		}
		/* a first run of weight 1, then one of the rest; a pair gains nothing from it:
		 * each site keeps its own call */
		bool pair = !d && p->first_run && key[key[k].leader].weight == 2;
		if (!key[k].weight && !pair) {
			fn->st->merged++;
			continue;
		}
		if (pair) {
			site_mem_emit(fn, p, &ms[k], 1);
		} else if (p->first_run && key[k].weight > 1) {
			site_mem_emit(fn, p, &ms[k], 1);
			site_mem_emit(fn, p, &ms[k], key[k].weight - 1);
		} else {
			site_mem_emit(fn, p, &ms[k], key[k].weight);
		}
	}
	free(key);
	free(ms);
	return 0;
}

static void site_barrier(struct fn *fn, const struct gp_inst_probe *p, ir_stmt *s, unsigned index)
{
	const ir_insn *in = &s->insn;
	struct inst_emit e = inst_at(fn, p->barrier_after ? s->next : s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	const char *skip = guard_skip(fn, &e, in);
	const char *id = "0";
	if (in->nops && in->ops[0].kind == IR_OPND_INT)
		id = ir_strfmt(fn->m, "%lld", (long long)in->ops[0].ival);
	else if (in->nops && in->ops[0].kind == IR_OPND_REG && reg_bits(fn->f, in->ops[0].name) == 32)
		id = in->ops[0].name;
	st32(&e, offsetof(struct gp_barrier_ctx, barrier_id), id);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, insn_index), index);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, line), s->src_line);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, after), p->barrier_after ? 1 : 0);
	inst_fill_thread(fn, &e, offsetof(struct gp_barrier_ctx, thread));
	st64(&e, offsetof(struct gp_barrier_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, &e, p->func);
	end_skip(&e, skip);
}

/* The enum gp_op_class of an instruction (include/gpuprobe/context.h says the order). */
static bool op_is(const char *op, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(op, *list))
			return true;
	return false;
}

static unsigned op_class(const ir_insn *in)
{
	static const char *const tensor[] = {"mma", "wmma", "wgmma", "ldmatrix", "stmatrix",
					     "tcgen05", NULL};
	static const char *const other[] = {"prefetch", "prefetchu", "nanosleep", "discard",
					    "applypriority", "createpolicy", "griddepcontrol",
					    "pmevent", "brkpt", "tex", "tld4", "txq", "suld", "sust",
					    "sured", "suq", NULL};
	static const char *const move[] = {"mov", "cvt", "cvta", NULL};
	static const char *const sfu[] = {"sin", "cos", "lg2", "ex2", "tanh", "rsqrt", NULL};
	static const char *const f16[] = {".f16", ".f16x2", ".bf16", ".bf16x2", ".tf32", ".e4m3",
					  ".e5m2", ".e4m3x2", ".e5m2x2", ".e2m1x2", ".e3m2x2",
					  ".e2m3x2", NULL};
	const ir_insn_info *info = in->info;
	unsigned fl = info ? info->flags : 0;
	if ((fl & IR_F_TENSOR) || op_is(in->opcode, tensor))
		return GP_OP_TENSOR;
	if (fl & (IR_F_BRANCH | IR_F_CALL | IR_F_RET | IR_F_EXIT))
		return GP_OP_CONTROL;
	if (fl & (IR_F_BARRIER | IR_F_FENCE))
		return GP_OP_SYNC;
	if (fl & IR_F_WARP)
		return GP_OP_WARP;
	if (!info || (fl & (IR_F_ASYNC | IR_F_TEX)) || op_is(in->opcode, other))
		return GP_OP_OTHER;
	if (fl & IR_F_ATOMIC)
		return GP_OP_ATOMIC;
	if (fl & IR_F_LOAD)
		return GP_OP_LOAD;
	if (fl & IR_F_STORE)
		return GP_OP_STORE;
	if (op_is(in->opcode, move))
		return GP_OP_MOVE;
	if (op_is(in->opcode, sfu) ||
	    ((!strcmp(in->opcode, "rcp") || !strcmp(in->opcode, "sqrt")) &&
	     ir_insn_has_mod(in, ".approx")))
		return GP_OP_SFU;
	if (ir_insn_has_mod(in, ".f64"))
		return GP_OP_FP64;
	if (ir_insn_has_mod(in, ".f32") || ir_insn_has_mod(in, ".f32x2"))
		return GP_OP_FP32;
	for (unsigned i = 0; i < in->nmods; i++)
		if (op_is(in->mods[i], f16))
			return GP_OP_FP16;
	return GP_OP_INT;
}

static void site_bb(struct fn *fn, const struct gp_inst_probe *p, ir_stmt *s, unsigned bb,
		    unsigned index, unsigned ninsns, const unsigned *ops)
{
	struct site_words sw = {0};
	inst_words_set(&sw, offsetof(struct gp_bb_ctx, bb_index), bb);
	inst_words_set(&sw, offsetof(struct gp_bb_ctx, insn_index), index);
	inst_words_set(&sw, offsetof(struct gp_bb_ctx, line), s->src_line);
	inst_words_set(&sw, offsetof(struct gp_bb_ctx, func_hash), fn->hash);
	inst_words_set(&sw, offsetof(struct gp_bb_ctx, ninsns), ninsns);
	for (unsigned c = 0; c < GP_OP_NCLASSES; c++)
		inst_words_set(&sw, offsetof(struct gp_bb_ctx, op_count) + 4 * c, ops[c]);
	struct deferred *d = inst_deferred_of(fn, p);
	if (d && inst_defer_site(fn, d, s, NULL, &sw, 1))
		return;
	struct inst_emit e = inst_at(fn, s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	e.weight = p->weighted ? 1 : 0;
	for (unsigned i = 0; i < CTX_WORDS; i++)
		if (sw.set >> i & 1)
			inst_st32i(&e, 4 * i, sw.w[i]);
	inst_fill_thread(fn, &e, offsetof(struct gp_bb_ctx, thread));
	inst_call_probe(fn, &e, p->func);
}

/* Basic blocks: a leader is the first instruction, the first after a label, the first after a
 * branch, ret or exit. ninsns counts the block's instructions up to the next leader, ops the
 * same instructions by class. */
static void sites_bb(struct fn *fn, const struct gp_inst_probe *p)
{
	unsigned bb = 0;
	int fresh = 1;
	for (size_t i = 0; i < fn->n; i++) {
		ir_stmt *s = fn->stmts[i];
		if (s->kind == IR_STMT_LABEL) {
			fresh = 1;
			continue;
		}
		if (s->kind != IR_STMT_INSN)
			continue;
		if (fresh) {
			unsigned count = 0, ops[GP_OP_NCLASSES] = {0};
			for (size_t j = i; j < fn->n; j++) {
				ir_stmt *t = fn->stmts[j];
				if (t->kind == IR_STMT_LABEL && j > i)
					break;
				if (t->kind != IR_STMT_INSN)
					continue;
				count++;
				ops[op_class(&t->insn)]++;
				if (t->insn.info && (t->insn.info->flags &
						     (IR_F_BRANCH | IR_F_RET | IR_F_EXIT)))
					break;
			}
			site_bb(fn, p, s, bb++, fn->index[i], count, ops);
			fresh = 0;
		}
		if (s->insn.info && (s->insn.info->flags & (IR_F_BRANCH | IR_F_RET | IR_F_EXIT)))
			fresh = 1;
	}
}

static int instrument_one(struct fn *fn, const struct gp_inst_probe *p, unsigned k)
{
	switch (p->attach) {
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_FUNC_ENTRY:
		site_entry(fn, p, k);
		return 0;
	case GP_ATTACH_BLOCK_END:
		site_entry(fn, p, k);
		/* fallthrough */
	case GP_ATTACH_KERNEL_EXIT:
	case GP_ATTACH_FUNC_EXIT:
		for (size_t i = 0; i < fn->n; i++)
			if (fn->stmts[i]->kind == IR_STMT_INSN && inst_is_leave(&fn->stmts[i]->insn))
				site_leave(fn, p, k, fn->stmts[i]);
		return 0;
	case GP_ATTACH_MEM:
		if (p->weighted)
			return sites_mem_weighted(fn, p);
		for (size_t i = 0; i < fn->n; i++)
			if (fn->stmts[i]->kind == IR_STMT_INSN)
				site_mem(fn, p, i);
		return 0;
	case GP_ATTACH_BARRIER:
		for (size_t i = 0; i < fn->n; i++)
			if (fn->stmts[i]->kind == IR_STMT_INSN && is_barrier(&fn->stmts[i]->insn))
				site_barrier(fn, p, fn->stmts[i], fn->index[i]);
		return 0;
	case GP_ATTACH_BASIC_BLOCK:
		sites_bb(fn, p);
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

bool gp_instrument_func_branches(const ir_module *m, const char *name)
{
	const ir_func *f = ir_module_find_func(m, name);
	if (!f)
		return true;   /* unknown: assume it may */
	for (const ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &s->insn;
		if (!in->info || (in->info->flags & (IR_F_BRANCH | IR_F_CALL))) {
			/* bra.uni: the same way in every lane (the lowering marks jumps and tests of
			 * warp-uniform values so), no lane left behind */
			if (in->info && !strcmp(in->opcode, "bra") && in->nmods == 1 &&
			    !strcmp(in->mods[0], ".uni"))
				continue;
			return true;
		}
	}
	return false;
}

static bool is_generated(const ir_stmt *s, const char *opcode, const char *operand)
{
	const ir_insn *in = &s->insn;
	return s->kind == IR_STMT_INSN && s->generated && !in->guard && !strcmp(in->opcode, opcode) &&
	       in->nops == 1 && in->ops[0].kind == IR_OPND_REG && in->ops[0].name &&
	       !strcmp(in->ops[0].name, operand);
}

/* A site takes the mask of the site before it in the same basic block
 * instead of capturing its own: the previous probe ended with bar.warp.sync of that mask, and
 * with no label, branch, call, exit or guarded skip between, every one of those lanes reaches
 * this site once. An activemask here would name only the lanes that happen to run together,
 * which after the previous probe's divergent map code need not be all of them (on the H200:
 * coalescing's load_random, second site, a warp in two groups); the probe's match.any.sync over
 * the kept mask waits for all of them. Registers are per lane: groups of lanes that reach the
 * block apart each keep their own mask. */
static void reuse_site_masks(ir_func *f)
{
	bool synced = false;   /* %__gp_wm holds the mask of lanes that are all bound here */
	for (ir_stmt *s = f->first, *next; s; s = next) {
		next = s->next;
		if (s->kind == IR_STMT_LABEL) {
			synced = false;
			continue;
		}
		if (s->kind != IR_STMT_INSN)
			continue;
		if (is_generated(s, "activemask", "%__gp_wm")) {
			if (synced)
				ir_stmt_remove(f, s);
			continue;
		}
		if (is_generated(s, "bar", "%__gp_wm") && ir_insn_has_mod(&s->insn, ".warp")) {
			synced = true;
			continue;
		}
		const ir_insn *in = &s->insn;
		if (in->info && (in->info->flags & (IR_F_BRANCH | IR_F_CALL | IR_F_RET | IR_F_EXIT)))
			synced = false;
		else if (!in->info || !strcmp(in->opcode, "brkpt"))
			synced = false;   /* unknown: assume it may leave the block */
	}
}

/* A kernel's site right before its return (an exit probe, a block-end probe) ends without the
 * bar.warp.sync call_probe and outer_close give it: the lanes leave the kernel there, no
 * application instruction follows for them, and every warp collective of the probe has been
 * passed by every lane of its mask before any lane passes the last one. The sync cost more than
 * nothing: with one after the exit site, ptxas made the entry site's bar.warp.sync a
 * BRA.DIV + WARPSYNC.COLLECTIVE where alone it is a plain WARPSYNC (sm_90, CUDA 13), and under
 * the collective form cuda-samples' cdpAdvancedQuicksort found its warps split at its first
 * __activemask() (tests/gpu/logs/session13-h200-cdp-diag/README.md). Only an unguarded ret or
 * exit directly after the sync counts (directives aside): a label there means other paths join,
 * and a guarded ret lets some lanes go on. */
static void drop_syncs_before_return(ir_func *f)
{
	if (!f->is_entry)
		return;
	for (ir_stmt *s = f->first, *next; s; s = next) {
		next = s->next;
		if (!(is_generated(s, "bar", "%__gp_wm") || is_generated(s, "bar", "%__gp_wo")) ||
		    !ir_insn_has_mod(&s->insn, ".warp"))
			continue;
		const ir_stmt *n = next;
		while (n && n->kind == IR_STMT_DIRECTIVE)
			n = n->next;
		if (n && n->kind == IR_STMT_INSN && !n->insn.guard && n->insn.info &&
		    (n->insn.info->flags & (IR_F_RET | IR_F_EXIT)))
			ir_stmt_remove(f, s);
	}
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
	reuse_site_masks(f);
	drop_syncs_before_return(f);
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
