/* ld, st (vectors, every state space, volatile and ordered forms), atom and red (every operation
 * LLVM has as an atomicrmw; cas as cmpxchg; inc/dec as uinc_wrap/udec_wrap), and the memory
 * hints that mean nothing here (prefetch, discard, applypriority, createpolicy). */
#include "amdgpu/lower.h"

#include <stdlib.h>
#include <string.h>

#define B (c->b)

static LLVMAtomicOrdering ordering(const ir_insn *in, bool load, bool store)
{
	if (al_mod(in, ".acquire"))
		return LLVMAtomicOrderingAcquire;
	if (al_mod(in, ".release"))
		return LLVMAtomicOrderingRelease;
	if (al_mod(in, ".acq_rel"))
		return LLVMAtomicOrderingAcquireRelease;
	if (al_mod(in, ".sc"))
		return LLVMAtomicOrderingSequentiallyConsistent;
	(void)load;
	(void)store;
	return LLVMAtomicOrderingMonotonic;
}

static int ld_st(al *c, const ir_insn *in, bool is_load)
{
	struct ir_mem_access ma;
	if (!ir_insn_mem_access(in, &ma))
		return al_unsupported(c, in, "not a memory access");
	atype t = al_insn_type(in);
	if (!t.bits)
		return al_unsupported(c, in, "no type");
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	unsigned vec = al_mod(in, ".v2") ? 2 : al_mod(in, ".v4") ? 4 : al_mod(in, ".v8") ? 8 : 1;
	if (t.bits == 128)
		return al_unsupported(c, in, "128-bit accesses are not lowered");
	LLVMValueRef p = al_address(c, &in->ops[ma.addr_op], ma.space);
	if (!p)
		return -1;
	const ir_operand *v = &in->ops[is_load ? 0 : 1];
	LLVMTypeRef et = al_ty(c, t);
	bool vol = al_mod(in, ".volatile");
	bool ordered = al_mod(in, ".relaxed") || al_mod(in, ".acquire") || al_mod(in, ".release");
	unsigned eb = t.bits / 8;
	bool acq = al_mod(in, ".acquire"), rel = al_mod(in, ".release");
	if (ordered && c->target == AMDGPU_TARGET_NVPTX) {
		/* LLVM 19's NVPTX backend selects no ordered atomic loads or stores: volatile
		 * accesses (ld.volatile is relaxed at system scope) with fences around them */
		ordered = false;
		vol = true;
		if (rel)
			al_fence(c, 1);
	}
	if (vec == 1) {
		if (is_load) {
			LLVMValueRef x = LLVMBuildLoad2(B, et, p, "");
			LLVMSetAlignment(x, eb);
			if (vol)
				LLVMSetVolatile(x, 1);
			if (ordered)
				LLVMSetOrdering(x, ordering(in, true, false));
			if (acq && c->target == AMDGPU_TARGET_NVPTX)
				al_fence(c, 1);
			return al_write(c, v, t, x) < 0 ? -1 : 1;
		}
		LLVMValueRef x = al_read(c, v, t);
		if (!x)
			return -1;
		LLVMValueRef s = LLVMBuildStore(B, x, p);
		LLVMSetAlignment(s, eb);
		if (vol)
			LLVMSetVolatile(s, 1);
		if (ordered)
			LLVMSetOrdering(s, ordering(in, false, true));
		return 1;
	}
	if (v->kind != IR_OPND_VEC || v->nelems != vec)
		return al_unsupported(c, in, "a vector access needs a vector operand");
	LLVMTypeRef vt = LLVMVectorType(et, vec);
	if (is_load) {
		LLVMValueRef x = LLVMBuildLoad2(B, vt, p, "");
		LLVMSetAlignment(x, eb * vec);
		if (vol)
			LLVMSetVolatile(x, 1);
		for (unsigned i = 0; i < vec; i++)
			if (al_write(c, &v->elems[i], t, LLVMBuildExtractElement(B, x, al_ci(c, 32, i), "")) < 0)
				return -1;
		return 1;
	}
	LLVMValueRef x = LLVMGetUndef(vt);
	for (unsigned i = 0; i < vec; i++) {
		LLVMValueRef e = al_read(c, &v->elems[i], t);
		if (!e)
			return -1;
		x = LLVMBuildInsertElement(B, x, e, al_ci(c, 32, i), "");
	}
	LLVMValueRef s = LLVMBuildStore(B, x, p);
	LLVMSetAlignment(s, eb * vec);
	if (vol)
		LLVMSetVolatile(s, 1);
	return 1;
}

static int atomic(al *c, const ir_insn *in, bool has_result)
{
	struct ir_mem_access ma;
	if (!ir_insn_mem_access(in, &ma))
		return al_unsupported(c, in, "not a memory access");
	atype t = al_insn_type(in);
	if (!t.bits || t.bits < 32 || t.bits > 64 || (t.k == 'f' && al_mod(in, ".f16")))
		return al_unsupported(c, in, "this type is not lowered");
	if (al_mod(in, ".v2") || al_mod(in, ".v4") || al_mod(in, ".v8"))
		return al_unsupported(c, in, "vector atomics are not lowered");
	/* nvptx: LLVM 19 prints atomicrmw as GPU-scope atom; a system-scope one (the CPU adds to the
	 * same word) passes through as written */
	if (c->target == AMDGPU_TARGET_NVPTX && al_mod(in, ".sys"))
		return al_inline_ptx(c, in, has_result ? 1 : 0);
	LLVMValueRef p = al_address(c, &in->ops[ma.addr_op], ma.space);
	if (!p)
		return -1;
	unsigned vi = (unsigned)ma.addr_op + 1;
	LLVMValueRef v = al_read(c, &in->ops[vi], t);
	if (!v)
		return -1;
	LLVMAtomicOrdering ord = ordering(in, true, true);
	LLVMValueRef r;
	if (al_mod(in, ".cas")) {
		LLVMValueRef nv = al_read(c, &in->ops[vi + 1], t);
		if (!nv)
			return -1;
		if (t.k == 'f') {
			v = LLVMBuildBitCast(B, v, al_ity(c, t.bits), "");
			nv = LLVMBuildBitCast(B, nv, al_ity(c, t.bits), "");
		}
		LLVMAtomicOrdering fo = ord == LLVMAtomicOrderingRelease ? LLVMAtomicOrderingMonotonic
				      : ord == LLVMAtomicOrderingAcquireRelease ? LLVMAtomicOrderingAcquire : ord;
		r = LLVMBuildExtractValue(B, LLVMBuildAtomicCmpXchg(B, p, v, nv, ord, fo, 0), 0, "");
		if (t.k == 'f')
			r = LLVMBuildBitCast(B, r, al_ty(c, t), "");
	} else {
		LLVMAtomicRMWBinOp op;
		bool f = t.k == 'f';
		if (al_mod(in, ".add"))
			op = f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
		else if (al_mod(in, ".exch"))
			op = LLVMAtomicRMWBinOpXchg;
		else if (al_mod(in, ".and") && !f)
			op = LLVMAtomicRMWBinOpAnd;
		else if (al_mod(in, ".or") && !f)
			op = LLVMAtomicRMWBinOpOr;
		else if (al_mod(in, ".xor") && !f)
			op = LLVMAtomicRMWBinOpXor;
		else if (al_mod(in, ".min"))
			op = f ? LLVMAtomicRMWBinOpFMin : t.k == 's' ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
		else if (al_mod(in, ".max"))
			op = f ? LLVMAtomicRMWBinOpFMax : t.k == 's' ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
		else if (al_mod(in, ".inc") && !f)
			op = LLVMAtomicRMWBinOpUIncWrap;
		else if (al_mod(in, ".dec") && !f)
			op = LLVMAtomicRMWBinOpUDecWrap;
		else
			return al_unsupported(c, in, "this atomic operation is not lowered");
		r = LLVMBuildAtomicRMW(B, op, p, v, ord, 0);
	}
	if (has_result)
		return al_write(c, &in->ops[0], t, r) < 0 ? -1 : 1;
	return 1;
}

int al_memory(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "ld") || !strcmp(op, "ldu"))
		return ld_st(c, in, true);
	if (!strcmp(op, "st"))
		return ld_st(c, in, false);
	if (!strcmp(op, "atom"))
		return atomic(c, in, true);
	if (!strcmp(op, "red"))
		return atomic(c, in, false);
	if (!strcmp(op, "prefetch") || !strcmp(op, "prefetchu") || !strcmp(op, "discard") ||
	    !strcmp(op, "applypriority"))
		return 1;
	if (!strcmp(op, "createpolicy"))
		return al_write(c, &in->ops[0], AT('b', 64), al_ci(c, 64, 0)) < 0 ? -1 : 1;
	return 0;
}
