/* The pieces every site's code is made of (instrument_internal.h): new labels, the writer at a
 * position, the context stores (skipped for words the probe never reads), a thread's ids, the
 * probe call with its reconvergence, and the skip around the site of a guarded instruction.
 * Each attach point's file builds its sites from these, so that they all fill and call alike. */
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *inst_new_label(struct fn *fn)
{
	return ir_strfmt(fn->m, "__gp_L%u", (*fn->labels)++);
}

unsigned inst_reg_bits(const ir_func *f, const char *name)
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

struct inst_emit inst_at(struct fn *fn, ir_stmt *pos)
{
	return (struct inst_emit){.m = fn->m, .f = fn->f, .pos = pos};
}

int inst_ctx_read(const struct inst_emit *e, unsigned off, unsigned n)
{
	return off / 4 + n > 64 || ((e->ctx_unread >> (off / 4)) & ((1ull << n) - 1)) != ((1ull << n) - 1);
}

void inst_st32(struct inst_emit *e, unsigned off, const char *src)
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

void inst_st64(struct inst_emit *e, unsigned off, const char *src)
{
	if (!inst_ctx_read(e, off, 2))
		return;
	ie_insn(e, "mov.u64 %%__gp_d1, %s", src);
	ie_insn(e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1", off);
}

void inst_fill_dim3(struct inst_emit *e, unsigned off, const char *sreg)
{
	static const char xyz[] = "xyz";
	for (int i = 0; i < 3; i++)
		inst_st32(e, off + 4u * i, ir_strfmt(e->m, "%s.%c", sreg, xyz[i]));
}

void inst_fill_thread(struct fn *fn, struct inst_emit *e, unsigned off)
{
	inst_fill_dim3(e, off + offsetof(struct gp_thread_ids, block_idx), "%ctaid");
	inst_fill_dim3(e, off + offsetof(struct gp_thread_ids, thread_idx), "%tid");
	inst_st32(e, off + offsetof(struct gp_thread_ids, sm_id), "%smid");
	inst_st32(e, off + offsetof(struct gp_thread_ids, warp_id), "%warpid");
	inst_st32(e, off + offsetof(struct gp_thread_ids, lane_id), "%laneid");
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
	 * and independent thread scheduling need not bring the lanes together again by itself.
	 * Application code after an entry site may hold an aligned barrier (bar.sync is
	 * barrier.sync.aligned: the first lanes of a warp to arrive mark the whole warp's
	 * arrival), so a warp left split by the probe let the other warps of fft-cuda's
	 * blocks pass __syncthreads before the lane that inserted the map's key had written its
	 * shared-memory transpose: one block of results wrong per insert (H100, 2026-11-25).
	 * The mask is captured before the call; inst_reuse_site_masks may drop the capture. A
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
 * inst_call_probe gives. */
void inst_outer_open(struct inst_emit *e)
{
	if (e->warp_sync || e->reconverge)
		ie_insn(e, "activemask.b32 %%__gp_wo");
}

void inst_outer_close(struct inst_emit *e)
{
	if (e->warp_sync || e->reconverge)
		ie_insn(e, "bar.warp.sync %%__gp_wo");
}

/* Skip what follows when the instruction's guard is false; returns the label to place after. */
const char *inst_guard_skip(struct fn *fn, struct inst_emit *e, const ir_insn *in)
{
	if (!in->guard)
		return NULL;
	const char *l = inst_new_label(fn);
	inst_outer_open(e);
	ie_insn(e, "@%s%s bra %s", in->guard_neg ? "" : "!", in->guard, l);
	return l;
}

void inst_end_skip(struct inst_emit *e, const char *l)
{
	if (l) {
		ie_label(e, l);
		inst_outer_close(e);
	}
}
