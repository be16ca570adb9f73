/* One kernel as a module of its own, and its binding to the original module's variables
 * (split.h). */
#include "ptx-frontend/split.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the load-time scan ---------------------------------------------------------------------- */

int ptx_split_precheck(const char *ptx, size_t len, char *why, size_t whylen)
{
	/* Each word names something a split module could not share with the original or that
	 * the split does not model; the whole module is instrumented instead. One pass over the
	 * text, looking at each '.' (11 memmem passes cost 6-10 ms on a 1.1 MB module). */
	static const struct { const char *word, *reason; } refuse[] = {
		{".texref", "texture references"},
		{".surfref", "surface references"},
		{".samplerref", "sampler references"},
		{".tex ", "texture variables"},
		{".extern", ".extern variables (separately compiled device code)"},   /* see below */
		{".common", ".common symbols"},
		{".callprototype", "indirect calls"},
		{".section", "debug sections"},
		{".const", "isspacep.const"},   /* only after "isspacep" (below) */
		{".address_size 32", "32-bit addresses"},
	};
	while (len && !ptx[len - 1])
		len--;
	const char *end = ptx + len;
	for (const char *p = ptx; (p = memchr(p, '.', (size_t)(end - p))); p++) {
		/* The second letters of the words above: most dots go no further. */
		if (p + 1 >= end || !strchr("tsecwa", p[1]))
			continue;
		for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
			size_t n = strlen(refuse[i].word);
			if ((size_t)(end - p) < n || memcmp(p, refuse[i].word, n))
				continue;
			if (!strcmp(refuse[i].word, ".const") &&
			    (p - ptx < 8 || memcmp(p - 8, "isspacep", 8)))
				continue;
			/* extern __shared__ arrays (the dynamic shared memory) and functions the driver
			 * provides (vprintf, malloc, __assertfail: the module loads on its own, so
			 * whatever it declares .extern the driver resolves) split like the rest. */
			if (!strcmp(refuse[i].word, ".extern")) {
				const char *q = p + n;
				while (q < end && (*q == ' ' || *q == '\t'))
					q++;
				if ((end - q >= 7 && !memcmp(q, ".shared", 7)) ||
				    (end - q >= 5 && !memcmp(q, ".func", 5)))
					continue;
			}
			return fail(why, whylen, "%s", refuse[i].reason);
		}
	}
	return 0;
}

/* ---- module-scope names ---------------------------------------------------------------------- */

struct slot {
	const char *name;
	ir_top *top;       /* the definition (a function with a body wins over its prototype) */
};

struct ptx_split_src {
	ir_module *m;
	struct slot *slots;
	size_t cap;        /* power of two */
};

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static struct slot *lookup(const struct ptx_split_src *s, const char *name, size_t n)
{
	for (size_t i = hash_name(name, n) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		struct slot *sl = &s->slots[i];
		if (!sl->name || (!strncmp(sl->name, name, n) && !sl->name[n]))
			return sl;
	}
}

static const char *top_name(const ir_top *t)
{
	return t->kind == IR_TOP_FUNC ? t->func.name : t->kind == IR_TOP_DECL ? t->decl.name : NULL;
}

struct ptx_split_src *ptx_split_src_new(const char *ptx, size_t len, char *err, size_t errlen)
{
	struct ptx_split_src *s = calloc(1, sizeof(*s));
	if (!s) {
		fail(err, errlen, "out of memory");
		return NULL;
	}
	s->m = ptx_parse(ptx, len, err, errlen);
	size_t n = 0;
	for (ir_top *t = s->m ? s->m->first : NULL; t; t = t->next)
		n += top_name(t) != NULL;
	for (s->cap = 16; s->cap < 2 * n + 2; s->cap *= 2)
		;
	if (!s->m || !(s->slots = calloc(s->cap, sizeof(*s->slots)))) {
		if (s->m)
			fail(err, errlen, "out of memory");
		ptx_split_src_free(s);
		return NULL;
	}
	for (ir_top *t = s->m->first; t; t = t->next) {
		const char *name = top_name(t);
		if (!name)
			continue;
		struct slot *sl = lookup(s, name, strlen(name));
		if (!sl->name || (t->kind == IR_TOP_FUNC && t->func.has_body)) {
			sl->name = name;
			sl->top = t;
		}
	}
	return s;
}

void ptx_split_src_free(struct ptx_split_src *s)
{
	if (!s)
		return;
	if (s->m)
		ir_module_free(s->m);
	free(s->slots);
	free(s);
}

void ptx_split_vars_free(struct ptx_split_vars *v)
{
	for (unsigned i = 0; v && i < v->n; i++)
		free(v->names[i]);
	if (v) {
		free(v->names);
		v->names = NULL;
		v->n = 0;
	}
}

/* ---- the split ------------------------------------------------------------------------------- */

/* The closure under construction: a set of top nodes, and a work list of functions to walk. */
struct closure {
	const struct ptx_split_src *s;
	const ir_top **in;     /* tops taken, by slot index (NULL: not taken) */
	const ir_top **work;
	size_t nwork;
	char *why;
	size_t whylen;
	int bad;
};

static void take_name(struct closure *c, const char *name, size_t n)
{
	struct slot *sl = lookup(c->s, name, n);
	if (!sl->name)
		return;   /* a label, a parameter, a local: not module-scope */
	size_t i = (size_t)(sl - c->s->slots);
	if (c->in[i])
		return;
	const ir_top *t = sl->top;
	c->in[i] = t;
	if (t->kind == IR_TOP_FUNC) {
		/* A declaration alone: a function the driver provides (the split declares it too). */
		if (!t->func.has_body) {
			if (!t->func.linkage || strcmp(t->func.linkage, ".extern"))
				c->bad = fail(c->why, c->whylen, "function %s has no body here",
					      t->func.name);
			return;
		}
		c->work[c->nwork++] = t;
		return;
	}
	const ir_decl *d = &t->decl;
	int ext_shared = d->linkage && !strcmp(d->linkage, ".extern") && d->space &&
			 !strcmp(d->space, ".shared");
	if (d->linkage && strcmp(d->linkage, ".visible") && strcmp(d->linkage, ".weak") && !ext_shared)
		c->bad = fail(c->why, c->whylen, "variable %s is %s", d->name, d->linkage);
	else if (!d->space || (strcmp(d->space, ".global") && strcmp(d->space, ".const") &&
			       strcmp(d->space, ".shared") && strcmp(d->space, ".local")))
		c->bad = fail(c->why, c->whylen, "variable %s is in %s space", d->name,
			      d->space ? d->space : "no");
	else if (d->type && strstr(d->type, "ref"))
		c->bad = fail(c->why, c->whylen, "variable %s is a %s", d->name, d->type);
}

/* Identifiers in raw operand text (anything the parser kept as text). */
static void take_raw(struct closure *c, const char *text)
{
	for (const char *p = text; *p;) {
		if (isalpha((unsigned char)*p) || *p == '_' || *p == '$') {
			const char *e = p;
			while (isalnum((unsigned char)*e) || *e == '_' || *e == '$')
				e++;
			take_name(c, p, (size_t)(e - p));
			p = e;
		} else {
			p++;
		}
	}
}

static void take_operand(struct closure *c, const ir_operand *o)
{
	switch (o->kind) {
	case IR_OPND_SYMBOL:
		take_name(c, o->name, strlen(o->name));
		break;
	case IR_OPND_ADDR:
		if (o->name && o->name[0] != '%')
			take_name(c, o->name, strlen(o->name));
		for (unsigned i = 0; i < o->nelems; i++)
			take_operand(c, &o->elems[i]);
		break;
	case IR_OPND_VEC:
	case IR_OPND_LIST:
	case IR_OPND_PAIR:
		for (unsigned i = 0; i < o->nelems; i++)
			take_operand(c, &o->elems[i]);
		break;
	case IR_OPND_RAW:
		take_raw(c, o->name);
		break;
	default:
		break;
	}
}

static void walk_func(struct closure *c, const ir_func *f)
{
	for (const ir_stmt *st = f->first; st && !c->bad; st = st->next) {
		if (st->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &st->insn;
		if (!strcmp(in->opcode, "call"))
			for (unsigned i = 0; i < in->nops; i++)
				if (in->ops[i].kind == IR_OPND_REG) {
					c->bad = fail(c->why, c->whylen, "%s makes an indirect call",
						      f->name);
					return;
				}
		for (unsigned i = 0; i < in->nops; i++)
			take_operand(c, &in->ops[i]);
	}
}

static int is_space(const ir_decl *d, const char *space)
{
	return d->space && !strcmp(d->space, space);
}

/* A variable the split module shares with the original (bound to its address), rather than
 * has a copy of: every global and constant one, except the compiler's string literals ($str,
 * $str$1, ...: read-only, and no application can name them to write them). */
static int shared_var(const ir_top *t)
{
	return t->kind == IR_TOP_DECL && (is_space(&t->decl, ".global") ||
					  is_space(&t->decl, ".const")) &&
	       strncmp(t->decl.name, "$str", 4);
}

int ptx_split_kernel(const struct ptx_split_src *s, const char *kernel, char **out, size_t *out_len,
		     struct ptx_split_vars *vars, char *why, size_t whylen)
{
	*out = NULL;
	memset(vars, 0, sizeof(*vars));
	struct slot *k = lookup(s, kernel, strlen(kernel));
	if (!k->name || k->top->kind != IR_TOP_FUNC || !k->top->func.is_entry)
		return fail(why, whylen, "no kernel %s in the module", kernel);
	struct closure c = {.s = s, .why = why, .whylen = whylen};
	c.in = calloc(s->cap, sizeof(*c.in));
	c.work = calloc(s->cap, sizeof(*c.work));
	ir_module *m = ir_module_new();
	int rc = -1;
	if (!c.in || !c.work || !m) {
		fail(why, whylen, "out of memory");
		goto done;
	}
	take_name(&c, kernel, strlen(kernel));
	while (c.nwork && !c.bad)
		walk_func(&c, &c.work[--c.nwork]->func);
	if (c.bad)
		goto done;
	/* The module's directives and the tops taken, in the original order (PTX declares before
	 * use); prototypes of the functions taken too. Shallow copies: they print from the source
	 * module's text, which outlives this call. */
	unsigned nvars = 0;
	for (ir_top *t = s->m->first; t; t = t->next) {
		const char *name = top_name(t);
		if (name) {
			struct slot *sl = lookup(s, name, strlen(name));
			if (!c.in[sl - s->slots])
				continue;
		}
		ir_top *copy = ir_alloc(m, sizeof(*copy));
		*copy = *t;
		copy->prev = copy->next = NULL;
		if (shared_var(t)) {
			/* The original's variable will be used: its initializer is the original's. */
			copy->decl.init = NULL;
			nvars++;
		}
		ir_top_append(m, copy);
	}
	vars->names = calloc(nvars ? nvars : 1, sizeof(*vars->names));
	if (!vars->names) {
		fail(why, whylen, "out of memory");
		goto done;
	}
	for (ir_top *t = m->first; t; t = t->next)
		if (shared_var(t)) {
			if (!(vars->names[vars->n] = strdup(t->decl.name))) {
				fail(why, whylen, "out of memory");
				goto done;
			}
			vars->n++;
		}
	*out = ptx_print(m, out_len);
	if (!*out)
		fail(why, whylen, "out of memory");
	else
		rc = 0;
done:
	if (rc)
		ptx_split_vars_free(vars);
	if (m)
		ir_module_free(m);
	free(c.in);
	free(c.work);
	return rc;
}

/* ---- binding --------------------------------------------------------------------------------- */

/* ptxas takes immediate addresses for .local only: an address operand naming a variable gets
 * one of these registers, set to the variable's address right before the instruction. */
#define BIND_REG "%gp_bind"
#define BIND_REGS 4
#define BIND_FMT "%%gp_bind%u"   /* the same name, for formats */

/* The table of ptx_split_bind_table: one u64 per variable, in the constant bank. */
#define BIND_TABLE "__gp_bind"

struct binding {
	const struct ptx_split_vars *vars;
	uint64_t *addr;
	char *why;
	size_t whylen;
	int table;                     /* addresses read from BIND_TABLE, not written in */
	unsigned nregs;                /* registers the current instruction uses */
	uint64_t reg_addr[BIND_REGS];  /* what each is set to (table: the variable's index) */
};

static int var_index(const struct binding *b, const char *name)
{
	for (unsigned i = 0; name && i < b->vars->n; i++)
		if (!strcmp(b->vars->names[i], name))
			return (int)i;
	return -1;
}

/* Replace modifier from with to (both with their dots); the array is fresh, the old one may be
 * the parser's. */
static void swap_mod(ir_module *m, ir_insn *in, const char *from, const char *to)
{
	const char **mods = ir_alloc(m, in->nmods * sizeof(*mods));
	for (unsigned i = 0; i < in->nmods; i++)
		mods[i] = !strcmp(in->mods[i], from) ? to : in->mods[i];
	in->mods = mods;
}

static int raw_mentions(const struct binding *b, const char *text)
{
	for (unsigned i = 0; i < b->vars->n; i++) {
		const char *n = b->vars->names[i], *p = text;
		size_t l = strlen(n);
		while ((p = strstr(p, n))) {
			int before = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
						    p[-1] == '$');
			int after = !(isalnum((unsigned char)p[l]) || p[l] == '_' || p[l] == '$');
			if (before && after)
				return 1;
			p += l;
		}
	}
	return 0;
}

/* Operands of one instruction: 1 when some operand named a variable (rewritten in place), 0
 * when none did, -1 when one did in a form we do not rewrite. */
static int bind_operands(struct binding *b, ir_module *m, ir_insn *in, ir_operand *ops,
			 unsigned nops, int top)
{
	int hit = 0;
	for (unsigned i = 0; i < nops; i++) {
		ir_operand *o = &ops[i];
		int v;
		switch (o->kind) {
		case IR_OPND_ADDR:
			v = var_index(b, o->name);
			if (v < 0) {
				if (o->nelems && bind_operands(b, m, in, o->elems, o->nelems, 0))
					return -1;
				break;
			}
			if (o->nelems || b->nregs == BIND_REGS)
				return -1;
			b->reg_addr[b->nregs] = b->table ? (uint64_t)v : b->addr[v];
			o->name = ir_strfmt(m, BIND_FMT, b->nregs++);
			hit = 1;
			break;
		case IR_OPND_SYMBOL:
			v = var_index(b, o->name);
			if (v < 0)
				break;
			/* The address as a value: only where an immediate may stand. */
			if (!top || (strcmp(in->opcode, "mov") && strcmp(in->opcode, "cvta")) || i != 1)
				return -1;
			if (b->table) {
				/* mov/cvta d, g becomes ld.const.u64 d, [table + 8v] (bind_insn) */
				if (ir_insn_has_mod(in, ".u32"))
					return -1;
				*o = ir_addr(m, BIND_TABLE, 8 * (int64_t)v);
				hit = 2;
				break;
			}
			*o = ir_int((int64_t)b->addr[v]);
			hit = 1;
			break;
		case IR_OPND_VEC:
		case IR_OPND_LIST:
		case IR_OPND_PAIR:
			if (bind_operands(b, m, in, o->elems, o->nelems, 0))
				return -1;
			break;
		case IR_OPND_RAW:
			if (raw_mentions(b, o->name))
				return -1;
			break;
		default:
			break;
		}
	}
	return hit;
}

static int bind_insn(struct binding *b, ir_module *m, ir_insn *in, const char *fn)
{
	b->nregs = 0;
	int hit = bind_operands(b, m, in, in->ops, in->nops, 1);
	if (hit < 0)
		return fail(b->why, b->whylen, "%s: %s uses a shared variable in a form not rewritten",
			    fn, in->opcode);
	if (hit == 2) {   /* the address as a value, from the table */
		in->opcode = "ld";
		in->mods = ir_alloc(m, 2 * sizeof(*in->mods));
		in->mods[0] = ".const";
		in->mods[1] = ".u64";
		in->nmods = 2;
		in->info = ir_insn_info_for(in);
		return 0;
	}
	if (!strcmp(in->opcode, "cvta")) {
		/* cvta.global of an address, or anything of the constant window (every constant
		 * address now is a global one): the generic address is the address itself. */
		if (hit || ir_insn_has_mod(in, ".const")) {
			const char *size = ir_insn_has_mod(in, ".u32") ? ".u32" : ".u64";
			in->opcode = "mov";
			in->mods = ir_alloc(m, sizeof(*in->mods));
			in->mods[0] = size;
			in->nmods = 1;
			in->info = ir_insn_info_for(in);
		}
		return 0;
	}
	if (ir_insn_has_mod(in, ".const")) {
		if (strcmp(in->opcode, "ld"))
			return fail(b->why, b->whylen, "%s: %s.const is not rewritten", fn, in->opcode);
		swap_mod(m, in, ".const", ".global");
	}
	return 0;
}

static int bind(const char *ptx, size_t len, const struct ptx_split_vars *vars,
		int (*resolve)(void *user, const char *name, uint64_t *addr), void *user, int table,
		char **out, size_t *out_len, char *why, size_t whylen)
{
	*out = NULL;
	char perr[256];
	ir_module *m = ptx_parse(ptx, len, perr, sizeof(perr));
	if (!m)
		return fail(why, whylen, "PTX does not parse: %s", perr);
	struct binding b = {.vars = vars, .why = why, .whylen = whylen, .table = table};
	int rc = -1;
	b.addr = calloc(vars->n ? vars->n : 1, sizeof(*b.addr));
	if (!b.addr) {
		fail(why, whylen, "out of memory");
		goto done;
	}
	for (unsigned i = 0; i < vars->n; i++)
		if (resolve(user, vars->names[i], &b.addr[i])) {
			fail(why, whylen, "no address for variable %s", vars->names[i]);
			goto done;
		}
	for (ir_top *t = m->first, *next; t; t = next) {
		next = t->next;
		if (t->kind == IR_TOP_DECL) {
			if (var_index(&b, t->decl.name) >= 0) {
				ir_top_remove(m, t);
				continue;
			}
			if (is_space(&t->decl, ".const")) {
				fail(why, whylen, "constant variable %s is not the original's",
				     t->decl.name);
				goto done;
			}
			if (t->decl.init && raw_mentions(&b, t->decl.init)) {
				fail(why, whylen, "the initializer of %s names a shared variable",
				     t->decl.name);
				goto done;
			}
			continue;
		}
		if (t->kind != IR_TOP_FUNC || !t->func.has_body)
			continue;
		int declared = 0;
		for (ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind != IR_STMT_INSN)
				continue;
			if (bind_insn(&b, m, &s->insn, t->func.name))
				goto done;
			for (unsigned r = 0; r < b.nregs; r++) {
				ir_stmt *mov = ir_insn_from_text(
					m, table ? ir_strfmt(m, "ld.const.u64 " BIND_FMT ", [" BIND_TABLE
							     "+%llu]", r,
							     (unsigned long long)b.reg_addr[r] * 8)
						 : ir_strfmt(m, "mov.u64 " BIND_FMT ", %llu", r,
							     (unsigned long long)b.reg_addr[r]));
				if (!mov) {
					fail(why, whylen, "out of memory");
					goto done;
				}
				ir_stmt_insert_before(&t->func, s, mov);
			}
			declared |= b.nregs > 0;
		}
		if (declared)
			ir_stmt_insert_after(&t->func, NULL,
					     ir_reg_decl_new(m, ".b64", BIND_REG, BIND_REGS));
	}
	if (table && vars->n) {
		ir_top *d = ir_top_new(m, IR_TOP_DECL);
		d->generated = true;
		d->decl = (ir_decl){.space = ".const", .align = 8, .type = ".u64", .name = BIND_TABLE,
				    .count = -1, .dims = ir_strfmt(m, "[%u]", vars->n)};
		ir_top_insert_before(m, ir_module_first_func(m), d);
	}
	*out = ptx_print(m, out_len);
	if (*out)
		rc = 0;
	else
		fail(why, whylen, "out of memory");
done:
	free(b.addr);
	ir_module_free(m);
	return rc;
}

int ptx_split_bind(const char *ptx, size_t len, const struct ptx_split_vars *vars,
		   int (*resolve)(void *user, const char *name, uint64_t *addr), void *user,
		   char **out, size_t *out_len, char *why, size_t whylen)
{
	return bind(ptx, len, vars, resolve, user, 0, out, out_len, why, whylen);
}

int ptx_split_bind_table(const char *ptx, size_t len, const struct ptx_split_vars *vars,
			 int (*resolve)(void *user, const char *name, uint64_t *addr), void *user,
			 char **out, size_t *out_len, uint64_t *addrs, char *why, size_t whylen)
{
	/* the addresses go to the table, not into the text */
	for (unsigned i = 0; i < vars->n; i++)
		if (resolve(user, vars->names[i], &addrs[i]))
			return fail(why, whylen, "no address for variable %s", vars->names[i]);
	return bind(ptx, len, vars, resolve, user, 1, out, out_len, why, whylen);
}
