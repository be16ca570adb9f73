/* Linking PTX translation units (link.h). */
#include "ptx-frontend/link.h"

#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/ir.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum def_kind { DEF_NONE, DEF_EXTERN, DEF_INTERNAL, DEF_WEAK, DEF_VISIBLE };

static const char *top_name(const ir_top *t)
{
	if (t->kind == IR_TOP_FUNC)
		return t->func.name;
	if (t->kind == IR_TOP_DECL)
		return t->decl.name;
	return NULL;
}

/* What a module-scope node makes of its name: a definition (by linkage) or a declaration. */
static enum def_kind top_def(const ir_top *t)
{
	const char *l = t->kind == IR_TOP_FUNC ? t->func.linkage : t->kind == IR_TOP_DECL ? t->decl.linkage : NULL;
	if (t->kind == IR_TOP_FUNC && !t->func.has_body)
		return DEF_EXTERN;   /* a prototype, .extern or not */
	if (t->kind == IR_TOP_DECL && (!t->decl.space || !strcmp(t->decl.space, ".reg")))
		return DEF_NONE;
	if (!l)
		return DEF_INTERNAL;
	if (!strcmp(l, ".extern"))
		return DEF_EXTERN;
	if (!strcmp(l, ".weak") || !strcmp(l, ".common"))
		return DEF_WEAK;
	return DEF_VISIBLE;
}

/* Every unit's module-scope names, taken once before any change, sorted by name and unit: what
 * each unit declares or defines is a lookup, not a walk of every other unit (a program of many
 * units and thousands of symbols would otherwise pay units x symbols string compares per name).
 * The link only removes declarations and later copies, and renames names an earlier unit or a
 * visible symbol still holds, so this first picture answers every later question the same. */
struct sym {
	const char *name;
	size_t unit;
	enum def_kind def;
	ir_top *top;
};

static int sym_order(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->unit > y->unit) - (x->unit < y->unit);
}

static struct sym *sym_index(ir_module **u, size_t n, size_t *count)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (const ir_top *t = u[i]->first; t; t = t->next)
			k += top_name(t) != NULL;
	struct sym *x = malloc((k ? k : 1) * sizeof(*x));
	if (!x)
		return NULL;
	k = 0;
	for (size_t i = 0; i < n; i++)
		for (ir_top *t = u[i]->first; t; t = t->next)
			if (top_name(t))
				x[k++] = (struct sym){top_name(t), i, top_def(t), t};
	qsort(x, k, sizeof(*x), sym_order);
	*count = k;
	return x;
}

/* The entries for name: *first and the count. */
static size_t sym_find(const struct sym *x, size_t count, const char *name, size_t *first)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(x[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < count && !strcmp(x[end].name, name))
		end++;
	*first = lo;
	return end - lo;
}

/* The strongest definition of name in units other than skip (DEF_NONE: none). */
static enum def_kind defined_elsewhere(const struct sym *x, size_t count, size_t skip, const char *name)
{
	size_t f, m = sym_find(x, count, name, &f);
	enum def_kind best = DEF_NONE;
	for (size_t k = f; k < f + m; k++)
		if (x[k].unit != skip && x[k].def != DEF_EXTERN && x[k].def > best)
			best = x[k].def;
	return best;
}

/* Whether a unit before `unit` has name with a definition of at least `least`. */
static bool defined_before(const struct sym *x, size_t count, size_t unit, const char *name,
			   enum def_kind least)
{
	size_t f, m = sym_find(x, count, name, &f);
	for (size_t k = f; k < f + m && x[k].unit < unit; k++)
		if (x[k].def >= least)
			return true;
	return false;
}

/* Whether a unit before `unit` declares t's variable .extern too; the first such declaration then
 * takes the larger of the two alignments. */
static bool extern_decl_before(const struct sym *x, size_t count, size_t unit, const ir_top *t)
{
	size_t f, m = sym_find(x, count, t->decl.name, &f);
	for (size_t k = f; k < f + m && x[k].unit < unit; k++) {
		ir_top *s = x[k].top;
		if (s->kind == IR_TOP_DECL && x[k].def == DEF_EXTERN) {
			if (t->decl.align > s->decl.align)
				s->decl.align = t->decl.align;
			return true;
		}
	}
	return false;
}

/* ---- renaming one symbol throughout a unit ---- */

static void rename_operand(ir_module *m, ir_operand *o, const char *from, const char *to)
{
	if ((o->kind == IR_OPND_SYMBOL || o->kind == IR_OPND_ADDR) && o->name && !strcmp(o->name, from))
		o->name = to;
	for (unsigned i = 0; i < o->nelems; i++)
		rename_operand(m, &o->elems[i], from, to);
}

/* An initializer's text with every whole identifier `from` replaced. */
static const char *rename_text(ir_module *m, const char *text, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), cap = strlen(text) + 1, len = 0;
	for (const char *p = strstr(text, from); p; p = strstr(p + fl, from))
		cap += tl;
	char *out = malloc(cap);
	if (!out)
		return text;
	bool changed = false;
	for (const char *p = text; *p;) {
		bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '$' || p[-1] == '%');
		const char *e = p + fl;
		if (start && !strncmp(p, from, fl) && !(isalnum((unsigned char)*e) || *e == '_' || *e == '$')) {
			memcpy(out + len, to, tl);
			len += tl;
			p = e;
			changed = true;
		} else {
			out[len++] = *p++;
		}
	}
	out[len] = 0;
	const char *r = changed ? ir_strdup(m, out) : text;
	free(out);
	return r;
}

static void rename_symbol(ir_module *m, const char *from, const char *to)
{
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind == IR_TOP_DECL) {
			if (!strcmp(t->decl.name, from))
				t->decl.name = to;
			if (t->decl.init)
				t->decl.init = rename_text(m, t->decl.init, from, to);
		}
		if (t->kind != IR_TOP_FUNC)
			continue;
		if (!strcmp(t->func.name, from))
			t->func.name = to;
		for (ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind == IR_STMT_INSN)
				for (unsigned i = 0; i < s->insn.nops; i++)
					rename_operand(m, &s->insn.ops[i], from, to);
			else if (s->kind == IR_STMT_DECL && s->decl.init)
				s->decl.init = rename_text(m, s->decl.init, from, to);
		}
	}
}

/* ---- the link ---- */

static void version_of(const ir_module *m, unsigned *v)
{
	unsigned maj = 0, min = 0;
	if (m->version && sscanf(m->version, "%u.%u", &maj, &min) == 2 && maj * 10 + min > *v)
		*v = maj * 10 + min;
}

static bool is_header(const ir_top *t)
{
	return t->kind == IR_TOP_DIRECTIVE &&
	       (!strncmp(t->text, ".version", 8) || !strncmp(t->text, ".target", 7) || !strncmp(t->text, ".address_size", 13));
}

static int append(char **out, size_t *used, size_t *cap, const char *s, size_t n)
{
	if (*used + n + 2 > *cap) {
		size_t want = (*used + n + 2) * 2;
		char *grown = realloc(*out, want);
		if (!grown)
			return -1;
		*out = grown;
		*cap = want;
	}
	memcpy(*out + *used, s, n);
	*used += n;
	(*out)[*used] = 0;
	return 0;
}

/* Prints m's functions (funcs) or everything else, by taking the other nodes out of the list for
 * the print and putting them back after. */
static int append_part(ir_module *m, int funcs, char **out, size_t *used, size_t *cap)
{
	ir_top *aside_first = NULL, *aside_last = NULL;
	for (ir_top *t = m->first, *next; t; t = next) {
		next = t->next;
		if ((t->kind == IR_TOP_FUNC) == (funcs != 0))
			continue;
		ir_top_remove(m, t);
		t->prev = aside_last;
		t->next = NULL;
		if (aside_last)
			aside_last->next = t;
		else
			aside_first = t;
		aside_last = t;
	}
	size_t len = 0;
	char *text = m->first ? ptx_print(m, &len) : NULL;
	int rc = m->first && !text ? -1 : 0;
	if (text && (append(out, used, cap, text, len) < 0 || append(out, used, cap, "\n", 1) < 0))
		rc = -1;
	free(text);
	/* back in their order: the kept nodes stay as they are; the others after them (a module's
	 * order matters no more once printed, and each unit is printed in two parts only) */
	for (ir_top *t = aside_first, *next; t; t = next) {
		next = t->next;
		ir_top_append(m, t);
	}
	return rc;
}

char *ptx_link(const char *const *texts, const size_t *lens, size_t n, size_t *out_len, char *err, size_t errlen)
{
	ir_module **u = calloc(n ? n : 1, sizeof(*u));
	struct sym *syms = NULL;
	char *out = NULL;
	size_t used = 0, cap = 0;
	unsigned version = 0;
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char perr[256];
		if (!(u[i] = ptx_parse(texts[i], lens[i], perr, sizeof(perr)))) {
			snprintf(err, errlen, "unit %zu: %s", i + 1, perr);
			goto done;
		}
		version_of(u[i], &version);
	}
	size_t nsyms = 0;
	if (!(syms = sym_index(u, n, &nsyms)))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		for (ir_top *t = u[i]->first, *next; t; t = next) {
			next = t->next;
			const char *name = top_name(t);
			enum def_kind d = name ? top_def(t) : DEF_NONE, other;
			if (d == DEF_EXTERN && t->kind == IR_TOP_DECL && extern_decl_before(syms, nsyms, i, t)) {
				ir_top_remove(u[i], t);   /* `extern __shared__ T x[]` in several units: one */
				continue;
			}
			if (d == DEF_NONE || (other = defined_elsewhere(syms, nsyms, i, name)) == DEF_NONE)
				continue;
			if (d == DEF_VISIBLE && other == DEF_VISIBLE) {
				snprintf(err, errlen, "%s is defined in more than one unit", name);
				goto done;
			}
			if (d == DEF_EXTERN && other != DEF_INTERNAL && t->kind == IR_TOP_FUNC) {
				/* stays a prototype, of the definition's linkage: a call needs one before it,
				 * and the definition may come later (ptxas refuses an .extern one then) */
				t->func.linkage = other == DEF_WEAK ? ".weak" : ".visible";
			} else if (d == DEF_EXTERN && other != DEF_INTERNAL) {
				ir_top_remove(u[i], t);   /* variables: all units' come before any function */
			} else if (d == DEF_WEAK && other >= DEF_WEAK) {
				/* the first weak copy stays (or a visible one): this one goes */
				if (other == DEF_VISIBLE || defined_before(syms, nsyms, i, name, DEF_WEAK))
					ir_top_remove(u[i], t);
			} else if (d == DEF_INTERNAL && (other >= DEF_WEAK || defined_before(syms, nsyms, i, name, DEF_INTERNAL))) {
				/* the first unit keeps its internal names; later ones, and any that a
				 * visible or weak symbol of another unit needs, are renamed */
				char to[512];
				snprintf(to, sizeof(to), "%s_gpl_%zu", name, i + 1);
				rename_symbol(u[i], name, ir_strdup(u[i], to));
			}
		}
	}
	/* the header, then every unit's variables (a function may use any unit's), then every
	 * unit's functions */
	const char *target = NULL, *asz = NULL;
	for (size_t i = 0; i < n; i++)
		for (ir_top *t = u[i]->first, *next; t; t = next) {
			next = t->next;
			if (!is_header(t))
				continue;
			if (!strncmp(t->text, ".target", 7) && !target)
				target = t->text;
			else if (!strncmp(t->text, ".address_size", 13) && !asz)
				asz = t->text;
			ir_top_remove(u[i], t);
		}
	char head[256];
	snprintf(head, sizeof(head), ".version %u.%u\n%s\n%s\n", version / 10, version % 10,
		 target ? target : ".target sm_52", asz ? asz : ".address_size 64");
	if (append(&out, &used, &cap, head, strlen(head)) < 0)
		goto oom;
	for (int funcs = 0; funcs < 2; funcs++)
		for (size_t i = 0; i < n; i++)
			if (append_part(u[i], funcs, &out, &used, &cap) < 0)
				goto oom;
	/* what a unit's text meant up to its end may run on into the next one's (a .section
	 * directive of a malformed unit, found by fuzz/ptx_link_fuzz.c): the result must parse */
	char perr[256];
	ir_module *check = ptx_parse(out, used, perr, sizeof(perr));
	if (!check) {
		snprintf(err, errlen, "the units do not parse as one module: %s", perr);
		free(out);
		out = NULL;
		goto done;
	}
	ir_module_free(check);
	*out_len = used;
	goto done;
oom:
	free(out);
	out = NULL;
	snprintf(err, errlen, "out of memory");
done:
	free(syms);
	for (size_t i = 0; i < n; i++)
		if (u[i])
			ir_module_free(u[i]);
	free(u);
	return out;
}

int fatbin__linked_ptx(const struct fatbin *fb, const struct fatbin_entry *e, char **out, size_t *len,
		       size_t *units, char *err, size_t errlen)
{
	enum { MAX_UNITS = 64 };
	char *texts[MAX_UNITS] = {0}, lerr[256];
	size_t lens[MAX_UNITS], n = 0, count = fatbin__entry_count(fb);
	int rc = 0;
	*out = NULL;
	*units = 0;
	for (size_t i = 0; i <= count; i++) {   /* e first, then the others */
		const struct fatbin_entry *x = i == 0 ? e : fatbin__entry(fb, i - 1);
		if (i && (x == e || x->kind != FATBIN_KIND_PTX || x->sm != e->sm))
			continue;
		if (n == MAX_UNITS) {
			snprintf(err, errlen, "more than %d PTX units for sm_%u in one fatbin", MAX_UNITS, e->sm);
			rc = -E2BIG;
			goto done;
		}
		void *data;
		if ((rc = fatbin__entry_data(x, &data, &lens[n], err, errlen)) < 0)
			goto done;
		while (lens[n] && !((char *)data)[lens[n] - 1])
			lens[n]--;   /* trailing NULs */
		texts[n++] = data;
	}
	if (n == 1) {
		*out = texts[0];
		*len = lens[0];
		*units = 1;
		return 0;
	}
	if ((*out = ptx_link((const char *const *)texts, lens, n, len, lerr, sizeof(lerr)))) {
		*units = n;
	} else {
		/* not units of one program after all (two copies of one module define the same
		 * kernels): e alone, as before linking was tried */
		*out = texts[0];
		*len = lens[0];
		*units = 1;
		texts[0] = NULL;
	}
done:
	for (size_t i = 0; i < n; i++)
		free(texts[i]);
	return rc;
}
