/* The module and function driver: module-scope variables, the shared window, function
 * signatures, registers, labels and blocks, guards, and dispatch to the instruction families. */
#include "spirv/lower.h"
#include "ptx-frontend/init_scan.h"
#include "ptx-frontend/ir_skip.h"
#include "spirv/block_order.h"
#include "common/env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- declarations ---------------------------------------------------------------------- */

/* Elements of "[16][4]" (16*4); 0 for "[]"; 1 when dims is NULL. */
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
		n *= strtoull(p, NULL, 0);
	}
	return n;
}

uint64_t lw_decl_bytes(const ir_decl *d, bool *open)
{
	ptype t = ptype_parse(d->type);
	unsigned vec = d->vec ? (unsigned)atoi(d->vec + 2) : 1;
	unsigned eb = t.k == 'p' ? 1 : t.bits / 8;
	return (uint64_t)eb * vec * dims_count(d->dims, open);
}

static struct sym *add_sym(lw *c, bool local)
{
	struct sym **arr = local ? &c->lsyms : &c->gsyms;
	size_t *n = local ? &c->nlsyms : &c->ngsyms;
	size_t *cap = local ? &c->caplsyms : &c->capgsyms;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		*arr = realloc(*arr, *cap * sizeof(**arr));
		if (!*arr)
			abort();
	}
	struct sym *s = &(*arr)[(*n)++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* A function's address: a token, not a location (SPIR-V for OpenCL has no function pointers).
 * Indirect calls compare the callee against the tokens of the functions whose address the module
 * takes (lower_ctrl.c). 0 when name is no function. */
uint64_t spirv_kernel_token(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a, 40 bits kept */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return LW_FUNC_TOKEN_TAG | (1ull << 44) | (h & 0xffffffffffull);
}

uint64_t lw_func_token(const ir_module *m, const char *name)
{
	uint64_t idx = 0;
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC)
			continue;
		idx++;
		if (!strcmp(t->func.name, name))
			return t->func.is_entry ? spirv_kernel_token(name) : LW_FUNC_TOKEN_TAG | idx;
	}
	return 0;
}

/* Parse an initializer "{1, 2, 3}" or "5" into little-endian bytes of the element type. A
 * function's name gives its token; a data symbol (`generic(sym)+8`, `sym`) a relocation in
 * relocs (when given; else an error) with zero bytes in place. */
int lw_init_bytes_r(lw *c, const ir_decl *d, uint8_t *out, uint64_t size, struct lw_reloc **relocs, size_t *nrelocs)
{
	ptype t = ptype_parse(d->type);
	unsigned eb = t.bits / 8;
	const char *p = d->init;
	uint64_t at = 0;
	struct ir_init_elem e;
	enum ir_init_kind k;
	while (at < size && (k = ir_init_next(&p, t.k, t.bits, &e)) != IR_INIT_END) {
		if (k == IR_INIT_BAD)
			return lw_fail(c, "the initializer of %s holds an operand that cannot be read", d->name);
		if (k == IR_INIT_SYMBOL) {
			uint64_t tok = lw_func_token(c->m, e.name);
			if (tok) {
				e.raw = tok + (uint64_t)e.addend;
			} else {
				if (!relocs || eb != 8 || at % 8)
					return lw_fail(c, "the initializer of %s holds the address of %s where no 64-bit "
							  "address fits: not lowered", d->name, e.name);
				*relocs = realloc(*relocs, (*nrelocs + 1) * sizeof(**relocs));
				struct lw_reloc *r = &(*relocs)[(*nrelocs)++];
				r->offset = at;
				r->addend = e.addend;
				snprintf(r->name, sizeof(r->name), "%s", e.name);
				e.raw = 0;
			}
		}
		for (unsigned b = 0; b < eb && at < size; b++)
			out[at++] = (uint8_t)(e.raw >> (8 * b));
	}
	return 0;
}

int lw_init_bytes(lw *c, const ir_decl *d, uint8_t *out, uint64_t size)
{
	return lw_init_bytes_r(c, d, out, size, NULL, NULL);
}

/* The initializer of a variable of `bytes` bytes: its type and constant. Up to LW_INIT_SPLIT
 * bytes, an i8 array of one constant per byte. Larger ones (cuRAND's 100 KiB tables) would make a
 * composite of more operands than SPIR-V's 16-bit word count holds, so they become a struct of
 * an array of chunks of LW_INIT_CHUNK u32 words, the remaining u32 words, and the remaining bytes
 * (each member only when non-empty): the same bytes in the same order, since accesses address the
 * variable through byte pointers. Sets *type and *init (0 for no initializer). */
#define LW_INIT_SPLIT 4096u
#define LW_INIT_CHUNK 1024u
static uint32_t const_composite(lw *c, uint32_t type, unsigned n, const uint32_t *elems)
{
	uint32_t *ops = malloc(((size_t)n + 2) * sizeof(uint32_t));
	if (!ops)
		abort();
	ops[0] = type;
	ops[1] = spv_id(c->e);
	memcpy(ops + 2, elems, (size_t)n * sizeof(uint32_t));
	spv_inst(&c->e->globals, SpvOpConstantComposite, n + 2, ops);
	uint32_t id = ops[1];
	free(ops);
	return id;
}

static void var_type_init(lw *c, const uint8_t *buf, uint64_t bytes, uint32_t *type, uint32_t *init)
{
	uint32_t i8 = spv_t_int(c->e, 8), i32 = spv_t_int(c->e, 32);
	bool zero = true;
	for (uint64_t i = 0; buf && i < bytes; i++)
		zero &= buf[i] == 0;
	if (bytes <= LW_INIT_SPLIT) {
		*type = spv_t_array(c->e, i8, spv_c_int(c->e, 32, bytes));
		*init = 0;
		if (buf && zero) {
			*init = spv_c_null(c->e, *type);
		} else if (buf) {
			uint32_t el[LW_INIT_SPLIT];
			for (uint64_t i = 0; i < bytes; i++)
				el[i] = spv_c_int(c->e, 8, buf[i]);
			*init = const_composite(c, *type, (unsigned)bytes, el);
		}
		return;
	}
	uint64_t nchunks = bytes / (4 * LW_INIT_CHUNK);
	uint64_t nwords = (bytes % (4 * LW_INIT_CHUNK)) / 4, ntail = bytes % 4;
	uint32_t chunk_t = spv_t_array(c->e, i32, spv_c_int(c->e, 32, LW_INIT_CHUNK));
	uint32_t mt[3], mv[3];
	unsigned nm = 0;
	uint32_t *el = malloc((nchunks > LW_INIT_CHUNK ? nchunks : LW_INIT_CHUNK) * sizeof(uint32_t));
	if (!el)
		abort();
	uint64_t at = 0;
	if (nchunks) {
		mt[nm] = spv_t_array(c->e, chunk_t, spv_c_int(c->e, 32, nchunks));
		uint32_t *chunks = malloc(nchunks * sizeof(uint32_t));
		if (!chunks)
			abort();
		for (uint64_t k = 0; buf && !zero && k < nchunks; k++) {
			for (unsigned i = 0; i < LW_INIT_CHUNK; i++, at += 4)
				el[i] = spv_c_int(c->e, 32, buf[at] | buf[at + 1] << 8 | buf[at + 2] << 16 |
								    (uint32_t)buf[at + 3] << 24);
			chunks[k] = const_composite(c, chunk_t, LW_INIT_CHUNK, el);
		}
		if (buf && !zero)
			mv[nm] = const_composite(c, mt[nm], (unsigned)nchunks, chunks);
		free(chunks);
		nm++;
	}
	if (nwords) {
		mt[nm] = spv_t_array(c->e, i32, spv_c_int(c->e, 32, nwords));
		for (uint64_t i = 0; buf && !zero && i < nwords; i++, at += 4)
			el[i] = spv_c_int(c->e, 32, buf[at] | buf[at + 1] << 8 | buf[at + 2] << 16 | (uint32_t)buf[at + 3] << 24);
		if (buf && !zero)
			mv[nm] = const_composite(c, mt[nm], (unsigned)nwords, el);
		nm++;
	}
	if (ntail) {
		mt[nm] = spv_t_array(c->e, i8, spv_c_int(c->e, 32, ntail));
		for (uint64_t i = 0; buf && !zero && i < ntail; i++, at++)
			el[i] = spv_c_int(c->e, 8, buf[at]);
		if (buf && !zero)
			mv[nm] = const_composite(c, mt[nm], (unsigned)ntail, el);
		nm++;
	}
	free(el);
	*type = spv_type(c->e, SpvOpTypeStruct, nm, mt[0], mt[1], mt[2]);
	*init = !buf ? 0 : zero ? spv_c_null(c->e, *type) : const_composite(c, *type, nm, mv);
}

/* A module-scope (or function-scope static) variable other than .shared: bytes (above). */
static int declare_var(lw *c, const ir_decl *d, struct sym *s, SpvStorageClass sc, spv_buf *where)
{
	bool open;
	uint64_t bytes = lw_decl_bytes(d, &open);
	if (open || !bytes)
		return lw_fail(c, "%s %s has no size", d->space, d->name);
	if (bytes / (4 * LW_INIT_CHUNK) > 65000)
		return lw_fail(c, "%s %s: %llu bytes is too large for a SPIR-V variable", d->space, d->name,
			       (unsigned long long)bytes);
	uint8_t *buf = NULL;
	struct lw_reloc *rel = NULL;
	size_t nrel = 0;
	if (d->init || sc == SpvStorageClassUniformConstant) {
		buf = calloc(1, bytes);
		if (!buf)
			abort();
		if (d->init && lw_init_bytes_r(c, d, buf, bytes, &rel, &nrel) < 0) {
			free(buf);
			free(rel);
			return -1;
		}
	}
	uint32_t at, init;
	if (nrel) {
		/* addresses of variables: a u64 array whose relocated elements are the variables'
		 * addresses, computed by specialization-constant operations (constant expressions) */
		uint32_t u64 = spv_t_int(c->e, 64), i8 = spv_t_int(c->e, 8);
		uint64_t n = bytes / 8;
		if (bytes % 8 || n > 65000) {
			free(buf);
			free(rel);
			return lw_fail(c, "the initializer of %s holds addresses but is not an array of 64-bit words", d->name);
		}
		at = spv_t_array(c->e, u64, spv_c_int(c->e, 32, n));
		uint32_t *el = malloc(n * sizeof(uint32_t));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t v = 0;
			for (unsigned b = 0; b < 8; b++)
				v |= (uint64_t)buf[i * 8 + b] << (8 * b);
			el[i] = spv_c_int(c->e, 64, v);
		}
		for (size_t k = 0; k < nrel; k++) {
			struct sym *ts = lw_sym(c, rel[k].name);
			if (!ts || (ts->kind != SYM_GLOBAL && ts->kind != SYM_CONST)) {
				int r = lw_fail(c, "the initializer of %s holds the address of %s, which is not a global or "
						   "constant variable declared before it", d->name, rel[k].name);
				free(el);
				free(buf);
				free(rel);
				return r;
			}
			uint32_t base = ts->var;
			if (rel[k].addend) {
				uint32_t i8p = spv_t_ptr(c->e, ts->sc, i8);
				uint32_t b8 = spv_id(c->e);
				spv_op(&c->e->globals, SpvOpSpecConstantOp, 4, i8p, b8, (uint32_t)SpvOpBitcast, base);
				base = spv_id(c->e);
				spv_op(&c->e->globals, SpvOpSpecConstantOp, 5, i8p, base, (uint32_t)SpvOpInBoundsPtrAccessChain, b8,
				       spv_c_int(c->e, 64, (uint64_t)rel[k].addend));
			}
			uint32_t id = spv_id(c->e);
			spv_op(&c->e->globals, SpvOpSpecConstantOp, 4, u64, id, (uint32_t)SpvOpConvertPtrToU, base);
			el[rel[k].offset / 8] = id;
		}
		uint32_t *ops = malloc((n + 2) * sizeof(uint32_t));
		ops[0] = at;
		ops[1] = init = spv_id(c->e);
		memcpy(ops + 2, el, n * sizeof(uint32_t));
		spv_inst(&c->e->globals, SpvOpSpecConstantComposite, (unsigned)(n + 2), ops);
		free(ops);
		free(el);
	} else {
		var_type_init(c, buf, bytes, &at, &init);
	}
	free(buf);
	free(rel);
	uint32_t pt = spv_t_ptr(c->e, sc, at);
	s->var = spv_id(c->e);
	s->sc = sc;
	s->t = ptype_parse(d->type);
	if (init)
		spv_op(where, SpvOpVariable, 4, pt, s->var, (uint32_t)sc, init);
	else
		spv_op(where, SpvOpVariable, 3, pt, s->var, (uint32_t)sc);
	unsigned align = d->align ? d->align : (s->t.bits >= 8 ? s->t.bits / 8 : 1);
	spv_decorate(c->e, s->var, SpvDecorationAlignment, 1, align);
	spv_name(c->e, s->var, d->name);
	return 0;
}

/* .shared variables share one Workgroup window; each gets an aligned offset. */
static int place_shared(lw *c, const ir_decl *d)
{
	if (lw_sym(c, d->name))
		return 0;
	bool open;
	uint64_t bytes = lw_decl_bytes(d, &open);
	if (open)
		bytes = c->opts && c->opts->dynamic_shared_bytes ? c->opts->dynamic_shared_bytes : 48 * 1024;
	unsigned align = d->align ? d->align : 16;
	c->shared_size = (c->shared_size + align - 1) / align * align;
	struct sym *s = add_sym(c, false);
	s->name = d->name;
	s->kind = SYM_SHARED;
	s->offset = c->shared_size;
	s->t = ptype_parse(d->type);
	c->shared_size += bytes;
	return 0;
}

static int module_vars(lw *c)
{
	/* shared variables first (module scope and those declared inside bodies), so the window's
	 * size is known before any function refers to it */
	for (ir_top *t = c->m->first; t; t = t->next) {
		if (t->kind == IR_TOP_DECL && t->decl.space && !strcmp(t->decl.space, ".shared"))
			place_shared(c, &t->decl);
		if (t->kind != IR_TOP_FUNC)
			continue;
		for (ir_stmt *s = t->func.first; s; s = s->next)
			if (s->kind == IR_STMT_DECL && s->decl.space && !strcmp(s->decl.space, ".shared"))
				place_shared(c, &s->decl);
	}
	/* %reserved_smem_offset_*: the driver's reserved shared memory (cooperative groups keep their
	 * multi-warp scratch there, 288 bytes at most): LW_RESERVED_SMEM bytes of the window, placed
	 * only for modules that read one */
	bool reserved = false;
	for (ir_top *t = c->m->first; t && !reserved; t = t->next)
		if (t->kind == IR_TOP_FUNC)
			for (ir_stmt *s = t->func.first; s && !reserved; s = s->next)
				if (s->kind == IR_STMT_INSN)
					for (unsigned i = 0; i < s->insn.nops && !reserved; i++)
						reserved = s->insn.ops[i].kind == IR_OPND_REG &&
							   !strncmp(s->insn.ops[i].name, "%reserved_smem_offset", 21);
	if (reserved) {
		c->shared_size = (c->shared_size + 15) & ~15ull;
		c->reserved_smem = c->shared_size;
		c->shared_size += LW_RESERVED_SMEM;
	}
	if (c->shared_size) {
		/* checked: LW_SHARED_SINK bytes past the end, where accesses outside the window go */
		uint64_t size = (c->shared_size + 15) & ~15ull;
		c->shared_sink = size;
		uint64_t sink = c->opts && c->opts->check_shared ? LW_SHARED_SINK : 0;
		uint32_t at = spv_t_array(c->e, spv_t_int(c->e, 8), spv_c_int(c->e, 32, size + sink));
		c->shared_window = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassWorkgroup, at),
		       c->shared_window, (uint32_t)SpvStorageClassWorkgroup);
		spv_decorate(c->e, c->shared_window, SpvDecorationAlignment, 1, 16u);
		spv_name(c->e, c->shared_window, "gpuprobe_shared_window");
	}
	for (ir_top *t = c->m->first; t; t = t->next) {
		if (t->kind != IR_TOP_DECL || !t->decl.space)
			continue;
		const ir_decl *d = &t->decl;
		c->cur = NULL;
		SpvStorageClass sc;
		if (!strcmp(d->space, ".global"))
			sc = SpvStorageClassCrossWorkgroup;
		else if (!strcmp(d->space, ".const"))
			sc = SpvStorageClassUniformConstant;
		else if (!strcmp(d->space, ".shared"))
			continue;
		else
			return lw_fail(c, "%u: module-scope %s variable %s is not supported", t->line, d->space, d->name);
		if (d->linkage && !strcmp(d->linkage, ".extern"))
			return lw_fail(c, "%u: external variable %s cannot be lowered alone", t->line, d->name);
		struct sym *s = add_sym(c, false);
		s->name = d->name;
		s->kind = sc == SpvStorageClassUniformConstant ? SYM_CONST : SYM_GLOBAL;
		if (declare_var(c, d, s, sc, &c->e->globals) < 0)
			return -1;
	}
	return 0;
}

/* ---- function signatures ----------------------------------------------------------------- */

/* A parameter's SPIR-V type. Scalars go by value. A byte array (.param .align 8 .b8 p[24]: a
 * struct) goes by pointer: for a kernel, a ByVal pointer to a struct holding the bytes (how
 * OpenCL passes structs by value); for a device function, a pointer to the caller's bytes. */
static int param_type(lw *c, const ir_func *f, const ir_decl *d, uint32_t *out, bool *is_ptr)
{
	ptype t = ptype_parse(d->type);
	*is_ptr = false;
	if (ptype_ok(t) && t.k != 'p' && !d->dims && !d->vec) {
		*out = lw_type(c, t);
		return 0;
	}
	bool open;
	uint64_t bytes = ptype_ok(t) ? lw_decl_bytes(d, &open) : 0;
	if (!bytes || open || t.k == 'p')
		return lw_fail(c, "%s: parameter %s %s%s is not supported", f->name, d->type ? d->type : "?", d->name,
			       d->dims ? d->dims : "");
	uint32_t arr = spv_t_array(c->e, spv_t_int(c->e, 8), spv_c_int(c->e, 32, bytes));
	*out = f->is_entry ? spv_t_ptr(c->e, SpvStorageClassFunction, spv_type(c->e, SpvOpTypeStruct, 1, arr))
			   : spv_t_ptr(c->e, SpvStorageClassFunction, arr);
	*is_ptr = true;
	return 0;
}

/* Lowering fi failed (the message is in c->err): keep the message, clear the error state. */
static void func_failed(lw *c, struct lw_func_info *fi)
{
	fi->failed = true;
	free(fi->fail_msg);
	fi->fail_msg = strdup(c->err);
	c->failed = 0;
	c->err[0] = 0;
}

static int declare_funcs(lw *c)
{
	size_t n = 0;
	for (ir_top *t = c->m->first; t; t = t->next)
		n += t->kind == IR_TOP_FUNC;
	c->funcs = calloc(n ? n : 1, sizeof(*c->funcs));
	for (ir_top *t = c->m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC)
			continue;
		const ir_func *f = &t->func;
		struct lw_func_info *fi = NULL;
		for (size_t i = 0; i < c->nfuncs; i++)
			if (!strcmp(c->funcs[i].f->name, f->name))
				fi = &c->funcs[i];
		if (fi) { /* a prototype followed by its definition */
			if (f->has_body)
				fi->f = f;
			continue;
		}
		fi = &c->funcs[c->nfuncs++];
		fi->f = f;
		struct sym *s = add_sym(c, false);
		s->name = f->name;
		s->kind = SYM_FUNC;
		s->func = f;
	}
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct lw_func_info *fi = &c->funcs[i];
		const ir_func *f = fi->f;
		c->cur = NULL;
		for (size_t k = 0; k < c->nskip; k++)
			fi->skip |= !strcmp(c->skip_names[k], f->name);
		if (!f->has_body || fi->skip)
			continue; /* a prototype: only a call to it fails */
		if (f->nparams > 31) {
			lw_fail(c, "%s: more than 31 parameters", f->name);
			func_failed(c, fi);
			continue;
		}
		bool bad = false;
		for (unsigned p = 0; p < f->nparams && !bad; p++)
			bad = param_type(c, f, &f->params[p], &fi->param_types[p], &fi->param_ptr[p]) < 0;
		if (!bad && f->nrets > 1)
			bad = lw_fail(c, "%s: more than one return value", f->name) < 0;
		if (bad) {
			func_failed(c, fi);
			continue;
		}
		fi->ret_type = spv_t_void(c->e);
		fi->nspv_params = f->nparams;
		if (f->nrets == 1) {
			uint32_t rt;
			bool ptr;
			if (param_type(c, f, &f->rets[0], &rt, &ptr) < 0) {
				func_failed(c, fi);
				continue;
			}
			if (ptr) {
				fi->ret_ptr = true;
				fi->param_types[fi->nspv_params] = rt;
				fi->param_ptr[fi->nspv_params++] = true;
			} else {
				fi->ret_type = rt;
			}
		}
		fi->fn_type = spv_t_func(c->e, fi->ret_type, fi->nspv_params, fi->param_types);
		fi->id = spv_id(c->e);
		for (size_t k = 0; k < c->ngsyms; k++)
			if (c->gsyms[k].kind == SYM_FUNC && !strcmp(c->gsyms[k].name, f->name))
				c->gsyms[k].func_id = fi->id, c->gsyms[k].func = f;
		spv_name(c->e, fi->id, f->name);
	}
	return 0;
}

/* ---- registers and function-scope declarations ------------------------------------------- */

static void reg_insert(lw *c, const char *name, ptype t)
{
	if (c->nregs * 2 >= c->capregs) {
		size_t oldcap = c->capregs;
		struct reg *old = c->regs;
		c->capregs = c->capregs ? c->capregs * 2 : 256;
		c->regs = calloc(c->capregs, sizeof(*c->regs));
		if (!c->regs)
			abort();
		c->nregs = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].name) {
				struct reg r = old[i];
				size_t j = 0;
				uint64_t h = 1469598103934665603ull;
				for (const char *s = r.name; *s; s++)
					h = (h ^ (unsigned char)*s) * 1099511628211ull;
				for (j = h & (c->capregs - 1); c->regs[j].name; j = (j + 1) & (c->capregs - 1))
					;
				c->regs[j] = r;
				c->nregs++;
			}
		free(old);
	}
	if (lw_reg(c, name))
		return;
	uint64_t h = 1469598103934665603ull;
	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	size_t j;
	for (j = h & (c->capregs - 1); c->regs[j].name; j = (j + 1) & (c->capregs - 1))
		;
	c->regs[j].name = name;
	c->regs[j].t = t;
	c->regs[j].var = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, lw_type(c, t)),
	       c->regs[j].var, (uint32_t)SpvStorageClassFunction);
	c->nregs++;
}

static int body_decl(lw *c, ir_module *am, const ir_decl *d)
{
	if (!d->space)
		return 0;
	if (!strcmp(d->space, ".reg")) {
		ptype t = ptype_parse(d->type);
		if (!ptype_ok(t))
			return lw_fail(c, "register type %s of %s is not supported", d->type ? d->type : "?", d->name);
		if (d->vec)
			return lw_fail(c, "vector registers (%s %s) are not supported", d->vec, d->name);
		if (d->count > (1 << 20))   /* a register file past any kernel's: its table alone would be GBs */
			return lw_fail(c, "%s<%d>: more than 1048576 registers are not lowered", d->name, d->count);
		if (d->count > 0) {
			for (int i = 0; i < d->count; i++)
				reg_insert(c, ir_strfmt(am, "%s%d", d->name, i), t);
		} else {
			reg_insert(c, d->name, t);
		}
		return 0;
	}
	if (!strcmp(d->space, ".shared"))
		return 0; /* placed in the window already */
	SpvStorageClass sc;
	enum sym_kind kind;
	if (!strcmp(d->space, ".local") || !strcmp(d->space, ".param")) {
		sc = SpvStorageClassFunction;
		kind = d->space[1] == 'l' ? SYM_LOCAL : SYM_PARAM;
	} else if (!strcmp(d->space, ".global")) {
		sc = SpvStorageClassCrossWorkgroup;
		kind = SYM_GLOBAL;
	} else if (!strcmp(d->space, ".const")) {
		sc = SpvStorageClassUniformConstant;
		kind = SYM_CONST;
	} else {
		return lw_fail(c, "%s variable %s is not supported", d->space, d->name);
	}
	struct sym *s = add_sym(c, true);
	s->name = d->name;
	s->kind = kind;
	s->decl = d;
	if (sc == SpvStorageClassFunction) {
		ptype t = ptype_parse(d->type);
		if (!d->dims && !d->vec && ptype_ok(t) && t.k != 'p') {
			/* a scalar: typed, so that call arguments load it directly */
			s->var = spv_id(c->e);
			s->sc = sc;
			s->t = t;
			spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, sc, lw_type(c, t)), s->var, (uint32_t)sc);
			return 0;
		}
		return declare_var(c, d, s, sc, &c->vars);
	}
	/* function-scope .global/.const: module-scope storage under the function's name */
	return declare_var(c, d, s, sc, &c->e->globals);
}

/* ---- statements -------------------------------------------------------------------------- */

static uint32_t label_id(lw *c, const char *name)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].name, name))
			return c->labels[i].id;
	return 0;
}

static int lower_insn(lw *c, const ir_insn *in)
{
	if (!ir_insn_operands_ok(in))
		return lw_unsupported(c, in, "too few operands");
	const ir_insn_info *info = in->info ? in->info : ir_insn_info_lookup(in->opcode);
	int mr = lw_mma(c, in);
	if (mr)
		return mr < 0 ? -1 : 0;
	if (info && (info->flags & IR_F_TENSOR))
		return lw_unsupported(c, in, "tensor-core instructions have no SPIR-V equivalent");
	int tr = lw_texture(c, in);
	if (tr)
		return tr < 0 ? -1 : 0;
	if (info && (info->flags & IR_F_TEX))
		return lw_unsupported(c, in, "texture and surface instructions are not lowered");
	int ar = lw_async(c, in);
	if (ar)
		return ar < 0 ? -1 : 0;
	if (info && (info->flags & IR_F_ASYNC))
		return lw_unsupported(c, in, "asynchronous copies and mbarriers are not lowered");
	int sr = lw_simd(c, in);
	if (sr)
		return sr < 0 ? -1 : 0;
	int nr = lw_cvt_narrow(c, in);
	if (nr)
		return nr < 0 ? -1 : 0;
	int hr = lw_half(c, in);
	if (hr)
		return hr < 0 ? -1 : 0;
	bool half_cvt = !strcmp(in->opcode, "cvt") || !strcmp(in->opcode, "mov") || !strcmp(in->opcode, "ld") ||
			!strcmp(in->opcode, "st");
	bool half_cmp = !strcmp(in->opcode, "setp") || !strcmp(in->opcode, "set");
	for (unsigned i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		if ((half_cvt && !strcmp(m, ".f16")) || (half_cmp && (!strcmp(m, ".f16") || !strcmp(m, ".f16x2"))))
			continue; /* conversions, moves and comparisons of f16 are lowered */
		if (!strncmp(m, ".f16", 4) || !strncmp(m, ".bf16", 5) || !strncmp(m, ".e4m3", 5) ||
		    !strncmp(m, ".e5m2", 5) || !strcmp(m, ".tf32") || !strncmp(m, ".f32x2", 6))
			return lw_unsupported(c, in, "half-precision, 8-bit and packed float types are not lowered");
	}
	int (*fams[])(lw *, const ir_insn *) = {lw_control, lw_memory, lw_bits, lw_int_arith, lw_float_arith,
						lw_convert, lw_warp};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		int r = fams[i](c, in);
		if (r)
			return r < 0 ? -1 : 0;
	}
	return lw_unsupported(c, in, "no SPIR-V lowering for this instruction");
}

static int lower_stmt(lw *c, const ir_stmt *s)
{
	c->cur = s;
	switch (s->kind) {
	case IR_STMT_LABEL:
		lw_label(c, label_id(c, s->text));
		return lw_divergent_label(c, s) < 0 ? -1 : 0;
	case IR_STMT_INSN: {
		const ir_insn *in = &s->insn;
		int dr = lw_divergent_stmt(c, s, lower_insn);
		if (dr)
			return dr < 0 ? -1 : 0;
		bool is_branch = !strcmp(in->opcode, "bra");
		if (!in->guard || is_branch)
			return lower_insn(c, in);
		/* Warp collectives are emulated with work-group barriers (spirv.h), which every thread of
		 * the block must reach: under a guard they would not. */
		if (!strcmp(in->opcode, "shfl") || !strcmp(in->opcode, "vote") || !strcmp(in->opcode, "match") ||
		    !strcmp(in->opcode, "redux") || (!strcmp(in->opcode, "wmma") && in->nmods && !strcmp(in->mods[0], ".mma")) ||
		    !strcmp(in->opcode, "ldmatrix") || !strcmp(in->opcode, "stmatrix") ||
		    (!strcmp(in->opcode, "mma") && in->nmods && !strcmp(in->mods[0], ".sync")) ||
		    (!strcmp(in->opcode, "mbarrier") && in->nmods &&
		     (!strcmp(in->mods[0], ".try_wait") || !strcmp(in->mods[0], ".test_wait"))) ||
		    ((!strcmp(in->opcode, "bar") || !strcmp(in->opcode, "barrier")) &&
						     ir_insn_has_mod(in, ".red")))
			return lw_unsupported(c, in, "a guarded warp collective: this target has no 32-lane sub-groups, and "
						     "the work-group emulation needs every thread of the block to reach it");
		/* @p insn: a branch around it */
		uint32_t p = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->guard, .neg = in->guard_neg},
				     PT('p', 1));
		if (!p)
			return -1;
		uint32_t then = spv_id(c->e), merge = spv_id(c->e);
		lw_branch_cond(c, p, then, merge);
		lw_label(c, then);
		if (lower_insn(c, in) < 0)
			return -1;
		lw_label(c, merge);
		return 0;
	}
	case IR_STMT_DECL:
		/* declared up front; from here on its name means this one (call sequences in blocks
		 * of their own declare param0, param1 ... again, of other sizes) */
		for (size_t i = c->nlsyms; i-- > 0;)
			if (c->lsyms[i].decl == &s->decl)
				c->lsyms[i].live = true;
		return 0;
	default:
		return 0; /* directives carry no code */
	}
}

static int lower_func(lw *c, struct lw_func_info *fi, ir_module *am)
{
	const ir_func *f = fi->f;
	c->fn = f;
	c->nregs = 0;
	if (c->regs)
		memset(c->regs, 0, c->capregs * sizeof(*c->regs));
	c->nlsyms = 0;
	c->nlabels = 0;
	c->in_block = false;
	c->clock_var = 0;
	c->carry_var = 0;
	c->token_var = 0;
	c->token_escaped = false;
	c->ndiverge = 0;
	c->alloca_arena = c->alloca_top = 0;
	c->vars.n = c->prologue.n = c->body.n = 0;

	unsigned cluster = f->is_entry ? ir_func_required_cluster(f) : 1;
	c->cur = NULL;
	if (cluster > 1)   /* our clusters are one block (lower_async.c): mapa and its kin would lie */
		return lw_fail(c, "the kernel requires clusters of %u blocks (.reqnctapercluster): clusters of more than "
			       "one block are not lowered", cluster);
	spv_buf *out = &c->e->funcs;
	spv_op(out, SpvOpFunction, 4, fi->ret_type, fi->id, (uint32_t)SpvFunctionControlMaskNone, fi->fn_type);
	/* parameters: scalars are copied into a Function variable that ld.param/st.param address;
	 * byte arrays are addressed through their pointer directly */
	for (unsigned p = 0; p < fi->nspv_params; p++) {
		bool is_ret = p == f->nparams;
		const ir_decl *d = is_ret ? &f->rets[0] : &f->params[p];
		uint32_t pid = spv_id(c->e);
		spv_op(out, SpvOpFunctionParameter, 2, fi->param_types[p], pid);
		spv_name(c->e, pid, d->name);
		struct sym *s = add_sym(c, true);
		s->name = d->name;
		s->kind = SYM_PARAM;
		s->sc = SpvStorageClassFunction;
		s->t = ptype_parse(d->type);
		if (fi->param_ptr[p]) {
			s->var = pid;
			if (f->is_entry)
				spv_decorate(c->e, pid, SpvDecorationFuncParamAttr, 1, (uint32_t)SpvFunctionParameterAttributeByVal);
			continue;
		}
		s->var = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, fi->param_types[p]),
		       s->var, (uint32_t)SpvStorageClassFunction);
		spv_op(&c->prologue, SpvOpStore, 2, s->var, pid);
	}
	for (unsigned r = 0; r < f->nrets && !fi->ret_ptr; r++) {
		struct sym *s = add_sym(c, true);
		s->name = f->rets[r].name;
		s->kind = SYM_PARAM;
		s->sc = SpvStorageClassFunction;
		s->t = ptype_parse(f->rets[r].type);
		s->var = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, fi->ret_type),
		       s->var, (uint32_t)SpvStorageClassFunction);
	}
	/* declarations and labels first: branches and uses may come before them in the text */
	size_t nlab = 0;
	for (ir_stmt *s = f->first; s; s = s->next)
		nlab += s->kind == IR_STMT_LABEL;
	c->labels = realloc(c->labels, (nlab ? nlab : 1) * sizeof(*c->labels));
	for (ir_stmt *s = f->first; s; s = s->next) {
		c->cur = s;
		if (s->kind == IR_STMT_DECL && body_decl(c, am, &s->decl) < 0)
			return -1;
		if (s->kind == IR_STMT_LABEL) {
			if (label_id(c, s->text))
				return lw_fail(c, "label %s is defined twice", s->text);
			c->labels[c->nlabels].name = s->text;
			c->labels[c->nlabels++].id = spv_id(c->e);
		}
	}
	lw_plan_divergent_barriers(c, f);
	c->lockstep = false;
	if (c->divergent_collective && !gp_env_flag(GP_VAR_SPIRV_NO_LOCKSTEP) && lw_lockstep_ok(c, f)) {
		/* collectives the regions leave uncovered: the whole kernel in lock step instead */
		c->lockstep = true;
		c->ndiverge = 0;
		c->divergent_collective = NULL;
	}
	if (c->divergent_collective) {
		const ir_insn *in = &c->divergent_collective->insn;
		char op[96];
		size_t k = (size_t)snprintf(op, sizeof(op), "%s", in->opcode);
		for (unsigned i = 0; i < in->nmods && k < sizeof(op); i++)
			k += (size_t)snprintf(op + k, sizeof(op) - k, "%s", in->mods[i]);
		lw_add_note(c, f->name, c->divergent_collective->line, "`%s` may be reached by part of a block only (a "
			    "thread-dependent branch or loop around it is left as written): its results are undefined "
			    "on this device", op);
	}
	uint32_t entry = spv_id(c->e), first = spv_id(c->e);
	c->in_block = false;
	lw_label(c, first);
	if (c->lockstep) {
		if (lw_lower_lockstep(c, f, lower_stmt, lower_insn) < 0)
			return -1;
	} else {
		for (ir_stmt *s = f->first; s; s = s->next)
			if (lower_stmt(c, s) < 0)
				return -1;
	}
	if (c->in_block) {
		c->cur = NULL;
		if (lw_control(c, &(ir_insn){.opcode = "ret"}) < 0)
			return -1;
	}
	spirv_order_blocks(&c->body);
	spv_op(out, SpvOpLabel, 1, entry);
	spv_buf_append(out, &c->vars);
	spv_buf_append(out, &c->prologue);
	spv_op(out, SpvOpBranch, 1, first);
	spv_buf_append(out, &c->body);
	spv_op(out, SpvOpFunctionEnd, 0);
	if (f->is_entry) {
		c->entry_ids = realloc(c->entry_ids, (c->nentries + 1) * sizeof(*c->entry_ids));
		c->entry_names = realloc(c->entry_names, (c->nentries + 1) * sizeof(*c->entry_names));
		c->entry_ids[c->nentries] = fi->id;
		c->entry_names[c->nentries++] = f->name;
	}
	return 0;
}

static void finish_module(lw *c)
{
	spv_emitter *e = c->e;
	spv_capability(e, SpvCapabilityAddresses);
	spv_capability(e, SpvCapabilityKernel);
	spv_capability(e, SpvCapabilityLinkage); /* device functions are exported, see below */
	spv_op(&e->memmodel, SpvOpMemoryModel, 2, (uint32_t)SpvAddressingModelPhysical64,
	       (uint32_t)SpvMemoryModelOpenCL);
	uint32_t iface[LW_B_COUNT];
	unsigned niface = 0;
	for (unsigned b = 0; b < LW_B_COUNT; b++)
		if (c->builtins[b])
			iface[niface++] = c->builtins[b];
	for (size_t i = 0; i < c->nentries; i++) {
		uint32_t before[2] = {(uint32_t)SpvExecutionModelKernel, c->entry_ids[i]};
		spv_op_str(&e->entries, SpvOpEntryPoint, 2, before, c->entry_names[i], niface, iface);
		/* PTX never contracts an explicit .rn add and mul into an fma: neither may we */
		spv_op(&e->modes, SpvOpExecutionMode, 2, c->entry_ids[i], (uint32_t)SpvExecutionModeContractionOff);
	}
}

/* One pass over the module: every function not in c->skip_names is lowered; one that fails is
 * marked (fi->failed, fi->fail_msg) and the pass goes on, returning -EAGAIN at the end so that
 * the caller can leave it (and whatever needs it) out and lower again. */
static int lower_pass(lw *c, ir_module *am, uint32_t **words, size_t *nwords)
{
	spv_emitter *e = c->e;
	char *err = c->err;
	size_t errlen = c->errlen;
	if (module_vars(c) < 0 || declare_funcs(c) < 0)
		return -ENOTSUP;
	lw_cut_recursion(c);
	bool any_failed = false;
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct lw_func_info *fi = &c->funcs[i];
		if (fi->failed)
			any_failed = true;
		if (!fi->f->has_body || fi->skip || fi->failed)
			continue;
		if (lower_func(c, fi, am) < 0) {
			func_failed(c, fi);
			any_failed = true;
		}
	}
	if (any_failed)
		return -EAGAIN;
	if (!c->nentries && !c->nfuncs) {
		snprintf(err, errlen, "the module has no function to lower");
		return -EINVAL;
	}
	spv_buf_append(&e->funcs, &c->helper_funcs);
	/* device functions are given Export linkage so that a module of them alone is valid */
	for (size_t i = 0; i < c->nfuncs; i++) {
		const ir_func *f = c->funcs[i].f;
		if (f->has_body && !c->funcs[i].skip && !f->is_entry && f->linkage && !strcmp(f->linkage, ".visible")) {
			/* OpDecorate id LinkageAttributes "name" Export */
			uint32_t pre[2] = {c->funcs[i].id, (uint32_t)SpvDecorationLinkageAttributes};
			uint32_t post[1] = {(uint32_t)SpvLinkageTypeExport};
			spv_op_str(&e->decos, SpvOpDecorate, 2, pre, f->name, 1, post);
		}
	}
	finish_module(c);
	if (spv_emitter_too_long(e)) {
		snprintf(err, errlen, "%u SPIR-V instruction(s) would exceed 65,535 words (the 16-bit word count): "
			 "a constant or type too large to lower", spv_emitter_too_long(e));
		return -ENOTSUP;
	}
	*words = spv_emitter_finish(e, nwords);
	if (!c->opts || !c->opts->no_validate) {
		int v = spirv_validate(*words, *nwords, err, errlen);
		if (v < 0) {
			free(*words);
			*words = NULL;
			*nwords = 0;
			return v;
		}
	}
	return 0;
}

void lw_add_note(lw *c, const char *func, unsigned line, const char *fmt, ...)
{
	if (!c->opts || !c->opts->noted)
		return;
	char msg[768], *n = NULL;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (asprintf(&n, "%s\t%u: %s", func, line, msg) < 0)
		return;
	char **grown = realloc(c->notes, (c->nnotes + 1) * sizeof(*grown));
	if (grown)
		(c->notes = grown)[c->nnotes++] = n;
	else
		free(n);
}

static void lw_free(lw *c)
{
	free(c->rec_calls);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->gsyms);
	free(c->lsyms);
	free(c->regs);
	free(c->labels);
	for (size_t i = 0; i < c->nfuncs; i++)
		free(c->funcs[i].fail_msg);
	free(c->funcs);
	free(c->entry_ids);
	free(c->entry_names);
	spv_buf_free(&c->vars);
	spv_buf_free(&c->prologue);
	spv_buf_free(&c->body);
	spv_buf_free(&c->helper_funcs);
	free(c->mma_helpers);
	free(c->diverge);
	free(c->lane_alone);
	free((void *)c->varying);
}

int spirv_lower_module(const ir_module *m, const struct spirv_options *opts, uint32_t **words,
		       size_t *nwords, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen)
		err = dummy, errlen = sizeof(dummy);
	err[0] = 0;
	*words = NULL;
	*nwords = 0;
	if (!m)
		return snprintf(err, errlen, "no module"), -EINVAL;
	if (m->address_size && m->address_size != 64)
		return snprintf(err, errlen, ".address_size %u: only 64-bit PTX is lowered", m->address_size), -ENOTSUP;
	/* Functions that cannot be lowered are left out, with every function that calls them (or
	 * takes their address), and the module is lowered again without them: the other kernels
	 * still run. Each left-out kernel is reported once (opts->skipped) with its reason. */
	struct ir_skip skip = {0};
	int ret;
	ir_module *am = ir_module_new();
	for (;;) {
		spv_emitter e;
		spv_emitter_init(&e);
		lw c = {.e = &e, .m = m, .opts = opts, .err = err, .errlen = errlen, .skip_names = skip.names, .nskip = skip.n};
		ret = lower_pass(&c, am, words, nwords);
		size_t before = skip.n;
		for (size_t i = 0; ret == 0 && i < c.nnotes; i++) {   /* the pass that stands: its notes */
			char *tab = strchr(c.notes[i], '\t');
			*tab = 0;
			opts->noted(opts->skipped_arg, c.notes[i], tab + 1);
		}
		if (ret == -EAGAIN) {
			for (size_t i = 0; i < c.nfuncs; i++)
				if (c.funcs[i].failed)
					ir_skip__add(&skip, c.funcs[i].f->name, c.funcs[i].fail_msg);
			ir_skip__close(&skip, m);
		}
		lw_free(&c);
		spv_emitter_fini(&e);
		if (ret != -EAGAIN || skip.n == before)
			break;
	}
	if (ret == -EAGAIN)
		ret = -ENOTSUP;
	/* the kernels left out; if nothing is left, the first reason is the module's error */
	if (skip.n) {
		char *why = malloc(errlen);
		if (!why)
			abort();
		int r = ir_skip__report(&skip, m, ret == 0 && opts ? opts->skipped : NULL, opts ? opts->skipped_arg : NULL,
					why, errlen);
		if (r < 0 || ret == 0)
			snprintf(err, errlen, "%s", why);
		if (r < 0) {
			free(*words);
			*words = NULL;
			*nwords = 0;
			ret = r;
		}
		free(why);
	}
	ir_skip__free(&skip);
	ir_module_free(am);
	return ret;
}
