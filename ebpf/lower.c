/* gp_lower_program: checks the instruction stream's shape (opcodes are checked by each job),
 * splits it into subprograms, and lowers each into its own .func. Every eBPF register is a
 * 64-bit virtual register; ptxas allocates and optimizes. */
#include "ebpf/lower_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_lddw(const struct bpf_insn *in) { return in->code == (BPF_LD | BPF_IMM | BPF_DW); }

static bool is_jump_class(uint8_t code)
{
	return BPF_CLASS(code) == BPF_JMP || BPF_CLASS(code) == BPF_JMP32;
}

static bool is_local_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL;
}

/* Jump target of a jump (not call/exit), as a signed index. */
static long long jump_target(size_t i, const struct bpf_insn *in)
{
	if (in->code == (BPF_JMP32 | BPF_JA))
		return (long long)i + 1 + in->imm;
	return (long long)i + 1 + in->off;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

static bool prefix_ok(const char *p)
{
	if (!*p)
		return false;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '$'))
			return false;
	return true;
}

static size_t sub_of(const struct lower_ctx *c, size_t idx)
{
	for (size_t s = c->nsubs; s-- > 0;)
		if (idx >= c->subs[s].start)
			return s;
	return 0;
}

/* First pass: labels, subprogram entries, and the checks that keep the IR well formed. */
static int scan(struct lower_ctx *c, bool *second_half, size_t **entries, size_t *nentries)
{
	size_t cap = 8, ne = 0;
	size_t *e = malloc(cap * sizeof(*e));
	if (!e)
		return lower_fail(c, ENOMEM, "out of memory");
	e[ne++] = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct bpf_insn *in = &c->insns[i];
		c->pc = i;
		if (is_lddw(in)) {
			if (i + 1 >= c->n) {
				free(e);
				return lower_fail(c, EINVAL, "lddw without its second half");
			}
			second_half[++i] = true;
			continue;
		}
		if (!is_jump_class(in->code))
			continue;
		uint8_t op = BPF_OP(in->code);
		if (op == BPF_EXIT)
			continue;
		if (op == BPF_CALL) {
			if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 && in->imm == 507)
				c->uses_exit_helper = true;
			if (!is_local_call(in))
				continue;
			long long t = (long long)i + 1 + in->imm;
			if (t < 0 || (size_t)t >= c->n) {
				free(e);
				return lower_fail(c, EINVAL, "call to %lld, outside the program (0..%zu)", t,
						  c->n - 1);
			}
			if (ne == cap) {
				size_t *ng = realloc(e, (cap *= 2) * sizeof(*e));
				if (!ng) {
					free(e);
					return lower_fail(c, ENOMEM, "out of memory");
				}
				e = ng;
			}
			e[ne++] = (size_t)t;
			continue;
		}
		long long t = jump_target(i, in);
		if (t < 0 || (size_t)t >= c->n) {
			free(e);
			return lower_fail(c, EINVAL, "jump to %lld, outside the program (0..%zu)", t,
					  c->n - 1);
		}
		c->is_target[t] = true;
	}
	qsort(e, ne, sizeof(*e), cmp_size);
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (!k || e[k - 1] != e[i])
			e[k++] = e[i];
	*entries = e;
	*nentries = k;
	return 0;
}

/* The main program's straight-line start: the instructions every lane that enters runs exactly
 * once, in order (no jump lands there, none leaves it, no exit or bpftime exit before them).
 * Warp helpers there may match over the site's mask (opts->site_mask, lower_call.c). */
static size_t straight_prefix(const struct lower_ctx *c, const bool *second_half)
{
	for (size_t i = 0; i < c->subs[0].end; i++) {
		const struct bpf_insn *in = &c->insns[i];
		if (c->is_target[i])
			return i;
		if (second_half[i] || !is_jump_class(in->code))
			continue;
		if (BPF_OP(in->code) != BPF_CALL)
			return i;   /* a jump, or exit */
		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 && in->imm == 507)
			return i;
		if (is_local_call(in) && c->uses_exit_helper)
			return i;   /* the subprogram may end the probe */
	}
	return c->subs[0].end;
}

/* Jumps stay inside their subprogram, never land inside lddw, and no subprogram runs off its
 * end (the verifier says the same; the IR must not depend on it). */
static int check_shape(struct lower_ctx *c, const bool *second_half)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct bpf_insn *in = &c->insns[i];
		c->pc = i;
		if (second_half[i])
			continue;
		if (is_jump_class(in->code) && BPF_OP(in->code) != BPF_EXIT &&
		    BPF_OP(in->code) != BPF_CALL) {
			size_t t = (size_t)jump_target(i, in);
			if (second_half[t])
				return lower_fail(c, EINVAL, "jump into the middle of lddw at %zu", t - 1);
			if (sub_of(c, t) != sub_of(c, i))
				return lower_fail(c, EINVAL, "jump to %zu leaves the subprogram", t);
		}
		if (is_local_call(in) && second_half[i + 1 + in->imm])
			return lower_fail(c, EINVAL, "call into the middle of lddw");
	}
	for (size_t s = 0; s < c->nsubs; s++) {
		size_t last = c->subs[s].end - 1;
		if (second_half[last])
			last--;
		const struct bpf_insn *in = &c->insns[last];
		c->pc = last;
		bool ends = in->code == (BPF_JMP | BPF_EXIT) || in->code == (BPF_JMP | BPF_JA) ||
			    in->code == (BPF_JMP32 | BPF_JA);
		if (!ends)
			return lower_fail(c, EINVAL, "the last instruction of %s falls through past its end",
					  s ? "a subprogram" : "the program");
	}
	return 0;
}

static int lower_insn(struct lower_ctx *c, const struct bpf_insn *in)
{
	switch (BPF_CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return lower_alu(c, in);
	case BPF_JMP:
	case BPF_JMP32:
		if (BPF_OP(in->code) == BPF_CALL)
			return lower_call(c, in);
		if (BPF_OP(in->code) == BPF_EXIT) {
			if (in->code != (BPF_JMP | BPF_EXIT))
				return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
			return lower_exit(c);
		}
		return lower_jump(c, in);
	default:
		return lower_mem(c, in);
	}
}

static void append_func(ir_module *m, ir_top *t) { ir_top_append(m, t); }

/* A bodiless copy of f, declared before any body so that subprograms may call each other in
 * any order. */
static ir_top *prototype_of(ir_module *m, const ir_func *f)
{
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	t->generated = true;
	t->func = *f;
	t->func.has_body = false;
	t->func.first = t->func.last = NULL;
	return t;
}

int gp_lower_program(ir_module *m, const struct bpf_insn *insns, size_t n, const char *func_name,
		     const struct gp_lower_opts *opts, char *err, size_t errlen)
{
	static const struct gp_lower_opts no_opts;
	struct lower_ctx ctx = {.m = m, .insns = insns, .n = n, .err = err, .errlen = errlen};
	struct lower_ctx *c = &ctx;
	if (err && errlen)
		err[0] = 0;
	if (!opts)
		opts = &no_opts;
	c->opts = opts;
	if (!m || !insns || !n || !func_name || !prefix_ok(func_name))
		return lower_fail(c, EINVAL, "%s", !m ? "no module" : !insns || !n ? "empty program"
					  : "bad function name");
	c->prefix = opts->prefix ? opts->prefix : "__gp_";
	if (!prefix_ok(c->prefix))
		return lower_fail(c, EINVAL, "bad prefix \"%s\" (letters, digits, '_', '$' only)", c->prefix);
	c->nargs = opts->nargs ? opts->nargs : 1;
	if (c->nargs > 5)
		return lower_fail(c, EINVAL, "nargs %u: at most 5 arguments (r1..r5)", c->nargs);
	c->func_name = func_name;
	if (ir_module_find_func(m, func_name))
		return lower_fail(c, EEXIST, "function %s is already in the module", func_name);
	c->stack_size = opts->stack_size ? (opts->stack_size + 7) & ~7u : 512;
	if (c->stack_size > 512)
		return lower_fail(c, EINVAL, "stack_size %u: the ISA's stack is 512 bytes", opts->stack_size);

	int rc;
	bool *second_half = calloc(n, sizeof(bool));
	c->is_target = calloc(n, sizeof(bool));
	c->dead = calloc(n, sizeof(bool));
	c->folds = calloc(n, sizeof(*c->folds));
	size_t *entries = NULL, nentries = 0;
	if (!second_half || !c->is_target || !c->dead || !c->folds) {
		rc = lower_fail(c, ENOMEM, "out of memory");
		goto out;
	}
	rc = scan(c, second_half, &entries, &nentries);
	if (rc)
		goto out;
	c->nsubs = nentries;
	c->subs = calloc(nentries, sizeof(*c->subs));
	if (!c->subs) {
		rc = lower_fail(c, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t s = 0; s < nentries; s++) {
		c->subs[s].start = entries[s];
		c->subs[s].end = s + 1 < nentries ? entries[s + 1] : n;
		c->subs[s].name = s ? ir_strfmt(m, "%s__sub%zu", func_name, entries[s]) : ir_strdup(m, func_name);
	}
	rc = check_shape(c, second_half);
	if (rc)
		goto out;
	if (opts->weight && c->nsubs > 1) {   /* the weight is the main function's alone */
		rc = lower_fail(c, EINVAL, "a weighted program with BPF-to-BPF calls");
		goto out;
	}
	c->prefix_end = straight_prefix(c, second_half);

	for (size_t s = 0; s < c->nsubs; s++) {
		rc = lower_frame_begin(c, s);
		if (rc)
			goto out;
		for (size_t i = c->subs[s].start; i < c->subs[s].end; i++) {
			if (second_half[i])
				continue;
			c->pc = i;
			c->label_seq = 0;
			if (c->is_target[i])
				lo_label(c, lo_insn_label(c, i));
			if (c->dead[i])
				continue;   /* a copy of r10 nothing reads (lower_plan.c) */
			rc = lower_insn(c, &insns[i]);
			if (rc)
				goto out;
		}
	}
	/* Only now, after every hook ran (they may add functions), the lowered code joins m. */
	for (size_t s = 1; s < c->nsubs; s++)
		append_func(m, prototype_of(m, &c->subs[s].top->func));
	for (size_t s = c->nsubs; s-- > 1;)
		append_func(m, c->subs[s].top);
	append_func(m, c->subs[0].top);
out:
	free(second_half);
	free(c->is_target);
	free(c->dead);
	free(c->folds);
	free(entries);
	free(c->subs);
	return rc;
}
