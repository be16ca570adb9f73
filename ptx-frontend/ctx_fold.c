/* Context loads of inlined probes read the site's context buffer by name.
 *
 * A site fills the words of its context the probe reads (`st.local [__gp_ctx+OFF], ...`, most of
 * them constants of the site: a memory access's direction and size, the kernel's name hash) and
 * hands the probe the buffer's generic address; the probe, once inlined, reads a field as
 * `ld.u8 %x, [%r1+13]`. Through a generic address ptxas neither forwards the site's store to
 * the load nor keeps the buffer out of local memory: the corpus's memory counter, which keys its
 * array by ctx->dir, gave chemv-cuda's kernels 136 bytes of local memory (none of their own) and
 * made the program 5.4x slower on the H100 (2026-11-25), where the same counter with a constant
 * key costs about nothing. Rewritten as `ld.local.u8 %x, [__gp_ctx+13]`, the load is of a known
 * word of a local array: ptxas forwards the constant and the buffer disappears.
 *
 * That needs the buffer's address taken nowhere: ptxas kept the 128 bytes on the stack while
 * any `mov %a, __gp_ctx` was left, even with every use folded.
 *
 * The pass follows, within a basic block, the registers that hold the buffer's generic address
 * (`mov.u64 %a, __gp_ctx; cvta.local.u64 %b, %a`, then plain copies of %b) and rewrites the
 * generic loads through them. A label, a call, or a write to a tracked register ends what it
 * knows about that register; what it does not recognise it leaves alone. Then the address
 * computations no one reads any more are removed (dead_defs). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ptx-frontend/ctx_fold.h"

#define CTX_SYMBOL "__gp_ctx"
#define MAX_TRACKED 32

#define MAX_DEFS 4096

struct tracked {
	const char *local[MAX_TRACKED];     /* hold the buffer's address in the .local window */
	unsigned nlocal;
	const char *generic[MAX_TRACKED];   /* hold its generic address */
	unsigned ngeneric;
};

static bool in_set(const char *const *set, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(set[i], name))
			return true;
	return false;
}

static void drop(const char **set, unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(set[i], name)) {
			set[i] = set[--*n];
			return;
		}
}

static void add(const char **set, unsigned *n, const char *name)
{
	if (*n < MAX_TRACKED && !in_set(set, *n, name))
		set[(*n)++] = name;
}

static bool has_mod(const ir_insn *in, const char *mod)
{
	for (unsigned i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], mod))
			return true;
	return false;
}

/* A state space among the modifiers: the load is not a generic one. */
static bool has_space(const ir_insn *in)
{
	static const char *const spaces[] = {".local", ".global", ".shared", ".const", ".param",
					     ".shared::cta", ".shared::cluster", ".tex"};
	for (size_t i = 0; i < sizeof(spaces) / sizeof(*spaces); i++)
		if (has_mod(in, spaces[i]))
			return true;
	return false;
}

static bool is_reg(const ir_operand *o)
{
	return o->kind == IR_OPND_REG && o->name && !o->neg;
}

/* Whether register name is declared 64 bits wide in f (`.reg .b64 %x` or one of `%x<N>`). */
static bool reg_is_64(const ir_func *f, const char *name)
{
	size_t n = strlen(name), stem = n;
	while (stem > 0 && name[stem - 1] >= '0' && name[stem - 1] <= '9')
		stem--;
	for (const ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind != IR_STMT_DECL || !s->decl.name || !s->decl.space || !s->decl.type ||
		    strcmp(s->decl.space, ".reg"))
			continue;
		const char *dn = s->decl.name, *ty = s->decl.type;
		bool match = s->decl.count > 0 ? stem < n && strlen(dn) == stem && !strncmp(dn, name, stem)
					       : !strcmp(dn, name);
		if (match)
			return !strcmp(ty, ".b64") || !strcmp(ty, ".u64") || !strcmp(ty, ".s64");
	}
	return false;
}

static unsigned load_bits(const ir_insn *in, bool *is_unsigned)
{
	for (unsigned i = 0; i < in->nmods; i++) {
		const char *md = in->mods[i];
		if ((md[1] == 'u' || md[1] == 's' || md[1] == 'b') && md[2] >= '0' && md[2] <= '9') {
			*is_unsigned = md[1] != 's';
			return (unsigned)atoi(md + 2);
		}
	}
	return 0;
}

/* `ld.TYPE %d, [%g+off]` through a tracked generic address: `ld.local.TYPE %d, [__gp_ctx+off]`.
 * Only plain weak loads (no .volatile, .relaxed, cache or vector forms: those keep their generic
 * form). A byte or half-word load becomes a load of the 32-bit word the site stored (it fills
 * its context a word at a time) and a shift and mask: ptxas forwards a store only to a load of
 * the same width, and kept the buffer on the stack for `ld.local.u8` of a word it had stored. */
static bool fold_load(ir_module *m, ir_func *f, ir_stmt *s, const struct tracked *t)
{
	ir_insn *in = &s->insn;
	if (strcmp(in->opcode, "ld") || in->nops != 2 || has_space(in) || in->guard)
		return false;
	for (unsigned i = 0; i < in->nmods; i++) {
		const char *md = in->mods[i];
		if (strcmp(md, ".u8") && strcmp(md, ".u16") && strcmp(md, ".u32") && strcmp(md, ".u64") &&
		    strcmp(md, ".s8") && strcmp(md, ".s16") && strcmp(md, ".s32") && strcmp(md, ".s64") &&
		    strcmp(md, ".b8") && strcmp(md, ".b16") && strcmp(md, ".b32") && strcmp(md, ".b64"))
			return false;
	}
	const ir_operand *a = &in->ops[1];
	if (a->kind != IR_OPND_ADDR || !a->name || a->nelems || !in_set(t->generic, t->ngeneric, a->name))
		return false;
	bool is_unsigned = false;
	unsigned bits = load_bits(in, &is_unsigned);
	int64_t off = a->ival;
	if (bits && bits < 32 && is_unsigned && is_reg(&in->ops[0]) && off >= 0 &&
	    (off & 3) * 8 + bits <= 32 && reg_is_64(f, in->ops[0].name)) {
		const char *d = in->ops[0].name;
		ir_stmt *mask = ir_insn_from_text(m, ir_strfmt(m, "and.b64 %s, %s, %u", d, d,
								(1u << bits) - 1));
		ir_stmt *shift = (off & 3) ? ir_insn_from_text(m, ir_strfmt(m, "shr.u64 %s, %s, %u", d,
									      d, (unsigned)(off & 3) * 8))
					   : NULL;
		if (mask && ((off & 3) == 0 || shift)) {
			static const char *const word[] = {".local", ".u32"};
			in->mods = (const char **)word;
			in->nmods = 2;
			in->ops[1] = ir_addr(m, CTX_SYMBOL, off & ~(int64_t)3);
			ir_stmt_insert_after(f, s, mask);
			if (shift)
				ir_stmt_insert_after(f, s, shift);
			mask->generated = true;
			if (shift)
				shift->generated = true;
			return true;
		}
	}
	const char **mods = ir_alloc(m, (in->nmods + 1) * sizeof(*mods));
	mods[0] = ".local";
	memcpy(mods + 1, in->mods, in->nmods * sizeof(*mods));
	in->mods = mods;
	in->nmods++;
	in->ops[1] = ir_addr(m, CTX_SYMBOL, off);
	return true;
}

/* What the instruction makes of the tracked registers: a new address register, or the end of
 * one. */
static bool track(struct tracked *t, const ir_insn *in)
{
	if (!in->info || (in->info->flags & (IR_F_CALL | IR_F_BRANCH | IR_F_RET | IR_F_EXIT))) {
		t->nlocal = t->ngeneric = 0;   /* unknown or leaving the block: forget everything */
		return false;
	}
	if (in->nops < 1)
		return false;
	const ir_operand *d = &in->ops[0];
	if (in->info->ndst < 1 || !is_reg(d))
		return false;   /* st, red and the like write memory only */
	const char *dst = d->name;
	bool to_local = false, to_generic = false;
	if (!in->guard && in->nops == 2) {
		const ir_operand *s = &in->ops[1];
		if (!strcmp(in->opcode, "mov") && s->kind == IR_OPND_SYMBOL && s->name &&
		    !strcmp(s->name, CTX_SYMBOL))
			to_local = true;
		else if (!strcmp(in->opcode, "mov") && is_reg(s))
			to_local = in_set(t->local, t->nlocal, s->name),
			to_generic = in_set(t->generic, t->ngeneric, s->name);
		else if (!strcmp(in->opcode, "cvta") && has_mod(in, ".local") && !has_mod(in, ".to") &&
			 is_reg(s))
			to_generic = in_set(t->local, t->nlocal, s->name);
	}
	drop(t->local, &t->nlocal, dst);
	drop(t->generic, &t->ngeneric, dst);
	if (to_local)
		add(t->local, &t->nlocal, dst);
	if (to_generic)
		add(t->generic, &t->ngeneric, dst);
	return to_local || to_generic;
}

static bool reads(const ir_operand *o, const char *name)
{
	if ((o->kind == IR_OPND_REG || o->kind == IR_OPND_ADDR) && o->name && !strcmp(o->name, name))
		return true;
	for (unsigned i = 0; i < o->nelems; i++)
		if (reads(&o->elems[i], name))
			return true;
	return false;
}

static bool ends_block(const ir_stmt *s)
{
	if (s->kind == IR_STMT_LABEL)
		return true;
	if (s->kind != IR_STMT_INSN)
		return false;
	const ir_insn *in = &s->insn;
	return !in->info || (in->info->flags & (IR_F_CALL | IR_F_BRANCH | IR_F_RET | IR_F_EXIT));
}

/* Whether the value def writes is read before the block ends or the register is written again.
 * At the block's end a site's own %__gp_d0 is dead (every site sets it before its use); any
 * other register is taken as live there. */
static bool live_after(const ir_stmt *def, const char *dst)
{
	for (const ir_stmt *s = def->next; s; s = s->next) {
		if (ends_block(s))
			return strcmp(dst, "%__gp_d0") != 0;
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &s->insn;
		unsigned ndst = in->info && in->info->ndst > 0 ? (unsigned)in->info->ndst : 0;
		for (unsigned i = 0; i < in->nops; i++)
			if (reads(&in->ops[i], dst) && (i >= ndst || in->ops[i].kind != IR_OPND_REG))
				return true;
		if (in->guard)
			continue;   /* a guarded write leaves the old value on some lanes */
		for (unsigned i = 0; i < ndst && i < in->nops; i++)
			if (is_reg(&in->ops[i]) && !strcmp(in->ops[i].name, dst))
				return false;
	}
	return strcmp(dst, "%__gp_d0") != 0;
}

/* Removes the address computations (latest first, so that a copy's removal frees its source)
 * whose value no one reads. */
static void dead_defs(ir_func *f, ir_stmt **defs, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (!live_after(defs[i], defs[i]->insn.ops[0].name))
			ir_stmt_remove(f, defs[i]);
}

static bool declares_ctx(const ir_func *f)
{
	for (const ir_stmt *s = f->first; s; s = s->next)
		if (s->kind == IR_STMT_DECL && s->decl.name && !strcmp(s->decl.name, CTX_SYMBOL) &&
		    s->decl.space && !strcmp(s->decl.space, ".local"))
			return true;
	return false;
}

/* ---- forwarding the site's stores ------------------------------------------------------ */

/* Whether every use of the buffer in f is the address of an ld.local or st.local: its address
 * is then taken nowhere, and no instruction but those reads or writes it. */
static unsigned ctx_access(const ir_insn *in, bool *is_store, int64_t *off, bool *is_signed);

/* Whether every instruction that names the buffer is a scalar ld.local or st.local of it
 * (ctx_access): its address is then taken nowhere, and no other instruction reads or writes
 * it. */
static bool ctx_only_local_accesses(const ir_func *f)
{
	for (const ir_stmt *s = f->first; s; s = s->next) {
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &s->insn;
		bool names = false;
		for (unsigned i = 0; i < in->nops; i++)
			names |= reads(&in->ops[i], CTX_SYMBOL) ||
				 (in->ops[i].kind == IR_OPND_SYMBOL && in->ops[i].name &&
				  !strcmp(in->ops[i].name, CTX_SYMBOL));
		if (!names)
			continue;
		bool is_store, is_signed;
		int64_t off;
		unsigned bits = ctx_access(in, &is_store, &off, &is_signed);
		if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
			return false;
		if (reads(&in->ops[is_store ? 1 : 0], CTX_SYMBOL))   /* the value, not the address */
			return false;
	}
	return true;
}

/* The context word at [__gp_ctx+off] of a scalar ld.local/st.local, its width in bits, or 0
 * for any other instruction. */
static unsigned ctx_access(const ir_insn *in, bool *is_store, int64_t *off, bool *is_signed)
{
	bool ld = !strcmp(in->opcode, "ld"), st = !strcmp(in->opcode, "st");
	if ((!ld && !st) || !has_mod(in, ".local") || in->nops != 2 || in->nmods != 2)
		return 0;
	const ir_operand *a = &in->ops[ld ? 1 : 0];
	if (a->kind != IR_OPND_ADDR || !a->name || strcmp(a->name, CTX_SYMBOL) || a->nelems)
		return 0;
	bool u = true;
	unsigned bits = load_bits(in, &u);
	*is_store = st;
	*off = a->ival;
	*is_signed = !u;
	return bits;
}

struct known_word {
	int64_t off;
	unsigned bits;
	ir_operand val;    /* a register or an integer */
};

/* The move that replaces `ld.local.T d, [__gp_ctx+off]` when the word's value v is known: the
 * lowering loads 32-bit fields into 64-bit registers, which PTX allows for ld (extending by
 * T's signedness) but not for mov. */
static ir_stmt *forward_move(ir_module *m, const ir_func *f, const ir_insn *ld, unsigned bits,
			     bool is_signed, const ir_operand *v)
{
	const char *d = ld->ops[0].name;
	bool wide = bits == 32 && reg_is_64(f, d);
	if (v->kind == IR_OPND_INT) {
		uint64_t x = (uint64_t)v->ival;
		if (bits == 32)
			x = is_signed ? (uint64_t)(int64_t)(int32_t)(uint32_t)x : (uint64_t)(uint32_t)x;
		return ir_insn_from_text(m, ir_strfmt(m, "mov.b%u %s, %llu", wide ? 64 : bits, d,
						      (unsigned long long)(wide || bits == 64 ? x : (uint32_t)x)));
	}
	if (wide)
		return ir_insn_from_text(m, ir_strfmt(m, "cvt.%s64.%s32 %s, %s", is_signed ? "s" : "u",
						      is_signed ? "s" : "u", d, v->name));
	return ir_insn_from_text(m, ir_strfmt(m, "mov.b%u %s, %s", bits, d, v->name));
}

/* Replaces each load of a context word the same block stored, unguarded and not overwritten
 * since (neither the word nor the stored register), by a move of the stored value; then, where
 * no load of the buffer is left, removes its stores. ptxas did not forward them itself in a
 * kernel that also calls a function (a cold insert of the counting idiom): zoom-cuda's
 * kernels kept the 128-byte buffer in local memory, a store and a load of the kernel's name
 * hash at every entry and exit of every thread. */
static unsigned forward_ctx_stores(ir_module *m, ir_func *f)
{
	if (!ctx_only_local_accesses(f))
		return 0;
	enum { NKNOWN = 32 };
	struct known_word kw[NKNOWN];
	unsigned nk = 0, forwarded = 0;
	bool loads_left = false;
	for (ir_stmt *s = f->first, *next; s; s = next) {
		next = s->next;
		if (s->kind == IR_STMT_LABEL) {
			nk = 0;
			continue;
		}
		if (s->kind != IR_STMT_INSN)
			continue;
		ir_insn *in = &s->insn;
		bool is_store, is_signed;
		int64_t off;
		unsigned bits = ctx_access(in, &is_store, &off, &is_signed);
		if (bits && !is_store) {
			unsigned k = 0;
			while (k < nk && !(kw[k].off == off && kw[k].bits == bits))
				k++;
			ir_stmt *mv = k < nk && !in->guard && is_reg(&in->ops[0]) &&
					      (bits == 32 || bits == 64)
					      ? forward_move(m, f, in, bits, is_signed, &kw[k].val)
					      : NULL;
			if (mv) {
				mv->generated = true;
				ir_stmt_insert_after(f, s, mv);
				ir_stmt_remove(f, s);
				forwarded++;
				s = mv;
				in = &s->insn;
			} else {
				loads_left = true;
			}
		}
		if (bits && is_store) {   /* forget what it overlaps, then know it (unless guarded) */
			unsigned j = 0;
			int64_t bytes = bits / 8;
			for (unsigned k = 0; k < nk; k++)
				if (kw[k].off + (int64_t)kw[k].bits / 8 <= off || kw[k].off >= off + bytes)
					kw[j++] = kw[k];
			nk = j;
			const ir_operand *v = &in->ops[1];
			/* a register of the store's width only (st may truncate a wider one) */
			if (!in->guard && (bits == 32 || bits == 64) && nk < NKNOWN &&
			    ((is_reg(v) && reg_is_64(f, v->name) == (bits == 64)) ||
			     v->kind == IR_OPND_INT))
				kw[nk++] = (struct known_word){off, bits, *v};
			continue;
		}
		if (!in->info || (in->info->flags & (IR_F_CALL | IR_F_BRANCH | IR_F_RET | IR_F_EXIT))) {
			nk = 0;   /* leaving the block (a call cannot reach the buffer: no address) */
			continue;
		}
		/* a register written here is no longer the value it held when stored */
		unsigned ndst = in->info->ndst > 0 ? (unsigned)in->info->ndst : 0;
		for (unsigned i = 0; i < ndst && i < in->nops; i++) {
			unsigned j = 0;
			for (unsigned k = 0; k < nk; k++)
				if (!(kw[k].val.kind == IR_OPND_REG && reads(&in->ops[i], kw[k].val.name)))
					kw[j++] = kw[k];
			nk = j;
		}
	}
	if (!loads_left)   /* nothing reads the buffer: its stores go, and ptxas drops the array */
		for (ir_stmt *s = f->first, *next; s; s = next) {
			next = s->next;
			bool is_store, is_signed;
			int64_t off;
			if ((s->kind == IR_STMT_INSN && ctx_access(&s->insn, &is_store, &off, &is_signed) &&
			     is_store) ||
			    (s->kind == IR_STMT_DECL && s->decl.name && !strcmp(s->decl.name, CTX_SYMBOL)))
				ir_stmt_remove(f, s);   /* ptxas kept the unused array's 128 bytes */
		}
	return forwarded;
}

unsigned gp_ctx_fold_loads(ir_module *m)
{
	unsigned folded = 0;
	ir_stmt **defs = NULL;
	for (ir_top *t = ir_module_first_func(m); t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || !t->func.has_body || !declares_ctx(&t->func))
			continue;
		struct tracked tr = {0};
		size_t ndefs = 0;
		bool overflow = false;
		for (ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind == IR_STMT_LABEL) {
				tr.nlocal = tr.ngeneric = 0;
				continue;
			}
			if (s->kind != IR_STMT_INSN)
				continue;
			if (fold_load(m, &t->func, s, &tr))
				folded++;
			if (track(&tr, &s->insn) && !overflow) {
				if (!defs)
					defs = ir_alloc(m, MAX_DEFS * sizeof(*defs));
				if (ndefs < MAX_DEFS)
					defs[ndefs++] = s;
				else
					overflow = true;   /* keep them all: a later one may read an earlier */
			}
		}
		if (!overflow)
			dead_defs(&t->func, defs, ndefs);
		folded += forward_ctx_stores(m, &t->func);
	}
	return folded;
}
