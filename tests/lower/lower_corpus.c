/* Lowers every bpf_conformance program of a corpus directory into ONE PTX module, with a kernel
 * gp_conformance(out, count) whose thread i runs program i: the test's "-- mem" bytes live in a
 * .global array, are copied to a per-thread local buffer (so programs that write memory do not
 * disturb each other), and the program gets r1 = that buffer (0 without mem), r2 = its length.
 * out[i] receives r0.
 *
 * usage: lower_corpus CORPUS_DIR OUT.ptx OUT.manifest [--target sm_XX] [--expect N]
 * The manifest has one line per test: "run INDEX NAME EXPECTED_HEX" or "skip NAME REASON".
 * Exit 1 when fewer than N programs were lowered (N defaults to every test). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"
#include "ebpf/lower.h"
#include "ptx-frontend/ir.h"

struct prog {
	char name[256];
	int lowered;
	size_t mem_len;
	uint64_t expected;
};

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_data(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 5 && !strcmp(d->d_name + n - 5, ".data");
}

static void add_directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
}

/* The test's memory as a .global array padded to 8 bytes, so the kernel copies it in u64s. */
static void add_mem(ir_module *m, unsigned idx, const uint8_t *mem, size_t len)
{
	size_t padded = (len + 7) & ~(size_t)7;
	size_t cap = padded * 5 + 8, k = 0;
	char *init = malloc(cap);
	k += (size_t)snprintf(init + k, cap - k, "{");
	for (size_t i = 0; i < padded; i++)
		k += (size_t)snprintf(init + k, cap - k, "%s%u", i ? "," : "", i < len ? mem[i] : 0);
	snprintf(init + k, cap - k, "}");
	ir_top *t = ir_top_new(m, IR_TOP_DECL);
	t->decl = (ir_decl){.space = ".global", .align = 8, .type = ".b8",
			    .name = ir_strfmt(m, "gp_mem_%u", idx), .count = -1,
			    .dims = ir_strfmt(m, "[%zu]", padded), .init = ir_strdup(m, init)};
	ir_top_append(m, t);
	free(init);
}

static void write_kernel(FILE *f, const struct prog *p, size_t n, size_t max_mem)
{
	fprintf(f, "\n.visible .entry gp_conformance(\n\t.param .u64 gp_out,\n\t.param .u32 gp_count\n)\n{\n"
		   "\t.reg .b64 %%a<8>;\n\t.reg .b32 %%b<4>;\n\t.reg .pred %%q<2>;\n"
		   "\t.local .align 8 .b8 gp_buf[%zu];\n"
		   "\tmov.u32 %%b0, %%ctaid.x;\n\tmov.u32 %%b1, %%ntid.x;\n\tmov.u32 %%b2, %%tid.x;\n"
		   "\tmad.lo.u32 %%b0, %%b0, %%b1, %%b2;\n\tld.param.u32 %%b3, [gp_count];\n"
		   "\tsetp.ge.u32 %%q0, %%b0, %%b3;\n\t@%%q0 bra GP_END;\n"
		   "\tmov.u64 %%a0, gp_buf;\n\tcvta.local.u64 %%a0, %%a0;\n"
		   "\tld.param.u64 %%a7, [gp_out];\n\tcvta.to.global.u64 %%a7, %%a7;\n"
		   "\tmul.wide.u32 %%a6, %%b0, 8;\n\tadd.s64 %%a7, %%a7, %%a6;\n",
		max_mem ? (max_mem + 7) & ~(size_t)7 : 8);
	unsigned k = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].lowered)
			fprintf(f, "\tsetp.eq.u32 %%q0, %%b0, %u;\n\t@%%q0 bra GP_P%u;\n", k, k), k++;
	fprintf(f, "\tbra.uni GP_END;\n");
	k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].lowered)
			continue;
		fprintf(f, "GP_P%u:\n", k);
		if (p[i].mem_len) {
			fprintf(f, "\tmov.u64 %%a1, gp_mem_%zu;\n", i);
			for (size_t off = 0; off < p[i].mem_len; off += 8)
				fprintf(f, "\tld.global.u64 %%a2, [%%a1+%zu];\n\tst.local.u64 [gp_buf+%zu], %%a2;\n",
					off, off);
		}
		fprintf(f, "\t{\n\t.param .b64 x1;\n\t.param .b64 x2;\n\t.param .b64 xr;\n"
			   "\tst.param.b64 [x1], %s;\n\tst.param.b64 [x2], %zu;\n"
			   "\tcall (xr), bpf_prog_%u, (x1, x2);\n\tld.param.b64 %%a3, [xr];\n\t}\n"
			   "\tbra.uni GP_STORE;\n",
			p[i].mem_len ? "%a0" : "0", p[i].mem_len, k);
		k++;
	}
	fprintf(f, "GP_STORE:\n\tst.global.u64 [%%a7], %%a3;\nGP_END:\n\tret;\n}\n");
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s CORPUS_DIR OUT.ptx OUT.manifest [--target sm_XX] [--expect N]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1], *target = "sm_90";
	long expect = -1;
	for (int i = 4; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--target"))
			target = argv[i + 1];
		else if (!strcmp(argv[i], "--expect"))
			expect = strtol(argv[i + 1], NULL, 10);
	}
	struct dirent **ents;
	int n = scandir(dir, &ents, is_data, by_name);
	if (n < 0) {
		fprintf(stderr, "lower_corpus: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	FILE *man = fopen(argv[3], "w");
	if (!man) {
		fprintf(stderr, "lower_corpus: %s: %s\n", argv[3], strerror(errno));
		return 2;
	}
	ir_module *m = ir_module_new();
	add_directive(m, ".version 7.8");
	add_directive(m, ir_strfmt(m, ".target %s", target));
	add_directive(m, ".address_size 64");
	struct prog *progs = calloc((size_t)n, sizeof(*progs));
	unsigned lowered = 0;
	size_t max_mem = 0;
	for (int i = 0; i < n; i++) {
		struct prog *p = &progs[i];
		snprintf(p->name, sizeof(p->name), "%.*s", (int)strlen(ents[i]->d_name) - 5, ents[i]->d_name);
		char path[4096], err[256] = "";
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		struct bpf_conformance_case tc;
		struct bpf_insn *insns = NULL;
		size_t ni = 0;
		if (bpf_conformance_read(path, &tc, err, sizeof(err))) {
			fprintf(man, "skip %s read: %s\n", p->name, err);
			continue;
		}
		int rc;
		if (tc.raw) {
			ni = tc.raw_len / 8;
			insns = malloc(tc.raw_len ? tc.raw_len : 1);
			memcpy(insns, tc.raw, tc.raw_len);
			rc = 0;
		} else {
			rc = bpf_asm(tc.asm_text ? tc.asm_text : "", &insns, &ni, err, sizeof(err));
		}
		if (rc) {
			fprintf(man, "skip %s asm: %s\n", p->name, err);
		} else if (!tc.has_result) {
			fprintf(man, "skip %s no expected result (error test)\n", p->name);
		} else {
			struct gp_lower_opts opts = {.prefix = ir_strfmt(m, "__gp%u_", lowered), .nargs = 2};
			const char *fn = ir_strfmt(m, "bpf_prog_%u", lowered);
			if (tc.mem_len)
				add_mem(m, (unsigned)i, tc.mem, tc.mem_len);
			rc = gp_lower_program(m, insns, ni, fn, &opts, err, sizeof(err));
			if (rc) {
				fprintf(man, "skip %s lower: %s\n", p->name, err);
				fprintf(stderr, "lower_corpus: %s: %s\n", p->name, err);
			} else {
				p->lowered = 1;
				p->mem_len = tc.mem_len;
				p->expected = tc.result;
				if (tc.mem_len > max_mem)
					max_mem = tc.mem_len;
				fprintf(man, "run %u %s 0x%llx\n", lowered, p->name, (unsigned long long)tc.result);
				lowered++;
			}
		}
		free(insns);
		bpf_conformance_free(&tc);
	}
	size_t len;
	char *text = ptx_print(m, &len);
	FILE *f = fopen(argv[2], "w");
	if (!f) {
		fprintf(stderr, "lower_corpus: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	fwrite(text, 1, len, f);
	write_kernel(f, progs, (size_t)n, max_mem);
	fclose(f);
	fclose(man);
	free(text);
	printf("lower_corpus: lowered %u of %d programs into %s (%s)\n", lowered, n, argv[2], target);
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(progs);
	ir_module_free(m);
	if (expect < 0)
		expect = n;
	if ((long)lowered < expect) {
		fprintf(stderr, "lower_corpus: expected %ld lowered programs, got %u\n", expect, lowered);
		return 1;
	}
	return 0;
}
