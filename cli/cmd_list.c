/* gpuprobe list FILE: the modules of a CUDA binary, fatbin, cubin or PTX file, their kernels
 * (mangled and demangled), targets, whether PTX is there to instrument, and compression; or, with
 * --probes, the binary's attach points in section form; with --match SECTION, what one section
 * attaches to (the matching rule: ptx-frontend/kernel_match.h); with --summary, counts that fit a
 * screen. --kind and --target keep some modules only; --json gives the same as JSON.
 * Exit status: 0 listed, 1 the file is damaged or --match matches nothing, 2 bad usage or a file
 * of another kind. */
#include "cli/cli.h"
#include "cli/file_kind.h"
#include "ebpf/object.h"
#include "gpuprobe/api.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/kernel_match.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <getopt.h>
#include <json-c/json.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EM_CUDA_MACHINE 190
#define STO_CUDA_ENTRY  0x10 /* st_other bit nvcc sets on kernel (.entry) symbols */

/* ebpf/object_attach.c: attach point and target of a section name */
int gp_parse_attach(const char *section, enum gp_attach_kind *kind, char **target, unsigned *mem_filter,
		    int *barrier_after, char *err, size_t errlen);

static void usage(FILE *out)
{
	fputs("usage: gpuprobe list [--probes | --match SECTION | --summary] [--kind ptx|cubin]\n"
	      "                     [--target sm_XX] [--json] [-o FILE] FILE\n\n"
	      "List the GPU modules in FILE (an executable, shared library, object file, static library,\n"
	      "fatbin, cubin or PTX file): for each module its kind (ptx, cubin), target, size and compression, and\n"
	      "its kernels, mangled and demangled. Ends with the targets present, whether PTX is\n"
	      "present (gpuprobe instruments PTX), and the compression used. A BPF object is shown as\n"
	      "'gpuprobe show' shows it.\n\n"
	      "options:\n"
	      "  --probes           the attach points FILE offers, in section form: every kernel\n"
	      "                     (gpu/entry/NAME ...), device function (gpu/func_entry/NAME) and\n"
	      "                     host API (host/entry/NAME)\n"
	      "  --match SECTION    what SECTION (gpu/entry/scale*, host/entry/cuMemcpy*) attaches\n"
	      "                     to in FILE; exit status 1 when nothing\n"
	      "  --summary          counts per kind and target, and the kernels with most variants\n"
	      "  --kind ptx|cubin   only modules of that kind\n"
	      "  --target sm_XX     only modules for that target (sm_90 also takes sm_90a)\n"
	      "  --json             JSON instead of text\n"
	      "  -o, --output FILE  write there instead of standard output\n"
	      "  -h, --help         this text\n\n"
	      "Kernel matching (every section, run -k, and --match): a glob matches a kernel when it\n"
	      "matches its mangled name (_Z5scaleILi512EEvPfi), its demangled name without return type\n"
	      "(scale<512>(float*, int)), that without parameters (scale<512>) or its base name (scale).\n\n"
	      "Exit status: 0 listed, 1 a damaged file or --match matched nothing, 2 bad usage or a\n"
	      "file of another kind.\n", out);
}

static void add_word(char *list, size_t cap, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += wl)
		if ((p == list || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == 0))
			return;
	size_t n = strlen(list);
	if (n + wl + 2 < cap)
		snprintf(list + n, cap - n, "%s%s", n ? " " : "", word);
}

/* Kernel names of one module, collected first so that the module line can come before them. */
struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *k, const char *name, size_t len)
{
	for (size_t i = 0; i < k->n; i++) /* a forward declaration, then the definition */
		if (!strncmp(k->v[i], name, len) && k->v[i][len] == 0)
			return;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		char **v = realloc(k->v, cap * sizeof(*v));
		if (!v)
			return;
		k->v = v;
		k->cap = cap;
	}
	char *copy = strndup(name, len);
	if (copy)
		k->v[k->n++] = copy;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%';
}

/* A light scan for `.entry NAME` (kernels) and defined `.func [(RET)] NAME` (device functions,
 * attachable with gpu/func_entry): comments and strings are skipped, `.extern` declarations too.
 * The full parser lives elsewhere. */
static void ptx_scan(struct names *kernels, struct names *funcs, const char *p, size_t n)
{
	const char *end = p + n;
	bool is_extern = false; /* `.extern` seen in the current declaration */
	while (p < end) {
		size_t left = (size_t)(end - p);
		if (left > 1 && p[0] == '/' && p[1] == '/') {
			const char *nl = memchr(p, '\n', left);
			p = nl ? nl + 1 : end;
		} else if (left > 1 && p[0] == '/' && p[1] == '*') {
			const char *q = p + 2;
			while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
				q++;
			p = q + 2 <= end ? q + 2 : end;
		} else if (p[0] == '"') {
			const char *q = memchr(p + 1, '"', left - 1);
			p = q ? q + 1 : end;
		} else if (p[0] == ';' || p[0] == '{' || p[0] == '}') {
			is_extern = false;
			p++;
		} else if (left > 7 && !memcmp(p, ".extern", 7) && isspace((unsigned char)p[7])) {
			is_extern = true;
			p += 7;
		} else if ((left > 6 && !memcmp(p, ".entry", 6) && isspace((unsigned char)p[6])) ||
			   (left > 5 && !memcmp(p, ".func", 5) && (isspace((unsigned char)p[5]) || p[5] == '('))) {
			bool entry = p[1] == 'e';
			const char *q = p + (entry ? 6 : 5);
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (!entry && q < end && *q == '(') { /* the return parameter list */
				int depth = 0;
				for (; q < end; q++) {
					depth += *q == '(';
					depth -= *q == ')';
					if (*q == ')' && depth == 0) {
						q++;
						break;
					}
				}
				while (q < end && isspace((unsigned char)*q))
					q++;
			}
			const char *name = q;
			while (q < end && ident_char(*q))
				q++;
			if (q > name && !is_extern)
				names_add(entry ? kernels : funcs, name, (size_t)(q - name));
			p = q;
		} else {
			p++;
		}
	}
}

/* `.target sm_90a, ...` of a PTX file, or "" */
static void ptx_target(const char *p, size_t n, char *out, size_t cap)
{
	out[0] = 0;
	const char *end = p + n, *t = p;
	while ((t = memmem(t, (size_t)(end - t), ".target", 7))) {
		if (t == p || t[-1] == '\n' || isspace((unsigned char)t[-1])) {
			t += 7;
			while (t < end && (*t == ' ' || *t == '\t'))
				t++;
			size_t i = 0;
			while (t < end && ident_char(*t) && i + 1 < cap)
				out[i++] = *t++;
			out[i] = 0;
			return;
		}
		t += 7;
	}
}

/* Kernels of a cubin: STT_FUNC symbols carrying the CUDA entry flag. Returns the SM from the
 * ELF flags through *sm (0 when unknown). Errors give one line and -1. */
static int cubin_kernels(struct names *k, void *image, size_t len, unsigned *sm, const char *what)
{
	const uint8_t *p = image;
	if (len < 64 || memcmp(p, "\177ELF", 4) || p[4] != 2 || p[5] != 1)
		return cli_error("%s: not a 64-bit little-endian ELF cubin", what), -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(image, len);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		return cli_error("%s: bad ELF: %s", what, elf_errmsg(-1)), -1;
	}
	/* ABI version 8 and later keep the SM in bits 8..15 of e_flags; older ones in bits 0..7. */
	*sm = eh.e_ident[EI_ABIVERSION] >= 8 ? (eh.e_flags >> 8) & 0xff : eh.e_flags & 0xff;
	int rc = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize) {
			cli_error("%s: unreadable symbol table: %s", what, elf_errmsg(-1));
			rc = -1;
			break;
		}
		size_t count = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & STO_CUDA_ENTRY))
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name)
				names_add(k, name, strlen(name));
		}
	}
	elf_end(elf);
	return rc;
}

static void print_module_line(FILE *out, size_t idx, const char *kind, const char *target, size_t size,
			      const char *comp, size_t comp_size, const struct fatbin_entry *e)
{
	fprintf(out, "module %zu: %s %s, %zu bytes", idx, kind, target, size);
	if (strcmp(comp, "none"))
		fprintf(out, ", %s-compressed (%zu bytes)", comp, comp_size);
	if (e) {
		if (e->kind == FATBIN_KIND_PTX)
			fprintf(out, ", PTX ISA %u.%u", e->version_major, e->version_minor);
		fprintf(out, ", offset 0x%zx", e->offset);
		const char *opt = e->options;
		size_t olen = e->options_len;
		while (olen && *opt == ' ')
			opt++, olen--;
		while (olen && opt[olen - 1] == ' ')
			olen--;
		if (olen)
			fprintf(out, ", options \"%.*s\"", (int)olen, opt);
	}
	fputc('\n', out);
}


static void names_free(struct names *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
	*k = (struct names){ 0 };
}

/* ---- the model: modules read first, printed in one of the forms after ---------------------- */

struct module {
	size_t idx;
	char kind[8];            /* "ptx", "cubin", "ltoir" */
	char target[32];
	size_t size, comp_size;
	const char *comp;
	const struct fatbin_entry *e;   /* NULL for a lone cubin or PTX file */
	bool encoded;            /* LTO IR: kernels unknown */
	struct names k, f;
};

struct listing {
	const char *path;
	char container[64];      /* "PTX", "cubin", "fatbin, 3 modules" ... */
	struct module *m;
	size_t n, cap;
	size_t skipped;          /* modules left out by --kind/--target */
	const char *want_kind, *want_target;
};

static bool keep(const struct listing *l, const char *kind, const char *target)
{
	if (l->want_kind && strcmp(l->want_kind, kind))
		return false;
	if (!cli_target_kept(l->want_target, target))
		return false;
	return true;
}

static struct module *module_add(struct listing *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct module *v = realloc(l->m, cap * sizeof(*v));
		if (!v)
			return NULL;
		l->m = v;
		l->cap = cap;
	}
	struct module *m = &l->m[l->n++];
	memset(m, 0, sizeof(*m));
	return m;
}

static int read_fatbin(struct listing *l, struct fatbin *fb)
{
	char err[512];
	for (size_t i = 0; i < fatbin__entry_count(fb); i++) {
		const struct fatbin_entry *e = fatbin__entry(fb, i);
		char target[32];
		fatbin_entry_target(e, target, sizeof(target));
		if (!keep(l, fatbin_kind_name(e->kind), target)) {
			l->skipped++;
			continue;
		}
		struct module *m = module_add(l);
		if (!m)
			return cli_error("out of memory");
		m->idx = i;
		snprintf(m->kind, sizeof(m->kind), "%s", fatbin_kind_name(e->kind));
		snprintf(m->target, sizeof(m->target), "%s", target);
		m->comp = fatbin_compression_name(e->compression);
		m->comp_size = e->payload_size;
		m->e = e;
		void *data;
		size_t len;
		int rc = fatbin__entry_data(e, &data, &len, err, sizeof(err));
		if (rc == -ENOTSUP) {
			m->size = e->uncompressed_size;
			m->encoded = true;
			continue;
		}
		if (rc)
			return cli_error("%s: module %zu: %s", l->path, i, err);
		m->size = len;
		char what[64];
		snprintf(what, sizeof(what), "%s: module %zu", l->path, i);
		if (e->kind == FATBIN_KIND_PTX) {
			ptx_scan(&m->k, &m->f, data, len);
		} else if (e->kind == FATBIN_KIND_ELF) {
			unsigned sm;
			if (cubin_kernels(&m->k, data, len, &sm, what)) {
				free(data);
				return 1;
			}
		}
		free(data);
	}
	return 0;
}

/* ---- distinct names over modules ---------------------------------------------------------- */

struct distinct {
	struct names v;
	bool *ptx;    /* has a PTX module (instrumentable) */
	size_t *hits; /* times added */
	size_t *slot; /* hash table of indices + 1 into v (0: empty), nslot a power of two */
	size_t nslot;
};

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static void distinct_add(struct distinct *d, const char *name, bool ptx)
{
	if (2 * (d->v.n + 1) > d->nslot) {   /* grow and rehash */
		size_t n = d->nslot ? d->nslot * 2 : 1024;
		size_t *t = calloc(n, sizeof(*t));
		if (!t)
			return;
		for (size_t i = 0; i < d->v.n; i++) {
			size_t h = name_hash(d->v.v[i]) & (n - 1);
			while (t[h])
				h = (h + 1) & (n - 1);
			t[h] = i + 1;
		}
		free(d->slot);
		d->slot = t;
		d->nslot = n;
	}
	size_t h = name_hash(name) & (d->nslot - 1);
	while (d->slot[h]) {
		size_t i = d->slot[h] - 1;
		if (!strcmp(d->v.v[i], name)) {
			d->ptx[i] |= ptx;
			d->hits[i]++;
			return;
		}
		h = (h + 1) & (d->nslot - 1);
	}
	if (d->v.n == d->v.cap) {
		size_t cap = d->v.cap ? d->v.cap * 2 : 64;
		char **v = realloc(d->v.v, cap * sizeof(*v));
		bool *p = realloc(d->ptx, cap * sizeof(*p));
		size_t *hh = realloc(d->hits, cap * sizeof(*hh));
		if (v)
			d->v.v = v;
		if (p)
			d->ptx = p;
		if (hh)
			d->hits = hh;
		if (!v || !p || !hh)
			return;
		d->v.cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return;
	d->v.v[d->v.n] = copy;
	d->ptx[d->v.n] = ptx;
	d->hits[d->v.n] = 1;
	d->slot[h] = ++d->v.n;
}

static void distinct_collect(const struct listing *l, struct distinct *kern, struct distinct *func)
{
	for (size_t i = 0; i < l->n; i++) {
		bool ptx = !strcmp(l->m[i].kind, "ptx");
		for (size_t j = 0; j < l->m[i].k.n; j++)
			distinct_add(kern, l->m[i].k.v[j], ptx);
		for (size_t j = 0; j < l->m[i].f.n; j++)
			distinct_add(func, l->m[i].f.v[j], ptx);
	}
}

static void distinct_free(struct distinct *d)
{
	names_free(&d->v);
	free(d->ptx);
	free(d->hits);
	free(d->slot);
}

/* The demangled name as the matching rule sees it (no return type), malloc'd, or NULL */
static char *pretty_name(const char *mangled)
{
	char *d = demangle(mangled);
	if (!d)
		return NULL;
	char *a = malloc(1024), b[1024], c[1024];
	if (a) {
		gp_kernel_names(d, a, b, c, 1024);
		if (!a[0]) {
			free(a);
			a = NULL;
		}
	}
	if (a) {
		free(d);
		return a;
	}
	return d;
}

/* ---- the forms -------------------------------------------------------------------------------- */

static void summary_words(const struct listing *l, char *targets, char *ptx_targets, char *comp, size_t cap)
{
	targets[0] = ptx_targets[0] = comp[0] = 0;
	bool zstd = false, lz4 = false, none = false;
	for (size_t i = 0; i < l->n; i++) {
		add_word(targets, cap, l->m[i].target);
		if (!strcmp(l->m[i].kind, "ptx"))
			add_word(ptx_targets, cap, l->m[i].target);
		zstd |= !strcmp(l->m[i].comp, "zstd");
		lz4 |= !strcmp(l->m[i].comp, "lz4");
		none |= !strcmp(l->m[i].comp, "none");
	}
	if (zstd)   /* always in this order */
		add_word(comp, cap, "zstd");
	if (lz4)
		add_word(comp, cap, "lz4");
	if (none)
		add_word(comp, cap, "none");
}

static int by_sm(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	unsigned long nx = strtoul(x + strcspn(x, "0123456789"), NULL, 10);
	unsigned long ny = strtoul(y + strcspn(y, "0123456789"), NULL, 10);
	return nx != ny ? (nx < ny ? -1 : 1) : strcmp(x, y);
}

/* "sm_90 sm_75 sm_100" as "sm_75 sm_90 sm_100" */
static void sort_words(char *list)
{
	char copy[1024], *words[128], *save = NULL;
	size_t n = 0;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *w = strtok_r(copy, " ", &save); w && n < 128; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	qsort(words, n, sizeof(words[0]), by_sm);
	size_t o = 0;
	list[0] = 0;
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(list + o, "%s%s", i ? " " : "", words[i]);
}

static void print_names(FILE *out, const char *label, const struct names *k)
{
	for (size_t i = 0; i < k->n; i++) {
		char *pretty = demangle(k->v[i]);
		if (pretty)
			fprintf(out, "  %s %s  %s\n", label, k->v[i], pretty);
		else
			fprintf(out, "  %s %s\n", label, k->v[i]);
		free(pretty);
	}
}

static json_object *jnames(const struct names *k)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < k->n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(k->v[i]));
		char *pretty = demangle(k->v[i]);
		if (pretty)
			json_object_object_add(o, "demangled", json_object_new_string(pretty));
		free(pretty);
		json_object_array_add(a, o);
	}
	return a;
}

static void print_listing(FILE *out, const struct listing *l, json_object *root)
{
	char targets[1024], ptx_targets[1024], comp[1024];
	summary_words(l, targets, ptx_targets, comp, sizeof(targets));
	sort_words(targets);
	sort_words(ptx_targets);
	struct distinct kern = {0}, func = {0};
	distinct_collect(l, &kern, &func);
	if (root) {
		json_object *mods = json_object_new_array();
		for (size_t i = 0; i < l->n; i++) {
			const struct module *m = &l->m[i];
			json_object *o = json_object_new_object();
			json_object_object_add(o, "index", json_object_new_int64((int64_t)m->idx));
			json_object_object_add(o, "kind", json_object_new_string(m->kind));
			json_object_object_add(o, "target", json_object_new_string(m->target));
			json_object_object_add(o, "size", json_object_new_int64((int64_t)m->size));
			json_object_object_add(o, "compression", json_object_new_string(m->comp));
			if (m->e)
				json_object_object_add(o, "offset", json_object_new_int64((int64_t)m->e->offset));
			json_object_object_add(o, "kernels", m->encoded ? NULL : jnames(&m->k));
			if (!strcmp(m->kind, "ptx"))
				json_object_object_add(o, "functions", jnames(&m->f));
			json_object_array_add(mods, o);
		}
		json_object_object_add(root, "modules", mods);
		json_object_object_add(root, "targets", json_object_new_string(targets));
		json_object_object_add(root, "ptx_targets", json_object_new_string(ptx_targets));
		json_object_object_add(root, "kernels_distinct", json_object_new_int64((int64_t)kern.v.n));
	} else {
		for (size_t i = 0; i < l->n; i++) {
			const struct module *m = &l->m[i];
			print_module_line(out, m->idx, m->kind, m->target, m->size, m->comp, m->comp_size, m->e);
			if (m->encoded)
				fputs("  (LTO IR, stored encoded: its kernels cannot be listed)\n", out);
			print_names(out, "kernel", &m->k);
			print_names(out, "func", &m->f);
		}
		if (l->skipped)
			fprintf(out, "(%zu modules left out by --kind/--target)\n", l->skipped);
		fprintf(out, "targets: %s\n", targets[0] ? targets : "none");
		if (ptx_targets[0])
			fprintf(out, "PTX: yes (%s)\n", ptx_targets);
		else
			fprintf(out, "PTX: no (cannot be instrumented; rebuild with -arch=sm_XX, or add "
				"-gencode arch=compute_XX,code=compute_XX, to embed PTX)\n");
		fprintf(out, "compression: %s\n", comp[0] ? comp : "none");
		fprintf(out, "kernels: %zu distinct\n", kern.v.n);
		if (ptx_targets[0])
			fprintf(out, "attach points: 'gpuprobe list --probes %s' lists them\n", l->path);
	}
	distinct_free(&kern);
	distinct_free(&func);
}

/* base name of a kernel for the summary: demangled without return type, parameters, templates */
static void base_of(const char *mangled, char *out, size_t cap)
{
	char *d = demangle(mangled);
	if (!d) {
		snprintf(out, cap, "%s", mangled);
		return;
	}
	char a[1024], b[1024], c[1024];
	gp_kernel_names(d, a, b, c, sizeof(a));
	snprintf(out, cap, "%s", c[0] ? c : d);
	free(d);
}

struct count { char *name; size_t n; };

static int by_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

static void print_summary_form(FILE *out, const struct listing *l, json_object *root)
{
	/* modules per kind and target */
	struct count *kt = calloc(l->n + 1, sizeof(*kt));
	size_t nkt = 0;
	for (size_t i = 0; i < l->n && kt; i++) {
		char key[64];
		snprintf(key, sizeof(key), "%s %s", l->m[i].kind, l->m[i].target);
		size_t j;
		for (j = 0; j < nkt && strcmp(kt[j].name, key); j++)
			;
		if (j == nkt)
			kt[nkt++].name = strdup(key);
		kt[j].n++;
	}
	struct distinct kern = {0}, func = {0};
	distinct_collect(l, &kern, &func);
	size_t ninstr = 0;
	for (size_t i = 0; i < kern.v.n; i++)
		ninstr += kern.ptx[i];
	/* kernels by base name: the templates with most instantiations */
	struct distinct bases = {0};
	for (size_t i = 0; i < kern.v.n; i++) {
		char base[1100];
		base_of(kern.v.v[i], base, sizeof(base));
		distinct_add(&bases, base, false);
	}
	size_t nbc = bases.v.n;
	struct count *bc = calloc(nbc + 1, sizeof(*bc));
	for (size_t i = 0; bc && i < nbc; i++) {
		bc[i].name = bases.v.v[i];
		bc[i].n = bases.hits[i];
	}
	if (kt)
		qsort(kt, nkt, sizeof(*kt), by_count);
	if (bc)
		qsort(bc, nbc, sizeof(*bc), by_count);
	size_t top = nbc < 10 ? nbc : 10;
	if (root) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < nkt; i++) {
			json_object *o = json_object_new_object();
			char kind[16] = "", target[48] = "";
			sscanf(kt[i].name, "%15s %47s", kind, target);
			json_object_object_add(o, "kind", json_object_new_string(kind));
			json_object_object_add(o, "target", json_object_new_string(target));
			json_object_object_add(o, "modules", json_object_new_int64((int64_t)kt[i].n));
			json_object_array_add(a, o);
		}
		json_object_object_add(root, "modules_by_kind_target", a);
		json_object_object_add(root, "modules", json_object_new_int64((int64_t)l->n));
		json_object_object_add(root, "kernels_distinct", json_object_new_int64((int64_t)kern.v.n));
		json_object_object_add(root, "kernels_with_ptx", json_object_new_int64((int64_t)ninstr));
		json_object_object_add(root, "functions_distinct", json_object_new_int64((int64_t)func.v.n));
		json_object *t = json_object_new_array();
		for (size_t i = 0; i < top; i++) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "base", json_object_new_string(bc[i].name));
			json_object_object_add(o, "kernels", json_object_new_int64((int64_t)bc[i].n));
			json_object_array_add(t, o);
		}
		json_object_object_add(root, "top_kernels", t);
	} else {
		fprintf(out, "modules: %zu", l->n);
		if (l->skipped)
			fprintf(out, " (%zu more left out by --kind/--target)", l->skipped);
		fputc('\n', out);
		for (size_t i = 0; i < nkt && i < 12; i++)
			fprintf(out, "  %-24s %zu\n", kt[i].name, kt[i].n);
		if (nkt > 12)
			fprintf(out, "  (%zu more kind/target pairs)\n", nkt - 12);
		fprintf(out, "kernels: %zu distinct, %zu with PTX (instrumentable), in %zu base names\n",
			kern.v.n, ninstr, nbc);
		fprintf(out, "device functions: %zu distinct\n", func.v.n);
		if (top)
			fprintf(out, "kernels with most variants:\n");
		for (size_t i = 0; i < top; i++)
			fprintf(out, "  %6zu  %s\n", bc[i].n, bc[i].name);
	}
	for (size_t i = 0; kt && i < nkt; i++)
		free(kt[i].name);
	free(kt);
	free(bc);
	distinct_free(&bases);
	distinct_free(&kern);
	distinct_free(&func);
}

#define HOST_API_NAME_(id, name) #name,
static const char *const host_apis[] = { GP_API_LIST(HOST_API_NAME_) };
#define NHOST_APIS (sizeof(host_apis) / sizeof(host_apis[0]))

static void print_probes(FILE *out, const struct listing *l, json_object *root)
{
	struct distinct kern = {0}, func = {0};
	distinct_collect(l, &kern, &func);
	json_object *jk = NULL, *jf = NULL, *jh = NULL;
	if (root) {
		json_object_object_add(root, "kernels", jk = json_object_new_array());
		json_object_object_add(root, "device_functions", jf = json_object_new_array());
		json_object_object_add(root, "host_apis", jh = json_object_new_array());
	} else {
		fprintf(out, "# kernels: gpu/{entry,exit,block_begin,block_end,barrier,barrier_after,bb}/NAME,\n"
			"# gpu/mem/FILTERS/NAME (NAME: the name below, its demangled form or base name, or a glob)\n");
	}
	for (size_t i = 0; i < kern.v.n; i++) {
		char *d = pretty_name(kern.v.v[i]);
		if (jk) {
			json_object *o = json_object_new_object();
			char *sec;
			if (asprintf(&sec, "gpu/entry/%s", kern.v.v[i]) > 0) {
				json_object_object_add(o, "section", json_object_new_string(sec));
				free(sec);
			}
			json_object_object_add(o, "name", json_object_new_string(kern.v.v[i]));
			if (d)
				json_object_object_add(o, "demangled", json_object_new_string(d));
			json_object_object_add(o, "ptx", json_object_new_boolean(kern.ptx[i]));
			json_object_array_add(jk, o);
		} else {
			fprintf(out, "gpu/entry/%s%s%s%s\n", kern.v.v[i], d ? "  " : "", d ? d : "",
				kern.ptx[i] ? "" : "  (no PTX: cannot be instrumented)");
		}
		free(d);
	}
	if (!root)
		fprintf(out, "# device functions: gpu/{func_entry,func_exit}/NAME\n");
	for (size_t i = 0; i < func.v.n; i++) {
		char *d = pretty_name(func.v.v[i]);
		if (jf) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "name", json_object_new_string(func.v.v[i]));
			if (d)
				json_object_object_add(o, "demangled", json_object_new_string(d));
			json_object_array_add(jf, o);
		} else {
			fprintf(out, "gpu/func_entry/%s%s%s\n", func.v.v[i], d ? "  " : "", d ? d : "");
		}
		free(d);
	}
	if (!root)
		fprintf(out, "# host APIs (every application): host/{entry,exit}/NAME (_v2, _ptsz ... forms included)\n");
	for (size_t i = 0; i < NHOST_APIS; i++) {
		if (jh)
			json_object_array_add(jh, json_object_new_string(host_apis[i]));
		else
			fprintf(out, "host/entry/%s\n", host_apis[i]);
	}
	distinct_free(&kern);
	distinct_free(&func);
}

/* 1 when section's target names api (host probes match the API's name and its base name) */
int cli_host_api_known(const char *glob)
{
	for (size_t i = 0; i < NHOST_APIS; i++)
		if (gp_kernel_match_dem(glob && *glob ? glob : "*", host_apis[i], NULL))
			return 1;
	return 0;
}

static int print_match(FILE *out, const struct listing *l, const char *section, json_object *root)
{
	enum gp_attach_kind kind;
	char *target = NULL;
	unsigned filter;
	int after;
	char err[256] = "";
	if (gp_parse_attach(section, &kind, &target, &filter, &after, err, sizeof(err)) ||
	    kind == GP_ATTACH_NONE) {
		free(target);
		return cli_usage_error("list: --match '%s': %s", section, err[0] ? err : "not an attach point "
				       "(gpu/entry/GLOB, gpu/func_entry/GLOB, host/entry/GLOB ...)");
	}
	size_t matched = 0;
	json_object *a = root ? json_object_new_array() : NULL;
	if (root) {
		json_object_object_add(root, "section", json_object_new_string(section));
		json_object_object_add(root, "matches", a);
	}
	if (kind == GP_ATTACH_HOST_ENTRY || kind == GP_ATTACH_HOST_EXIT) {
		for (size_t i = 0; i < NHOST_APIS; i++)
			if (gp_kernel_match_dem(target && *target ? target : "*", host_apis[i], NULL)) {
				matched++;
				if (a)
					json_object_array_add(a, json_object_new_string(host_apis[i]));
				else
					fprintf(out, "host API %s\n", host_apis[i]);
			}
	} else {
		struct distinct kern = {0}, func = {0};
		distinct_collect(l, &kern, &func);
		bool funcs = kind == GP_ATTACH_FUNC_ENTRY || kind == GP_ATTACH_FUNC_EXIT;
		struct distinct *d = funcs ? &func : &kern;
		for (size_t i = 0; i < d->v.n; i++) {
			char *dm = pretty_name(d->v.v[i]);
			if (gp_kernel_match_dem(target, d->v.v[i], dm)) {
				matched++;
				if (a) {
					json_object *o = json_object_new_object();
					json_object_object_add(o, "name", json_object_new_string(d->v.v[i]));
					if (dm)
						json_object_object_add(o, "demangled", json_object_new_string(dm));
					json_object_object_add(o, "ptx", json_object_new_boolean(d->ptx[i]));
					json_object_array_add(a, o);
				} else {
					fprintf(out, "%s %s%s%s%s\n", funcs ? "func" : "kernel", d->v.v[i], dm ? "  " : "",
						dm ? dm : "", d->ptx[i] ? "" : "  (no PTX: cannot be instrumented)");
				}
			}
			free(dm);
		}
		if (!matched)
			cli_error("list: %s matches no %s of %s (%zu %s; 'gpuprobe list --probes %s' lists them)",
				  section, funcs ? "device function" : "kernel", l->path, d->v.n,
				  funcs ? "device functions" : "kernels", l->path);
		distinct_free(&kern);
		distinct_free(&func);
		free(target);
		return matched ? 0 : 1;
	}
	if (!matched)
		cli_error("list: %s matches no host API gpuprobe sees ('gpuprobe list --probes FILE' lists them)",
			  section);
	free(target);
	return matched ? 0 : 1;
}

/* Every distinct kernel and device function of a GPU-code file (cli.h): the reading of list. */
int cli_gpu_names(const char *path, struct cli_names *kernels, struct cli_names *funcs)
{
	memset(kernels, 0, sizeof(*kernels));
	memset(funcs, 0, sizeof(*funcs));
	enum cli_file_kind kind;
	int status = cli_expect_kind("verify --against", path, CLI_READS_GPU_CODE,
				     "an application, library, fatbin, cubin or PTX file", &kind);
	if (status)
		return status;
	struct listing l = { .path = path };
	char *buf = NULL;
	size_t len = 0;
	struct fatbin *fb = NULL;
	if (kind == CLI_FILE_CUBIN || kind == CLI_FILE_PTX) {
		if (!(buf = cli_read_file(path, &len)))
			return 2;
		struct module *m = module_add(&l);
		if (!m)
			return cli_error("out of memory");
		snprintf(m->kind, sizeof(m->kind), kind == CLI_FILE_PTX ? "ptx" : "cubin");
		unsigned sm;
		if (kind == CLI_FILE_PTX)
			ptx_scan(&m->k, &m->f, buf, len);
		else if (cubin_kernels(&m->k, buf, len, &sm, path))
			status = 1;
	} else {
		char err[512];
		if (fatbin__open_file(path, &fb, err, sizeof(err)))
			status = cli_error("%s", err);
		else
			status = read_fatbin(&l, fb);
	}
	if (!status) {
		struct distinct kern = {0}, func = {0};
		distinct_collect(&l, &kern, &func);
		kernels->v = kern.v.v;
		kernels->n = kern.v.n;
		funcs->v = func.v.v;
		funcs->n = func.v.n;
		free(kern.ptx);
		free(func.ptx);
		free(kern.slot);
		free(func.slot);
		free(kern.hits);
		free(func.hits);
	}
	for (size_t i = 0; i < l.n; i++) {
		names_free(&l.m[i].k);
		names_free(&l.m[i].f);
	}
	free(l.m);
	if (fb)
		fatbin__close(fb);
	free(buf);
	return status;
}

void cli_names_free(struct cli_names *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

int cmd_list(int argc, char **argv)
{
	enum { OPT_PROBES = 256, OPT_MATCH, OPT_SUMMARY, OPT_KIND, OPT_TARGET, OPT_JSON };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "probes", no_argument, NULL, OPT_PROBES },
		{ "match", required_argument, NULL, OPT_MATCH },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ "kind", required_argument, NULL, OPT_KIND },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ 0 },
	};
	const char *out_path = NULL, *match = NULL;
	bool probes = false, summary = false, json = false;
	struct listing l = { 0 };
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		case 'o': out_path = optarg; break;
		case OPT_PROBES: probes = true; break;
		case OPT_MATCH: match = optarg; break;
		case OPT_SUMMARY: summary = true; break;
		case OPT_JSON: json = true; break;
		case OPT_KIND:
			if (strcmp(optarg, "ptx") && strcmp(optarg, "cubin") && strcmp(optarg, "ltoir"))
				return cli_usage_error("list: --kind wants ptx, cubin or ltoir, not '%s'", optarg);
			l.want_kind = optarg;
			break;
		case OPT_TARGET:
			if (strncmp(optarg, "sm_", 3) && strncmp(optarg, "compute_", 8))
				return cli_usage_error("list: --target wants sm_XX, not '%s'", optarg);
			l.want_target = optarg;
			break;
		case ':': return cli_usage_error("list: option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("list: unknown option '%s' (see 'gpuprobe list --help')", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("list: no FILE given (see 'gpuprobe list --help')");
	if (optind + 1 < argc)
		return cli_usage_error("list: one FILE only ('%s' is extra)", argv[optind + 1]);
	if (probes + summary + !!match > 1)
		return cli_usage_error("list: one of --probes, --match, --summary");
	const char *path = l.path = argv[optind];

	enum cli_file_kind kind;
	int status = cli_expect_kind("list", path, CLI_READS_GPU_CODE | CLI_READS(CLI_FILE_BPF),
				     "a binary, fatbin, cubin or PTX file", &kind);
	if (status)
		return status;
	if (kind == CLI_FILE_BPF) {   /* a probe object: what show says */
		char *av[6];
		int n = 0;
		av[n++] = "show";
		if (json)
			av[n++] = "--json";
		if (out_path) {
			av[n++] = "-o";
			av[n++] = (char *)out_path;
		}
		av[n++] = (char *)path;
		av[n] = NULL;
		if (probes || summary || match || l.want_kind || l.want_target)
			return cli_usage_error("list: %s is a BPF object: --probes, --match, --summary, --kind and --target are for GPU code", path);
		return cmd_show(n, av);
	}
	char *buf = NULL;
	size_t len = 0;
	struct fatbin *fb = NULL;
	if (kind == CLI_FILE_CUBIN || kind == CLI_FILE_PTX) {
		if (!(buf = cli_read_file(path, &len)))
			return 2;
		struct module *m = module_add(&l);
		if (!m)
			return cli_error("out of memory");
		m->comp = "none";
		m->size = len;
		if (kind == CLI_FILE_CUBIN) {
			unsigned sm = 0;
			snprintf(l.container, sizeof(l.container), "cubin");
			snprintf(m->kind, sizeof(m->kind), "cubin");
			if (cubin_kernels(&m->k, buf, len, &sm, path))
				status = 1;
			snprintf(m->target, sizeof(m->target), "sm_%u", sm);
		} else {
			snprintf(l.container, sizeof(l.container), "PTX");
			snprintf(m->kind, sizeof(m->kind), "ptx");
			ptx_target(buf, len, m->target, sizeof(m->target));
			if (!m->target[0])
				strcpy(m->target, "unknown");
			ptx_scan(&m->k, &m->f, buf, len);
		}
		if (!keep(&l, m->kind, m->target)) {
			names_free(&m->k);
			names_free(&m->f);
			l.n--;
			l.skipped++;
		}
	} else {
		char err[512];
		if (fatbin__open_file(path, &fb, err, sizeof(err))) {
			status = cli_error("%s", err);
		} else {
			snprintf(l.container, sizeof(l.container), "%s, %zu modules",
				 kind == CLI_FILE_FATBIN ? "fatbin" : kind == CLI_FILE_ARCHIVE ? "archive" : "ELF file",
				 fatbin__entry_count(fb));
			status = read_fatbin(&l, fb);
		}
	}
	FILE *out = NULL;
	if (!status) {
		out = out_path ? fopen(out_path, "w") : stdout;
		if (!out)
			status = cli_error("list: cannot create %s: %m", out_path);
	}
	if (!status) {
		json_object *root = json ? json_object_new_object() : NULL;
		if (root) {
			json_object_object_add(root, "file", json_object_new_string(path));
			json_object_object_add(root, "container", json_object_new_string(l.container));
		} else if (!match && !probes) {
			fprintf(out, "%s: %s\n", path, l.container);
		}
		if (probes)
			print_probes(out, &l, root);
		else if (match)
			status = print_match(out, &l, match, root);
		else if (summary)
			print_summary_form(out, &l, root);
		else
			print_listing(out, &l, root);
		if (root) {
			fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(root);
		}
		if ((out_path ? fclose(out) : fflush(out)) && !status)
			status = cli_error("list: write failed%s%s", out_path ? " on " : "", out_path ? out_path : "");
	}
	for (size_t i = 0; i < l.n; i++) {
		names_free(&l.m[i].k);
		names_free(&l.m[i].f);
	}
	free(l.m);
	if (fb)
		fatbin__close(fb);
	free(buf);
	return status;
}
