/* Memory: ld/ldu/st (scalar and .v2/.v4, every state space), atom and red as OpAtomic*, with
 * compare-and-swap loops for what OpenCL has no atomic for (float add, inc, dec). */
#include "spirv/lower.h"

#include <string.h>

static const char *const ops_atom[] = {".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor",
				      ".exch", ".cas", NULL};

static unsigned vec_width(const ir_insn *in)
{
	if (ir_insn_has_mod(in, ".v2"))
		return 2;
	if (ir_insn_has_mod(in, ".v4"))
		return 4;
	if (ir_insn_has_mod(in, ".v8"))
		return 8;
	return 1;
}

static uint32_t elem_ptr(lw *c, const ir_operand *addr, unsigned i, unsigned ebytes, enum ir_space sp, ptype t)
{
	ir_operand a = *addr;
	a.ival += (int64_t)i * ebytes;
	SpvStorageClass sc;
	return lw_address(c, &a, sp, t, &sc);
}

static int lower_ld_st(lw *c, const ir_insn *in, bool store)
{
	ptype t = lw_insn_type(in);
	if (!ptype_ok(t) || in->nops < 2)
		return lw_unsupported(c, in, "needs a type and two operands");
	if (t.k == 'f' && t.bits == 16)
		t = PT('b', 16);
	enum ir_space sp = lw_insn_space(in);
	if (sp == IR_SPACE_OTHER)
		return lw_unsupported(c, in, "this state space has no SPIR-V equivalent");
	unsigned n = vec_width(in);
	const ir_operand *addr = &in->ops[store ? 0 : 1], *val = &in->ops[store ? 1 : 0];
	if (addr->kind != IR_OPND_ADDR)
		return lw_unsupported(c, in, "expected an address operand");
	if (n > 1 && (val->kind != IR_OPND_VEC || val->nelems != n))
		return lw_unsupported(c, in, "vector access needs a vector operand of its width");
	ptype mt = t.k == 'p' ? PT('u', 8) : t;
	unsigned eb = mt.bits / 8;
	uint32_t mask = SpvMemoryAccessAlignedMask;
	/* .volatile, and the memory-model forms (.relaxed/.acquire/.release with a scope): each
	 * access goes to memory (a spin loop on ld.acquire, as cooperative groups' grid.sync()
	 * writes it, must not be hoisted) */
	if (ir_insn_has_mod(in, ".volatile") || ir_insn_has_mod(in, ".relaxed") || ir_insn_has_mod(in, ".acquire") ||
	    ir_insn_has_mod(in, ".release"))
		mask |= SpvMemoryAccessVolatileMask;
	for (unsigned i = 0; i < n; i++) {
		const ir_operand *v = n > 1 ? &val->elems[i] : val;
		if (!store && (v->kind == IR_OPND_SYMBOL || v->kind == IR_OPND_REG) && !strcmp(v->name, "_"))
			continue;
		uint32_t p = elem_ptr(c, addr, i, eb, sp, mt);
		if (!p)
			return -1;
		if (store) {
			uint32_t x = lw_read(c, v, mt);
			if (!x)
				return -1;
			lw_ensure_block(c);
			spv_op(&c->body, SpvOpStore, 4, p, x, mask, eb);
		} else {
			lw_ensure_block(c);
			uint32_t id = spv_id(c->e);
			spv_op(&c->body, SpvOpLoad, 5, lw_type(c, mt), id, p, mask, eb);
			/* the loaded width extends into a wider register by the instruction's type */
			if (lw_write(c, v, mt, id) < 0)
				return -1;
		}
	}
	return 1;
}

static uint32_t scope_of(lw *c, const ir_insn *in)
{
	if (ir_insn_has_mod(in, ".cta"))
		return lw_u32(c, SpvScopeWorkgroup);
	if (ir_insn_has_mod(in, ".sys"))
		return lw_u32(c, SpvScopeCrossDevice);
	return lw_u32(c, SpvScopeDevice);
}

static uint32_t sem_of(lw *c, const ir_insn *in, SpvStorageClass sc)
{
	uint32_t s = 0;
	if (ir_insn_has_mod(in, ".acquire"))
		s = SpvMemorySemanticsAcquireMask;
	else if (ir_insn_has_mod(in, ".release"))
		s = SpvMemorySemanticsReleaseMask;
	else if (ir_insn_has_mod(in, ".acq_rel"))
		s = SpvMemorySemanticsAcquireReleaseMask;
	if (s)
		s |= sc == SpvStorageClassWorkgroup ? SpvMemorySemanticsWorkgroupMemoryMask
						    : SpvMemorySemanticsCrossWorkgroupMemoryMask;
	return lw_u32(c, s);
}

/* old = *p; do { new = f(old) } while (!cas(p, old, new)): returns old. f is given by kind. */
static uint32_t cas_loop(lw *c, const char *kind, ptype t, uint32_t p, uint32_t scope, uint32_t sem, uint32_t b)
{
	ptype it = PT('u', t.bits);
	uint32_t ity = lw_type(c, it), bl = spv_t_bool(c->e);
	uint32_t tmp = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, ity), tmp,
	       (uint32_t)SpvStorageClassFunction);
	uint32_t first = lw_op1(c, SpvOpLoad, ity, p);
	spv_op(&c->body, SpvOpStore, 2, tmp, first);
	uint32_t loop = spv_id(c->e), done = spv_id(c->e);
	lw_branch(c, loop);
	lw_label(c, loop);
	uint32_t cur = lw_op1(c, SpvOpLoad, ity, tmp), nv;
	if (!strcmp(kind, ".add")) {
		uint32_t fty = lw_type(c, t);
		uint32_t f = lw_op1(c, SpvOpBitcast, fty, cur);
		nv = lw_op1(c, SpvOpBitcast, ity, lw_op2(c, SpvOpFAdd, fty, f, b));
	} else if (!strcmp(kind, ".inc")) { /* old >= b ? 0 : old + 1 */
		uint32_t ge = lw_op2(c, SpvOpUGreaterThanEqual, bl, cur, b);
		nv = lw_select(c, ity, ge, lw_const(c, it, 0), lw_op2(c, SpvOpIAdd, ity, cur, lw_const(c, it, 1)));
	} else { /* .dec: old == 0 || old > b ? b : old - 1 */
		uint32_t z = lw_op2(c, SpvOpIEqual, bl, cur, lw_const(c, it, 0));
		uint32_t gt = lw_op2(c, SpvOpUGreaterThan, bl, cur, b);
		nv = lw_select(c, ity, lw_op2(c, SpvOpLogicalOr, bl, z, gt), b,
			       lw_op2(c, SpvOpISub, ity, cur, lw_const(c, it, 1)));
	}
	lw_ensure_block(c);
	uint32_t prev = spv_id(c->e);
	spv_op(&c->body, SpvOpAtomicCompareExchange, 8, ity, prev, p, scope, sem, sem, nv, cur);
	spv_op(&c->body, SpvOpStore, 2, tmp, prev);
	lw_branch_cond(c, lw_op2(c, SpvOpIEqual, bl, prev, cur), done, loop);
	lw_label(c, done);
	return cur;
}

static int lower_atom(lw *c, const ir_insn *in, bool red)
{
	ptype t = lw_insn_type(in);
	const char *op = lw_insn_mod_in(in, ops_atom);
	if (!ptype_ok(t) || !op)
		return lw_unsupported(c, in, "needs an operation and a type");
	if (t.bits == 16 || (t.k == 'f' && strcmp(op, ".add") && strcmp(op, ".exch")))
		return lw_unsupported(c, in, "this atomic operation and type are not lowered");
	if (ir_insn_has_mod(in, ".v2") || ir_insn_has_mod(in, ".v4"))
		return lw_unsupported(c, in, "vector atomics are not lowered");
	enum ir_space sp = lw_insn_space(in);
	if (sp != IR_SPACE_GLOBAL && sp != IR_SPACE_SHARED && sp != IR_SPACE_GENERIC)
		return lw_unsupported(c, in, "atomics need global, shared or generic memory");
	/* OpenCL 1.2 consumers (PoCL through llvm-spirv) have no atomics on generic pointers: a
	 * generic atomic is done on the global view of the address, which is the same memory on
	 * flat-address targets (CPUs). */
	if (sp == IR_SPACE_GENERIC)
		sp = IR_SPACE_GLOBAL;
	unsigned a0 = red ? 0 : 1;
	unsigned need = a0 + 2 + (!strcmp(op, ".cas") ? 1 : 0);
	if (in->nops < need)
		return lw_unsupported(c, in, "too few operands");
	if (t.bits == 64)
		spv_capability(c->e, SpvCapabilityInt64Atomics);
	ptype it = PT(t.k == 's' ? 's' : 'u', t.bits);
	uint32_t ity = lw_type(c, it);
	bool fl = t.k == 'f';
	SpvStorageClass sc;
	uint32_t p = lw_address(c, &in->ops[a0], sp, it, &sc);
	if (!p)
		return -1;
	uint32_t scope = scope_of(c, in), sem = sem_of(c, in, sc);
	uint32_t b = lw_read(c, &in->ops[a0 + 1], fl && !strcmp(op, ".exch") ? it : fl ? t : it);
	if (!b)
		return -1;
	uint32_t r;
	if ((fl && !strcmp(op, ".add")) || !strcmp(op, ".inc") || !strcmp(op, ".dec")) {
		r = cas_loop(c, op, fl ? t : it, p, scope, sem, b);
		if (fl)
			r = lw_op1(c, SpvOpBitcast, lw_type(c, t), r);
	} else if (!strcmp(op, ".cas")) {
		uint32_t nv = lw_read(c, &in->ops[a0 + 2], it);
		if (!nv)
			return -1;
		lw_ensure_block(c);
		r = spv_id(c->e);
		spv_op(&c->body, SpvOpAtomicCompareExchange, 8, ity, r, p, scope, sem, sem, nv, b);
	} else {
		SpvOp aop;
		if (!strcmp(op, ".add")) aop = SpvOpAtomicIAdd;
		else if (!strcmp(op, ".and")) aop = SpvOpAtomicAnd;
		else if (!strcmp(op, ".or")) aop = SpvOpAtomicOr;
		else if (!strcmp(op, ".xor")) aop = SpvOpAtomicXor;
		else if (!strcmp(op, ".exch")) aop = SpvOpAtomicExchange;
		else if (!strcmp(op, ".min")) aop = t.k == 's' ? SpvOpAtomicSMin : SpvOpAtomicUMin;
		else aop = t.k == 's' ? SpvOpAtomicSMax : SpvOpAtomicUMax;
		lw_ensure_block(c);
		r = spv_id(c->e);
		spv_op(&c->body, aop, 6, ity, r, p, scope, sem, b);
	}
	if (red)
		return 1;
	return lw_write(c, &in->ops[0], fl && strcmp(op, ".exch") ? t : it, r) < 0 ? -1 : 1;
}

/* alloca/stacksave/stackrestore: a per-thread private arena of ALLOCA_BYTES with a bump offset
 * (OpenCL has no dynamic stack). An allocation past its end yields address 0, so that using it
 * faults instead of overwriting memory. */
#define ALLOCA_BYTES 4096
static int lower_alloca(lw *c, const ir_insn *in)
{
	uint32_t u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	if (!c->alloca_arena) {
		uint32_t at = spv_t_array(c->e, spv_t_int(c->e, 8), spv_c_int(c->e, 32, ALLOCA_BYTES));
		c->alloca_arena = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, at), c->alloca_arena,
		       (uint32_t)SpvStorageClassFunction);
		spv_decorate(c->e, c->alloca_arena, SpvDecorationAlignment, 1, 16u);
		c->alloca_top = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u64), c->alloca_top,
		       (uint32_t)SpvStorageClassFunction);
		spv_op(&c->prologue, SpvOpStore, 2, c->alloca_top, lw_u64(c, 0));
	}
	uint32_t base = lw_op1(c, SpvOpConvertPtrToU, u64, c->alloca_arena);
	if (!strcmp(in->opcode, "stacksave")) {
		if (in->nops != 1)
			return lw_unsupported(c, in, "stacksave needs a destination");
		uint32_t top = lw_op1(c, SpvOpLoad, u64, c->alloca_top);
		return lw_write(c, &in->ops[0], PT('u', 64), lw_op2(c, SpvOpIAdd, u64, base, top)) < 0 ? -1 : 1;
	}
	if (!strcmp(in->opcode, "stackrestore")) {
		uint32_t a = in->nops == 1 ? lw_read(c, &in->ops[0], PT('u', 64)) : 0;
		if (!a)
			return in->nops == 1 ? -1 : lw_unsupported(c, in, "stackrestore needs an address");
		spv_op(&c->body, SpvOpStore, 2, c->alloca_top, lw_op2(c, SpvOpISub, u64, a, base));
		return 1;
	}
	if (in->nops < 2)
		return lw_unsupported(c, in, "alloca needs a destination and a size");
	uint32_t size = lw_read(c, &in->ops[1], PT('u', 64));
	if (!size)
		return -1;
	uint64_t align = in->nops > 2 && in->ops[2].kind == IR_OPND_INT && in->ops[2].ival > 0 ? (uint64_t)in->ops[2].ival : 8;
	uint32_t top = lw_op1(c, SpvOpLoad, u64, c->alloca_top);
	uint32_t at = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpIAdd, u64, top, lw_u64(c, align - 1)), lw_u64(c, ~(align - 1)));
	uint32_t end = lw_op2(c, SpvOpIAdd, u64, at, size);
	uint32_t fits = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpULessThanEqual, bl, end, lw_u64(c, ALLOCA_BYTES)),
			       lw_op2(c, SpvOpULessThanEqual, bl, size, lw_u64(c, ALLOCA_BYTES)));
	spv_op(&c->body, SpvOpStore, 2, c->alloca_top, lw_select(c, u64, fits, end, top));
	uint32_t r = lw_select(c, u64, fits, lw_op2(c, SpvOpIAdd, u64, base, at), lw_u64(c, 0));
	ptype dt = lw_insn_type(in);
	return lw_write(c, &in->ops[0], ptype_ok(dt) ? dt : PT('u', 64), lw_convert_bits(c, r, PT('u', 64), ptype_ok(dt) ? dt : PT('u', 64))) < 0 ? -1 : 1;
}

int lw_memory(lw *c, const ir_insn *in)
{
	if (!strcmp(in->opcode, "alloca") || !strcmp(in->opcode, "stacksave") || !strcmp(in->opcode, "stackrestore"))
		return lower_alloca(c, in);
	const char *op = in->opcode;
	if (!strcmp(op, "ld") || !strcmp(op, "ldu"))
		return lower_ld_st(c, in, false);
	if (!strcmp(op, "st"))
		return lower_ld_st(c, in, true);
	if (!strcmp(op, "atom"))
		return lower_atom(c, in, false);
	if (!strcmp(op, "red"))
		return lower_atom(c, in, true);
	if (!strcmp(op, "prefetch") || !strcmp(op, "prefetchu") || !strcmp(op, "discard") ||
	    !strcmp(op, "applypriority") || !strcmp(op, "createpolicy"))
		return 1; /* cache hints: nothing to do on a target that has no such control */
	return 0;
}
