/* Warp reconvergence around sites (instrument_internal.h): whether a probe can branch (then its
 * sites bracket the call with activemask / bar.warp.sync, inst_call_probe says why), and, after
 * every site of a function, the brackets it does not need: a capture the site before it already
 * made, a sync right before the kernel's return. */
#include "ptx-frontend/instrument_internal.h"

#include <stdbool.h>
#include <string.h>

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
void inst_reuse_site_masks(ir_func *f)
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
 * bar.warp.sync inst_call_probe and inst_outer_close give it: the lanes leave the kernel there, no
 * application instruction follows for them, and every warp collective of the probe has been
 * passed by every lane of its mask before any lane passes the last one. The sync cost more than
 * nothing: with one after the exit site, ptxas made the entry site's bar.warp.sync a
 * BRA.DIV + WARPSYNC.COLLECTIVE where alone it is a plain WARPSYNC (sm_90, CUDA 13), and under
 * the collective form cuda-samples' cdpAdvancedQuicksort found its warps split at its first
 * __activemask() (tests/gpu/logs/session13-h200-cdp-diag/README.md). Only an unguarded ret or
 * exit directly after the sync counts (directives aside): a label there means other paths join,
 * and a guarded ret lets some lanes go on. */
void inst_drop_syncs_before_return(ir_func *f)
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
