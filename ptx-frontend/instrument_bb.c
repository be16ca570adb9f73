/* Basic-block sites (instrument_internal.h, gpu/bb): one at each block's first instruction, with
 * the block's instruction count by class; a deferred probe's count into the kernel's
 * accumulators instead (instrument_defer.c). */
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

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
void inst_sites_bb(struct fn *fn, const struct gp_inst_probe *p)
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
