/* Inlining of generated calls (inline.h). */
#include "ptx-frontend/inline.h"
#include "common/env.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 16

/* One function the pipeline generated, with what inlining it needs to know. */
struct callee {
	ir_top *top;
	int usable;                /* small, not recursive, every construct understood */
	unsigned ninsns;           /* instructions one inlined copy adds */
	int has_calls;             /* an inlined copy brings calls: another round may find sites */
	unsigned refs;             /* references from live nodes other than itself (dropping) */
	int dropped;
	int site;                  /* called from the application's code: a probe body */
	long expanded;             /* instructions one inlined copy brings with its nested copies
	                              (-1: not known yet) */
	/* What renaming asks of every operand of every site, gathered once: the callee's .reg
	 * declarations (any depth) and its labels. Walking the body per operand instead made
	 * inlining the larger part of instrumenting a module. */
	struct reg_decl *regs;
	size_t nregs;
	const char **labels;
	size_t nlabels;
};

struct reg_decl {
	const char *name;          /* "%r" of %r<5>, or a whole name */
	size_t len;
	int parameterized;         /* count > 0: matches name followed by digits */
};

struct pass {
	ir_module *m;
	struct callee *callees;
	size_t ncallees;
	unsigned max_insns;
	unsigned small_insns;      /* callees this small are inlined wherever they are called */
	int everything;            /* opts->everything */
	int helpers;               /* whole helper bodies pay at sites too (the budget allows) */
	unsigned site;             /* module-wide site counter: names stay unique */
	unsigned local_id;
	struct gp_inline_stats st;
};

/* The caller function being rewritten: the .local arrays it already holds for each callee. */
struct local_map {
	const char *callee, *old, *fresh;
};

struct caller {
	ir_func *f;
	int generated;             /* one of the generated functions (a shared out-of-line body) */
	int probe_body;            /* ... called from the application's sites */
	/* Instructions this caller may still gain: its share of the module's budget (see
	 * plan_budgets). Past it, sites keep their calls. */
	long budget;
	unsigned refused;          /* probe sites the budget left as calls */
	unsigned round;
	int new_calls;             /* this round inlined a callee that has calls */
	struct local_map *locals;
	size_t nlocals, caplocals;
};

/* One site being expanded. */
struct site {
	struct pass *p;
	struct caller *c;
	const ir_func *callee;
	const struct callee *ce;   /* the same callee with its renaming tables */
	const char *tag;           /* "__gpi12_": prefix of the site's registers and labels */
	size_t tag_len;
	const ir_operand *argval[MAX_ARGS];   /* the value stored for each callee parameter */
	const char *ret_tmp;       /* register holding the result, NULL when the site ignores it */
	const char *end_label;
	int end_used;
	const ir_stmt *last_insn;  /* the callee's final instruction (a final ret needs no branch) */
};

static unsigned type_bits(const char *t)
{
	if (!t)
		return 0;
	if (!strcmp(t, ".pred"))
		return 1;
	size_t n = strlen(t);
	size_t i = n;
	while (i && isdigit((unsigned char)t[i - 1]))
		i--;
	return i < n ? (unsigned)atoi(t + i) : 0;
}

/* The type modifier (the last one with digits) of a ld/st/mov, e.g. ".u64" of ld.param.u64. */
static const char *insn_type(const ir_insn *in)
{
	for (unsigned i = in->nmods; i-- > 0;)
		if (type_bits(in->mods[i]) > 1)
			return in->mods[i];
	return NULL;
}

static int has_vec_mod(const ir_insn *in)
{
	return ir_insn_has_mod(in, ".v2") || ir_insn_has_mod(in, ".v4") || ir_insn_has_mod(in, ".v8");
}

static int is_op(const ir_stmt *s, const char *opcode)
{
	return s && s->kind == IR_STMT_INSN && !strcmp(s->insn.opcode, opcode);
}

static int is_param_ldst(const ir_stmt *s, const char *opcode)
{
	return is_op(s, opcode) && ir_insn_has_mod(&s->insn, ".param");
}

/* The callee named by a call instruction (direct calls only), with its result and argument
 * lists; NULL for an indirect call or one with a prototype or target list. */
static const char *call_parts(const ir_insn *in, const ir_operand **rets, const ir_operand **args)
{
	*rets = *args = NULL;
	unsigned i = 0;
	if (i < in->nops && in->ops[i].kind == IR_OPND_LIST)
		*rets = &in->ops[i++];
	if (i >= in->nops || in->ops[i].kind != IR_OPND_SYMBOL)
		return NULL;
	const char *name = in->ops[i++].name;
	if (i < in->nops && in->ops[i].kind == IR_OPND_LIST)
		*args = &in->ops[i++];
	return i == in->nops ? name : NULL;
}

static struct callee *find_callee(struct pass *p, const char *name)
{
	for (size_t i = 0; i < p->ncallees; i++)
		if (!strcmp(p->callees[i].top->func.name, name))
			return &p->callees[i];
	return NULL;
}

static int param_index(const ir_func *f, const char *name)
{
	for (unsigned i = 0; i < f->nparams; i++)
		if (f->params[i].name && !strcmp(f->params[i].name, name))
			return (int)i;
	return -1;
}

static int is_ret_name(const ir_func *f, const char *name)
{
	return f->nrets == 1 && f->rets[0].name && !strcmp(f->rets[0].name, name);
}

/* Whether an operand names one of the callee's parameters other than through an address. */
static int names_param(const ir_func *f, const ir_operand *o)
{
	if (o->kind == IR_OPND_SYMBOL)
		return param_index(f, o->name) >= 0 || is_ret_name(f, o->name);
	if (o->kind == IR_OPND_VEC || o->kind == IR_OPND_LIST || o->kind == IR_OPND_PAIR)
		for (unsigned i = 0; i < o->nelems; i++)
			if (names_param(f, &o->elems[i]))
				return 1;
	return 0;
}

/* A callee can be inlined when it is small, does not call itself, reads each parameter with a
 * whole-width ld.param at offset 0, writes its one result the same way, and declares only
 * registers and .local arrays at its top level. */
static int callee_usable(const struct pass *p, const ir_func *f)
{
	if (!f->has_body || f->nrets > 1 || f->nparams > MAX_ARGS)
		return 0;
	for (unsigned i = 0; i < f->nparams; i++)
		if (f->params[i].dims || f->params[i].vec || type_bits(f->params[i].type) < 8)
			return 0;
	if (f->nrets && (f->rets[0].dims || f->rets[0].vec || type_bits(f->rets[0].type) < 8))
		return 0;
	unsigned ninsns = 0;
	int depth = 0;
	for (const ir_stmt *s = f->first; s; s = s->next) {
		switch (s->kind) {
		case IR_STMT_BLOCK_OPEN:
			depth++;
			break;
		case IR_STMT_BLOCK_CLOSE:
			depth--;
			break;
		case IR_STMT_DECL: {
			const char *sp = s->decl.space;
			if (!sp || s->decl.init)
				return 0;
			if (depth == 0 && strcmp(sp, ".reg") && strcmp(sp, ".local"))
				return 0;
			if (depth > 0 && strcmp(sp, ".reg") && strcmp(sp, ".param"))
				return 0;
			break;
		}
		case IR_STMT_INSN: {
			const ir_insn *in = &s->insn;
			if (++ninsns > p->max_insns)
				return 0;
			if (in->info && (in->info->flags & IR_F_CALL)) {
				const ir_operand *r, *a;
				const char *callee = call_parts(in, &r, &a);
				if (callee && !strcmp(callee, f->name))
					return 0;   /* recursive */
			}
			int ld = is_param_ldst(s, "ld"), st = is_param_ldst(s, "st");
			for (unsigned i = 0; i < in->nops; i++) {
				const ir_operand *o = &in->ops[i];
				if (o->kind == IR_OPND_ADDR && o->name) {
					int pi = param_index(f, o->name);
					int isret = is_ret_name(f, o->name);
					if (pi < 0 && !isret)
						continue;
					if (o->ival || has_vec_mod(in) || in->guard)
						return 0;
					if (pi >= 0 && (!ld || i != 1 ||
							type_bits(insn_type(in)) != type_bits(f->params[pi].type)))
						return 0;
					if (isret && (!st || i != 0 ||
						      type_bits(insn_type(in)) != type_bits(f->rets[0].type)))
						return 0;
				} else if (names_param(f, o)) {
					return 0;
				}
			}
			break;
		}
		default:
			break;
		}
	}
	return depth == 0;
}

/* ---- renaming ------------------------------------------------------------------------------- */

/* The callee's .reg declarations and labels (a few pointers per callee, in the module's arena). */
static void gather_names(ir_module *m, struct callee *ce)
{
	const ir_func *f = &ce->top->func;
	size_t nregs = 0, nlabels = 0;
	for (const ir_stmt *d = f->first; d; d = d->next) {
		if (d->kind == IR_STMT_DECL && d->decl.space && !strcmp(d->decl.space, ".reg") &&
		    d->decl.name)
			nregs++;
		else if (d->kind == IR_STMT_LABEL)
			nlabels++;
	}
	ce->regs = ir_alloc(m, (nregs ? nregs : 1) * sizeof(*ce->regs));
	ce->labels = ir_alloc(m, (nlabels ? nlabels : 1) * sizeof(*ce->labels));
	for (const ir_stmt *d = f->first; d; d = d->next) {
		if (d->kind == IR_STMT_DECL && d->decl.space && !strcmp(d->decl.space, ".reg") &&
		    d->decl.name)
			ce->regs[ce->nregs++] = (struct reg_decl){d->decl.name, strlen(d->decl.name),
								  d->decl.count > 0};
		else if (d->kind == IR_STMT_LABEL)
			ce->labels[ce->nlabels++] = d->text;
	}
}

/* prefix (0 or 1 byte) + the site's tag + rest, built directly in the arena. */
static const char *tagged(struct site *s, const char *prefix, const char *rest)
{
	size_t np = strlen(prefix), nr = strlen(rest);
	char buf[256];
	if (np + s->tag_len + nr >= sizeof(buf))
		return ir_strfmt(s->p->m, "%s%s%s", prefix, s->tag, rest);
	memcpy(buf, prefix, np);
	memcpy(buf + np, s->tag, s->tag_len);
	memcpy(buf + np + s->tag_len, rest, nr);
	return ir_strndup(s->p->m, buf, np + s->tag_len + nr);
}

static int is_callee_reg(const struct callee *ce, const char *name)
{
	for (size_t i = 0; i < ce->nregs; i++) {
		const struct reg_decl *r = &ce->regs[i];
		if (r->parameterized) {
			if (strncmp(name, r->name, r->len) || !name[r->len])
				continue;
			const char *q = name + r->len;
			while (isdigit((unsigned char)*q))
				q++;
			if (!*q)
				return 1;
		} else if (!strcmp(name, r->name)) {
			return 1;
		}
	}
	return 0;
}

static const char *rename_reg(struct site *s, const char *name)
{
	return is_callee_reg(s->ce, name) ? tagged(s, "%", name + 1) : name;
}

static int is_label(const struct callee *ce, const char *name)
{
	for (size_t i = 0; i < ce->nlabels; i++)
		if (!strcmp(ce->labels[i], name))
			return 1;
	return 0;
}

/* The caller's name for one of the callee's top-level .local arrays: one per caller and callee. */
static const char *local_name(struct site *s, const char *old)
{
	struct caller *c = s->c;
	for (size_t i = 0; i < c->nlocals; i++)
		if (!strcmp(c->locals[i].callee, s->callee->name) && !strcmp(c->locals[i].old, old))
			return c->locals[i].fresh;
	return NULL;
}

static const char *rename_sym(struct site *s, const char *name)
{
	const char *l = local_name(s, name);
	if (l)
		return l;
	if (is_label(s->ce, name))
		return tagged(s, "", name);
	return name;
}

static ir_operand copy_operand(struct site *s, const ir_operand *o)
{
	ir_operand r = *o;
	switch (o->kind) {
	case IR_OPND_REG:
		r.name = rename_reg(s, o->name);
		break;
	case IR_OPND_SYMBOL:
		r.name = rename_sym(s, o->name);
		break;
	case IR_OPND_ADDR:
		if (o->name)
			r.name = o->name[0] == '%' ? rename_reg(s, o->name) : rename_sym(s, o->name);
		break;
	default:
		break;
	}
	if (o->nelems) {
		ir_operand *e = ir_alloc(s->p->m, o->nelems * sizeof(*e));
		for (unsigned i = 0; i < o->nelems; i++)
			e[i] = copy_operand(s, &o->elems[i]);
		r.elems = e;
	}
	return r;
}

/* The modifiers of a ld/st.param without .param, as one string: ".u64". */
static const char *mods_without_param(ir_module *m, const ir_insn *in)
{
	size_t len = 1;
	for (unsigned i = 0; i < in->nmods; i++)
		len += strlen(in->mods[i]);
	char *buf = ir_alloc(m, len);
	for (unsigned i = 0; i < in->nmods; i++)
		if (strcmp(in->mods[i], ".param"))
			strcat(buf, in->mods[i]);
	return buf;
}

static ir_stmt *mov_stmt(ir_module *m, const char *mods, ir_operand dst, ir_operand src)
{
	return ir_insn_new(m, "mov", mods, 2, (ir_operand[]){dst, src});
}

/* The copy of one callee statement at the site; NULL when it disappears. */
static ir_stmt *copy_stmt(struct site *s, const ir_stmt *src)
{
	ir_module *m = s->p->m;
	const ir_func *f = s->callee;
	ir_stmt *n;
	switch (src->kind) {
	case IR_STMT_LABEL:
		return ir_label_new(m, tagged(s, "", src->text));
	case IR_STMT_DIRECTIVE:
	case IR_STMT_BLOCK_OPEN:
	case IR_STMT_BLOCK_CLOSE:
		n = ir_stmt_new(m, src->kind);
		n->generated = true;
		n->text = src->text;
		return n;
	case IR_STMT_DECL:
		n = ir_stmt_new(m, IR_STMT_DECL);
		n->generated = true;
		n->decl = src->decl;
		if (!strcmp(src->decl.space, ".reg"))
			n->decl.name = tagged(s, "%", src->decl.name + 1);
		return n;
	case IR_STMT_INSN:
		break;
	}
	const ir_insn *in = &src->insn;
	if (is_param_ldst(src, "ld") && in->nops == 2 && in->ops[1].kind == IR_OPND_ADDR &&
	    in->ops[1].name) {
		int pi = param_index(f, in->ops[1].name);
		if (pi >= 0)
			return mov_stmt(m, mods_without_param(m, in), copy_operand(s, &in->ops[0]),
					*s->argval[pi]);
	}
	if (is_param_ldst(src, "st") && in->nops == 2 && in->ops[0].kind == IR_OPND_ADDR &&
	    in->ops[0].name && is_ret_name(f, in->ops[0].name)) {
		if (!s->ret_tmp)
			return NULL;
		return mov_stmt(m, mods_without_param(m, in), ir_reg(m, s->ret_tmp),
				copy_operand(s, &in->ops[1]));
	}
	if (in->info && (in->info->flags & IR_F_RET)) {
		if (src == s->last_insn && !in->guard)
			return NULL;   /* falls through to the end label */
		n = ir_insn_new(m, "bra", in->guard ? "" : ".uni", 1,
				(ir_operand[]){ir_sym(m, s->end_label)});
		n->insn.guard = in->guard ? rename_reg(s, in->guard) : NULL;
		n->insn.guard_neg = in->guard_neg;
		s->end_used = 1;
		return n;
	}
	n = ir_stmt_new(m, IR_STMT_INSN);
	n->generated = true;
	n->insn = *in;
	n->insn.ops = ir_alloc(m, (in->nops ? in->nops : 1) * sizeof(ir_operand));
	for (unsigned i = 0; i < in->nops; i++)
		n->insn.ops[i] = copy_operand(s, &in->ops[i]);
	if (in->guard)
		n->insn.guard = rename_reg(s, in->guard);
	return n;
}

/* ---- sites ---------------------------------------------------------------------------------- */

/* The statements of a call block: `{ .param ...; st.param [a], X; call (r), f, (a); ld.param
 * Y, [r]; }`, nothing else. */
struct call_block {
	ir_stmt *open, *close, *call;
	const char *callee;
	const ir_operand *rets, *args;
};

static int match_block(ir_stmt *open, struct call_block *b)
{
	memset(b, 0, sizeof(*b));
	b->open = open;
	for (ir_stmt *s = open->next; s; s = s->next) {
		switch (s->kind) {
		case IR_STMT_BLOCK_CLOSE:
			b->close = s;
			return b->call != NULL;
		case IR_STMT_DECL:
			if (!s->decl.space || strcmp(s->decl.space, ".param") || s->decl.dims || s->decl.vec)
				return 0;
			break;
		case IR_STMT_INSN:
			if (s->insn.info && (s->insn.info->flags & IR_F_CALL)) {
				if (b->call)
					return 0;
				b->call = s;
				b->callee = call_parts(&s->insn, &b->rets, &b->args);
				if (!b->callee)
					return 0;
			} else if (!(b->call ? is_param_ldst(s, "ld") : is_param_ldst(s, "st")) ||
				   s->insn.guard || has_vec_mod(&s->insn) || s->insn.nops != 2) {
				return 0;
			}
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/* The value stored into block parameter name, checked for width: NULL when unusable. */
static const ir_operand *stored_value(const struct call_block *b, const char *name, unsigned bits)
{
	const ir_operand *v = NULL;
	for (ir_stmt *s = b->open->next; s != b->call; s = s->next) {
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_operand *a = &s->insn.ops[0];
		if (a->kind != IR_OPND_ADDR || !a->name || strcmp(a->name, name))
			continue;
		if (v || a->ival || type_bits(insn_type(&s->insn)) != bits)
			return NULL;
		v = &s->insn.ops[1];
	}
	return v;
}

static void add_decl_front(struct caller *c, ir_stmt *d)
{
	ir_stmt_insert_after(c->f, NULL, d);
}

static int inline_site(struct pass *p, struct caller *c, struct call_block *b, struct callee *ce)
{
	ir_module *m = p->m;
	const ir_func *f = &ce->top->func;
	struct site s = {.p = p, .c = c, .callee = f, .ce = ce};
	unsigned nargs = b->args ? b->args->nelems : 0;
	unsigned nrets = b->rets ? b->rets->nelems : 0;
	if (nargs != f->nparams || nrets != f->nrets)
		return 0;
	for (unsigned i = 0; i < nargs; i++) {
		const ir_operand *a = &b->args->elems[i];
		if (a->kind != IR_OPND_SYMBOL ||
		    !(s.argval[i] = stored_value(b, a->name, type_bits(f->params[i].type))))
			return 0;
	}
	/* Loads of the result after the call. */
	int ret_read = 0;
	for (ir_stmt *x = b->call->next; x != b->close; x = x->next) {
		if (x->kind != IR_STMT_INSN)
			continue;
		const ir_operand *a = &x->insn.ops[1];
		if (!nrets || a->kind != IR_OPND_ADDR || !a->name ||
		    strcmp(a->name, b->rets->elems[0].name ? b->rets->elems[0].name : "") || a->ival ||
		    type_bits(insn_type(&x->insn)) != type_bits(f->rets[0].type))
			return 0;
		ret_read = 1;
	}
	unsigned id = p->site++;
	s.tag = ir_strfmt(m, "__gpi%u_", id);
	s.tag_len = strlen(s.tag);
	s.end_label = ir_strfmt(m, "__gpi%u_end", id);
	for (const ir_stmt *x = f->first; x; x = x->next)
		if (x->kind == IR_STMT_INSN)
			s.last_insn = x;
	if (ret_read) {
		s.ret_tmp = ir_strfmt(m, "%%__gpi%u_ret", id);
		add_decl_front(c, ir_reg_decl_new(m, f->rets[0].type, s.ret_tmp, -1));
	}
	/* Declarations of the callee's top level: registers per site, .local arrays per caller. */
	int depth = 0;
	for (const ir_stmt *x = f->first; x; x = x->next) {
		if (x->kind == IR_STMT_BLOCK_OPEN)
			depth++;
		else if (x->kind == IR_STMT_BLOCK_CLOSE)
			depth--;
		if (x->kind != IR_STMT_DECL || depth)
			continue;
		if (!strcmp(x->decl.space, ".local")) {
			if (local_name(&s, x->decl.name))
				continue;
			if (c->nlocals == c->caplocals) {
				size_t cap = c->caplocals ? 2 * c->caplocals : 8;
				struct local_map *nl = realloc(c->locals, cap * sizeof(*nl));
				if (!nl)
					return 0;
				c->locals = nl;
				c->caplocals = cap;
			}
			const char *fresh = ir_strfmt(m, "__gpl%u_%s", p->local_id++, x->decl.name);
			c->locals[c->nlocals++] = (struct local_map){f->name, x->decl.name, fresh};
			ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
			d->generated = true;
			d->decl = x->decl;
			d->decl.name = fresh;
			add_decl_front(c, d);
		} else {
			add_decl_front(c, copy_stmt(&s, x));
		}
	}
	/* The body, in place of the block. */
	ir_stmt *pos = b->open;
	const ir_insn *call = &b->call->insn;
	if (call->guard) {
		ir_stmt *skip = ir_insn_new(m, "bra", "", 1, (ir_operand[]){ir_sym(m, s.end_label)});
		skip->insn.guard = call->guard;
		skip->insn.guard_neg = !call->guard_neg;
		ir_stmt_insert_before(c->f, pos, skip);
		s.end_used = 1;
	}
	depth = 0;
	for (const ir_stmt *x = f->first; x; x = x->next) {
		if (x->kind == IR_STMT_BLOCK_OPEN)
			depth++;
		else if (x->kind == IR_STMT_BLOCK_CLOSE)
			depth--;
		if (x->kind == IR_STMT_DECL && depth == 0)
			continue;
		ir_stmt *n = copy_stmt(&s, x);
		if (n)
			ir_stmt_insert_before(c->f, pos, n);
	}
	if (s.end_used)
		ir_stmt_insert_before(c->f, pos, ir_label_new(m, s.end_label));
	for (ir_stmt *x = b->call->next; x != b->close; x = x->next)
		if (x->kind == IR_STMT_INSN)
			ir_stmt_insert_before(c->f, pos,
					      mov_stmt(m, mods_without_param(m, &x->insn), x->insn.ops[0],
						       ir_reg(m, s.ret_tmp)));
	/* Drop the block. */
	ir_stmt *end = b->close->next;
	for (ir_stmt *x = b->open; x != end;) {
		ir_stmt *next = x->next;
		ir_stmt_remove(c->f, x);
		x = next;
	}
	return 1;
}

/* Whether inlining callee ce into caller c pays (its budget aside). Inlined code grows with the
 * copies of what is inlined, so only what gains from being inlined is:
 * - small callees (a call with its parameter passing costs about as much), everywhere;
 * - a probe body at its sites: the counting fast path it holds (the folded lookup's %smid shard
 *   address and the atomic add through it, lower_plan.c) is what ptxas must see in one piece to
 *   aggregate the add per warp (DESIGN.md, "Hot map values are sharded per SM");
 * - into a shared helper body (one per module: hash lookup, update, ring reserve), the pieces it
 *   calls: one copy, whatever its size.
 * - whole helper bodies (a hash lookup, a ring reservation) at the sites too, but only when all
 *   of it fits the module's budget (plan_budgets): a small module keeps every site fully inlined.
 * Never at a site: cold helpers (ir_func.cold: the map insert), one shared body each. What stays
 * out of line is then one shared body per helper, called from every site. */
static int pays(const struct pass *p, const struct caller *c, const struct callee *ce)
{
	if (!ce->usable)
		return 0;
	if (p->everything)
		return 1;
	if (c->f && c->f->cold)
		return 0;   /* a cold body calls its pieces: compiled once, run rarely */
	if (ce->top->func.cold)
		return c->generated && !c->probe_body;   /* only into another shared body */
	if (ce->ninsns <= p->small_insns)
		return 1;
	if (!c->generated)
		return ce->site || p->helpers;
	return !c->probe_body && !ce->site;
}

static unsigned count_insns(const ir_func *f)
{
	unsigned n = 0;
	for (const ir_stmt *s = f->first; s; s = s->next)
		n += s->kind == IR_STMT_INSN;
	return n;
}

/* The application's own instructions of f: not those the instrumentation put at its sites. */
static unsigned count_own_insns(const ir_func *f)
{
	unsigned n = 0;
	for (const ir_stmt *s = f->first; s; s = s->next)
		n += s->kind == IR_STMT_INSN && !s->generated;
	return n;
}

static int has_calls(const ir_func *f)
{
	for (const ir_stmt *s = f->first; s; s = s->next)
		if (s->kind == IR_STMT_INSN && s->insn.info && (s->insn.info->flags & IR_F_CALL))
			return 1;
	return 0;
}

/* One round over a caller: inline every recognised site; returns how many. */
static unsigned inline_round(struct pass *p, struct caller *c)
{
	unsigned done = 0;
	for (ir_stmt *s = c->f->first; s;) {
		struct call_block b;
		if (s->kind != IR_STMT_BLOCK_OPEN || !match_block(s, &b)) {
			s = s->next;
			continue;
		}
		ir_stmt *next = b.close->next;
		struct callee *ce = find_callee(p, b.callee);
		if (ce && pays(p, c, ce)) {
			if ((long)ce->ninsns > c->budget)
				c->refused += !c->round && ce->site;   /* each probe site once */
			else if (inline_site(p, c, &b, ce)) {
				c->budget -= ce->ninsns;
				c->new_calls |= ce->has_calls;
				done++;
			}
		}
		s = next;
	}
	return done;
}

/* ---- dropping unreferenced generated functions -------------------------------------------- */

/* Callees by name: an open-addressed table over p->callees, so that one walk of the module can
 * count references to every generated function at once. */
struct name_index {
	int *slot;                 /* callee index + 1, 0 empty */
	size_t mask;
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int index_build(struct name_index *ix, const struct pass *p)
{
	size_t cap = 16;
	while (cap < 2 * p->ncallees)
		cap *= 2;
	if (!(ix->slot = calloc(cap, sizeof(*ix->slot))))
		return -1;
	ix->mask = cap - 1;
	for (size_t i = 0; i < p->ncallees; i++) {
		size_t j = name_hash(p->callees[i].top->func.name) & ix->mask;
		while (ix->slot[j])
			j = (j + 1) & ix->mask;
		ix->slot[j] = (int)i + 1;
	}
	return 0;
}

/* The callee named name, or -1. */
static int index_find(const struct name_index *ix, const struct pass *p, const char *name)
{
	for (size_t j = name_hash(name) & ix->mask; ix->slot[j]; j = (j + 1) & ix->mask)
		if (!strcmp(p->callees[ix->slot[j] - 1].top->func.name, name))
			return ix->slot[j] - 1;
	return -1;
}

/* Calls visit(user, callee index) for every operand of f that names a generated function. */
static void operand_refs(const struct name_index *ix, const struct pass *p, const ir_operand *o,
			 void (*visit)(void *, int), void *user)
{
	if ((o->kind == IR_OPND_SYMBOL || o->kind == IR_OPND_ADDR) && o->name) {
		int k = index_find(ix, p, o->name);
		if (k >= 0)
			visit(user, k);
	}
	for (unsigned i = 0; i < o->nelems; i++)
		operand_refs(ix, p, &o->elems[i], visit, user);
}

static void func_refs(const struct name_index *ix, const struct pass *p, const ir_func *f,
		      void (*visit)(void *, int), void *user)
{
	for (const ir_stmt *s = f->first; s; s = s->next)
		if (s->kind == IR_STMT_INSN)
			for (unsigned i = 0; i < s->insn.nops; i++)
				operand_refs(ix, p, &s->insn.ops[i], visit, user);
}

struct ref_walk {
	struct pass *p;
	int self;                  /* the generated function walked, -1 for the application's */
	int delta;                 /* +1 counting, -1 dropping */
};

static void count_ref(void *user, int k)
{
	struct ref_walk *w = user;
	if (k != w->self)
		w->p->callees[k].refs += (unsigned)w->delta;
}

static int generated_body(const ir_top *t)
{
	return t->kind == IR_TOP_FUNC && t->generated && t->func.has_body && t->func.name;
}

/* Calls left in the application's functions to generated ones (stats.kept). */
static unsigned count_kept(const struct pass *p, const struct name_index *ix, const ir_module *m)
{
	unsigned kept = 0;
	for (const ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC || t->generated || !t->func.has_body)
			continue;
		for (const ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind != IR_STMT_INSN || !s->insn.info || !(s->insn.info->flags & IR_F_CALL))
				continue;
			const ir_operand *r, *a;
			const char *name = call_parts(&s->insn, &r, &a);
			kept += name && index_find(ix, p, name) >= 0;
		}
	}
	return kept;
}

/* A generated function that is dropped may have a forward declaration (a subprogram of a probe
 * is declared before the probe that calls it); left alone, ptxas fails on it as an unresolved
 * extern function although nothing calls it any more. */
static void drop_orphan_prototypes(const struct pass *p, ir_module *m)
{
	for (ir_top *t = m->first, *next; t; t = next) {
		next = t->next;
		if (t->kind != IR_TOP_FUNC || t->func.has_body || !t->func.name)
			continue;
		for (size_t i = 0; i < p->ncallees; i++)
			if (p->callees[i].dropped && !strcmp(p->callees[i].top->func.name, t->func.name)) {
				ir_top_remove(m, t);
				break;
			}
	}
}

/* Drop every generated function that no live node refers to (functions not dropped, initializers
 * of variables), until none is left to drop: dropping a probe may leave its helpers unreferenced.
 * References are counted in one walk of the module, then taken back as functions drop. */
static unsigned drop_unreferenced(struct pass *p, const struct name_index *ix, ir_module *m)
{
	for (size_t i = 0; i < p->ncallees; i++)
		p->callees[i].refs = 0;
	for (const ir_top *t = m->first; t; t = t->next) {
		if (t->kind == IR_TOP_DECL && t->decl.init) {
			for (size_t i = 0; i < p->ncallees; i++)
				if (strstr(t->decl.init, p->callees[i].top->func.name))
					p->callees[i].refs++;
		} else if (t->kind == IR_TOP_FUNC && t->func.has_body) {
			int self = generated_body(t) ? index_find(ix, p, t->func.name) : -1;
			struct ref_walk w = {p, self, 1};
			func_refs(ix, p, &t->func, count_ref, &w);
		}
	}
	unsigned dropped = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < p->ncallees; i++) {
			struct callee *ce = &p->callees[i];
			if (ce->refs || ce->dropped)
				continue;
			ir_top_remove(m, ce->top);
			ce->dropped = 1;
			struct ref_walk w = {p, (int)i, -1};
			func_refs(ix, p, &ce->top->func, count_ref, &w);
			dropped++;
			changed = 1;
		}
	}
	if (dropped)
		drop_orphan_prototypes(p, m);
	return dropped;
}

/* ---- the pass ------------------------------------------------------------------------------- */

/* The module's inlining budget as a multiple of its own instructions: GPUPROBE_INLINE_GROWTH
 * (1..1000, default 2). */
static long growth_factor(void)
{
	return (long)gp_env_uint(GP_VAR_INLINE_GROWTH);   /* 1..1000 (common/env.c) */
}

/* Fill in what inlining needs to know of a callee (again, after its body changed). */
static void describe(struct pass *p, struct callee *ce)
{
	const ir_func *f = &ce->top->func;
	ce->usable = callee_usable(p, f);
	ce->ninsns = count_insns(f);
	ce->has_calls = has_calls(f);
	ce->nregs = ce->nlabels = 0;
	gather_names(p->m, ce);
	ce->expanded = -1;
}

/* Inlining rounds over one caller: each round's copies may bring calls for the next. */
static void inline_caller(struct pass *p, struct caller *c, unsigned depth)
{
	for (unsigned r = 0; r < depth; r++) {
		c->new_calls = 0;
		c->round = r;
		unsigned k = inline_round(p, c);
		p->st.inlined += k;
		/* Sites left now stay left (the budget only shrinks, the rest is structure): only
		 * calls brought in by this round's copies can make another round useful. */
		if (!k || !c->new_calls)
			break;
	}
	free(c->locals);
	c->locals = NULL;
	c->nlocals = c->caplocals = 0;
}

static int app_func(const ir_top *t)
{
	return t->kind == IR_TOP_FUNC && !t->generated && t->func.has_body;
}

/* Instructions one copy of ce brings to a site, with the copies of what pays to inline in it. */
static long expanded(struct pass *p, struct callee *ce, unsigned depth)
{
	if (ce->expanded >= 0)
		return ce->expanded;
	long n = ce->ninsns;
	const struct caller site = {0};
	for (const ir_stmt *s = ce->top->func.first; s && depth && ce->has_calls && !ce->top->func.cold;
	     s = s->next) {
		if (s->kind != IR_STMT_INSN || !s->insn.info || !(s->insn.info->flags & IR_F_CALL))
			continue;
		const ir_operand *r, *a;
		const char *name = call_parts(&s->insn, &r, &a);
		struct callee *in = name ? find_callee(p, name) : NULL;
		if (in && in != ce && pays(p, &site, in))
			n += expanded(p, in, depth - 1);
	}
	return ce->expanded = n;
}

/* Each call block of f to a generated function: visit(p, callee, user). */
static void each_site(struct pass *p, ir_func *f, void (*visit)(struct pass *, struct callee *, void *),
		      void *user)
{
	for (ir_stmt *s = f->first; s; s = s->next) {
		struct call_block b;
		if (s->kind != IR_STMT_BLOCK_OPEN || !match_block(s, &b))
			continue;
		struct callee *ce = find_callee(p, b.callee);
		if (ce)
			visit(p, ce, user);
		s = b.close;
	}
}

static void mark_site(struct pass *p, struct callee *ce, void *user)
{
	(void)p, (void)user;
	ce->site = 1;
}

struct demand {
	long insns;
	unsigned sites;
};

static void add_demand(struct pass *p, struct callee *ce, void *user)
{
	struct demand *d = user;
	const struct caller site = {0};
	d->sites++;
	if (pays(p, &site, ce))
		d->insns += expanded(p, ce, 8);
}

/* The budget: the module may gain growth_factor() times its own instructions (at least
 * min_budget). Inlining every site of every kernel without one turned a 1,000-kernel template
 * module's 3.5 MB of PTX into 156 MB (ptxas: 4 min 13 s instead of 9.7 s), cuSPARSE's 31.6 MB
 * into 714 MB (5.8 GB to instrument), CUB's 0.6 MB into 35 MB (a 340 s JIT). The floor of
 * 50,000 keeps small modules fully inlined: bench/overhead's memory trace (218 ring sites of
 * ovh.cu, measured at 8.4x native with its reservations inlined) adds 47,742. When what pays to
 * inline fits, every caller inlines all of it; otherwise each caller gets a share in proportion
 * to what it asks, so that every kernel keeps some inlined sites and the rest call the shared
 * bodies. */
/* What inlining all that pays would add to each application function (budget[]), in total. */
static long demands(struct pass *p, long *budget)
{
	long total = 0;
	size_t i = 0;
	for (size_t c = 0; c < p->ncallees; c++)
		p->callees[c].expanded = -1;
	p->st.sites = 0;
	for (ir_top *t = p->m->first; t; t = t->next) {
		if (!app_func(t))
			continue;
		struct demand d = {0};
		each_site(p, &t->func, add_demand, &d);
		budget[i++] = d.insns;
		total += d.insns;
		p->st.sites += d.sites;
	}
	return total;
}

static long *plan_budgets(struct pass *p, const struct gp_inline_opts *opts, size_t nfuncs)
{
	long *budget = calloc(nfuncs ? nfuncs : 1, sizeof(*budget));
	if (!budget)
		return NULL;
	long module = 0;
	for (ir_top *t = p->m->first; t; t = t->next)
		if (app_func(t))
			module += count_own_insns(&t->func);
	long k = opts && opts->growth ? (long)opts->growth : growth_factor();
	long min = opts && opts->min_budget ? (long)opts->min_budget : 50000;   /* see plan_budgets */
	long allowed = k * module > min ? k * module : min;
	/* Whole helpers at the sites while everything fits; past that, probe bodies only. */
	p->helpers = 1;
	long total = demands(p, budget);
	if (total > allowed && !p->everything) {
		p->st.helpers_out = 1;
		p->st.demand_all = (unsigned long)total;
		p->helpers = 0;
		total = demands(p, budget);
	}
	p->st.module_insns = (unsigned long)module;
	p->st.demand = (unsigned long)total;
	p->st.budget = (unsigned long)allowed;
	p->st.growth = (unsigned)k;
	for (size_t i = 0; i < nfuncs; i++)
		budget[i] = total <= allowed || p->everything ? LONG_MAX : (long)((double)allowed * (double)budget[i] / (double)total);
	return budget;
}

int gp_inline_generated_calls(ir_module *m, const struct gp_inline_opts *opts,
			      struct gp_inline_stats *stats)
{
	struct pass p = {.m = m, .max_insns = opts && opts->max_insns ? opts->max_insns : GP_INLINE_MAX_INSNS,
			 .small_insns = opts && opts->small_insns ? opts->small_insns : 48,
			 .everything = opts && opts->everything};
	unsigned depth = opts && opts->max_depth ? opts->max_depth : 4;
	size_t n = 0, nfuncs = 0;
	for (ir_top *t = m->first; t; t = t->next) {
		n += generated_body(t);
		nfuncs += app_func(t);
	}
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!n)
		return 0;
	p.callees = calloc(n, sizeof(*p.callees));
	if (!p.callees)
		return 0;   /* out of memory: calls stay calls */
	for (ir_top *t = m->first; t; t = t->next)
		if (generated_body(t))
			p.callees[p.ncallees++].top = t;
	for (size_t i = 0; i < p.ncallees; i++)
		describe(&p, &p.callees[i]);
	for (ir_top *t = m->first; t; t = t->next)
		if (app_func(t))
			each_site(&p, &t->func, mark_site, NULL);
	/* The shared bodies first, callees before callers (a .func precedes its callers): each
	 * takes in what it calls, once per module, and is described again before anything
	 * inlines it. */
	for (size_t i = 0; i < p.ncallees; i++) {
		struct callee *ce = &p.callees[i];
		if (!ce->has_calls)
			continue;
		struct caller c = {.f = &ce->top->func, .generated = 1, .probe_body = ce->site,
				   .budget = LONG_MAX};
		inline_caller(&p, &c, depth);
		describe(&p, ce);
	}
	/* Then the application's sites, each function within its share of the budget. */
	long *budget = plan_budgets(&p, opts, nfuncs);
	size_t i = 0;
	for (ir_top *t = m->first; t && budget; t = t->next) {
		if (!app_func(t))
			continue;
		struct caller c = {.f = &t->func, .budget = budget[i++]};
		inline_caller(&p, &c, depth);
		p.st.budget_calls += c.refused;
	}
	free(budget);
	struct name_index ix;
	if (!index_build(&ix, &p)) {
		p.st.kept = count_kept(&p, &ix, m);
		p.st.dropped = drop_unreferenced(&p, &ix, m);
		free(ix.slot);
	}   /* out of memory: unreferenced functions stay, harmless */
	free(p.callees);
	if (stats)
		*stats = p.st;
	return 0;
}

int gp_inline_enabled(void)
{
	return gp_env_flag(GP_VAR_INLINE);
}

int gp_inline_probe_calls(ir_module *m)
{
	if (!gp_inline_enabled())
		return 0;
	struct gp_inline_stats st;
	gp_inline_generated_calls(m, NULL, &st);
	if (st.helpers_out) {
		/* one line, as the shim's own (shim/log.c): why this module's sites call */
		char line[512], sites[128] = "";
		if (st.budget_calls)
			snprintf(sites, sizeof(sites), "; %u of %u probe sites call their probe too",
				 st.budget_calls, st.sites);
		int len = snprintf(line, sizeof(line),
				   "gpuprobe: inline: inlining the probes and their helpers would add %lu "
				   "instructions to a module of %lu, more than its budget of %lu "
				   "(GPUPROBE_INLINE_GROWTH=%u times its size): map and ring helpers are called "
				   "from one shared out-of-line body each%s\n",
				   st.demand_all, st.module_insns, st.budget, st.growth, sites);
		if (len > 0 && write(STDERR_FILENO, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1) < 0)
			return 0;
	}
	return 0;
}
