/* Every conformance case (tests/spirv/cases) and any PTX file given lowered through amdgpu/ to
 * AMDGCN code objects for gfx90a, gfx942 and gfx1100 (code-object v5, and v4 for gfx90a): each is
 * an AMDGPU ELF shared object holding one kernel descriptor (NAME.kd) per .entry of the module.
 * A case that lowers for nvptx64 must lower for amdgcn too, except where the amdgcn lowering
 * names what it lacks (listed by the test's output as "amdgcn-only limit").
 * usage: amdgpu_codeobj [--floor N] CASE_DIR_OR_FILE.case|FILE.ptx... */
#include <elf.h>

#define main spirv_conformance_main
#include "../spirv/conformance.c"
#undef main

#include "amdgpu/amdgpu.h"

/* Kernel descriptors in the dynamic symbol table: symbols named *.kd of an ELF64 AMDGPU object. */
static int count_kd(const unsigned char *p, size_t n, char *why, size_t whylen)
{
	if (n < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64)
		return snprintf(why, whylen, "not an ELF64 file"), -1;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	if (eh->e_machine != 224 /* EM_AMDGPU */)
		return snprintf(why, whylen, "e_machine %u, not EM_AMDGPU", eh->e_machine), -1;
	if (eh->e_type != ET_DYN)
		return snprintf(why, whylen, "not a shared object (linked code object)"), -1;
	if (eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > n)
		return snprintf(why, whylen, "section table out of bounds"), -1;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	int kd = 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > n || strs->sh_offset + strs->sh_size > n)
			return snprintf(why, whylen, "symbols out of bounds"), -1;
		const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
			if (sym[k].st_name >= strs->sh_size)
				continue;
			const char *nm = (const char *)p + strs->sh_offset + sym[k].st_name;
			size_t l = strlen(nm);
			kd += l > 3 && !strcmp(nm + l - 3, ".kd");
		}
	}
	return kd;
}

/* amdgpu_options.skipped: one more kernel left out */
static void count_left_out(void *arg, const char *kernel, const char *why)
{
	(void)kernel;
	(void)why;
	(*(int *)arg)++;
}

static int entries(const ir_module *m)
{
	int n = 0;
	for (ir_top *t = m->first; t; t = t->next)
		n += t->kind == IR_TOP_FUNC && t->func.is_entry && t->func.has_body;
	return n;
}

int main(int argc, char **argv)
{
	static const struct { const char *arch; unsigned cov; } targets[] = {
		{"gfx90a", 5}, {"gfx90a", 4}, {"gfx942", 5}, {"gfx1100", 5},
	};
	bool expect_fail = false;
	unsigned floor = 0, lowered = 0, both_fail = 0, amd_only_fail = 0, bad = 0, total = 0;
	char **paths = calloc((size_t)argc * 512 + 1, sizeof(char *));
	size_t np = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--expect-not-lowered")) {
			expect_fail = true;
			continue;
		}
		if (!strcmp(argv[i], "--floor") && i + 1 < argc) {
			floor = (unsigned)atoi(argv[++i]);
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			paths[np++] = strdup(argv[i]);
			continue;
		}
		for (struct dirent *e; (e = readdir(d));) {
			size_t l = strlen(e->d_name);
			if (l > 5 && !strcmp(e->d_name + l - 5, ".case")) {
				char *p = malloc(strlen(argv[i]) + l + 2);
				sprintf(p, "%s/%s", argv[i], e->d_name);
				paths[np++] = p;
			}
		}
		closedir(d);
	}
	qsort(paths, np, sizeof(*paths), cmp_str);
	char err[1024];
	for (size_t i = 0; i < np; i++) {
		char *ptx = NULL;
		const char *name = strrchr(paths[i], '/') ? strrchr(paths[i], '/') + 1 : paths[i];
		size_t l = strlen(paths[i]);
		if (l > 5 && !strcmp(paths[i] + l - 5, ".case")) {
			struct tcase *tc = calloc(1, sizeof(*tc));
			if (load_case(paths[i], tc, err, sizeof(err)) < 0) {
				printf("FAIL %s: %s\n", name, err);
				bad++;
				free(tc);
				continue;
			}
			ptx = tc->ptx;
			free(tc);
		} else {
			ptx = read_file(paths[i]);
			if (!ptx) {
				printf("FAIL %s: cannot read it\n", name);
				bad++;
				continue;
			}
		}
		total++;
		ir_module *m = ptx_parse(ptx, strlen(ptx), err, sizeof(err));
		free(ptx);
		if (!m) {
			printf("FAIL %s: parse: %s\n", name, err);
			bad++;
			continue;
		}
		int nv_left = 0, am_left = 0;   /* kernels each target left out */
		struct amdgpu_options nvo = {.target = AMDGPU_TARGET_NVPTX, .skipped = count_left_out, .skipped_arg = &nv_left};
		char *out = NULL, nverr[512];
		size_t n;
		bool nv_ok = amdgpu_lower_ptx(m, &nvo, &out, &n, nverr, sizeof(nverr)) == 0;
		free(out);
		if (expect_fail) {   /* listed as not lowered: it must still stop at a named line */
			bool named = !nv_ok && nverr[0] >= '0' && nverr[0] <= '9' ? true : strstr(nverr, "initializer") != NULL;
			if (nv_ok || !named) {
				printf("FAIL %s: %s\n", name, nv_ok ? "lowers now: take it off tests/amdgpu/not-lowered.txt" : nverr);
				bad++;
			} else {
				printf("ok %s still not lowered: %s\n", name, nverr);
				lowered++;
			}
			ir_module_free(m);
			continue;
		}
		bool ok = true;
		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]) && ok; t++) {
			struct amdgpu_options o = {.target = AMDGPU_TARGET_AMDGCN, .arch = targets[t].arch, .cov = targets[t].cov,
						   .skipped = count_left_out, .skipped_arg = &am_left};
			am_left = 0;
			void *co = NULL;
			if (amdgpu_lower_code_object(m, &o, &co, &n, err, sizeof(err)) < 0) {
				ok = false;
				if (nv_ok) {
					printf("amdgcn-only limit %s (%s v%u): %s\n", name, targets[t].arch, targets[t].cov, err);
					amd_only_fail++;
				} else {
					printf("not lowered %s: %s\n", name, err);
					both_fail++;
				}
				break;
			}
			char why[128];
			int kd = count_kd(co, n, why, sizeof(why));
			free(co);
			if (kd != entries(m) - am_left || am_left != nv_left) {
				printf("FAIL %s (%s v%u): %d kernel descriptors for %d kernels, %d left out (nvptx: %d)%s%s\n",
				       name, targets[t].arch, targets[t].cov, kd, entries(m), am_left, nv_left, kd < 0 ? ": " : "",
				       kd < 0 ? why : "");
				bad++;
				ok = false;
			}
		}
		if (ok) {
			lowered++;
			printf("ok %s: %d kernel(s)", name, entries(m) - am_left);
			if (am_left)
				printf(" (%d left out, as for nvptx)", am_left);
			printf(", gfx90a v5/v4, gfx942, gfx1100\n");
		}
		ir_module_free(m);
	}
	printf("%u of %u modules lower to code objects for every architecture (floor %u); %u not lowered for "
	       "either target; %u only for amdgcn; %u failed\n", lowered, total, floor, both_fail, amd_only_fail, bad);
	return bad || lowered < floor ? 1 : 0;
}
