/* nvptx: an instruction passed through as inline PTX, for what NVIDIA's hardware does itself and
 * LLVM's NVPTX backend cannot say: texture and surface instructions (the 64-bit handle is the
 * driver's CUtexObject/CUsurfObject, not the gp_tex_desc that lower_tex.c reads on AMD devices)
 * and system-scope atomics (LLVM 19 prints atomicrmw as atom.global: GPU scope, so a CPU's atomic
 * adds on the same managed word were lost, systemWideAtomics). Registers become $N operands (the
 * first nout operands written, the rest read) with the constraint of their declared type;
 * literals and sinks (_) stay as written; an address [base+off] reads its base as a 64-bit value
 * (a variable: its address). */
#include "amdgpu/lower.h"

#include <stdio.h>
#include <string.h>

#define MAX_ASM_OPS 24

struct asm_ops {
	char text[640];   /* this walk's operands, as PTX */
	size_t n;
	char cons[160];
	size_t ncons;
	unsigned count;                 /* $N given so far */
	LLVMTypeRef out_ty[MAX_ASM_OPS], in_ty[MAX_ASM_OPS];
	const ir_operand *out_op[MAX_ASM_OPS];
	atype out_t[MAX_ASM_OPS];
	LLVMValueRef in_v[MAX_ASM_OPS];
	unsigned nout, nin;
};

static void put(struct asm_ops *a, const char *s)
{
	size_t len = strlen(s);
	if (a->n + len < sizeof(a->text)) {
		memcpy(a->text + a->n, s, len + 1);
		a->n += len;
	} else {
		a->n = sizeof(a->text);   /* too long: reported by the caller */
	}
}

static void put_cons(struct asm_ops *a, const char *s)
{
	size_t len = strlen(s);
	if (a->ncons + len + 1 < sizeof(a->cons)) {
		if (a->ncons)
			a->cons[a->ncons++] = ',';
		memcpy(a->cons + a->ncons, s, len + 1);
		a->ncons += len;
	} else {
		a->ncons = sizeof(a->cons);
	}
}

static const char *cons_of(atype t)
{
	switch (t.bits) {
	case 16: return "h";
	case 32: return t.k == 'f' ? "f" : "r";
	case 64: return t.k == 'f' ? "d" : "l";
	default: return NULL;
	}
}

/* One register, read (out = false) or written: its $N and constraint. */
static int reg(al *c, struct asm_ops *a, const ir_operand *op, bool out)
{
	struct al_var *v = al_lookup(c, op->name);
	if (!v || !v->is_reg)
		return al_fail(c, "%s: not a register", op->name);
	const char *k = cons_of(v->t);
	if (!k || op->neg || a->count >= MAX_ASM_OPS)
		return al_fail(c, "%s: a register that inline PTX cannot take", op->name);
	char buf[32];
	snprintf(buf, sizeof(buf), "$%u", a->count++);
	put(a, buf);
	if (out) {
		a->out_op[a->nout] = op;
		a->out_t[a->nout] = v->t;
		a->out_ty[a->nout++] = al_ty(c, v->t);
		snprintf(buf, sizeof(buf), "=%s", k);
		put_cons(a, buf);
		return 0;
	}
	LLVMValueRef x = al_read(c, op, v->t);
	if (!x)
		return -1;
	a->in_ty[a->nin] = al_ty(c, v->t);
	a->in_v[a->nin++] = x;
	put_cons(a, k);
	return 0;
}

static int operand(al *c, struct asm_ops *a, const ir_operand *op, bool out);

static int elems(al *c, struct asm_ops *a, const ir_operand *op, bool out)
{
	put(a, "{");
	for (unsigned i = 0; i < op->nelems; i++) {
		if (i)
			put(a, ", ");
		if (operand(c, a, &op->elems[i], out) < 0)
			return -1;
	}
	put(a, "}");
	return 0;
}

static int operand(al *c, struct asm_ops *a, const ir_operand *op, bool out)
{
	switch (op->kind) {
	case IR_OPND_REG:
		if (op->name[0] == '%' && al_lookup(c, op->name) == NULL)
			return al_fail(c, "%s: a special register in inline PTX", op->name);
		return reg(c, a, op, out);
	case IR_OPND_SYMBOL:
		if (strcmp(op->name, "_"))
			return al_fail(c, "%s: a name in an instruction passed through", op->name);
		put(a, "_");
		return 0;
	case IR_OPND_INT:
	case IR_OPND_FLOAT:
		if (out)
			return al_fail(c, "a literal written to");
		if (op->text) {
			put(a, op->text);
		} else {
			char buf[32];
			snprintf(buf, sizeof(buf), "%lld", (long long)op->ival);
			put(a, buf);
		}
		return 0;
	case IR_OPND_VEC:
		return elems(c, a, op, out);
	case IR_OPND_ADDR: {
		if (!op->name)
			return al_fail(c, "an address without a base");
		struct al_var *v = al_lookup(c, op->name);
		LLVMValueRef base;
		if (v && !v->is_reg) {   /* a variable: its generic address */
			ir_operand plain = *op;
			plain.ival = 0;
			plain.elems = NULL;
			plain.nelems = 0;
			LLVMValueRef p = al_address(c, &plain, IR_SPACE_GENERIC);
			if (!p)
				return -1;
			base = LLVMBuildPtrToInt(c->b, p, al_ity(c, 64), "");
		} else {
			ir_operand r = *op;
			r.kind = IR_OPND_REG;
			r.neg = false;
			base = al_read(c, &r, AT('u', 64));
		}
		if (!base || a->count >= MAX_ASM_OPS)
			return base ? al_fail(c, "too many operands for inline PTX") : -1;
		char buf[48];
		snprintf(buf, sizeof(buf), "[$%u", a->count++);
		put(a, buf);
		a->in_ty[a->nin] = al_ity(c, 64);
		a->in_v[a->nin++] = base;
		put_cons(a, "l");
		if (op->ival) {
			snprintf(buf, sizeof(buf), "%+lld", (long long)op->ival);
			put(a, buf);
		}
		if (op->nelems) {   /* tex [handle, {coordinates}]: one vector operand, or its elements */
			put(a, ", ");
			if (op->nelems == 1 ? operand(c, a, &op->elems[0], false) < 0 : elems(c, a, op, false) < 0)
				return -1;
		}
		put(a, "]");
		return 0;
	}
	default:
		return al_fail(c, "an operand inline PTX cannot take");
	}
}

int al_inline_ptx(al *c, const ir_insn *in, unsigned nout)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].kind == IR_OPND_PAIR || in->ops[i].kind == IR_OPND_LIST)
			return al_unsupported(c, in, "a predicate pair or list passed through");
	/* LLVM numbers outputs first: walk the written operands, then, continuing the numbering and
	 * the constraints, the read ones; the text keeps the instruction's operand order */
	struct asm_ops outs = {0};
	for (unsigned i = 0; i < nout && i < in->nops; i++) {
		if (i)
			put(&outs, ", ");
		if (operand(c, &outs, &in->ops[i], true) < 0)
			return -1;
	}
	struct asm_ops ins = outs;
	ins.n = 0;
	ins.text[0] = 0;
	for (unsigned i = nout; i < in->nops; i++) {
		if (i > nout)
			put(&ins, ", ");
		if (operand(c, &ins, &in->ops[i], false) < 0)
			return -1;
	}
	char text[1400];
	size_t n = (size_t)snprintf(text, sizeof(text), "%s", in->opcode);
	for (unsigned i = 0; i < in->nmods && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", in->mods[i]);
	if (n < sizeof(text))
		n += (size_t)snprintf(text + n, sizeof(text) - n, " %s%s%s;", outs.text,
				      nout && in->nops > nout ? ", " : "", ins.text);
	put_cons(&ins, "~{memory}");
	if (n >= sizeof(text) || outs.n >= sizeof(outs.text) || ins.n >= sizeof(ins.text) || ins.ncons >= sizeof(ins.cons))
		return al_unsupported(c, in, "too long to pass through");
	LLVMTypeRef ret = !ins.nout ? LLVMVoidTypeInContext(c->ctx)
			  : ins.nout == 1 ? ins.out_ty[0] : LLVMStructTypeInContext(c->ctx, ins.out_ty, ins.nout, 0);
	LLVMTypeRef fty = LLVMFunctionType(ret, ins.in_ty, ins.nin, 0);
	LLVMValueRef f = LLVMGetInlineAsm(fty, text, strlen(text), ins.cons, strlen(ins.cons), 1, 0,
					  LLVMInlineAsmDialectATT, 0);
	LLVMValueRef r = LLVMBuildCall2(c->b, fty, f, ins.in_v, ins.nin, "");
	for (unsigned k = 0; k < ins.nout; k++) {
		LLVMValueRef v = ins.nout == 1 ? r : LLVMBuildExtractValue(c->b, r, k, "");
		if (al_write(c, ins.out_op[k], ins.out_t[k], v) < 0)
			return -1;
	}
	return 1;
}
