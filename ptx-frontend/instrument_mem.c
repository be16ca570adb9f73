/* Memory sites (instrument_internal.h, gpu/mem): which accesses each memory instruction makes
 * (its sides), which of them pass the probe's filter, and their code; a weighted probe's sites
 * merged per straight-line run (instrument_merge.c) or counted into a kernel's accumulators
 * (instrument_defer.c). */
#include "ptx-frontend/instrument_internal.h"

#include "gpuprobe/context.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The kind of a memory instruction, as gpu/mem's filters name it (GP_MEM_PLAIN, _ASYNC,
 * _MATRIX), or 0 for an instruction that has no memory site: ld, ldu, st, atom, red are plain
 * (their .async forms, st.async and red.async, are async); cp.async, cp.async.bulk{,.tensor} and
 * cp.reduce.async.bulk{,.tensor} are async; ldmatrix, stmatrix, wmma.load and wmma.store are
 * matrix. */
static unsigned mem_kind(const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "ld") || !strcmp(op, "ldu") || !strcmp(op, "st") || !strcmp(op, "atom") ||
	    !strcmp(op, "red"))
		return in->info && (in->info->flags & IR_F_ASYNC) ? GP_MEM_ASYNC : GP_MEM_PLAIN;
	if (!strcmp(op, "cp"))
		return ir_insn_has_mod(in, ".prefetch") ? 0 : GP_MEM_ASYNC;
	if (!strcmp(op, "ldmatrix") || !strcmp(op, "stmatrix") || !strcmp(op, "wmma"))
		return GP_MEM_MATRIX;
	return 0;
}

static unsigned space_bit(enum ir_space s)
{
	switch (s) {
	case IR_SPACE_GLOBAL: return GP_MEM_GLOBAL;
	case IR_SPACE_SHARED: return GP_MEM_SHARED;
	case IR_SPACE_LOCAL: return GP_MEM_LOCAL;
	case IR_SPACE_GENERIC: return GP_MEM_GENERIC;
	default: return 0;
	}
}

static unsigned space_value(enum ir_space s)
{
	switch (s) {
	case IR_SPACE_GLOBAL: return GP_SPACE_GLOBAL;
	case IR_SPACE_SHARED: return GP_SPACE_SHARED;
	case IR_SPACE_LOCAL: return GP_SPACE_LOCAL;
	default: return GP_SPACE_GENERIC;
	}
}

/* The value of a 32-bit byte count operand: an immediate, or a register the same basic block
 * set from one with mov (cp.async.bulk's size is usually `mov.u32 %r8, 4096` just before);
 * 0 when it is not a constant there. The context's size stays a site constant (nvidia/ctx_use.c
 * counts it among the warp-uniform bytes). */
static unsigned const_count(const struct fn *fn, size_t i, const ir_insn *in, int op)
{
	if (op < 0 || (unsigned)op >= in->nops)
		return 0;
	const ir_operand *o = &in->ops[op];
	if (o->kind == IR_OPND_INT)
		return o->ival > 0 && o->ival <= UINT32_MAX ? (unsigned)o->ival : 0;
	if (o->kind != IR_OPND_REG || !o->name)
		return 0;
	while (i-- > 0) {
		const ir_stmt *t = fn->stmts[i];
		if (t->kind == IR_STMT_LABEL)
			return 0;
		if (t->kind != IR_STMT_INSN)
			continue;
		const ir_insn *w = &t->insn;
		if (!w->info || (w->info->flags & (IR_F_BRANCH | IR_F_CALL | IR_F_RET | IR_F_EXIT)))
			return 0;
		int ndst = w->info->ndst;
		for (int d = 0; d < ndst && (unsigned)d < w->nops; d++) {
			const ir_operand *x = &w->ops[d];
			if (!(x->kind == IR_OPND_REG && x->name && !strcmp(x->name, o->name)))
				continue;
			if (!strcmp(w->opcode, "mov") && !w->guard && w->nops == 2 &&
			    w->ops[1].kind == IR_OPND_INT && w->ops[1].ival > 0 &&
			    w->ops[1].ival <= UINT32_MAX)
				return (unsigned)w->ops[1].ival;
			return 0;
		}
	}
	return 0;
}

/* One side of a memory instruction: an address operand, its space, direction and size. */
struct mem_side {
	int op;
	enum ir_space space;
	enum ir_access_dir dir;
	unsigned size;
};

/* The sites of a memory instruction (at most two, each one site):
 *   ld/ldu/st/atom/red, st.async, red.async   the access (one address)
 *   cp.async, cp.async.bulk (global -> shared) a load at the source, then a store at the
 *                                             shared destination; size: the bytes copied
 *                                             (cp-size; a bulk copy's count when it is a
 *                                             constant, else 0)
 *   cp.async.bulk, cp.reduce.async.bulk        (shared -> global) a load at the shared source,
 *                                             then the global store (reduce: atomic)
 *   cp.async.bulk.tensor (TMA), loads         a load whose address is the tensor map's (the
 *                                             CUtensorMap the copy reads; size 0: the box is in
 *                                             the map), then a store at the shared destination
 *   cp{.reduce}.async.bulk.tensor, stores     a load at the shared source (size 0), then the
 *                                             global side: the tensor map's address (store;
 *                                             reduce: atomic)
 *   ldmatrix / stmatrix                       this lane's row address in shared memory; size:
 *                                             the bytes the lane receives or gives (4 per matrix)
 *   wmma.load / wmma.store                    the matrix's base address (the same in every lane);
 *                                             size: the bytes of the lane's fragment */
static unsigned mem_sides(const struct fn *fn, size_t i, const ir_insn *in, struct mem_side *out)
{
	struct ir_mem_access acc;
	if (!ir_insn_mem_access(in, &acc))
		return 0;
	const char *name = in->info ? in->info->opcode : "";
	int tensor = !strcmp(name, "cp.async.bulk.tensor") ||
		     !strcmp(name, "cp.reduce.async.bulk.tensor");
	int bulk = tensor || !strcmp(name, "cp.async.bulk") || !strcmp(name, "cp.reduce.async.bulk");
	int reduce = !strncmp(name, "cp.reduce", 9);
	unsigned size = acc.size;
	if (bulk && !tensor)
		size = const_count(fn, i, in, 2);
	else if (tensor)
		size = 0;
	if (!strcmp(name, "cp.async") || (bulk && acc.dst_addr_op >= 0)) {
		/* into shared memory: the source read, then the destination write */
		out[0] = (struct mem_side){acc.addr_op, acc.space, IR_ACCESS_READ, size};
		out[1] = (struct mem_side){acc.dst_addr_op, acc.dst_space, IR_ACCESS_WRITE, size};
		return acc.dst_addr_op >= 0 ? 2 : 1;
	}
	if (bulk) {
		/* out of shared memory: operand 1 is the shared source, operand 0 the global side */
		out[0] = (struct mem_side){1, IR_SPACE_SHARED, IR_ACCESS_READ, size};
		out[1] = (struct mem_side){0, IR_SPACE_GLOBAL, reduce ? IR_ACCESS_RMW : IR_ACCESS_WRITE,
					   size};
		return 2;
	}
	out[0] = (struct mem_side){acc.addr_op, acc.space, acc.dir, size};
	return 1;
}

/* One memory site: the access's side and the context words the site fills (gp_mem_ctx's size,
 * space|dir|kind, insn_index, line: the site constants). */
struct mem_site {
	ir_stmt *s;
	size_t stmt;               /* index in fn->stmts */
	const ir_operand *addr;
	uint32_t words[4];         /* gp_mem_ctx bytes 8..23, as st32i stores them */
};

/* Whether the side is a site of probe p: its space, direction and kind pass the filter, and its
 * address is one the site can compute. */
static bool mem_site_of(struct fn *fn, const struct gp_inst_probe *p, size_t i, unsigned kind,
			const struct mem_side *side, struct mem_site *out)
{
	ir_stmt *s = fn->stmts[i];
	const ir_insn *in = &s->insn;
	unsigned sb = space_bit(side->space);
	unsigned db = side->dir == IR_ACCESS_READ ? GP_MEM_LOAD
		    : side->dir == IR_ACCESS_WRITE ? GP_MEM_STORE : GP_MEM_ATOMIC;
	unsigned filter = p->mem_filter;
	if (!(filter & GP_MEM_ALL_SPACES))
		filter |= GP_MEM_ALL_SPACES;
	if (!(filter & GP_MEM_ALL_DIRS))
		filter |= GP_MEM_ALL_DIRS;
	if (!(filter & GP_MEM_ALL_KINDS))
		filter |= GP_MEM_ALL_KINDS;
	if (!sb || !(filter & sb) || !(filter & db) || !(filter & kind))
		return false;
	if (side->op < 0 || (unsigned)side->op >= in->nops)
		return false;
	const ir_operand *a = &in->ops[side->op];
	/* [base] or [base+offset]; a tensor copy's [tensorMap, {coordinates}]: the map's address */
	if (a->kind != IR_OPND_ADDR || (a->nelems && (!a->name || a->ival)))
		return false;
	unsigned dirv = db == GP_MEM_LOAD ? GP_DIR_LOAD : db == GP_MEM_STORE ? GP_DIR_STORE : GP_DIR_ATOMIC;
	unsigned kindv = kind == GP_MEM_ASYNC ? GP_MEM_KIND_ASYNC
		       : kind == GP_MEM_MATRIX ? GP_MEM_KIND_MATRIX : GP_MEM_KIND_PLAIN;
	*out = (struct mem_site){.s = s, .stmt = i, .addr = a};
	out->words[0] = side->size;
	/* space, dir and kind are one little-endian u32 */
	out->words[1] = space_value(side->space) | dirv << 8 | kindv << 16;
	out->words[2] = fn->index[i];
	out->words[3] = s->src_line;
	return true;
}

/* The site's code: the guard's skip, the context, the call. weight: the runs the call stands for
 * (weighted probes; ignored otherwise). */
static void site_mem_emit(struct fn *fn, const struct gp_inst_probe *p, const struct mem_site *ms,
			  unsigned weight)
{
	const ir_insn *in = &ms->s->insn;
	const ir_operand *a = ms->addr;
	struct inst_emit e = inst_at(fn, ms->s);
	e.ctx_unread = p->ctx_unread;
	e.warp_sync = p->warp_sync;
	e.reconverge = p->reconverge;
	e.weight = p->weighted ? weight : 0;
	const char *skip = inst_guard_skip(fn, &e, in);
	if (!a->name) {
		ie_insn(&e, "mov.u64 %%__gp_d1, %lld", (long long)a->ival);
	} else {
		if (a->name[0] == '%' && inst_reg_bits(fn->f, a->name) == 32)
			ie_insn(&e, "cvt.u64.u32 %%__gp_d1, %s", a->name);
		else if (a->name[0] == '%')
			ie_insn(&e, "mov.b64 %%__gp_d1, %s", a->name);
		else
			ie_insn(&e, "mov.u64 %%__gp_d1, %s", a->name);
		if (a->ival)
			ie_insn(&e, "add.s64 %%__gp_d1, %%__gp_d1, %lld", (long long)a->ival);
	}
	if (inst_ctx_read(&e, offsetof(struct gp_mem_ctx, addr), 2))
		ie_insn(&e, "st.local.u64 [__gp_ctx+%u], %%__gp_d1",
			(unsigned)offsetof(struct gp_mem_ctx, addr));
	for (unsigned w = 0; w < 4; w++)
		inst_st32i(&e, offsetof(struct gp_mem_ctx, size) + 4 * w, ms->words[w]);
	inst_fill_thread(fn, &e, offsetof(struct gp_mem_ctx, thread));
	inst_call_probe(fn, &e, p->func);
	inst_end_skip(&e, skip);
}

static void site_mem(struct fn *fn, const struct gp_inst_probe *p, size_t i)
{
	ir_stmt *s = fn->stmts[i];
	unsigned kind = mem_kind(&s->insn);
	struct mem_side sides[2];
	unsigned n = kind ? mem_sides(fn, i, &s->insn, sides) : 0;
	struct mem_site ms;
	for (unsigned k = 0; k < n; k++)
		if (mem_site_of(fn, p, i, kind, &sides[k], &ms))
			site_mem_emit(fn, p, &ms, 1);
}

/* A weighted probe's memory sites (gp_inst_probe.weighted): found first, then merged per basic
 * block (instrument_merge.c) and emitted, each call with the count of the sites it stands for. */
static int sites_mem_weighted(struct fn *fn, const struct gp_inst_probe *p)
{
	size_t cap = 64, n = 0;
	struct mem_site *ms = malloc(cap * sizeof(*ms));
	struct inst_msite *key = NULL;
	if (!ms)
		return -ENOMEM;
	for (size_t i = 0; i < fn->n; i++) {
		ir_stmt *s = fn->stmts[i];
		if (s->kind != IR_STMT_INSN)
			continue;
		unsigned kind = mem_kind(&s->insn);
		struct mem_side sides[2];
		unsigned ns = kind ? mem_sides(fn, i, &s->insn, sides) : 0;
		for (unsigned k = 0; k < ns; k++) {
			if (n == cap) {
				struct mem_site *g = realloc(ms, (cap *= 2) * sizeof(*ms));
				if (!g) {
					free(ms);
					return -ENOMEM;
				}
				ms = g;
			}
			if (mem_site_of(fn, p, i, kind, &sides[k], &ms[n]))
				n++;
		}
	}
	if (n && !(key = calloc(n, sizeof(*key)))) {
		free(ms);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		key[k].stmt = ms[k].stmt;
		/* the context bytes 8..23 (size, space|dir|kind, insn_index, line) the probe reads;
		 * the others are the same at every site of a thread (its ids) or never read by an
		 * additive probe (the address: ebpf/verifier_additive.c) */
		for (unsigned b = 0; b < 16; b++) {
			unsigned off = offsetof(struct gp_mem_ctx, size) + b;
			if (p->ctx_key[off / 64] >> (off % 64) & 1)
				key[k].key[b] = (uint8_t)(ms[k].words[b / 4] >> (8 * (b % 4)));
		}
	}
	inst_merge_sites(fn->stmts, fn->n, key, n);
	struct deferred *d = inst_deferred_of(fn, p);
	for (size_t k = 0; k < n; k++) {
		if (d) {   /* the group's count into its class's accumulator; the first run is the flush's */
			struct site_words sw = {0};
			for (unsigned w = 0; w < 4; w++)
				inst_words_set(&sw, offsetof(struct gp_mem_ctx, size) + 4 * w, ms[k].words[w]);
			if (!key[k].weight) {
				fn->st->merged++;
				continue;
			}
			if (inst_defer_site(fn, d, ms[k].s, &ms[k].s->insn, &sw, key[k].weight))
				continue;
		}
		/* a first run of weight 1, then one of the rest; a pair gains nothing from it:
		 * each site keeps its own call */
		bool pair = !d && p->first_run && key[key[k].leader].weight == 2;
		if (!key[k].weight && !pair) {
			fn->st->merged++;
			continue;
		}
		if (pair) {
			site_mem_emit(fn, p, &ms[k], 1);
		} else if (p->first_run && key[k].weight > 1) {
			site_mem_emit(fn, p, &ms[k], 1);
			site_mem_emit(fn, p, &ms[k], key[k].weight - 1);
		} else {
			site_mem_emit(fn, p, &ms[k], key[k].weight);
		}
	}
	free(key);
	free(ms);
	return 0;
}

int inst_sites_mem(struct fn *fn, const struct gp_inst_probe *p)
{
	if (p->weighted)
		return sites_mem_weighted(fn, p);
	for (size_t i = 0; i < fn->n; i++)
		if (fn->stmts[i]->kind == IR_STMT_INSN)
			site_mem(fn, p, i);
	return 0;
}
