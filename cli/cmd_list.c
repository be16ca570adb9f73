/* gpuprobe list FILE: the modules of a CUDA binary, fatbin, cubin or PTX file, their kernels
 * (mangled and demangled), targets, whether PTX is there to instrument, and compression. */
#include "cli/cli.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/fatbin.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EM_CUDA_MACHINE 190
#define STO_CUDA_ENTRY  0x10 /* st_other bit nvcc sets on kernel (.entry) symbols */

static void usage(FILE *out)
{
	fputs("usage: gpuprobe list FILE\n\n"
	      "List the GPU modules in FILE (an executable, shared library, object file, static library,\n"
	      "fatbin, cubin or PTX file): for each module its kind (ptx, cubin), target, size and compression, and\n"
	      "its kernels, mangled and demangled. Ends with the targets present, whether PTX is\n"
	      "present (gpuprobe instruments PTX), and the compression used.\n\n"
	      "options:\n"
	      "  -h, --help   this text\n", out);
}

struct summary {
	char targets[512];   /* space-separated, each once */
	char ptx_targets[256];
	bool zstd, lz4, none;
	char **kernels;      /* distinct kernel names seen in every module */
	size_t nkernels;
};

static void summary_kernel(struct summary *s, const char *name)
{
	for (size_t i = 0; i < s->nkernels; i++)
		if (!strcmp(s->kernels[i], name))
			return;
	char **v = realloc(s->kernels, (s->nkernels + 1) * sizeof(*v));
	if (!v)
		return;
	s->kernels = v;
	if ((v[s->nkernels] = strdup(name)))
		s->nkernels++;
}

static void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->nkernels; i++)
		free(s->kernels[i]);
	free(s->kernels);
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

/* Print and release the names: kernels (s given: counted in the summary) or functions. */
static void names_print(struct summary *s, struct names *k)
{
	for (size_t i = 0; i < k->n; i++) {
		const char *label = s ? "kernel" : "func";
		char *pretty = demangle(k->v[i]);
		if (pretty)
			printf("  %s %s  %s\n", label, k->v[i], pretty);
		else
			printf("  %s %s\n", label, k->v[i]);
		free(pretty);
		if (s)
			summary_kernel(s, k->v[i]);
		free(k->v[i]);
	}
	free(k->v);
	*k = (struct names){ 0 };
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

static void print_module_line(size_t idx, const char *kind, const char *target, size_t size,
			      const char *comp, size_t comp_size, const struct fatbin_entry *e)
{
	printf("module %zu: %s %s, %zu bytes", idx, kind, target, size);
	if (strcmp(comp, "none"))
		printf(", %s-compressed (%zu bytes)", comp, comp_size);
	if (e) {
		if (e->kind == FATBIN_KIND_PTX)
			printf(", PTX ISA %u.%u", e->version_major, e->version_minor);
		printf(", offset 0x%zx", e->offset);
		const char *opt = e->options;
		size_t olen = e->options_len;
		while (olen && *opt == ' ')
			opt++, olen--;
		while (olen && opt[olen - 1] == ' ')
			olen--;
		if (olen)
			printf(", options \"%.*s\"", (int)olen, opt);
	}
	putchar('\n');
}

static int list_fatbin(struct summary *s, struct fatbin *fb, const char *path)
{
	char err[512];
	for (size_t i = 0; i < fatbin__entry_count(fb); i++) {
		const struct fatbin_entry *e = fatbin__entry(fb, i);
		char target[32];
		fatbin_entry_target(e, target, sizeof(target));
		add_word(s->targets, sizeof(s->targets), target);
		if (e->kind == FATBIN_KIND_PTX)
			add_word(s->ptx_targets, sizeof(s->ptx_targets), target);
		s->zstd |= e->compression == FATBIN_COMPRESS_ZSTD;
		s->lz4 |= e->compression == FATBIN_COMPRESS_LZ4;
		s->none |= e->compression == FATBIN_COMPRESS_NONE;
		void *data;
		size_t len;
		int rc = fatbin__entry_data(e, &data, &len, err, sizeof(err));
		if (rc == -ENOTSUP) {
			print_module_line(i, fatbin_kind_name(e->kind), target, e->uncompressed_size,
					  fatbin_compression_name(e->compression), e->payload_size, e);
			puts("  (LTO IR, stored encoded: its kernels cannot be listed)");
			continue;
		}
		if (rc)
			return cli_error("%s: module %zu: %s", path, i, err);
		char what[64];
		snprintf(what, sizeof(what), "%s: module %zu", path, i);
		struct names k = { 0 }, f = { 0 };
		if (e->kind == FATBIN_KIND_PTX) {
			ptx_scan(&k, &f, data, len);
		} else if (e->kind == FATBIN_KIND_ELF) {
			unsigned sm;
			if (cubin_kernels(&k, data, len, &sm, what)) {
				for (size_t j = 0; j < k.n; j++)
					free(k.v[j]);
				free(k.v);
				free(data);
				return 1;
			}
		}
		free(data);
		print_module_line(i, fatbin_kind_name(e->kind), target, len, fatbin_compression_name(e->compression),
				  e->payload_size, e);
		names_print(s, &k);
		names_print(NULL, &f);
	}
	return 0;
}

static int by_sm(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	unsigned long nx = strtoul(x + strcspn(x, "0123456789"), NULL, 10);
	unsigned long ny = strtoul(y + strcspn(y, "0123456789"), NULL, 10);
	return nx != ny ? (nx < ny ? -1 : 1) : strcmp(x, y);
}

/* "sm_90 sm_75 sm_100" as "sm_75 sm_90 sm_100" */
static void print_sorted(const char *label, const char *list, const char *after)
{
	char copy[512], *words[64], *save = NULL;
	size_t n = 0;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *w = strtok_r(copy, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	qsort(words, n, sizeof(words[0]), by_sm);
	fputs(label, stdout);
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", words[i]);
	fputs(after, stdout);
}

static void print_summary(const struct summary *s)
{
	if (s->targets[0])
		print_sorted("targets: ", s->targets, "\n");
	else
		puts("targets: none");
	if (s->ptx_targets[0])
		print_sorted("PTX: yes (", s->ptx_targets, ")\n");
	else
		printf("PTX: no (cannot be instrumented; rebuild with -arch=sm_XX, or add "
		       "-gencode arch=compute_XX,code=compute_XX, to embed PTX)\n");
	char comp[64] = "";
	if (s->zstd)
		add_word(comp, sizeof(comp), "zstd");
	if (s->lz4)
		add_word(comp, sizeof(comp), "lz4");
	if (s->none)
		add_word(comp, sizeof(comp), "none");
	printf("compression: %s\n", comp[0] ? comp : "none");
	printf("kernels: %zu distinct\n", s->nkernels);
	if (s->ptx_targets[0])
		puts("attach points: gpu/{entry,exit,block_begin,block_end,barrier,barrier_after,bb}/KERNEL, "
		     "gpu/mem/FILTERS/KERNEL, gpu/{func_entry,func_exit}/FUNC (a name above or a glob)");
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		return cli_error("list: unknown option '%s' (see 'gpuprobe list --help')", argv[optind - 1]);
	}
	if (optind >= argc)
		return cli_error("list: no FILE given (see 'gpuprobe list --help')");
	if (optind + 1 < argc)
		return cli_error("list: one FILE only ('%s' is extra)", argv[optind + 1]);
	const char *path = argv[optind];

	/* The first bytes say what the file is; only cubins and PTX (small) are read whole here,
	 * binaries go to the fatbin reader, which maps them. */
	uint8_t head[4096];
	size_t hlen;
	FILE *f = fopen(path, "rb");
	if (!f)
		return cli_error("cannot open %s: %s", path, strerror(errno));
	hlen = fread(head, 1, sizeof(head), f);
	fclose(f);
	enum module_image_kind kind = module_image_classify(head, hlen);
	bool cubin = kind == MODULE_IMAGE_CUBIN && hlen >= 20 && head[18] == EM_CUDA_MACHINE && head[19] == 0;
	bool elf = hlen >= 4 && !memcmp(head, "\177ELF", 4);
	bool archive = hlen >= 8 && !memcmp(head, "!<arch>\n", 8);
	struct summary s = { 0 };
	int status = 0;
	char *buf = NULL;
	size_t len = 0;
	if ((cubin || kind == MODULE_IMAGE_PTX) && !(buf = cli_read_file(path, &len)))
		return 1;
	if (cubin) {
		unsigned sm = 0;
		struct names k = { 0 };
		if (cubin_kernels(&k, buf, len, &sm, path)) {
			for (size_t j = 0; j < k.n; j++)
				free(k.v[j]);
			free(k.v);
			status = 1;
		} else {
			char target[32];
			snprintf(target, sizeof(target), "sm_%u", sm);
			printf("%s: cubin\n", path);
			print_module_line(0, "cubin", target, len, "none", 0, NULL);
			names_print(&s, &k);
			add_word(s.targets, sizeof(s.targets), target);
			s.none = true;
			print_summary(&s);
		}
	} else if (kind == MODULE_IMAGE_PTX) {
		char target[64];
		ptx_target(buf, len, target, sizeof(target));
		if (!target[0])
			strcpy(target, "unknown");
		printf("%s: PTX\n", path);
		print_module_line(0, "ptx", target, len, "none", 0, NULL);
		struct names k = { 0 }, f = { 0 };
		ptx_scan(&k, &f, buf, len);
		names_print(&s, &k);
		names_print(NULL, &f);
		add_word(s.targets, sizeof(s.targets), target);
		add_word(s.ptx_targets, sizeof(s.ptx_targets), target);
		s.none = true;
		print_summary(&s);
	} else if (kind == MODULE_IMAGE_UNKNOWN && !elf && !archive) {
		status = cli_error("%s: not an executable, shared library, object, archive, fatbin, cubin or PTX file", path);
	} else {
		char err[512];
		struct fatbin *fb;
		if (fatbin__open_file(path, &fb, err, sizeof(err))) {
			status = cli_error("%s", err);
		} else {
			printf("%s: %s, %zu modules\n", path,
			       kind == MODULE_IMAGE_FATBIN ? "fatbin" : kind == MODULE_IMAGE_WRAPPER ? "fatbin wrapper" : archive ? "archive" : "ELF file",
			       fatbin__entry_count(fb));
			status = list_fatbin(&s, fb, path);
			if (!status)
				print_summary(&s);
			fatbin__close(fb);
		}
	}
	summary_free(&s);
	free(buf);
	return status;
}
