/* Control flow and synchronization: bra (unstructured: the Kernel capability allows it), ret and
 * exit, calls of device functions with their .param arguments and return value, barriers and
 * memory fences. */
#include "spirv/lower.h"

#include <stdbool.h>
#include <string.h>

/* A memory fence of the given scope: a sequentially consistent read-modify-write that changes
 * nothing, on a word of the module's own. OpMemoryBarrier becomes mem_fence() in OpenCL 1.2,
 * which PoCL's kernel library lacks, while every OpenCL target has atomic or. */
void lw_fence(lw *c, uint32_t scope)
{
	uint32_t sem = SpvMemorySemanticsSequentiallyConsistentMask | SpvMemorySemanticsWorkgroupMemoryMask |
		       SpvMemorySemanticsCrossWorkgroupMemoryMask;
	uint32_t u32 = spv_t_int(c->e, 32);
	if (!c->fence_word) {
		c->fence_word = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 4, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u32),
		       c->fence_word, (uint32_t)SpvStorageClassCrossWorkgroup, lw_u32(c, 0));
		spv_name(c->e, c->fence_word, "gpuprobe_fence_word");
	}
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpAtomicOr, 6, u32, spv_id(c->e), c->fence_word, lw_u32(c, scope), lw_u32(c, sem),
	       lw_u32(c, 0));
}

static struct lw_func_info *func_info(lw *c, const char *name)
{
	for (size_t i = 0; i < c->nfuncs; i++)
		if (!strcmp(c->funcs[i].f->name, name))
			return &c->funcs[i];
	return NULL;
}

static int lower_ret(lw *c)
{
	lw_ensure_block(c);
	struct lw_func_info *fi = c->fn ? func_info(c, c->fn->name) : NULL;
	if (c->fn && c->fn->nrets == 1 && !(fi && fi->ret_ptr)) {
		struct sym *s = lw_sym(c, c->fn->rets[0].name);
		uint32_t rt = lw_type(c, ptype_parse(c->fn->rets[0].type));
		uint32_t v = lw_op1(c, SpvOpLoad, rt, s->var);
		spv_op(&c->body, SpvOpReturnValue, 1, v);
	} else {
		spv_op(&c->body, SpvOpReturn, 0);
	}
	c->in_block = false;
	return 1;
}

static int lower_call(lw *c, const ir_insn *in);

/* A .param argument (or return) symbol's pointer as a pointer to t. */
uint32_t lw_param_ptr(lw *c, const ir_operand *o, ptype t)
{
	struct sym *s = o && o->kind == IR_OPND_SYMBOL ? lw_sym(c, o->name) : NULL;
	if (!s || s->kind != SYM_PARAM)
		return lw_fail(c, "expected a .param variable"), 0;
	return lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, lw_type(c, t)), s->var);
}

/* Device malloc/free: a bump allocator over a module heap of LW_HEAP_BYTES (CUDA's default device
 * heap is 8 MiB), 16-byte aligned, through a 32-bit atomic offset; an allocation past the end
 * returns 0 (CUDA's answer when the heap is full); free reclaims nothing. */
#define LW_HEAP_BYTES (8u << 20)
static int device_malloc(lw *c, const ir_insn *in, const ir_operand *args, const ir_operand *rets)
{
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	if (!c->heap) {
		uint32_t at = spv_t_array(c->e, spv_t_int(c->e, 8), spv_c_int(c->e, 32, LW_HEAP_BYTES));
		c->heap = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, at), c->heap,
		       (uint32_t)SpvStorageClassCrossWorkgroup);
		spv_decorate(c->e, c->heap, SpvDecorationAlignment, 1, 16u);
		spv_name(c->e, c->heap, "gpuprobe_device_heap");
		c->heap_top = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 4, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u32), c->heap_top,
		       (uint32_t)SpvStorageClassCrossWorkgroup, spv_c_int(c->e, 32, 0));
		spv_decorate(c->e, c->heap_top, SpvDecorationAlignment, 1, 4u);
		spv_name(c->e, c->heap_top, "gpuprobe_device_heap_top");
	}
	if (!args || args->nelems != 1)
		return lw_unsupported(c, in, "malloc takes one argument");
	uint32_t pp = lw_param_ptr(c, &args->elems[0], PT('u', 64));
	if (!pp)
		return -1;
	uint32_t size = lw_op1(c, SpvOpLoad, u64, pp);
	/* sizes past the heap fail without touching the offset */
	uint32_t big = lw_op2(c, SpvOpUGreaterThan, bl, size, lw_u64(c, LW_HEAP_BYTES));
	uint32_t sz32 = lw_op1(c, SpvOpUConvert, u32,
			       lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpIAdd, u64, size, lw_u64(c, 15)), lw_u64(c, ~15ull)));
	sz32 = lw_select(c, u32, big, lw_u32(c, 0), sz32);
	lw_ensure_block(c);
	uint32_t off = spv_id(c->e);
	spv_op(&c->body, SpvOpAtomicIAdd, 6, u32, off, c->heap_top, lw_u32(c, SpvScopeDevice),
	       lw_u32(c, SpvMemorySemanticsSequentiallyConsistentMask | SpvMemorySemanticsCrossWorkgroupMemoryMask), sz32);
	uint32_t end = lw_op2(c, SpvOpIAdd, u64, lw_op1(c, SpvOpUConvert, u64, off), lw_op1(c, SpvOpUConvert, u64, sz32));
	uint32_t fail = lw_op2(c, SpvOpLogicalOr, bl, big, lw_op2(c, SpvOpUGreaterThan, bl, end, lw_u64(c, LW_HEAP_BYTES)));
	uint32_t addr = lw_op2(c, SpvOpIAdd, u64, lw_op1(c, SpvOpConvertPtrToU, u64, c->heap), lw_op1(c, SpvOpUConvert, u64, off));
	addr = lw_select(c, u64, fail, lw_u64(c, 0), addr);
	if (rets && rets->nelems == 1) {
		uint32_t rp = lw_param_ptr(c, &rets->elems[0], PT('u', 64));
		if (!rp)
			return -1;
		spv_op(&c->body, SpvOpStore, 2, rp, addr);
	}
	return 1;
}

/* Is the address of function `name` taken anywhere in the module: an operand of an instruction
 * other than a direct call, or a word of an initializer? */
static bool address_taken(const ir_module *m, const char *name)
{
	size_t n = strlen(name);
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind == IR_TOP_DECL && t->decl.init) {
			for (const char *p = t->decl.init; (p = strstr(p, name)); p += n) {
				char before = p == t->decl.init ? ' ' : p[-1], after = p[n];
				if (!(before == '_' || before == '$' || (before >= '0' && before <= '9') || (before | 32) >= 'a') &&
				    !(after == '_' || after == '$' || (after >= '0' && after <= '9') || ((after | 32) >= 'a' && (after | 32) <= 'z')))
					return true;
			}
		}
		if (t->kind != IR_TOP_FUNC)
			continue;
		for (ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind != IR_STMT_INSN || !strcmp(s->insn.opcode, "call"))
				continue;
			for (unsigned i = 0; i < s->insn.nops; i++) {
				const ir_operand *o = &s->insn.ops[i];
				if ((o->kind == IR_OPND_SYMBOL || o->kind == IR_OPND_REG) && !strcmp(o->name, name))
					return true;
			}
		}
	}
	return false;
}

/* call (r), %reg, (args), prototype: function pointers are tokens (lw_func_token), so the call
 * compares the register with the token of every function of the module that could be its
 * target (its address is taken, its parameter and return counts match) and calls that one
 * directly. A pointer to no such function calls nothing. */
static int indirect_call(lw *c, const ir_insn *in, unsigned fi)
{
	if (in->ops[fi].kind != IR_OPND_REG)
		return lw_fail(c, "call of %s: no such function in the module", in->ops[fi].name);
	const ir_operand *rets = fi > 0 && in->ops[fi - 1].kind == IR_OPND_LIST ? &in->ops[fi - 1] : NULL;
	const ir_operand *args = fi + 1 < in->nops && in->ops[fi + 1].kind == IR_OPND_LIST ? &in->ops[fi + 1] : NULL;
	unsigned nargs = args ? args->nelems : 0, nrets = rets ? rets->nelems : 0;
	uint32_t v = lw_read(c, &in->ops[fi], PT('u', 64));
	if (!v)
		return -1;
	uint32_t done = spv_id(c->e), bl = spv_t_bool(c->e);
	ir_operand ops[8];
	if (in->nops > 8)
		return lw_unsupported(c, in, "too many operands");
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct lw_func_info *cf = &c->funcs[i];
		const ir_func *f = cf->f;
		if (!f->has_body || cf->skip || cf->failed || !cf->id || f->is_entry || f->nparams != nargs ||
		    (nrets && f->nrets != nrets) || !address_taken(c->m, f->name))
			continue;
		uint32_t then = spv_id(c->e), next = spv_id(c->e);
		lw_branch_cond(c, lw_op2(c, SpvOpIEqual, bl, v, lw_u64(c, lw_func_token(c->m, f->name))), then, next);
		lw_label(c, then);
		memcpy(ops, in->ops, in->nops * sizeof(*ops));
		ops[fi] = (ir_operand){.kind = IR_OPND_SYMBOL, .name = f->name};
		ir_insn direct = *in;
		direct.ops = ops;
		if (lower_call(c, &direct) < 0)
			return -1;
		lw_branch(c, done);
		lw_label(c, next);
	}
	lw_branch(c, done);
	lw_label(c, done);
	return 1;
}

static int lower_call(lw *c, const ir_insn *in)
{
	int fi = -1;
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].kind == IR_OPND_SYMBOL || in->ops[i].kind == IR_OPND_REG) {
			fi = (int)i;
			break;
		}
	if (fi < 0)
		return lw_unsupported(c, in, "no callee");
	const char *name = in->ops[fi].name;
	struct lw_func_info *f = func_info(c, name);
	if (!f)
		return indirect_call(c, in, (unsigned)fi);
	if (lw_is_recursive_call(c, in)) {   /* lower_recursion.c: not made; the launch fails */
		lw_note_trap(c, 4);
		return 1;
	}
	const ir_operand *rets = fi > 0 && in->ops[fi - 1].kind == IR_OPND_LIST ? &in->ops[fi - 1] : NULL;
	const ir_operand *args = (unsigned)fi + 1 < in->nops && in->ops[fi + 1].kind == IR_OPND_LIST ? &in->ops[fi + 1] : NULL;
	if (!f->f->has_body && !strcmp(name, "vprintf"))
		return lw_vprintf(c, in, args, rets);
	if (!f->f->has_body && !strcmp(name, "__assertfail"))
		return lw_assertfail(c, in, args);
	if (!f->f->has_body && !strcmp(name, "malloc"))
		return device_malloc(c, in, args, rets);
	if (!f->f->has_body && !strcmp(name, "free"))
		return 1; /* the bump allocator reclaims nothing */
	if (!f->f->has_body && lw_is_device_launch_call(name))
		return lw_device_launch_call(c, in, name, args, rets);
	if (!f->f->has_body)
		return lw_fail(c, "cannot lower call to external function %s: it has no body in this module", name);
	unsigned nargs = args ? args->nelems : 0;
	if (nargs != f->f->nparams)
		return lw_unsupported(c, in, "argument count differs from the callee's parameters");
	uint32_t ops[40] = {f->ret_type, 0, f->id};
	for (unsigned i = 0; i < nargs; i++) {
		ptype pt = ptype_parse(f->f->params[i].type);
		const ir_operand *a = &args->elems[i];
		struct sym *s = a->kind == IR_OPND_SYMBOL ? lw_sym(c, a->name) : NULL;
		uint32_t v;
		if (f->param_ptr[i]) {
			if (!s || s->kind != SYM_PARAM)
				return lw_unsupported(c, in, "a byte-array argument must be a .param variable");
			v = lw_op1(c, SpvOpBitcast, f->param_types[i], s->var);
		} else if (s && s->kind == SYM_PARAM) {
			/* the caller's .param may be declared as bytes: load through the callee's type */
			uint32_t pp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, f->param_types[i]), s->var);
			v = lw_op1(c, SpvOpLoad, f->param_types[i], pp);
		} else {
			v = lw_read(c, a, pt);
		}
		if (!v)
			return -1;
		ops[3 + i] = v;
	}
	unsigned nops = nargs;
	const ir_operand *r = rets && rets->nelems ? &rets->elems[0] : NULL;
	if (rets && rets->nelems && (rets->nelems != 1 || f->f->nrets != 1))
		return lw_unsupported(c, in, "return values differ from the callee's");
	struct sym *rs = r && r->kind == IR_OPND_SYMBOL ? lw_sym(c, r->name) : NULL;
	if (f->ret_ptr) {
		if (!rs || rs->kind != SYM_PARAM)
			return lw_unsupported(c, in, "a byte-array return value must go to a .param variable");
		ops[3 + nops++] = lw_op1(c, SpvOpBitcast, f->param_types[nargs], rs->var);
	}
	lw_ensure_block(c);
	ops[1] = spv_id(c->e);
	spv_inst(&c->body, SpvOpFunctionCall, 3 + nops, ops);
	if (r && !f->ret_ptr) {
		if (rs && rs->kind == SYM_PARAM) {
			uint32_t pp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, f->ret_type), rs->var);
			spv_op(&c->body, SpvOpStore, 2, pp, ops[1]);
		} else if (lw_write(c, r, ptype_parse(f->f->rets[0].type), ops[1]) < 0) {
			return -1;
		}
	}
	return 1;
}

int lw_control(lw *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "bra") || !strcmp(op, "brx")) {
		if (!strcmp(op, "brx"))
			return lw_unsupported(c, in, "indexed branches are not lowered");
		if (in->nops != 1 || in->ops[0].kind != IR_OPND_SYMBOL)
			return lw_unsupported(c, in, "bra needs a label");
		uint32_t target = 0;
		for (size_t i = 0; i < c->nlabels; i++)
			if (!strcmp(c->labels[i].name, in->ops[0].name))
				target = c->labels[i].id;
		if (!target)
			return lw_fail(c, "branch to unknown label %s", in->ops[0].name);
		if (!in->guard) {
			lw_branch(c, target);
			return 1;
		}
		uint32_t p = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->guard, .neg = in->guard_neg},
				     PT('p', 1));
		if (!p)
			return -1;
		uint32_t fall = spv_id(c->e);
		lw_branch_cond(c, p, target, fall);
		lw_label(c, fall);
		return 1;
	}
	if (!strcmp(op, "ret") || !strcmp(op, "exit"))
		return lower_ret(c);
	if (!strcmp(op, "trap")) {
		/* The driver is told (its trap word: the launch then fails) and the thread goes on.
		 * Returning instead broke PoCL's barrier handling: cooperative groups' grid sync
		 * guards its workspace with '@p bra; trap;', and with a return before the block's
		 * next barrier PoCL took thread 0's branch for the whole block afterwards. */
		lw_note_trap(c, 2);
		return 1;
	}
	if (!strcmp(op, "call"))
		return lower_call(c, in);
	if (!strcmp(op, "bar") || !strcmp(op, "barrier")) {
		if (ir_insn_has_mod(in, ".warp") || ir_insn_has_mod(in, ".red"))
			return 0; /* bar.warp.sync, bar.red: the warp family */
		if (ir_insn_has_mod(in, ".arrive"))
			return lw_unsupported(c, in, "split barriers (bar.arrive) are not lowered");
		if (in->nops > 1)
			return lw_unsupported(c, in, "barriers with a thread count are not lowered");
		lw_barrier(c);
		return 1;
	}
	if (!strcmp(op, "membar") || !strcmp(op, "fence")) {
		/* the async proxy (cp.async.bulk, mbarrier init seen by it): our asynchronous copies
		 * and mbarriers are ordinary memory operations, so ordering them needs nothing more */
		bool async_proxy = false;
		for (unsigned i = 0; i < in->nmods; i++)
			async_proxy |= !strncmp(in->mods[i], ".async", 6);
		if (ir_insn_has_mod(in, ".mbarrier_init") || (ir_insn_has_mod(in, ".proxy") && async_proxy))
			return 1;
		if (ir_insn_has_mod(in, ".proxy"))
			return lw_unsupported(c, in, "proxy fences other than the async proxy's are not lowered");
		lw_fence(c, ir_insn_has_mod(in, ".cta") ? SpvScopeWorkgroup
			    : ir_insn_has_mod(in, ".sys") ? SpvScopeCrossDevice : SpvScopeDevice);
		return 1;
	}
	if (!strcmp(op, "nanosleep") || !strcmp(op, "pmevent") || !strcmp(op, "brkpt"))
		return 1; /* no observable effect to keep */
	if (!strcmp(op, "griddepcontrol"))
		return 1; /* programmatic dependent launch: the runtime runs grids one after another */
	return 0;
}
