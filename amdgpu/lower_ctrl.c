/* bra, ret, exit, trap, calls of device functions (their .param arguments and returns), barriers,
 * fences, and the instructions that do nothing here (nanosleep, pmevent, fence.proxy). */
#include "amdgpu/lower.h"

#include <stdlib.h>
#include <string.h>

#define B (c->b)

LLVMBasicBlockRef al_label(al *c, const char *name);
void al_return(al *c);

static struct al_func *find_func(al *c, const char *name)
{
	for (size_t i = 0; i < c->nfuncs; i++)
		if (!strcmp(c->funcs[i].f->name, name))
			return &c->funcs[i];
	return NULL;
}

/* A call argument: a .param variable is read through the callee's parameter type, anything else
 * (a register, an immediate) as a value of that type. */
static LLVMValueRef arg_value(al *c, const ir_operand *a, LLVMTypeRef ty, const ir_decl *pd)
{
	if (a->kind == IR_OPND_SYMBOL) {
		struct al_var *v = al_lookup(c, a->name);
		if (v && v->is_param)
			return LLVMBuildLoad2(B, ty, v->slot, "");
	}
	atype t = al_type_parse(pd->type);
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	if (LLVMGetTypeKind(ty) == LLVMArrayTypeKind) {
		al_fail(c, "a byte-array argument must be a .param variable");
		return NULL;
	}
	return al_read(c, a, t);
}

static int store_ret(al *c, const ir_operand *r, LLVMValueRef v, const ir_decl *rd)
{
	if (r->kind == IR_OPND_SYMBOL) {
		struct al_var *p = al_lookup(c, r->name);
		if (p && p->is_param) {
			LLVMBuildStore(B, v, p->slot);
			return 0;
		}
	}
	atype t = al_type_parse(rd->type);
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	return al_write(c, r, t, v);
}

/* Device malloc without a runtime (amdgcn): a bump allocator over an 8 MiB module heap (CUDA's
 * default size), 16-byte aligned, 0 when full; free reclaims nothing. */
static int bump_malloc(al *c, const ir_operand *args, const ir_operand *rets)
{
	LLVMValueRef heap = LLVMGetNamedGlobal(c->mod, "gp.heap"), top = LLVMGetNamedGlobal(c->mod, "gp.heap_top");
	const uint64_t size = 8u << 20;
	if (!heap) {
		LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 8), size);
		heap = LLVMAddGlobalInAddressSpace(c->mod, ty, "gp.heap", AS_GLOBAL);
		LLVMSetInitializer(heap, LLVMConstNull(ty));
		LLVMSetLinkage(heap, LLVMInternalLinkage);
		LLVMSetAlignment(heap, 16);
		top = LLVMAddGlobalInAddressSpace(c->mod, al_ity(c, 64), "gp.heap_top", AS_GLOBAL);
		LLVMSetInitializer(top, al_ci(c, 64, 0));
		LLVMSetLinkage(top, LLVMInternalLinkage);
		LLVMSetAlignment(top, 8);
	}
	if (!args || args->nelems != 1)
		return al_fail(c, "malloc takes one argument");
	LLVMValueRef n = arg_value(c, &args->elems[0], al_ity(c, 64), &(ir_decl){.type = ".b64"});
	if (!n)
		return -1;
	LLVMValueRef rn = LLVMBuildAnd(B, LLVMBuildAdd(B, n, al_ci(c, 64, 15), ""), al_ci(c, 64, ~15ull), "");
	LLVMValueRef off = LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpAdd, top, rn, LLVMAtomicOrderingMonotonic, 0);
	LLVMValueRef fits = LLVMBuildICmp(B, LLVMIntULE, LLVMBuildAdd(B, off, rn, ""), al_ci(c, 64, size), "");
	LLVMValueRef base = LLVMBuildPtrToInt(B, LLVMBuildAddrSpaceCast(B, heap, al_ptr(c, AS_GENERIC), ""), al_ity(c, 64), "");
	LLVMValueRef r = LLVMBuildSelect(B, fits, LLVMBuildAdd(B, base, off, ""), al_ci(c, 64, 0), "");
	if (rets && rets->nelems == 1)
		return store_ret(c, &rets->elems[0], r, &(ir_decl){.type = ".b64"}) < 0 ? -1 : 1;
	return 1;
}

/* call (r), %fp, (args), proto: the function type from the .param variables passed (a function's
 * address is its generic address, as `mov %rd, f` and initializers give it). */
static int indirect_call(al *c, const ir_insn *in, unsigned fi)
{
	const ir_operand *rets = fi > 0 && in->ops[fi - 1].kind == IR_OPND_LIST ? &in->ops[fi - 1] : NULL;
	const ir_operand *args = fi + 1 < in->nops && in->ops[fi + 1].kind == IR_OPND_LIST ? &in->ops[fi + 1] : NULL;
	unsigned na = args ? args->nelems : 0, nr = rets ? rets->nelems : 0;
	if (na > 64 || nr > 16)
		return al_unsupported(c, in, "too many arguments");
	LLVMTypeRef pt[64], rt[16];
	LLVMValueRef av[64];
	struct al_var *rv[16];
	for (unsigned i = 0; i < na; i++) {
		struct al_var *v = args->elems[i].kind == IR_OPND_SYMBOL ? al_lookup(c, args->elems[i].name) : NULL;
		if (!v || !v->is_param || !v->decl)
			return al_unsupported(c, in, "an indirect call's arguments must be .param variables");
		pt[i] = al_param_type(c, v->decl);
		av[i] = LLVMBuildLoad2(B, pt[i], v->slot, "");
	}
	for (unsigned i = 0; i < nr; i++) {
		struct al_var *v = rets->elems[i].kind == IR_OPND_SYMBOL ? al_lookup(c, rets->elems[i].name) : NULL;
		if (!v || !v->is_param || !v->decl)
			return al_unsupported(c, in, "an indirect call's results must be .param variables");
		rv[i] = v;
		rt[i] = al_param_type(c, v->decl);
	}
	LLVMTypeRef ret = nr == 0 ? LLVMVoidTypeInContext(c->ctx) : nr == 1 ? rt[0] : LLVMStructTypeInContext(c->ctx, rt, nr, 0);
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, na, 0);
	LLVMValueRef fp = al_read(c, &in->ops[fi], AT('u', 64));
	if (!fp)
		return -1;
	LLVMValueRef r = LLVMBuildCall2(B, fty, al_to_ptr(c, fp, AS_GENERIC), av, na, "");
	for (unsigned i = 0; i < nr; i++)
		LLVMBuildStore(B, nr == 1 ? r : LLVMBuildExtractValue(B, r, i, ""), rv[i]->slot);
	return 1;
}

static int lower_call(al *c, const ir_insn *in)
{
	int fi = -1;
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].kind == IR_OPND_SYMBOL || in->ops[i].kind == IR_OPND_REG) {
			fi = (int)i;
			break;
		}
	if (fi < 0)
		return al_unsupported(c, in, "no callee");
	if (in->ops[fi].kind == IR_OPND_REG)
		return indirect_call(c, in, (unsigned)fi);
	const char *name = in->ops[fi].name;
	struct al_func *f = find_func(c, name);
	if (!f)
		return al_fail(c, "call of %s: no such function in the module", name);
	const ir_operand *rets = fi > 0 && in->ops[fi - 1].kind == IR_OPND_LIST ? &in->ops[fi - 1] : NULL;
	const ir_operand *args = (unsigned)fi + 1 < in->nops && in->ops[fi + 1].kind == IR_OPND_LIST ? &in->ops[fi + 1] : NULL;
	if (!f->f->has_body && (!strcmp(name, "malloc") || !strcmp(name, "free")) &&
	    (c->target == AMDGPU_TARGET_AMDGCN || al_generic()))
		return name[0] == 'f' ? 1 : bump_malloc(c, args, rets);
	if (!f->f->has_body) {
		/* vprintf and __assertfail: CUDA's own on nvptx64; on amdgcn amdgpu/printf.c makes
		 * them the backend's printf once the module is optimised */
		bool nv = c->target == AMDGPU_TARGET_NVPTX;
		bool printf_like = !strcmp(name, "vprintf") || !strcmp(name, "__assertfail");
		if (!printf_like && !(nv && (!strcmp(name, "malloc") || !strcmp(name, "free"))))
			return al_fail(c, "cannot lower call to external function %s%s", name,
				       nv ? ": it has no body in this module" : " on amdgcn");
	}
	unsigned nargs = args ? args->nelems : 0;
	if (nargs != f->f->nparams)
		return al_unsupported(c, in, "argument count differs from the callee's parameters");
	LLVMValueRef av[64];
	for (unsigned i = 0; i < nargs; i++)
		if (!(av[i] = arg_value(c, &args->elems[i], f->param_ty[i], &f->f->params[i])))
			return -1;
	unsigned nr = rets ? rets->nelems : 0;
	if (nr && nr != f->f->nrets)
		return al_unsupported(c, in, "return values differ from the callee's");
	LLVMValueRef r = LLVMBuildCall2(B, f->fty, f->fn, av, nargs, "");
	if (nr == 1)
		return store_ret(c, &rets->elems[0], r, &f->f->rets[0]) < 0 ? -1 : 1;
	for (unsigned i = 0; i < nr; i++)
		if (store_ret(c, &rets->elems[i], LLVMBuildExtractValue(B, r, i, ""), &f->f->rets[i]) < 0)
			return -1;
	return 1;
}

int al_control(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "bra")) {
		if (in->nops != 1 || in->ops[0].kind != IR_OPND_SYMBOL)
			return al_unsupported(c, in, "a branch target that is not a label");
		LLVMBasicBlockRef bb = al_label(c, in->ops[0].name);
		if (!bb)
			return al_fail(c, "no label %s", in->ops[0].name);
		LLVMBuildBr(B, bb);
		return 1;
	}
	if (!strcmp(op, "ret")) {
		al_return(c);
		return 1;
	}
	if (!strcmp(op, "exit")) {
		if (!c->fn->f->is_entry)
			return al_unsupported(c, in, "exit inside a device function");
		LLVMBuildRetVoid(B);
		return 1;
	}
	if (!strcmp(op, "trap") || !strcmp(op, "brkpt")) {
		if (op[0] == 'b')
			return 1;
		if (c->target == AMDGPU_TARGET_NVPTX) {
			/* PTX's own trap, and nothing after it: llvm.trap would add `exit;`, and a thread
			 * that ends in a branch before a barrier is what PoCL (through spirv/, where trap
			 * notes itself and goes on) cannot run: cooperative groups' grid sync guards its
			 * workspace so (case coop_grid_sync_trap_guard). On the GPU trap ends the kernel. */
			LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), NULL, 0, 0);
			LLVMValueRef a = LLVMGetInlineAsm(fty, "trap;", 5, "", 0, 1, 0, LLVMInlineAsmDialectATT, 0);
			LLVMBuildCall2(B, fty, a, NULL, 0, "");
			return 1;
		}
		al_intr(c, "llvm.trap", NULL, 0, 0, NULL);
		LLVMBuildUnreachable(B);
		return 1;
	}
	if (!strcmp(op, "call"))
		return lower_call(c, in);
	if ((!strcmp(op, "bar") || !strcmp(op, "barrier")) && !al_mod(in, ".red") && !al_mod(in, ".warp")) {
		if (al_mod(in, ".arrive"))
			return al_unsupported(c, in, "bar.arrive (producer/consumer barriers) is not lowered");
		if (in->nops > 1)
			return al_unsupported(c, in, "barriers with a thread count are not lowered");
		if (in->nops == 1 && !(in->ops[0].kind == IR_OPND_INT && in->ops[0].ival == 0))
			return al_unsupported(c, in, "named barriers other than 0 are not lowered");
		al_barrier(c);
		return 1;
	}
	if (!strcmp(op, "membar") || !strcmp(op, "fence")) {
		if (al_mod(in, ".proxy") || al_mod(in, ".proxy.async") || (in->nmods && !strncmp(in->mods[0], ".proxy", 6)) ||
		    al_mod(in, ".mbarrier_init"))
			return 1;
		al_fence(c, al_mod(in, ".cta") ? 0 : al_mod(in, ".sys") ? 2 : 1);
		return 1;
	}
	if (!strcmp(op, "nanosleep") || !strcmp(op, "pmevent") || !strcmp(op, "griddepcontrol"))
		return 1;
	return 0;
}
