/* eBPF instructions for one probe of a one-liner. r6 holds the context; an expression leaves its
 * value in r0, the left operand of a binary operator waits in a stack slot while the right one is
 * computed (helpers clobber r1-r5; ptxas keeps what it can in registers anyway). Stack:
 *   fp-64 .. fp-1   the map key (up to 8 u64 keys; a typed key is one u32 at fp-64)
 *   fp-72           the 0 a hash map's missing key is inserted with (BPF_NOEXIST)
 *   fp-80           sum()'s value
 *   fp-88 - 8*d     spill slot of expression depth d >= 3 (depths 0-2 wait in r7-r9, which
 *                   helper calls keep)
 * Each update is gp_count()'s idiom (include/gpuprobe/gpuprobe.h): lookup; on a miss a NOEXIST
 * insert of 0 and a second lookup; then an atomic add, which keeps the map summable per SM. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/oneliner_internal.h"

#define KEY_OFF (-64)
#define ZERO_OFF (-72)
#define VAL_OFF (-80)
#define SPILL0 (-88)
#define MAX_SPILL 48   /* fp-88 .. fp-464 */

struct gen {
	const struct ol_program *p;
	struct ol_code *c;
	int failed;          /* -ENOMEM / -E2BIG */
};

static size_t emit(struct gen *g, struct bpf_insn i)
{
	struct ol_code *c = g->c;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 128;
		struct bpf_insn *n = realloc(c->insns, cap * sizeof *n);
		if (!n) {
			g->failed = -ENOMEM;
			return c->n;
		}
		c->insns = n;
		c->cap = cap;
	}
	c->insns[c->n] = i;
	return c->n++;
}

#define INSN(code_, dst_, src_, off_, imm_) \
	((struct bpf_insn){.code = (code_), .dst_reg = (dst_), .src_reg = (src_), .off = (off_), .imm = (imm_)})

static void alu_imm(struct gen *g, int op, int dst, int32_t imm) { emit(g, INSN(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm)); }
static void alu_reg(struct gen *g, int op, int dst, int src) { emit(g, INSN(BPF_ALU64 | op | BPF_X, dst, src, 0, 0)); }
static void ldx(struct gen *g, int size, int dst, int src, int16_t off) { emit(g, INSN(BPF_LDX | BPF_MEM | size, dst, src, off, 0)); }
static void stx(struct gen *g, int size, int dst, int16_t off, int src) { emit(g, INSN(BPF_STX | BPF_MEM | size, dst, src, off, 0)); }
static void st(struct gen *g, int size, int dst, int16_t off, int32_t imm) { emit(g, INSN(BPF_ST | BPF_MEM | size, dst, 0, off, imm)); }
static void call(struct gen *g, int id) { emit(g, INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)); }
/* A forward jump; patched by land(). */
static size_t jmp_imm(struct gen *g, int op, int dst, int32_t imm) { return emit(g, INSN(BPF_JMP | op | BPF_K, dst, 0, 0, imm)); }
static size_t jmp_reg(struct gen *g, int op, int dst, int src) { return emit(g, INSN(BPF_JMP | op | BPF_X, dst, src, 0, 0)); }
static size_t ja(struct gen *g) { return emit(g, INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0)); }

static void land(struct gen *g, size_t jump)
{
	if (g->failed)
		return;
	long off = (long)g->c->n - (long)jump - 1;
	if (off > INT16_MAX) {
		g->failed = -E2BIG;
		return;
	}
	g->c->insns[jump].off = (int16_t)off;
}

static void load_const(struct gen *g, int dst, uint64_t v)
{
	if (v <= INT32_MAX) {
		alu_imm(g, BPF_MOV, dst, (int32_t)v);
		return;
	}
	emit(g, INSN(BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0, (int32_t)(uint32_t)v));
	emit(g, INSN(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32)));
}

static void load_map(struct gen *g, int dst, size_t map)
{
	struct ol_code *c = g->c;
	if (c->nrelocs == c->caprelocs) {
		size_t cap = c->caprelocs ? 2 * c->caprelocs : 16;
		struct ol_reloc *r = realloc(c->relocs, cap * sizeof *r);
		if (!r) {
			g->failed = -ENOMEM;
			return;
		}
		c->relocs = r;
		c->caprelocs = cap;
	}
	c->relocs[c->nrelocs++] = (struct ol_reloc){.insn = c->n, .map = map};
	emit(g, INSN(BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0, 0));   /* R_BPF_64_64 against the map */
	emit(g, INSN(0, 0, 0, 0, 0));
}

static int size_code(uint32_t size)
{
	return size == 1 ? BPF_B : size == 2 ? BPF_H : size == 4 ? BPF_W : BPF_DW;
}

static int alu_op(enum ol_tok t)
{
	switch (t) {
	case T_PLUS: return BPF_ADD;
	case T_MINUS: return BPF_SUB;
	case T_STAR: return BPF_MUL;
	case T_SLASH: return BPF_DIV;
	case T_PERCENT: return BPF_MOD;
	case T_AMP: return BPF_AND;
	case T_PIPE: return BPF_OR;
	case T_CARET: return BPF_XOR;
	case T_SHL: return BPF_LSH;
	case T_SHR: return BPF_RSH;
	default: return -1;
	}
}

static int cmp_op(enum ol_tok t)
{
	switch (t) {
	case T_EQ: return BPF_JEQ;
	case T_NE: return BPF_JNE;
	case T_LT: return BPF_JLT;
	case T_LE: return BPF_JLE;
	case T_GT: return BPF_JGT;
	case T_GE: return BPF_JGE;
	default: return -1;
	}
}

static void gen_expr(struct gen *g, const struct ol_expr *e, int depth);

/* r0 = e->l && e->r, or ||, as 0 or 1 */
static void gen_logic(struct gen *g, const struct ol_expr *e, int depth)
{
	int and = e->op == T_ANDAND;
	int jop = and ? BPF_JEQ : BPF_JNE;
	gen_expr(g, e->l, depth);
	size_t j1 = jmp_imm(g, jop, BPF_REG_0, 0);
	gen_expr(g, e->r, depth);
	size_t j2 = jmp_imm(g, jop, BPF_REG_0, 0);
	alu_imm(g, BPF_MOV, BPF_REG_0, and);
	size_t j3 = ja(g);
	land(g, j1);
	land(g, j2);
	alu_imm(g, BPF_MOV, BPF_REG_0, !and);
	land(g, j3);
}

static void gen_binary(struct gen *g, const struct ol_expr *e, int depth)
{
	if (e->op == T_ANDAND || e->op == T_OROR) {
		gen_logic(g, e, depth);
		return;
	}
	int alu = alu_op(e->op), cmp = cmp_op(e->op);
	gen_expr(g, e->l, depth);
	int imm = e->r->kind == E_INT && e->r->value <= INT32_MAX;
	if (!imm) {
		if (depth >= MAX_SPILL) {
			g->failed = -E2BIG;
			return;
		}
		if (depth < 3)
			alu_reg(g, BPF_MOV, BPF_REG_7 + depth, BPF_REG_0);
		else
			stx(g, BPF_DW, BPF_REG_10, (int16_t)(SPILL0 - 8 * (depth - 3)), BPF_REG_0);
		gen_expr(g, e->r, depth + 1);
		alu_reg(g, BPF_MOV, BPF_REG_1, BPF_REG_0);
		if (depth < 3)
			alu_reg(g, BPF_MOV, BPF_REG_0, BPF_REG_7 + depth);
		else
			ldx(g, BPF_DW, BPF_REG_0, BPF_REG_10, (int16_t)(SPILL0 - 8 * (depth - 3)));
	}
	int32_t v = imm ? (int32_t)e->r->value : 0;
	if (alu >= 0) {
		if (imm)
			alu_imm(g, alu, BPF_REG_0, v);
		else
			alu_reg(g, alu, BPF_REG_0, BPF_REG_1);
		return;
	}
	/* comparison: 1 or 0 */
	alu_reg(g, BPF_MOV, BPF_REG_2, BPF_REG_0);
	alu_imm(g, BPF_MOV, BPF_REG_0, 1);
	size_t j = imm ? jmp_imm(g, cmp, BPF_REG_2, v) : jmp_reg(g, cmp, BPF_REG_2, BPF_REG_1);
	alu_imm(g, BPF_MOV, BPF_REG_0, 0);
	land(g, j);
}

static void gen_expr(struct gen *g, const struct ol_expr *e, int depth)
{
	switch (e->kind) {
	case E_INT:
		load_const(g, BPF_REG_0, e->value);
		break;
	case E_BUILTIN:
		if (e->b.how == OL_LOAD_HELPER)
			call(g, e->b.helper);
		else
			ldx(g, size_code(e->b.size), BPF_REG_0, BPF_REG_6, (int16_t)e->b.off);
		break;
	case E_UNARY:
		gen_expr(g, e->l, depth);
		if (e->op == T_MINUS) {
			emit(g, INSN(BPF_ALU64 | BPF_NEG, BPF_REG_0, 0, 0, 0));
		} else if (e->op == T_TILDE) {
			alu_imm(g, BPF_XOR, BPF_REG_0, -1);
		} else {   /* ! */
			alu_reg(g, BPF_MOV, BPF_REG_1, BPF_REG_0);
			alu_imm(g, BPF_MOV, BPF_REG_0, 1);
			size_t j = jmp_imm(g, BPF_JEQ, BPF_REG_1, 0);
			alu_imm(g, BPF_MOV, BPF_REG_0, 0);
			land(g, j);
		}
		break;
	case E_BINARY:
		gen_binary(g, e, depth);
		break;
	}
}

/* r1 = log2 bucket of r0 (gp_log2_bucket: 0 for 0, else 1 + floor(log2)), straight-line */
static void gen_log2(struct gen *g)
{
	alu_imm(g, BPF_MOV, BPF_REG_1, 0);
	size_t zero = jmp_imm(g, BPF_JEQ, BPF_REG_0, 0);
	alu_imm(g, BPF_MOV, BPF_REG_1, 1);
	for (int s = 32; s >= 2; s /= 2) {
		alu_reg(g, BPF_MOV, BPF_REG_2, BPF_REG_0);
		alu_imm(g, BPF_RSH, BPF_REG_2, s);
		emit(g, INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_2, 0, 2, 0));
		alu_reg(g, BPF_MOV, BPF_REG_0, BPF_REG_2);
		alu_imm(g, BPF_ADD, BPF_REG_1, s);
	}
	alu_reg(g, BPF_MOV, BPF_REG_2, BPF_REG_0);
	alu_imm(g, BPF_RSH, BPF_REG_2, 1);
	emit(g, INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_2, 0, 1, 0));
	alu_imm(g, BPF_ADD, BPF_REG_1, 1);
	land(g, zero);
}

/* r0 = clamp(r0, min, max - 1) / step */
static void gen_lhist(struct gen *g, const struct ol_map *m)
{
	if (m->lmin) {
		load_const(g, BPF_REG_1, m->lmin);
		emit(g, INSN(BPF_JMP | BPF_JGE | BPF_X, BPF_REG_0, BPF_REG_1, 1, 0));
		alu_reg(g, BPF_MOV, BPF_REG_0, BPF_REG_1);
	}
	load_const(g, BPF_REG_1, m->lmax - 1);
	emit(g, INSN(BPF_JMP | BPF_JLE | BPF_X, BPF_REG_0, BPF_REG_1, 1, 0));
	alu_reg(g, BPF_MOV, BPF_REG_0, BPF_REG_1);
	if (m->lstep <= INT32_MAX) {
		alu_imm(g, BPF_DIV, BPF_REG_0, (int32_t)m->lstep);
	} else {
		load_const(g, BPF_REG_1, m->lstep);
		alu_reg(g, BPF_DIV, BPF_REG_0, BPF_REG_1);
	}
}

static void key_addr(struct gen *g, int reg)
{
	alu_reg(g, BPF_MOV, reg, BPF_REG_10);
	alu_imm(g, BPF_ADD, reg, KEY_OFF);
}

static void gen_stmt(struct gen *g, const struct ol_stmt *s)
{
	const struct ol_map *m = &g->p->maps[s->map];
	/* the key */
	if (m->agg == A_HIST || m->agg == A_LHIST) {
		gen_expr(g, s->arg, 0);
		if (m->agg == A_HIST) {
			gen_log2(g);
			stx(g, BPF_W, BPF_REG_10, KEY_OFF, BPF_REG_1);
		} else {
			gen_lhist(g, m);
			stx(g, BPF_W, BPF_REG_10, KEY_OFF, BPF_REG_0);
		}
	} else if (!s->nkeys) {
		st(g, BPF_W, BPF_REG_10, KEY_OFF, 0);
	} else {
		/* several keys: padding zeroed first (a hash compares every byte) */
		for (uint32_t w = 0; s->nkeys > 1 && w < m->key_size; w += 4)
			st(g, BPF_W, BPF_REG_10, (int16_t)(KEY_OFF + (int)w), 0);
		for (size_t i = 0; i < s->nkeys; i++) {
			gen_expr(g, s->keys[i], 0);
			if (s->nkeys == 1)
				stx(g, m->key_size == 4 ? BPF_W : BPF_DW, BPF_REG_10, KEY_OFF, BPF_REG_0);
			else
				stx(g, m->key_types[i] == OL_KEY_U64 ? BPF_DW : BPF_W, BPF_REG_10,
				    (int16_t)(KEY_OFF + (int)m->key_off[i]), BPF_REG_0);
		}
	}
	if (m->agg == A_SUM) {
		gen_expr(g, s->arg, 0);
		stx(g, BPF_DW, BPF_REG_10, VAL_OFF, BPF_REG_0);
	}
	/* the value: lookup (insert 0 on a miss) */
	load_map(g, BPF_REG_1, s->map);
	key_addr(g, BPF_REG_2);
	call(g, BPF_FUNC_map_lookup_elem);
	size_t miss, found = 0;
	if (m->type == BPF_MAP_TYPE_HASH) {
		found = jmp_imm(g, BPF_JNE, BPF_REG_0, 0);
		st(g, BPF_DW, BPF_REG_10, ZERO_OFF, 0);
		load_map(g, BPF_REG_1, s->map);
		key_addr(g, BPF_REG_2);
		alu_reg(g, BPF_MOV, BPF_REG_3, BPF_REG_10);
		alu_imm(g, BPF_ADD, BPF_REG_3, ZERO_OFF);
		alu_imm(g, BPF_MOV, BPF_REG_4, BPF_NOEXIST);
		call(g, BPF_FUNC_map_update_elem);
		load_map(g, BPF_REG_1, s->map);
		key_addr(g, BPF_REG_2);
		call(g, BPF_FUNC_map_lookup_elem);
	}
	miss = jmp_imm(g, BPF_JEQ, BPF_REG_0, 0);
	if (m->type == BPF_MAP_TYPE_HASH)
		land(g, found);
	if (m->agg == A_SUM)
		ldx(g, BPF_DW, BPF_REG_1, BPF_REG_10, VAL_OFF);
	else
		alu_imm(g, BPF_MOV, BPF_REG_1, 1);
	emit(g, INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD));
	land(g, miss);
}

int ol_gen_probe(const struct ol_program *p, size_t i, struct ol_code *c, char *err, size_t errlen)
{
	struct gen g = {.p = p, .c = c};
	const struct ol_probe *pr = &p->probes[i];
	alu_reg(&g, BPF_MOV, BPF_REG_6, BPF_REG_1);
	size_t skip = 0;
	if (pr->filter) {
		gen_expr(&g, pr->filter, 0);
		skip = jmp_imm(&g, BPF_JEQ, BPF_REG_0, 0);
	}
	for (size_t s = 0; s < pr->nstmts; s++)
		gen_stmt(&g, &pr->stmts[s]);
	if (pr->filter)
		land(&g, skip);
	alu_imm(&g, BPF_MOV, BPF_REG_0, 0);
	emit(&g, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	if (g.failed == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (g.failed)
		snprintf(err, errlen, "probe %zu (%s): expression too complex", i + 1, pr->section);
	return g.failed;
}

void ol_code_free(struct ol_code *c)
{
	free(c->insns);
	free(c->relocs);
	memset(c, 0, sizeof *c);
}
