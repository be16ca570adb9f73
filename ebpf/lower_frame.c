/* Frames: each subprogram is a .func with its own registers and its own stack (a .local array of
 * opts->stack_size bytes, 512 by default; under the PTX ABI it lives on the thread's call stack,
 * so frames never overlap). r10 is the generic address of the stack's top, so pointers to the
 * stack, the context and map values all take the same generic ld/st path; accesses written as
 * r10+constant address the array in .local directly (lower_mem.c). A frame whose code never
 * names r10 gets no stack at all (ptxas keeps an array whose address is taken), and one that
 * never uses r10 as a value (lower_plan.c) gets .b64 registers %<prefix>s<N>, one per 8-byte
 * slot, instead of the array: no local memory, no stack frame.
 *
 * Main:        .func (.param .b64 ret) NAME(.param .b64 a1 [, a2 .. a5] [, .param .b32 wm]
 *                                      [, .param .b32 wt])
 * wm (opts->site_mask): the mask of the lanes that entered the probe together (lower_call.c).
 * wt (opts->weight): how many runs the call stands for; atomic adds scale by it (lower_mem.c).
 * Subprogram:  .func (.param .b64 ret) NAME__subN(.param .b64 a1 .. a5 [, .param .b64 xf])
 * xf, present when the program calls bpftime's exit helper (507), points at a flag in the main
 * frame: a subprogram that calls exit sets it and returns, and every caller returns in turn. */
#include "ebpf/lower_internal.h"

#include <errno.h>

static ir_decl param_decl(struct lower_ctx *c, const char *name)
{
	return (ir_decl){.space = ".param", .type = ".b64", .name = name, .count = -1};
}

/* Does any instruction of the subprogram name r10? (lddw's second half names none.) */
static bool uses_r10(const struct lower_ctx *c, const struct lower_subprog *sp)
{
	for (size_t i = sp->start; i < sp->end; i++) {
		const struct bpf_insn *in = &c->insns[i];
		if (in->dst_reg == 10 || in->src_reg == 10)
			return true;
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;
	}
	return false;
}

int lower_frame_begin(struct lower_ctx *c, size_t s)
{
	ir_module *m = c->m;
	const char *P = c->prefix;
	struct lower_subprog *sp = &c->subs[s];
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	t->generated = true;
	ir_func *f = &t->func;
	f->name = sp->name;
	f->has_rets = f->has_params = f->has_body = true;
	c->ret_param = ir_strfmt(m, "%sret", P);
	f->rets = ir_alloc(m, sizeof(*f->rets));
	f->rets[0] = param_decl(c, c->ret_param);
	f->nrets = 1;

	bool main = s == 0;
	bool flag = c->uses_exit_helper && c->nsubs > 1;
	unsigned nargs = main ? c->nargs : 5;
	f->params = ir_alloc(m, (nargs + 2) * sizeof(*f->params));
	for (unsigned i = 0; i < nargs; i++)
		f->params[f->nparams++] = param_decl(c, ir_strfmt(m, "%sa%u", P, i + 1));
	if (flag && !main)
		f->params[f->nparams++] = param_decl(c, ir_strfmt(m, "%sxf", P));
	bool mask = main && c->opts->site_mask;
	if (mask) {
		f->params[f->nparams] = param_decl(c, ir_strfmt(m, "%swm", P));
		f->params[f->nparams++].type = ".b32";
	}
	bool weight = main && c->opts->weight;
	if (weight) {
		f->params[f->nparams] = param_decl(c, ir_strfmt(m, "%swt", P));
		f->params[f->nparams++].type = ".b32";
	}
	sp->top = t;
	c->f = f;
	c->sub = s;
	c->pc = sp->start;

	for (int i = 0; i < 11; i++)
		c->r[i] = ir_strfmt(m, "%%%sr%d", P, i);
	for (int i = 0; i < LOWER_NTMP64; i++)
		c->t[i] = ir_strfmt(m, "%%%st%d", P, i);
	for (int i = 0; i < LOWER_NTMP32; i++)
		c->w[i] = ir_strfmt(m, "%%%sw%d", P, i);
	for (int i = 0; i < LOWER_NTMPPRED; i++)
		c->p[i] = ir_strfmt(m, "%%%sp%d", P, i);
	c->stack = ir_strfmt(m, "%sstack", P);
	c->exit_flag = flag ? ir_strfmt(m, "%%%sxf", P) : NULL;

	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", ir_strfmt(m, "%%%sr", P), 11));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", ir_strfmt(m, "%%%st", P), LOWER_NTMP64));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", ir_strfmt(m, "%%%sw", P), LOWER_NTMP32));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", ir_strfmt(m, "%%%sp", P), LOWER_NTMPPRED));
	if (flag)
		ir_stmt_append(f, ir_reg_decl_new(m, ".b64", c->exit_flag, -1));
	c->site_mask = mask ? ir_strfmt(m, "%%%swm", P) : NULL;
	if (mask)
		ir_stmt_append(f, ir_reg_decl_new(m, ".b32", c->site_mask, -1));
	c->weight = weight ? ir_strfmt(m, "%%%swt", P) : NULL;
	if (weight)
		ir_stmt_append(f, ir_reg_decl_new(m, ".b32", c->weight, -1));
	c->slot_base = ir_strfmt(m, "%%%ss", P);
	int rc = lower_plan(c, s);
	if (rc)
		return rc;
	bool stack = uses_r10(c, sp);
	if (stack && c->stack_in_regs) {
		ir_stmt_append(f, ir_reg_decl_new(m, ".b64", c->slot_base, (int)(c->stack_size / 8)));
		stack = false;   /* no .local array, no r10 */
	}
	if (stack)
		lo_decl_stmt(c, ".local", 8, ".b8", c->stack, ir_strfmt(m, "[%u]", c->stack_size));
	if (flag && main)
		lo_decl_stmt(c, ".local", 4, ".b32", ir_strfmt(m, "%sxflag", P), NULL);

	for (unsigned i = 0; i < nargs; i++)
		lo_emit(c, "ld", ".param.u64", 2, lo_reg(c, c->r[i + 1]),
			lo_addr(c, f->params[i].name, 0));
	if (mask)
		lo_emit(c, "ld", ".param.b32", 2, lo_reg(c, c->site_mask),
			lo_addr(c, f->params[f->nparams - 1 - weight].name, 0));
	if (weight)
		lo_emit(c, "ld", ".param.b32", 2, lo_reg(c, c->weight),
			lo_addr(c, f->params[f->nparams - 1].name, 0));
	if (stack) {
		lo_emit(c, "mov", ".u64", 2, lo_reg(c, c->t[0]), lo_sym(c, c->stack));
		lo_emit(c, "cvta", ".local.u64", 2, lo_reg(c, c->t[0]), lo_reg(c, c->t[0]));
		lo_emit(c, "add", ".u64", 3, lo_reg(c, c->r[10]), lo_reg(c, c->t[0]),
			lo_imm(c, c->stack_size));
	}
	if (flag && main) {
		lo_emit(c, "mov", ".u64", 2, lo_reg(c, c->exit_flag), lo_sym(c, ir_strfmt(m, "%sxflag", P)));
		lo_emit(c, "cvta", ".local.u64", 2, lo_reg(c, c->exit_flag), lo_reg(c, c->exit_flag));
		lo_emit(c, "st", ".u32", 2, lo_addr(c, c->exit_flag, 0), lo_imm(c, 0));
	} else if (flag) {
		lo_emit(c, "ld", ".param.u64", 2, lo_reg(c, c->exit_flag),
			lo_addr(c, f->params[nargs].name, 0));
	}
	return 0;
}

void lower_frame_return(struct lower_ctx *c)
{
	lo_emit(c, "st", ".param.b64", 2, lo_addr(c, c->ret_param, 0), lo_reg(c, c->r[0]));
	lo_emit(c, "ret", "", 0);
}

int lower_exit(struct lower_ctx *c)
{
	lower_frame_return(c);
	return 0;
}
