/* The sites at a function's edges (instrument_internal.h): kernel entry and exit, a block's
 * begin (thread 0) and end (the block's last thread to leave, counted in shared memory), and a
 * device function's entry and exit. Entry code goes before the function's first statement of
 * the application; exit code before each ret and exit. */
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		inst_st64(e, off, "0");
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
	inst_fill_dim3(e, offsetof(struct gp_kernel_ctx, grid_dim), "%nctaid");
	inst_fill_dim3(e, offsetof(struct gp_kernel_ctx, block_dim), "%ntid");
	inst_fill_thread(fn, e, offsetof(struct gp_kernel_ctx, thread));
	inst_st64(e, offsetof(struct gp_kernel_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, e, func);
}

static void block_ctx_call(struct fn *fn, struct inst_emit *e, const char *func)
{
	inst_fill_dim3(e, offsetof(struct gp_block_ctx, grid_dim), "%nctaid");
	inst_fill_dim3(e, offsetof(struct gp_block_ctx, block_dim), "%ntid");
	inst_fill_thread(fn, e, offsetof(struct gp_block_ctx, thread));
	inst_st64(e, offsetof(struct gp_block_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, e, func);
}

int inst_is_leave(const ir_insn *in)
{
	return in->info && (in->info->flags & (IR_F_RET | IR_F_EXIT)) && strcmp(in->opcode, "trap");
}

void inst_site_entry(struct fn *fn, const struct gp_inst_probe *p, unsigned k)
{
	struct inst_emit e = inst_at(fn, fn->entry);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	if (p->attach == GP_ATTACH_KERNEL_ENTRY) {
		kernel_ctx_call(fn, &e, p->func);
	} else if (p->attach == GP_ATTACH_BLOCK_BEGIN) {
		const char *l = inst_new_label(fn);
		inst_outer_open(&e);
		not_thread0(&e);
		ie_insn(&e, "@%%__gp_q0 bra %s", l);
		block_ctx_call(fn, &e, p->func);
		ie_label(&e, l);
		inst_outer_close(&e);
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
			inst_st64(&e, offsetof(struct gp_func_ctx, args) + 8 * i, "0");
		inst_st32i(&e, offsetof(struct gp_func_ctx, func_hash), fn->hash);
		inst_st32i(&e, offsetof(struct gp_func_ctx, nargs), nargs);
		inst_st64(&e, offsetof(struct gp_func_ctx, ret), "0");
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
	const char *skip = inst_guard_skip(fn, &e, &s->insn);
	if (p->attach == GP_ATTACH_KERNEL_EXIT) {
		kernel_ctx_call(fn, &e, p->func);
	} else if (p->attach == GP_ATTACH_BLOCK_END) {
		const char *l = inst_new_label(fn);
		if (!skip)
			inst_outer_open(&e);   /* else guard_skip opened it, end_skip closes it */
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
			inst_outer_close(&e);
	} else if (p->attach == GP_ATTACH_FUNC_EXIT) {
		for (unsigned i = 0; i < 8; i++)
			inst_st64(&e, offsetof(struct gp_func_ctx, args) + 8 * i, "0");
		inst_st32i(&e, offsetof(struct gp_func_ctx, func_hash), fn->hash);
		inst_st32i(&e, offsetof(struct gp_func_ctx, nargs), 0);
		inst_st64(&e, offsetof(struct gp_func_ctx, ret), "0");
		inst_fill_thread(fn, &e, offsetof(struct gp_func_ctx, thread));
		inst_call_probe(fn, &e, p->func);
	}
	inst_end_skip(&e, skip);
}

void inst_sites_leave(struct fn *fn, const struct gp_inst_probe *p, unsigned k)
{
	for (size_t i = 0; i < fn->n; i++)
		if (fn->stmts[i]->kind == IR_STMT_INSN && inst_is_leave(&fn->stmts[i]->insn))
			site_leave(fn, p, k, fn->stmts[i]);
}
