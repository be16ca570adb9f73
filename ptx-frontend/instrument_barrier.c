/* Barrier sites (instrument_internal.h, gpu/barrier and gpu/barrier_after): before or after each
 * block-wide bar/barrier of the application, with the barrier's id. */
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <stddef.h>
#include <string.h>

static int is_barrier(const ir_insn *in)
{
	if (strcmp(in->opcode, "bar") && strcmp(in->opcode, "barrier"))
		return 0;
	return !ir_insn_has_mod(in, ".warp") && !ir_insn_has_mod(in, ".arrive") &&
	       !ir_insn_has_mod(in, ".red") && !ir_insn_has_mod(in, ".cluster");
}

static void site_barrier(struct fn *fn, const struct gp_inst_probe *p, ir_stmt *s, unsigned index)
{
	const ir_insn *in = &s->insn;
	struct inst_emit e = inst_at(fn, p->barrier_after ? s->next : s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	const char *skip = inst_guard_skip(fn, &e, in);
	const char *id = "0";
	if (in->nops && in->ops[0].kind == IR_OPND_INT)
		id = ir_strfmt(fn->m, "%lld", (long long)in->ops[0].ival);
	else if (in->nops && in->ops[0].kind == IR_OPND_REG &&
		 inst_reg_bits(fn->f, in->ops[0].name) == 32)
		id = in->ops[0].name;
	inst_st32(&e, offsetof(struct gp_barrier_ctx, barrier_id), id);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, insn_index), index);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, line), s->src_line);
	inst_st32i(&e, offsetof(struct gp_barrier_ctx, after), p->barrier_after ? 1 : 0);
	inst_fill_thread(fn, &e, offsetof(struct gp_barrier_ctx, thread));
	inst_st64(&e, offsetof(struct gp_barrier_ctx, timestamp), "%globaltimer");
	inst_call_probe(fn, &e, p->func);
	inst_end_skip(&e, skip);
}

void inst_sites_barrier(struct fn *fn, const struct gp_inst_probe *p)
{
	for (size_t i = 0; i < fn->n; i++)
		if (fn->stmts[i]->kind == IR_STMT_INSN && is_barrier(&fn->stmts[i]->insn))
			site_barrier(fn, p, fn->stmts[i], fn->index[i]);
}
