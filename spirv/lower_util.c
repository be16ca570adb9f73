/* Helpers every instruction family uses: PTX types, errors, emission into the current block,
 * type conversions, and reading/writing operands. */
#include "spirv/lower.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ptype ptype_parse(const char *s)
{
	if (!s || s[0] != '.')
		return PT(0, 0);
	if (!strcmp(s, ".pred"))
		return PT('p', 1);
	char k = s[1];
	if (k != 'u' && k != 's' && k != 'b' && k != 'f')
		return PT(0, 0);
	char *end;
	unsigned long bits = strtoul(s + 2, &end, 10);
	if (*end || !(bits == 8 || bits == 16 || bits == 32 || bits == 64))
		return PT(0, 0);
	if (k == 'f' && bits == 8)
		return PT(0, 0);
	return PT(k, (unsigned)bits);
}

int lw_fail(lw *c, const char *fmt, ...)
{
	if (c->failed)
		return -1;
	c->failed = 1;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->cur && c->cur->line)
		snprintf(c->err, c->errlen, "%u: %s", c->cur->line, msg);
	else
		snprintf(c->err, c->errlen, "%s", msg);
	return -1;
}

int lw_unsupported(lw *c, const ir_insn *in, const char *why)
{
	char name[160];
	size_t n = (size_t)snprintf(name, sizeof(name), "%s", in->opcode);
	for (unsigned i = 0; i < in->nmods && n < sizeof(name); i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s", in->mods[i]);
	return lw_fail(c, "cannot lower `%s` to SPIR-V: %s", name, why);
}

/* .f16 values live in 16-bit integers: OpenCL has half only as a storage format without
 * cl_khr_fp16; conversions go through vload_half/vstore_half (lower_cvt.c). */
static ptype storage(ptype t)
{
	return t.k == 'f' && t.bits == 16 ? PT('b', 16) : t;
}

uint32_t lw_type(lw *c, ptype t)
{
	t = storage(t);
	if (t.k == 'p')
		return spv_t_bool(c->e);
	if (t.k == 'f')
		return spv_t_float(c->e, t.bits);
	return spv_t_int(c->e, t.bits);
}

uint32_t lw_const(lw *c, ptype t, uint64_t v)
{
	t = storage(t);
	if (t.k == 'p')
		return spv_c_bool(c->e, v != 0);
	if (t.k == 'f')
		return spv_c_float(c->e, t.bits, v);
	return spv_c_int(c->e, t.bits, v);
}

uint32_t lw_u32(lw *c, uint32_t v) { return spv_c_int(c->e, 32, v); }
uint32_t lw_u64(lw *c, uint64_t v) { return spv_c_int(c->e, 64, v); }

void lw_ensure_block(lw *c)
{
	if (!c->in_block) {
		spv_op(&c->body, SpvOpLabel, 1, spv_id(c->e));
		c->in_block = true;
	}
}

uint32_t lw_op1(lw *c, SpvOp op, uint32_t type, uint32_t a)
{
	lw_ensure_block(c);
	uint32_t id = spv_id(c->e);
	spv_op(&c->body, op, 3, type, id, a);
	return id;
}

uint32_t lw_op2(lw *c, SpvOp op, uint32_t type, uint32_t a, uint32_t b)
{
	lw_ensure_block(c);
	uint32_t id = spv_id(c->e);
	spv_op(&c->body, op, 4, type, id, a, b);
	return id;
}

uint32_t lw_op3(lw *c, SpvOp op, uint32_t type, uint32_t a, uint32_t b, uint32_t d)
{
	lw_ensure_block(c);
	uint32_t id = spv_id(c->e);
	spv_op(&c->body, op, 5, type, id, a, b, d);
	return id;
}

uint32_t lw_select(lw *c, uint32_t type, uint32_t cond, uint32_t a, uint32_t b)
{
	return lw_op3(c, SpvOpSelect, type, cond, a, b);
}

uint32_t lw_ext(lw *c, uint32_t type, enum OpenCLstd_Entrypoints inst, unsigned n, ...)
{
	lw_ensure_block(c);
	if (!c->e->opencl_std) {
		c->e->opencl_std = spv_id(c->e);
		spv_op_str(&c->e->imports, SpvOpExtInstImport, 1, &c->e->opencl_std, "OpenCL.std", 0, NULL);
	}
	uint32_t ops[4 + 24] = {type, spv_id(c->e), c->e->opencl_std, (uint32_t)inst};
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < 24; i++)
		ops[4 + i] = va_arg(ap, uint32_t);
	va_end(ap);
	spv_inst(&c->body, SpvOpExtInst, 4 + (n < 24 ? n : 24), ops);
	return ops[1];
}

void lw_label(lw *c, uint32_t id)
{
	if (c->in_block)
		spv_op(&c->body, SpvOpBranch, 1, id);
	spv_op(&c->body, SpvOpLabel, 1, id);
	c->in_block = true;
}

void lw_branch(lw *c, uint32_t target)
{
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpBranch, 1, target);
	c->in_block = false;
}

void lw_branch_cond(lw *c, uint32_t cond, uint32_t t, uint32_t f)
{
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpBranchConditional, 3, cond, t, f);
	c->in_block = false;
}

static bool same_class(ptype a, ptype b)
{
	if (a.k == 'p' || b.k == 'p')
		return a.k == b.k;
	if ((a.k == 'f') != (b.k == 'f'))
		return false;
	return a.bits == b.bits;
}

uint32_t lw_convert_bits(lw *c, uint32_t v, ptype from, ptype to)
{
	from = storage(from);
	to = storage(to);
	if (same_class(from, to))
		return v;
	if (to.k == 'p') {
		if (from.k == 'f')
			v = lw_op1(c, SpvOpBitcast, spv_t_int(c->e, from.bits), v);
		return lw_op2(c, SpvOpINotEqual, spv_t_bool(c->e), v, spv_c_int(c->e, from.bits, 0));
	}
	if (from.k == 'p') {
		ptype it = PT('u', to.bits);
		v = lw_select(c, lw_type(c, it), v, lw_const(c, it, 1), lw_const(c, it, 0));
		from = it;
		if (same_class(from, to))
			return v;
	}
	if (from.bits == to.bits)
		return lw_op1(c, SpvOpBitcast, lw_type(c, to), v);
	if (from.k == 'f')
		v = lw_op1(c, SpvOpBitcast, spv_t_int(c->e, from.bits), v);
	uint32_t it = spv_t_int(c->e, to.bits);
	if (to.bits < from.bits || from.k != 's')
		v = lw_op1(c, SpvOpUConvert, it, v);
	else
		v = lw_op1(c, SpvOpSConvert, it, v);
	if (to.k == 'f')
		v = lw_op1(c, SpvOpBitcast, lw_type(c, to), v);
	return v;
}

/* ---- registers ------------------------------------------------------------------------- */

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct reg *lw_reg(lw *c, const char *name)
{
	if (!c->capregs)
		return NULL;
	for (size_t i = hash_name(name) & (c->capregs - 1);; i = (i + 1) & (c->capregs - 1)) {
		if (!c->regs[i].name)
			return NULL;
		if (!strcmp(c->regs[i].name, name))
			return &c->regs[i];
	}
}

/* A body declaration's name means the latest declaration of it passed in lowering order (the
 * call sequence's own .param, not another block's of the same name and another size); before any,
 * the last one. */
struct sym *lw_sym(lw *c, const char *name)
{
	struct sym *last = NULL;
	for (size_t i = c->nlsyms; i-- > 0;)
		if (!strcmp(c->lsyms[i].name, name)) {
			if (!c->lsyms[i].decl || c->lsyms[i].live)
				return &c->lsyms[i];
			if (!last)
				last = &c->lsyms[i];
		}
	if (last)
		return last;
	for (size_t i = 0; i < c->ngsyms; i++)
		if (!strcmp(c->gsyms[i].name, name))
			return &c->gsyms[i];
	return NULL;
}

/* Float literal text: 0fXXXXXXXX (f32 bits), 0dXXXXXXXXXXXXXXXX (f64 bits), or decimal. */
static uint32_t float_literal(lw *c, const ir_operand *op, ptype want)
{
	const char *t = op->text ? op->text : op->name;
	if (!t)
		return lw_fail(c, "float literal without text"), 0;
	uint64_t raw;
	unsigned rbits;
	if ((t[0] == '0') && (t[1] == 'f' || t[1] == 'F')) {
		raw = strtoull(t + 2, NULL, 16);
		rbits = 32;
	} else if ((t[0] == '0') && (t[1] == 'd' || t[1] == 'D')) {
		raw = strtoull(t + 2, NULL, 16);
		rbits = 64;
	} else {
		double d = strtod(t, NULL);
		memcpy(&raw, &d, 8);
		rbits = 64;
	}
	if (want.k == 'f' && want.bits == 16)
		return lw_fail(c, "f16 literals are not supported"), 0;
	if (want.k == 'f' && want.bits != rbits) {
		/* the literal's value converted (correctly rounded by the C library) */
		if (rbits == 32 && want.bits == 64) {
			float f;
			uint32_t r32 = (uint32_t)raw;
			memcpy(&f, &r32, 4);
			double d = f;
			memcpy(&raw, &d, 8);
		} else if (rbits == 64 && want.bits == 32) {
			double d;
			memcpy(&d, &raw, 8);
			float f = (float)d;
			uint32_t r32;
			memcpy(&r32, &f, 4);
			raw = r32;
		} else {
			return lw_fail(c, "f16 literals are not supported"), 0;
		}
	}
	if (want.k != 'f' && want.bits < 64)
		raw &= (1ull << want.bits) - 1;
	return lw_const(c, want, raw);
}

uint32_t lw_read(lw *c, const ir_operand *op, ptype want)
{
	switch (op->kind) {
	case IR_OPND_REG: {
		uint32_t v;
		ptype t;
		int r = lw_special_reg(c, op->name, &v, &t);
		if (r < 0)
			return 0;
		if (r == 0)
			return lw_convert_bits(c, v, t, want);
		struct reg *rg = lw_reg(c, op->name);
		if (!rg) {
			struct sym *s = lw_sym(c, op->name);
			if (s) {
				ir_operand so = *op;
				so.kind = IR_OPND_SYMBOL;
				return lw_read(c, &so, want);
			}
			return lw_fail(c, "register %s is not declared", op->name), 0;
		}
		v = lw_op1(c, SpvOpLoad, lw_type(c, rg->t), rg->var);
		if (op->neg && rg->t.k == 'p')
			v = lw_op1(c, SpvOpLogicalNot, spv_t_bool(c->e), v);
		return lw_convert_bits(c, v, rg->t, want);
	}
	case IR_OPND_INT:
		if (want.k == 'f') {
			/* an integer where a float goes: PTX takes it as the value */
			double d = (double)op->ival;
			uint64_t raw;
			if (want.bits == 32) {
				float f = (float)d;
				uint32_t r;
				memcpy(&r, &f, 4);
				raw = r;
			} else {
				memcpy(&raw, &d, 8);
			}
			return lw_const(c, want, raw);
		}
		return lw_const(c, want, (uint64_t)op->ival);
	case IR_OPND_FLOAT:
		return float_literal(c, op, want);
	case IR_OPND_SYMBOL: {
		struct sym *s = lw_sym(c, op->name);
		if (!s) {
			struct reg *rg = lw_reg(c, op->name);
			if (rg) {
				ir_operand ro = *op;
				ro.kind = IR_OPND_REG;
				return lw_read(c, &ro, want);
			}
			/* WARP_SZ: the predefined constant nvcc writes for warpSize */
			uint32_t sv;
			ptype st;
			int r = lw_special_reg(c, op->name, &sv, &st);
			if (r < 0)
				return 0;
			if (r == 0)
				return lw_convert_bits(c, sv, st, want);
			return lw_fail(c, "unknown symbol %s", op->name), 0;
		}
		uint32_t v;
		switch (s->kind) {
		case SYM_SHARED:
			v = lw_u64(c, s->offset);
			break;
		case SYM_GLOBAL:
		case SYM_CONST:
		case SYM_LOCAL:
		case SYM_PARAM: /* a parameter's copy (or by-value bytes) lives in private memory */
			v = lw_op1(c, SpvOpConvertPtrToU, spv_t_int(c->e, 64), s->var);
			break;
		default: /* a function: its token (indirect calls compare against it) */
			v = lw_u64(c, lw_func_token(c->m, s->name));
			break;
		}
		return lw_convert_bits(c, v, PT('u', 64), want);
	}
	default:
		return lw_fail(c, "unsupported operand form"), 0;
	}
}

uint32_t lw_read_pred(lw *c, const ir_operand *op)
{
	return lw_read(c, op, PT('p', 1));
}

int lw_write(lw *c, const ir_operand *op, ptype t, uint32_t v)
{
	if (!v)
		return -1;
	if ((op->kind == IR_OPND_SYMBOL || op->kind == IR_OPND_REG) && !strcmp(op->name, "_"))
		return 0;
	if (op->kind != IR_OPND_REG && op->kind != IR_OPND_SYMBOL)
		return lw_fail(c, "destination is not a register");
	struct reg *rg = lw_reg(c, op->name);
	if (!rg)
		return lw_fail(c, "register %s is not declared", op->name);
	v = lw_convert_bits(c, v, t, rg->t);
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpStore, 2, rg->var, v);
	return 0;
}

/* ---- addresses ------------------------------------------------------------------------- */

static SpvStorageClass space_sc(enum ir_space sp)
{
	switch (sp) {
	case IR_SPACE_GLOBAL: return SpvStorageClassCrossWorkgroup;
	case IR_SPACE_SHARED: return SpvStorageClassWorkgroup;
	case IR_SPACE_LOCAL:  return SpvStorageClassFunction;
	case IR_SPACE_CONST:  return SpvStorageClassUniformConstant;
	case IR_SPACE_PARAM:  return SpvStorageClassFunction;
	default:              return SpvStorageClassGeneric;
	}
}

/* base (a pointer in sc) + byte offset, as a pointer to t. */
static uint32_t byte_offset_ptr(lw *c, uint32_t base, SpvStorageClass sc, uint32_t off, ptype t)
{
	uint32_t i8p = spv_t_ptr(c->e, sc, spv_t_int(c->e, 8));
	uint32_t p = lw_op1(c, SpvOpBitcast, i8p, base);
	p = lw_op2(c, SpvOpInBoundsPtrAccessChain, i8p, p, off);
	return lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, sc, lw_type(c, t)), p);
}

/* A shared-memory offset a (u64, from a register) that an access of t reaches at a + off: a itself
 * when the access lies in the window, else the sink past the window's end (less off), as many
 * bytes as the widest access (v4.b64) and nobody reads them, and the driver's trap word told (3: the launch fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS). On a GPU such an access is an illegal address; on a CPU it reached
 * whatever lay there, up to 4 GiB past the window (cuda-samples' radixSortThrust: signal 11, the
 * application killed). Accesses through a named variable and a constant offset are not checked.
 * Only with spirv_options.check_shared (GPUPROBE_SHARED_CHECK=1): it costs PoCL its vectorising. */
static uint32_t shared_checked(lw *c, uint32_t a, int64_t off, ptype t)
{
	if (!c->opts || !c->opts->check_shared)
		return a;
	uint32_t u64 = spv_t_int(c->e, 64);
	uint64_t bytes = t.bits >= 8 ? t.bits / 8 : 1, limit = c->shared_sink;
	uint32_t in = limit >= bytes ? lw_op2(c, SpvOpULessThanEqual, spv_t_bool(c->e),
					       lw_op2(c, SpvOpIAdd, u64, a, lw_u64(c, (uint64_t)off)), lw_u64(c, limit - bytes))
				     : spv_c_bool(c->e, false);
	uint32_t safe = lw_select(c, u64, in, a, lw_u64(c, limit - (uint64_t)off));
	if (c->opts && c->opts->trap_word) {
		uint32_t stray = spv_id(c->e), on = spv_id(c->e);
		lw_branch_cond(c, in, on, stray);
		lw_label(c, stray);
		lw_note_trap(c, 3);
		lw_label(c, on);
	}
	return safe;
}

uint32_t lw_ptr_at(lw *c, enum ir_space sp, uint32_t a, ptype t)
{
	if (sp == IR_SPACE_SHARED) {
		if (!c->shared_window)
			return lw_fail(c, "shared-memory access but the module declares no .shared variable"), 0;
		return byte_offset_ptr(c, c->shared_window, SpvStorageClassWorkgroup, shared_checked(c, a, 0, t), t);
	}
	return lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, space_sc(sp), lw_type(c, t)), a);
}

uint32_t lw_address(lw *c, const ir_operand *op, enum ir_space sp, ptype t, SpvStorageClass *sc_out)
{
	if (op->kind != IR_OPND_ADDR)
		return lw_fail(c, "expected an address operand [..]"), 0;
	if (t.k == 'p')
		t = PT('u', 8);
	int64_t off = op->ival;
	const char *base = op->name;
	struct reg *rg = base ? lw_reg(c, base) : NULL;
	struct sym *s = (base && !rg) ? lw_sym(c, base) : NULL;
	uint32_t sp_ = 0;
	int special = 0;
	if (base && !rg && !s) {
		ptype st;
		special = lw_special_reg(c, base, &sp_, &st);
		if (special < 0)
			return 0;
		if (special == 1)
			return lw_fail(c, "unknown address base %s", base), 0;
	}
	if (s) {
		SpvStorageClass sc;
		uint32_t var;
		uint64_t total = (uint64_t)off;
		switch (s->kind) {
		case SYM_SHARED:
			sc = SpvStorageClassWorkgroup;
			var = c->shared_window;
			total += s->offset;
			break;
		case SYM_FUNC:
			return lw_fail(c, "%s is a function, not memory", s->name), 0;
		default:
			sc = s->sc;
			var = s->var;
		}
		if (sp == IR_SPACE_GENERIC && sc != SpvStorageClassGeneric) {
			/* generic access to a named variable: go through its address */
			uint32_t a = lw_op1(c, SpvOpConvertPtrToU, spv_t_int(c->e, 64), var);
			if (s->kind == SYM_SHARED)
				a = lw_op2(c, SpvOpIAdd, spv_t_int(c->e, 64), a, lw_u64(c, s->offset));
			a = lw_op2(c, SpvOpIAdd, spv_t_int(c->e, 64), a, lw_u64(c, (uint64_t)off));
			*sc_out = SpvStorageClassGeneric;
			return lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassGeneric, lw_type(c, t)), a);
		}
		*sc_out = sc;
		return byte_offset_ptr(c, var, sc, lw_u64(c, total), t);
	}
	uint32_t a;
	if (!base) {
		a = lw_u64(c, (uint64_t)off);
	} else {
		a = special == 0 && !rg ? lw_convert_bits(c, sp_, PT('u', 32), PT('u', 64))
					: lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = base}, PT('u', 64));
		if (!a)
			return 0;
	}
	/* reg + imm: the pointer of reg + region token (lower_region.c), then imm added to the
	 * pointer. Integer additions of both would be reassociated as (reg + imm) + token, and a
	 * pointer step by the token before imm's would be swapped by InstCombine: either way LLVM
	 * hoists reg + imm out of the loop again. */
	ptype at = t;
	if (sp == IR_SPACE_SHARED && c->shared_window)
		a = shared_checked(c, a, base ? off : 0, t);
	if (base && off) {
		a = lw_op2(c, SpvOpIAdd, spv_t_int(c->e, 64), a, lw_region_token(c));
		at = PT('u', 8);
	}
	uint32_t p;
	SpvStorageClass sc = sp == IR_SPACE_SHARED ? SpvStorageClassWorkgroup : space_sc(sp);
	if (sp == IR_SPACE_SHARED) {
		if (!c->shared_window)
			return lw_fail(c, "shared-memory access but the module declares no .shared variable"), 0;
		p = byte_offset_ptr(c, c->shared_window, SpvStorageClassWorkgroup, a, at);
	} else {
		p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, sc, lw_type(c, at)), a);
	}
	*sc_out = sc;
	if (!(base && off))
		return p;
	/* not InBounds: a PTX base register need not point into the object the access reaches */
	p = lw_op2(c, SpvOpPtrAccessChain, spv_t_ptr(c->e, sc, spv_t_int(c->e, 8)), p, lw_u64(c, (uint64_t)off));
	return lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, sc, lw_type(c, t)), p);
}

/* ---- instruction modifiers ------------------------------------------------------------- */

ptype lw_insn_type_n(const ir_insn *in, int n)
{
	int seen = 0;
	for (unsigned i = 0; i < in->nmods; i++) {
		ptype t = ptype_parse(in->mods[i]);
		if (ptype_ok(t) && seen++ == n)
			return t;
	}
	return PT(0, 0);
}

ptype lw_insn_type(const ir_insn *in)
{
	ptype last = PT(0, 0);
	for (unsigned i = 0; i < in->nmods; i++) {
		ptype t = ptype_parse(in->mods[i]);
		if (ptype_ok(t))
			last = t;
	}
	return last;
}

enum ir_space lw_insn_space(const ir_insn *in)
{
	for (unsigned i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		if (!strcmp(m, ".global"))
			return IR_SPACE_GLOBAL;
		if (!strcmp(m, ".shared") || !strcmp(m, ".shared::cta"))
			return IR_SPACE_SHARED;
		if (!strcmp(m, ".local"))
			return IR_SPACE_LOCAL;
		if (!strcmp(m, ".const"))
			return IR_SPACE_CONST;
		if (!strcmp(m, ".param") || !strcmp(m, ".param::entry") || !strcmp(m, ".param::func"))
			return IR_SPACE_PARAM;
		if (!strcmp(m, ".shared::cluster"))   /* clusters are one block: the block's own */
			return IR_SPACE_SHARED;
	}
	return IR_SPACE_GENERIC;
}

const char *lw_insn_mod_in(const ir_insn *in, const char *const *set)
{
	for (unsigned i = 0; i < in->nmods; i++)
		for (const char *const *s = set; *s; s++)
			if (!strcmp(in->mods[i], *s))
				return *s;
	return NULL;
}
