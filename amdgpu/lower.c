/* The module and function driver: names (registers and variables, shadowed by block), module
 * variables, signatures, parameters, labels and blocks, guards, and dispatch to the families. */
#include "amdgpu/lower.h"
#include "ptx-frontend/init_scan.h"
#include "ptx-frontend/ir_skip.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int al_fail(al *c, const char *fmt, ...)
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

int al_unsupported(al *c, const ir_insn *in, const char *why)
{
	char name[160];
	size_t n = (size_t)snprintf(name, sizeof(name), "%s", in->opcode);
	for (unsigned i = 0; i < in->nmods && n < sizeof(name); i++)
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s", in->mods[i]);
	return al_fail(c, "cannot lower `%s` to LLVM IR: %s", name, why);
}

atype al_type_parse(const char *s)
{
	if (!s || s[0] != '.')
		return AT(0, 0);
	if (!strcmp(s, ".pred"))
		return AT('p', 1);
	char k = s[1];
	if (k != 'u' && k != 's' && k != 'b' && k != 'f')
		return AT(0, 0);
	char *end;
	unsigned long bits = strtoul(s + 2, &end, 10);
	if (*end || (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 128))
		return AT(0, 0);
	if (k == 'f' && bits == 8)
		return AT(0, 0);
	return AT(k, (unsigned)bits);
}

/* ---- types and constants ---------------------------------------------------------------- */

LLVMTypeRef al_ity(al *c, unsigned bits) { return LLVMIntTypeInContext(c->ctx, bits); }

LLVMTypeRef al_ty(al *c, atype t)
{
	if (t.k == 'p')
		return LLVMInt1TypeInContext(c->ctx);
	if (t.k == 'f' && t.bits == 32)
		return LLVMFloatTypeInContext(c->ctx);
	if (t.k == 'f' && t.bits == 64)
		return LLVMDoubleTypeInContext(c->ctx);
	return al_ity(c, t.bits ? t.bits : 32);   /* f16 (and bf16) travel as their bits */
}

LLVMValueRef al_ci(al *c, unsigned bits, uint64_t v) { return LLVMConstInt(al_ity(c, bits), v, 0); }

LLVMTypeRef al_ptr(al *c, int as) { return LLVMPointerTypeInContext(c->ctx, (unsigned)as); }

static bool is_float_ty(atype t) { return t.k == 'f' && (t.bits == 32 || t.bits == 64); }

LLVMValueRef al_bits(al *c, LLVMValueRef v, atype from, atype to)
{
	if (from.k == to.k && from.bits == to.bits)
		return v;
	if (to.k == 'p') {
		if (from.k == 'p')
			return v;
		if (is_float_ty(from))
			v = LLVMBuildBitCast(c->b, v, al_ity(c, from.bits), "");
		return LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	}
	if (from.k == 'p') {
		v = LLVMBuildZExt(c->b, v, al_ity(c, to.bits), "");
		return is_float_ty(to) ? LLVMBuildBitCast(c->b, v, al_ty(c, to), "") : v;
	}
	if (is_float_ty(from))
		v = LLVMBuildBitCast(c->b, v, al_ity(c, from.bits), "");
	if (from.bits < to.bits)
		v = from.k == 's' ? LLVMBuildSExt(c->b, v, al_ity(c, to.bits), "") : LLVMBuildZExt(c->b, v, al_ity(c, to.bits), "");
	else if (from.bits > to.bits)
		v = LLVMBuildTrunc(c->b, v, al_ity(c, to.bits), "");
	if (is_float_ty(to))
		v = LLVMBuildBitCast(c->b, v, al_ty(c, to), "");
	return v;
}

/* ---- names ------------------------------------------------------------------------------ */

static struct al_var tomb = {.name = ""};   /* a removed name (pop_to) */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct al_var **find_slot(al *c, const char *name)
{
	size_t i = hash_str(name) & (c->cap - 1);
	while (c->tab[i] && strcmp(c->tab[i]->name, name))
		i = (i + 1) & (c->cap - 1);
	return &c->tab[i];
}

struct al_var *al_lookup(al *c, const char *name)
{
	if (!c->cap)
		return NULL;
	return *find_slot(c, name);
}

static void grow(al *c)
{
	size_t old = c->cap;
	struct al_var **ot = c->tab;
	c->cap = old ? old * 2 : 1024;
	c->tab = calloc(c->cap, sizeof(*c->tab));
	if (!c->tab)
		abort();
	for (size_t i = 0; i < old; i++)
		if (ot[i] && ot[i] != &tomb)
			*find_slot(c, ot[i]->name) = ot[i];
	free(ot);
}

static struct al_var *declare(al *c, const char *name)
{
	if ((c->n + 1) * 2 > c->cap)
		grow(c);
	struct al_var *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	v->name = name;
	v->depth = c->depth;
	struct al_var **s = find_slot(c, name);
	if (*s) {
		v->shadow = *s;
	} else {
		c->n++;
	}
	*s = v;
	if (c->nstack == c->capstack) {
		c->capstack = c->capstack ? c->capstack * 2 : 256;
		c->stack = realloc(c->stack, c->capstack * sizeof(*c->stack));
		if (!c->stack)
			abort();
	}
	c->stack[c->nstack++] = v;
	return v;
}

/* Remove every declaration made at depth >= d (a block closes, a function ends). A name's slot
 * takes the declaration it shadowed, or a tombstone (a NULL would cut other names' probe chains
 * while more are removed); tombstones go when the table is rebuilt at the end. */
static void pop_to(al *c, unsigned d)
{
	bool tombs = false;
	while (c->nstack && c->stack[c->nstack - 1]->depth >= d) {
		struct al_var *v = c->stack[--c->nstack];
		struct al_var **s = find_slot(c, v->name);
		if (*s == v) {
			*s = v->shadow ? v->shadow : &tomb;
			if (!v->shadow) {
				tombs = true;
				c->n--;
			}
		}
		free(v);
	}
	if (tombs) {
		size_t cap = c->cap;
		struct al_var **ot = c->tab;
		c->tab = calloc(cap, sizeof(*c->tab));
		if (!c->tab)
			abort();
		for (size_t i = 0; i < cap; i++)
			if (ot[i] && ot[i] != &tomb)
				*find_slot(c, ot[i]->name) = ot[i];
		free(ot);
	}
}

/* ---- blocks ----------------------------------------------------------------------------- */

LLVMBasicBlockRef al_new_block(al *c, const char *name)
{
	return LLVMAppendBasicBlockInContext(c->ctx, c->fn->fn, name);
}

void al_ensure_block(al *c)
{
	LLVMBasicBlockRef bb = LLVMGetInsertBlock(c->b);
	if (LLVMGetBasicBlockTerminator(bb))
		LLVMPositionBuilderAtEnd(c->b, al_new_block(c, "dead"));
}

void al_goto(al *c, LLVMBasicBlockRef bb)
{
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(c->b)))
		LLVMBuildBr(c->b, bb);
	LLVMPositionBuilderAtEnd(c->b, bb);
}

LLVMValueRef al_call(al *c, const char *name, LLVMTypeRef ret, unsigned n, LLVMValueRef *args)
{
	LLVMTypeRef pt[16];
	for (unsigned i = 0; i < n; i++)
		pt[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, n, 0);
	LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
	if (!f)
		f = LLVMAddFunction(c->mod, name, fty);
	return LLVMBuildCall2(c->b, fty, f, args, n, "");
}

LLVMValueRef al_intr(al *c, const char *name, LLVMTypeRef *ovl, unsigned novl, unsigned n, LLVMValueRef *args)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	if (!id) {
		al_fail(c, "LLVM 19 has no intrinsic %s", name);
		return NULL;
	}
	LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, ovl, novl);
	LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, ovl, novl);
	return LLVMBuildCall2(c->b, fty, f, args, n, "");
}

/* ---- operands --------------------------------------------------------------------------- */

atype al_insn_type_n(const ir_insn *in, int n)
{
	for (unsigned i = 0; i < in->nmods; i++) {
		atype t = al_type_parse(in->mods[i]);
		if (t.bits && n-- == 0)
			return t;
	}
	return AT(0, 0);
}

atype al_insn_type(const ir_insn *in)
{
	for (unsigned i = in->nmods; i-- > 0;) {
		atype t = al_type_parse(in->mods[i]);
		if (t.bits)
			return t;
	}
	return AT(0, 0);
}

bool al_mod(const ir_insn *in, const char *mod) { return ir_insn_has_mod(in, mod); }

static LLVMValueRef reg_slot(al *c, struct al_var *v)
{
	if (!v->slot) {
		v->slot_ty = al_ty(c, v->t.k == 'f' && v->t.bits == 16 ? AT('b', 16) : v->t);
		v->slot = LLVMBuildAlloca(c->ab, v->slot_ty, v->name);
	}
	return v->slot;
}

int al_space_as(enum ir_space sp)
{
	switch (sp) {
	case IR_SPACE_GLOBAL: return AS_GLOBAL;
	case IR_SPACE_SHARED: return AS_SHARED;
	case IR_SPACE_LOCAL: return AS_LOCAL;
	case IR_SPACE_CONST: return AS_CONST;
	case IR_SPACE_PARAM: return AS_LOCAL;
	default: return AS_GENERIC;
	}
}

/* A variable's address in its own state space, as an i64 (what `mov %rd, var` gives). */
static LLVMValueRef var_space_addr(al *c, struct al_var *v)
{
	int as = v->is_param ? AS_LOCAL : v->space;
	LLVMValueRef p = v->slot;
	if ((int)LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != as)
		p = LLVMBuildAddrSpaceCast(c->b, p, al_ptr(c, as), "");
	return LLVMBuildPtrToInt(c->b, p, al_ity(c, 64), "");
}

static LLVMValueRef float_literal(al *c, const ir_operand *op, atype want)
{
	const char *s = op->text ? op->text : op->name;
	if (!s)
		return NULL;
	uint64_t bits;
	unsigned w;
	if (s[0] == '0' && (s[1] == 'f' || s[1] == 'F')) {
		bits = strtoull(s + 2, NULL, 16);
		w = 32;
	} else if (s[0] == '0' && (s[1] == 'd' || s[1] == 'D')) {
		bits = strtoull(s + 2, NULL, 16);
		w = 64;
	} else {
		double d = strtod(s, NULL);
		memcpy(&bits, &d, 8);
		w = 64;
	}
	if (want.bits == w || want.k != 'f') {
		LLVMValueRef k = al_ci(c, w, bits);
		return al_bits(c, k, AT('b', w), want);
	}
	if (w == 64 && want.bits == 32) {
		double d;
		memcpy(&d, &bits, 8);
		float f = (float)d;
		uint32_t b32;
		memcpy(&b32, &f, 4);
		return al_bits(c, al_ci(c, 32, b32), AT('b', 32), want);
	}
	if (w == 32 && want.bits == 64) {
		float f;
		uint32_t b32 = (uint32_t)bits;
		memcpy(&f, &b32, 4);
		double d = f;
		memcpy(&bits, &d, 8);
		return al_bits(c, al_ci(c, 64, bits), AT('b', 64), want);
	}
	return al_bits(c, al_ci(c, w, bits), AT('b', w), want);
}

static struct al_func *func_named(al *c, const char *name)
{
	for (size_t i = 0; i < c->nfuncs; i++)
		if (!strcmp(c->funcs[i].f->name, name))
			return &c->funcs[i];
	return NULL;
}

LLVMValueRef al_read(al *c, const ir_operand *op, atype want)
{
	if (!want.bits) {
		al_fail(c, "an operand without a type");
		return NULL;
	}
	switch (op->kind) {
	case IR_OPND_REG: {
		struct al_var *v = al_lookup(c, op->name);
		LLVMValueRef r;
		if (!v) {
			atype st;
			int s = al_special_reg(c, op->name, &r, &st);
			if (s < 0)
				return NULL;
			if (s == 1) {
				al_fail(c, "register %s is not declared", op->name);
				return NULL;
			}
			return al_bits(c, r, st, want);
		}
		if (!v->is_reg) {
			r = var_space_addr(c, v);
			return al_bits(c, r, AT('u', 64), want);
		}
		reg_slot(c, v);
		r = LLVMBuildLoad2(c->b, v->slot_ty, v->slot, "");
		atype vt = v->t.k == 'f' && v->t.bits == 16 ? AT('b', 16) : v->t;
		r = al_bits(c, r, vt, want);
		if (op->neg && want.k == 'p')
			r = LLVMBuildNot(c->b, r, "");
		else if (op->neg && is_float_ty(want))
			r = LLVMBuildFNeg(c->b, r, "");
		else if (op->neg)
			r = LLVMBuildNeg(c->b, r, "");
		return r;
	}
	case IR_OPND_INT:
		if (want.k == 'p')
			return LLVMConstInt(al_ity(c, 1), op->ival != 0, 0);
		if (is_float_ty(want))
			return LLVMConstBitCast(al_ci(c, want.bits, (uint64_t)op->ival), al_ty(c, want));
		return al_ci(c, want.bits, (uint64_t)op->ival);
	case IR_OPND_FLOAT:
		return float_literal(c, op, want);
	case IR_OPND_SYMBOL: {
		struct al_var *v = al_lookup(c, op->name);
		if (v && v->is_reg) {   /* a register named without '%' */
			ir_operand r = *op;
			r.kind = IR_OPND_REG;
			return al_read(c, &r, want);
		}
		if (v && !v->is_reg)
			return al_bits(c, var_space_addr(c, v), AT('u', 64), want);
		struct al_func *f = func_named(c, op->name);
		if (f)
			return al_bits(c, LLVMBuildPtrToInt(c->b, f->fn, al_ity(c, 64), ""), AT('u', 64), want);
		if (!strcmp(op->name, "WARP_SZ"))
			return al_bits(c, al_ci(c, 32, 32), AT('u', 32), want);
		al_fail(c, "%s is not declared", op->name);
		return NULL;
	}
	default:
		al_fail(c, "an operand of a form that cannot be read here");
		return NULL;
	}
}

LLVMValueRef al_read_pred(al *c, const ir_operand *op) { return al_read(c, op, AT('p', 1)); }

int al_write(al *c, const ir_operand *op, atype t, LLVMValueRef v)
{
	if (!v)
		return -1;
	if (op->kind == IR_OPND_SYMBOL && !strcmp(op->name, "_"))
		return 0;
	if (op->kind != IR_OPND_REG && op->kind != IR_OPND_SYMBOL)
		return al_fail(c, "a result operand that is not a register");
	struct al_var *r = al_lookup(c, op->name);
	if (!r || !r->is_reg)
		return al_fail(c, "register %s is not declared", op->name);
	reg_slot(c, r);
	atype vt = r->t.k == 'f' && r->t.bits == 16 ? AT('b', 16) : r->t;
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	LLVMBuildStore(c->b, al_bits(c, v, t, vt), r->slot);
	return 0;
}

LLVMValueRef al_to_ptr(al *c, LLVMValueRef a, int as)
{
	return LLVMBuildIntToPtr(c->b, a, al_ptr(c, as), "");
}

LLVMValueRef al_address(al *c, const ir_operand *op, enum ir_space sp)
{
	int as = al_space_as(sp);
	if (op->kind != IR_OPND_ADDR) {
		al_fail(c, "an address operand that is not [...]");
		return NULL;
	}
	LLVMTypeRef i8 = al_ity(c, 8);
	if (op->name) {
		struct al_var *v = al_lookup(c, op->name);
		if (v && !v->is_reg) {
			LLVMValueRef p = v->slot;
			if (op->ival) {
				LLVMValueRef off = al_ci(c, 64, (uint64_t)op->ival);
				p = LLVMBuildGEP2(c->b, i8, p, &off, 1, "");
			}
			int vas = (int)LLVMGetPointerAddressSpace(LLVMTypeOf(p));
			if (!v->is_param && vas != as)
				p = LLVMBuildAddrSpaceCast(c->b, p, al_ptr(c, as), "");
			return p;
		}
		ir_operand r = *op;
		r.kind = IR_OPND_REG;
		r.neg = false;
		LLVMValueRef a = al_read(c, &r, AT('u', 64));
		if (!a)
			return NULL;
		if (op->ival)
			a = LLVMBuildAdd(c->b, a, al_ci(c, 64, (uint64_t)op->ival), "");
		return al_to_ptr(c, a, as);
	}
	return al_to_ptr(c, al_ci(c, 64, (uint64_t)op->ival), as);
}

/* ---- declarations ----------------------------------------------------------------------- */

static uint64_t dims_count(const char *dims, bool *open)
{
	*open = false;
	if (!dims)
		return 1;
	uint64_t n = 1;
	for (const char *p = dims; (p = strchr(p, '['));) {
		p++;
		if (*p == ']') {
			*open = true;
			return 0;
		}
		if (__builtin_mul_overflow(n, strtoull(p, NULL, 0), &n))
			return UINT64_MAX;   /* saturates: decl_bytes' callers refuse it */
	}
	return n;
}

/* A variable's bytes; UINT64_MAX where the count overflows (a hostile .global x[2^70]). */
static uint64_t decl_bytes(const ir_decl *d, bool *open)
{
	atype t = al_type_parse(d->type);
	unsigned vec = d->vec ? (unsigned)atoi(d->vec + 2) : 1;
	unsigned eb = t.k == 'p' ? 1 : t.bits / 8;
	uint64_t n = dims_count(d->dims, open), bytes;
	if (__builtin_mul_overflow((uint64_t)eb * vec, n, &bytes))
		return UINT64_MAX;
	return bytes;
}

/* The most bytes a variable lowered here may have, and an initialized one, whose byte image is
 * built in host memory and then as an LLVM constant. */
#define AL_MAX_VAR_BYTES (1ull << 32)
#define AL_MAX_INIT_BYTES (64ull << 20)

/* An address in an initializer: `sym`, `generic(sym)`, either with +N / -N; the 8 bytes at
 * offset stay zero in the byte image. */
struct al_reloc {
	uint64_t offset;
	int64_t addend;
	bool generic;
	char name[256];
};

/* An initializer "{1, 2.5, 0f3F800000}" or "7" as little-endian bytes of the element type;
 * addresses of variables and functions go to relocs (NULL: they are an error). */
static int init_bytes_r(al *c, const ir_decl *d, uint8_t *out, uint64_t size, struct al_reloc **relocs, size_t *nrelocs)
{
	atype t = al_type_parse(d->type);
	unsigned eb = t.bits / 8;
	const char *p = d->init;
	uint64_t at = 0;
	struct ir_init_elem e;
	enum ir_init_kind k;
	while (at < size && (k = ir_init_next(&p, t.k, t.bits, &e)) != IR_INIT_END) {
		if (k == IR_INIT_BAD)
			return al_fail(c, "the initializer of %s holds an operand that cannot be read", d->name);
		if (k == IR_INIT_SYMBOL) {
			if (!relocs || eb != 8 || at % 8)
				return al_fail(c, "the initializer of %s holds an address (%s) where no 64-bit address fits: "
					       "not lowered", d->name, e.name);
			*relocs = realloc(*relocs, (*nrelocs + 1) * sizeof(**relocs));
			if (!*relocs)
				abort();
			struct al_reloc *r = &(*relocs)[(*nrelocs)++];
			memset(r, 0, sizeof(*r));
			memcpy(r->name, e.name, sizeof(r->name));
			r->offset = at;
			r->generic = e.generic;
			r->addend = e.addend;
			e.raw = 0;
		}
		for (unsigned b = 0; b < eb && at < size; b++)
			out[at++] = (uint8_t)(e.raw >> (8 * b));
	}
	return 0;
}

static int space_of(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, ".global"))
		return AS_GLOBAL;
	if (!strcmp(s, ".shared"))
		return AS_SHARED;
	if (!strcmp(s, ".const"))
		return AS_CONST;
	if (!strcmp(s, ".local"))
		return AS_LOCAL;
	return -1;
}

/* A module-scope variable (or a function's .shared/.global/.const one, hoisted). */
static int module_var(al *c, const ir_decl *d, bool hoisted)
{
	int as = space_of(d->space);
	if (as < 0) {
		if (d->space && (!strcmp(d->space, ".tex") || !strcmp(d->space, ".surf") || !strcmp(d->space, ".sampler")))
			return al_fail(c, "texture references (%s) are not lowered", d->name);
		return 0;
	}
	bool open;
	uint64_t bytes = decl_bytes(d, &open);
	if (bytes > AL_MAX_VAR_BYTES)
		return al_fail(c, "%s: more than 4 GiB (%s%s): not lowered", d->name, d->type ? d->type : "", d->dims ? d->dims : "");
	unsigned align = d->align ? d->align : 4;
	if (align < 4 && bytes >= 4)
		align = 4;
	struct al_var *v = declare(c, d->name);
	v->space = as;
	v->t = al_type_parse(d->type);
	if (!v->t.bits && d->type && !strcmp(d->type, ".texref"))
		return al_fail(c, "texture references (%s) are not lowered", d->name);
	LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 8), open ? 0 : bytes);
	char nm[512];
	const char *gname = d->name;
	if (hoisted) {
		snprintf(nm, sizeof(nm), "%s.%s.%u", c->fn->f->name, d->name, c->uniq++);
		gname = nm;
	}
	if (as == AS_LOCAL) {   /* a function's .local: one per thread (an alloca in its entry) */
		if (!hoisted)   /* module scope: no function to put it in (LLVM has no per-thread globals) */
			return al_fail(c, "module-scope .local variables (%s) are not lowered", d->name);
		v->slot = LLVMBuildAlloca(c->ab, ty, d->name);
		LLVMSetAlignment(v->slot, align);
		return 0;
	}
	LLVMValueRef g = LLVMAddGlobalInAddressSpace(c->mod, ty, gname, (unsigned)as);
	LLVMSetAlignment(g, align);
	bool ext = d->linkage && !strcmp(d->linkage, ".extern");
	if (as == AS_SHARED) {
		if (!open && !ext)
			LLVMSetInitializer(g, LLVMGetUndef(ty));
		LLVMSetLinkage(g, open || ext ? LLVMExternalLinkage : LLVMInternalLinkage);
	} else if (ext) {
		LLVMSetLinkage(g, LLVMExternalLinkage);
	} else {
		if (!d->init) {   /* zeros: no byte image in host memory */
			LLVMSetInitializer(g, LLVMConstNull(ty));
		} else {
			if (bytes > AL_MAX_INIT_BYTES)
				return al_fail(c, "%s: an initialized variable of more than 64 MiB (%s%s) is not lowered", d->name,
					       d->type ? d->type : "", d->dims ? d->dims : "");
			uint8_t *buf = calloc(1, bytes ? bytes : 1);
			if (!buf)
				abort();
			struct al_reloc *rel = NULL;
			size_t nrel = 0;
			if (init_bytes_r(c, d, buf, bytes, hoisted ? NULL : &rel, &nrel) < 0) {
				free(buf);
				free(rel);
				return -1;
			}
			if (nrel) {   /* addresses: an array of u64 whose initializer is set once every symbol exists */
				free(rel);
				free(buf);
				if (bytes % 8)
					return al_fail(c, "the initializer of %s holds addresses in %llu bytes: not lowered", d->name,
						       (unsigned long long)bytes);
				LLVMValueRef g2 = LLVMAddGlobalInAddressSpace(c->mod, LLVMArrayType2(al_ity(c, 64), bytes / 8), "", (unsigned)as);
				LLVMSetAlignment(g2, align < 8 ? 8 : align);
				LLVMDeleteGlobal(g);
				LLVMSetValueName2(g2, gname, strlen(gname));
				g = g2;
				c->pending = realloc(c->pending, (c->npending + 1) * sizeof(*c->pending));
				if (!c->pending)
					abort();
				c->pending[c->npending].g = g;
				c->pending[c->npending++].d = d;
			} else {
				LLVMSetInitializer(g, LLVMConstStringInContext(c->ctx, (const char *)buf, (unsigned)bytes, 1));
				free(buf);
			}
		}
		LLVMSetLinkage(g, hoisted ? LLVMInternalLinkage : LLVMExternalLinkage);
		if (as == AS_CONST && c->target == AMDGPU_TARGET_AMDGCN)
			LLVMSetGlobalConstant(g, 0);
	}
	if (c->target == AMDGPU_TARGET_AMDGCN && as != AS_SHARED && !hoisted)
		LLVMSetVisibility(g, LLVMProtectedVisibility);
	v->slot = g;
	return 0;
}

static int local_decl(al *c, const ir_decl *d)
{
	if (!strcmp(d->space, ".reg")) {
		atype t = al_type_parse(d->type);
		if (!t.bits)
			return al_fail(c, "register %s of type %s is not lowered", d->name, d->type ? d->type : "?");
		if (d->vec || d->dims)
			return al_fail(c, "vector or array registers (%s) are not lowered", d->name);
		if (d->count > 0) {
			for (int i = 0; i < d->count; i++) {
				struct al_var *v = declare(c, ir_strfmt((ir_module *)c->m, "%s%d", d->name, i));
				v->is_reg = true;
				v->t = t;
			}
		} else {
			struct al_var *v = declare(c, d->name);
			v->is_reg = true;
			v->t = t;
		}
		return 0;
	}
	if (!strcmp(d->space, ".local") || !strcmp(d->space, ".param")) {
		bool open;
		uint64_t bytes = decl_bytes(d, &open);
		if (bytes > AL_MAX_VAR_BYTES)
			return al_fail(c, "%s: more than 4 GiB (%s%s): not lowered", d->name, d->type ? d->type : "",
				       d->dims ? d->dims : "");
		struct al_var *v = declare(c, d->name);
		v->space = AS_LOCAL;
		v->is_param = !strcmp(d->space, ".param");
		v->decl = d;
		v->t = al_type_parse(d->type);
		LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 8), bytes ? bytes : 1);
		v->slot = LLVMBuildAlloca(c->ab, ty, d->name);
		LLVMSetAlignment(v->slot, d->align ? d->align : 8);
		if (!v->is_param && c->target == AMDGPU_TARGET_NVPTX) {
			/* nvptx allocas are generic pointers: keep the local view as the variable's pointer */
			v->slot = LLVMBuildAddrSpaceCast(c->ab, v->slot, al_ptr(c, AS_LOCAL), "");
		}
		return 0;
	}
	return module_var(c, d, true);
}

/* ---- signatures ------------------------------------------------------------------------- */

LLVMTypeRef al_param_type(al *c, const ir_decl *d)
{
	bool open;
	if (d->dims || d->vec) {
		uint64_t bytes = decl_bytes(d, &open);
		unsigned a = d->align ? d->align : 1;
		if (a > 8)
			a = 8;
		if (bytes % a)
			a = 1;
		return LLVMArrayType2(al_ity(c, a * 8), bytes / a);
	}
	atype t = al_type_parse(d->type);
	if (t.k == 'f' && t.bits == 16)
		t = AT('b', 16);
	return al_ty(c, t.bits ? t : AT('b', 32));
}

static int declare_funcs(al *c)
{
	size_t n = 0;
	for (ir_top *t = c->m->first; t; t = t->next)
		n += t->kind == IR_TOP_FUNC;
	c->funcs = calloc(n ? n : 1, sizeof(*c->funcs));
	if (!c->funcs)
		abort();
	for (ir_top *t = c->m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || ir_skip__has(c->skip, t->func.name))
			continue;
		const ir_func *f = &t->func;
		struct al_func *af = func_named(c, f->name);
		if (af) {   /* a prototype and its definition */
			if (f->has_body)
				af->f = f;
			continue;
		}
		af = &c->funcs[c->nfuncs++];
		af->f = f;
		if (f->nparams > 64 || f->nrets > 16)
			return al_fail(c, "function %s has too many parameters", f->name);
		for (unsigned i = 0; i < f->nparams; i++)
			af->param_ty[i] = al_param_type(c, &f->params[i]);
		if (f->nrets == 0) {
			af->ret_ty = LLVMVoidTypeInContext(c->ctx);
		} else if (f->nrets == 1) {
			af->ret_ty = al_param_type(c, &f->rets[0]);
		} else {
			LLVMTypeRef el[16];
			for (unsigned i = 0; i < f->nrets; i++)
				el[i] = al_param_type(c, &f->rets[i]);
			af->ret_ty = LLVMStructTypeInContext(c->ctx, el, f->nrets, 0);
		}
		af->fty = LLVMFunctionType(af->ret_ty, af->param_ty, f->nparams, 0);
		af->fn = LLVMAddFunction(c->mod, f->name, af->fty);
	}
	/* definitions after prototypes: the signature is the definition's */
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct al_func *af = &c->funcs[i];
		if (af->f->is_entry) {
			LLVMSetFunctionCallConv(af->fn, c->target == AMDGPU_TARGET_AMDGCN ? LLVMAMDGPUKERNELCallConv
											  : LLVMCCallConv);
			if (c->target == AMDGPU_TARGET_NVPTX) {
				LLVMMetadataRef md[3] = {
					LLVMValueAsMetadata(af->fn),
					LLVMMDStringInContext2(c->ctx, "kernel", 6),
					LLVMValueAsMetadata(al_ci(c, 32, 1)),
				};
				LLVMAddNamedMetadataOperand(c->mod, "nvvm.annotations",
							    LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, md, 3)));
			}
		} else if (af->f->has_body) {
			LLVMSetLinkage(af->fn, af->f->linkage && !strcmp(af->f->linkage, ".visible") ? LLVMExternalLinkage
												   : LLVMInternalLinkage);
		}
	}
	return 0;
}

/* .maxntid / .reqntid: the work-group size bounds the target wants. */
static void perf_attrs(al *c, struct al_func *af)
{
	for (unsigned i = 0; i < af->f->nperf; i++) {
		const char *p = af->f->perf[i];
		unsigned x = 1, y = 1, z = 1;
		bool req = !strncmp(p, ".reqntid", 8);
		if (strncmp(p, ".maxntid", 8) && !req)
			continue;
		if (sscanf(p + 8, " %u , %u , %u", &x, &y, &z) < 1)
			continue;
		unsigned n = x * y * z;
		if (c->target == AMDGPU_TARGET_AMDGCN) {
			char v[32];
			snprintf(v, sizeof(v), "%u,%u", req ? n : 1, n);
			LLVMAttributeRef a = LLVMCreateStringAttribute(c->ctx, "amdgpu-flat-work-group-size", 27, v,
								       (unsigned)strlen(v));
			LLVMAddAttributeAtIndex(af->fn, LLVMAttributeFunctionIndex, a);
		} else {
			const char *names[3] = {req ? "reqntidx" : "maxntidx", req ? "reqntidy" : "maxntidy",
						req ? "reqntidz" : "maxntidz"};
			unsigned vals[3] = {x, y, z};
			for (int k = 0; k < 3; k++) {
				LLVMMetadataRef md[3] = {
					LLVMValueAsMetadata(af->fn),
					LLVMMDStringInContext2(c->ctx, names[k], strlen(names[k])),
					LLVMValueAsMetadata(al_ci(c, 32, vals[k])),
				};
				LLVMAddNamedMetadataOperand(c->mod, "nvvm.annotations",
							    LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, md, 3)));
			}
		}
	}
}

/* ---- function bodies -------------------------------------------------------------------- */

static LLVMBasicBlockRef label_block(al *c, const char *name)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].name, name))
			return c->labels[i].bb;
	return NULL;
}

LLVMBasicBlockRef al_label(al *c, const char *name) { return label_block(c, name); }

static int dispatch(al *c, const ir_insn *in)
{
	if (!ir_insn_operands_ok(in))
		return al_unsupported(c, in, "too few operands");
	int (*fam[])(al *, const ir_insn *) = {al_mma, al_extra, al_memory, al_int, al_convert, al_float, al_control, al_warp, al_texture};
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		int r = fam[i](c, in);
		if (r)
			return r < 0 ? -1 : 0;
	}
	return al_unsupported(c, in, "no lowering for this instruction");
}

void al_return(al *c)
{
	const ir_func *f = c->fn->f;
	if (f->nrets == 0) {
		LLVMBuildRetVoid(c->b);
	} else if (f->nrets == 1) {
		LLVMBuildRet(c->b, LLVMBuildLoad2(c->b, c->fn->ret_ty, c->ret_slots[0], ""));
	} else {
		LLVMValueRef agg = LLVMGetUndef(c->fn->ret_ty);
		for (unsigned i = 0; i < f->nrets; i++) {
			LLVMTypeRef et = LLVMStructGetTypeAtIndex(c->fn->ret_ty, i);
			agg = LLVMBuildInsertValue(c->b, agg, LLVMBuildLoad2(c->b, et, c->ret_slots[i], ""), i, "");
		}
		LLVMBuildRet(c->b, agg);
	}
}

static int lower_body(al *c, struct al_func *af)
{
	const ir_func *f = af->f;
	unsigned cluster = f->is_entry ? ir_func_required_cluster(f) : 1;
	c->cur = NULL;
	if (cluster > 1)   /* clusters are one block here (al_cluster): mapa and its kin would lie */
		return al_fail(c, "the kernel requires clusters of %u blocks (.reqnctapercluster): clusters of more than "
			       "one block are not lowered", cluster);
	c->fn = af;
	c->depth = 1;
	c->nlabels = 0;
	c->carry = NULL;
	c->arena = c->arena_top = NULL;
	c->entry = LLVMAppendBasicBlockInContext(c->ctx, af->fn, "entry");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, af->fn, "body");
	LLVMPositionBuilderAtEnd(c->ab, c->entry);
	LLVMPositionBuilderAtEnd(c->b, body);
	perf_attrs(c, af);
	/* parameters: each in an alloca of its type, which ld.param reads at any offset */
	for (unsigned i = 0; i < f->nparams; i++) {
		const ir_decl *d = &f->params[i];
		struct al_var *v = declare(c, d->name);
		v->space = AS_LOCAL;
		v->is_param = true;
		v->t = al_type_parse(d->type);
		v->slot = LLVMBuildAlloca(c->ab, af->param_ty[i], d->name);
		LLVMSetAlignment(v->slot, 8);
		LLVMBuildStore(c->ab, LLVMGetParam(af->fn, i), v->slot);
	}
	free(c->ret_slots);
	c->ret_slots = calloc(f->nrets + 1, sizeof(LLVMValueRef));
	for (unsigned i = 0; i < f->nrets; i++) {
		const ir_decl *d = &f->rets[i];
		struct al_var *v = declare(c, d->name);
		v->space = AS_LOCAL;
		v->is_param = true;
		v->t = al_type_parse(d->type);
		LLVMTypeRef rt = f->nrets == 1 ? af->ret_ty : LLVMStructGetTypeAtIndex(af->ret_ty, i);
		v->slot = c->ret_slots[i] = LLVMBuildAlloca(c->ab, rt, d->name);
		LLVMSetAlignment(v->slot, 8);
		LLVMBuildStore(c->ab, LLVMConstNull(rt), v->slot);
	}
	size_t nl = 0;
	for (ir_stmt *s = f->first; s; s = s->next)
		nl += s->kind == IR_STMT_LABEL;
	c->labels = realloc(c->labels, (nl + 1) * sizeof(*c->labels));
	for (ir_stmt *s = f->first; s; s = s->next)
		if (s->kind == IR_STMT_LABEL) {
			c->labels[c->nlabels].name = s->text;
			c->labels[c->nlabels++].bb = al_new_block(c, s->text);
		}
	for (ir_stmt *s = f->first; s && !c->failed; s = s->next) {
		c->cur = s;
		switch (s->kind) {
		case IR_STMT_DECL:
			if (local_decl(c, &s->decl) < 0)
				return -1;
			break;
		case IR_STMT_LABEL:
			al_goto(c, label_block(c, s->text));
			break;
		case IR_STMT_BLOCK_OPEN:
			c->depth++;
			break;
		case IR_STMT_BLOCK_CLOSE:
			pop_to(c, c->depth);
			c->depth--;
			break;
		case IR_STMT_DIRECTIVE:
			break;
		case IR_STMT_INSN: {
			const ir_insn *in = &s->insn;
			al_ensure_block(c);
			if (in->guard) {
				ir_operand g = {.kind = IR_OPND_REG, .name = in->guard, .neg = in->guard_neg};
				LLVMValueRef p = al_read_pred(c, &g);
				if (!p)
					return -1;
				bool is_bra = !strcmp(in->opcode, "bra") && in->nops == 1 && in->ops[0].kind == IR_OPND_SYMBOL;
				LLVMBasicBlockRef cont = al_new_block(c, "cont");
				if (is_bra) {
					LLVMBasicBlockRef t = label_block(c, in->ops[0].name);
					if (!t)
						return al_fail(c, "no label %s", in->ops[0].name);
					LLVMBuildCondBr(c->b, p, t, cont);
				} else {
					LLVMBasicBlockRef then = al_new_block(c, "then");
					LLVMBuildCondBr(c->b, p, then, cont);
					LLVMPositionBuilderAtEnd(c->b, then);
					if (dispatch(c, in) < 0)
						return -1;
					if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(c->b)))
						LLVMBuildBr(c->b, cont);
				}
				LLVMPositionBuilderAtEnd(c->b, cont);
			} else if (dispatch(c, in) < 0) {
				return -1;
			}
			break;
		}
		}
	}
	if (c->failed)
		return -1;
	c->cur = NULL;
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(c->b)))
		al_return(c);
	LLVMBuildBr(c->ab, body);
	pop_to(c, 1);
	return 0;
}

/* Initializers holding addresses: u64 words, each a number or ptrtoint(symbol + addend). */
static int finish_initializers(al *c)
{
	for (size_t i = 0; i < c->npending; i++) {
		const ir_decl *d = c->pending[i].d;
		LLVMValueRef g = c->pending[i].g;
		bool open;
		uint64_t bytes = decl_bytes(d, &open);
		uint8_t *buf = calloc(1, bytes ? bytes : 1);
		struct al_reloc *rel = NULL;
		size_t nrel = 0;
		if (!buf)
			abort();
		if (init_bytes_r(c, d, buf, bytes, &rel, &nrel) < 0) {
			free(buf);
			free(rel);
			return -1;
		}
		uint64_t n = bytes / 8;
		LLVMValueRef *w = calloc(n ? n : 1, sizeof(*w));
		if (!w)
			abort();
		for (uint64_t k = 0; k < n; k++) {
			uint64_t v;
			memcpy(&v, buf + 8 * k, 8);
			w[k] = al_ci(c, 64, v);
		}
		for (size_t r = 0; r < nrel; r++) {
			struct al_var *v = al_lookup(c, rel[r].name);
			struct al_func *f = func_named(c, rel[r].name);
			LLVMValueRef p = v && !v->is_reg && v->depth == 0 ? v->slot : f ? f->fn : NULL;
			if (!p) {   /* the message names rel[r]: said before rel is freed */
				int rc = al_fail(c, "the initializer of %s holds the address of %s, which is not declared",
						 d->name, rel[r].name);
				free(buf);
				free(rel);
				free(w);
				return rc;
			}
			if (rel[r].generic && LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != AS_GENERIC)
				p = LLVMConstAddrSpaceCast(p, al_ptr(c, AS_GENERIC));
			if (rel[r].addend) {
				LLVMValueRef off = al_ci(c, 64, (uint64_t)rel[r].addend);
				p = LLVMConstGEP2(al_ity(c, 8), p, &off, 1);
			}
			w[rel[r].offset / 8] = LLVMConstPtrToInt(p, al_ity(c, 64));
		}
		LLVMSetInitializer(g, LLVMConstArray2(al_ity(c, 64), w, n));
		free(buf);
		free(rel);
		free(w);
	}
	return 0;
}

/* One pass: every function not in skip is lowered into a new module of ctx. A function whose
 * body cannot be lowered is added to skip with its reason and the pass goes on to the others
 * (NULL, and *again set, so that the caller lowers once more without it and what needs it). NULL
 * without *again on a failure of the module itself (err set). */
static LLVMModuleRef lower_pass(LLVMContextRef ctx, const ir_module *m, const struct amdgpu_options *o,
				const char *triple, const char *layout, struct ir_skip *skip, bool *again, char *err,
				size_t errlen)
{
	al c = {.ctx = ctx, .target = o->target, .opts = o, .m = m, .err = err, .errlen = errlen, .skip = skip};
	err[0] = 0;
	*again = false;
	c.wave64 = o->target == AMDGPU_TARGET_AMDGCN && (!o->arch || strncmp(o->arch, "gfx1", 4) || !strcmp(o->arch, "gfx1"));
	c.mod = LLVMModuleCreateWithNameInContext("gpuprobe", ctx);
	LLVMSetTarget(c.mod, triple);
	LLVMSetDataLayout(c.mod, layout);
	c.b = LLVMCreateBuilderInContext(ctx);
	c.ab = LLVMCreateBuilderInContext(ctx);
	grow(&c);
	int r = declare_funcs(&c);
	for (ir_top *t = m->first; t && r == 0; t = t->next)
		if (t->kind == IR_TOP_DECL)
			r = module_var(&c, &t->decl, false);
	if (r == 0)
		r = finish_initializers(&c);
	for (size_t i = 0; i < c.nfuncs && r == 0; i++) {
		if (!c.funcs[i].f->has_body || lower_body(&c, &c.funcs[i]) == 0)
			continue;
		ir_skip__add(skip, c.funcs[i].f->name, err[0] ? err : "lowering failed");
		*again = true;
		pop_to(&c, 1);
		c.failed = 0;
		c.cur = NULL;
		err[0] = 0;
	}
	if (r < 0 || c.failed || *again) {
		LLVMDisposeModule(c.mod);
		c.mod = NULL;
		if (!*again && !err[0])
			snprintf(err, errlen, "lowering failed");
	}
	pop_to(&c, 0);
	free(c.tab);
	free(c.stack);
	free(c.funcs);
	free(c.labels);
	free(c.ret_slots);
	free(c.pending);
	LLVMDisposeBuilder(c.b);
	LLVMDisposeBuilder(c.ab);
	return c.mod;
}

/* Lower m into a new module of ctx. NULL on failure (err set). Functions that cannot be lowered
 * are left out with whatever calls them or takes their address, as spirv/ does: the module's other
 * kernels still lower, and o->skipped hears of each kernel left out. */
LLVMModuleRef amdgpu__lower(LLVMContextRef ctx, const ir_module *m, const struct amdgpu_options *o,
			    const char *triple, const char *layout, char *err, size_t errlen)
{
	err[0] = 0;
	if (m->address_size == 32) {
		snprintf(err, errlen, "PTX with 32-bit addresses (.address_size 32) is not lowered");
		return NULL;
	}
	struct ir_skip skip = {0};
	LLVMModuleRef mod;
	bool again;
	do {
		mod = lower_pass(ctx, m, o, triple, layout, &skip, &again, err, errlen);
		if (again && o->whole_module) {
			snprintf(err, errlen, "%s", skip.why[0]);
			ir_skip__free(&skip);
			return NULL;
		}
		if (again)
			ir_skip__close(&skip, m);
	} while (again);
	if (skip.n && (mod || !err[0])) {
		char *why = malloc(errlen);
		if (!why)
			abort();
		int r = ir_skip__report(&skip, m, mod ? o->skipped : NULL, o->skipped_arg, why, errlen);
		snprintf(err, errlen, "%s", why);
		free(why);
		if (r < 0 && mod) {
			LLVMDisposeModule(mod);
			mod = NULL;
		}
	}
	ir_skip__free(&skip);
	return mod;
}
