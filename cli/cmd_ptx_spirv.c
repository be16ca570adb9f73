/* gpuprobe ptx spirv FILE.ptx -o OUT.spv: the module lowered to SPIR-V (validated). */
#include "cli/cmd_ptx.h"

#include "cli/cli.h"
#include "cli/file_kind.h"
#include "nvidia/probes.h"
#include "ptx-frontend/ir.h"
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe ptx spirv [-p PROG.bpf.o]... [-S] [--no-validate] -o OUT.spv FILE.ptx\n\n"
	      "Lower a PTX module to SPIR-V for OpenCL (Kernel, Physical64, OpenCL.std) and validate it\n"
	      "with SPIRV-Tools. What cannot be lowered is named with its line; a kernel that needs it is\n"
	      "left out (one line each: exit status 0 while other kernels lower, 1 when none does).\n\n"
	      "  -o, --output OUT  write the SPIR-V binary to OUT ('-' for standard output)\n"
	      "  -S            write the disassembly (text) instead of the binary\n"
	      "  --no-validate skip the validator\n"
	      "  -h, --help    this text\n\n"
	      "  -p, --probe FILE  splice this BPF object's device probes in first, as 'gpuprobe ptx\n"
	      "                instrument' does (repeatable; map addresses are placeholders)\n\n"
	      "Exit status: 0 written, 1 nothing lowers or the output cannot be written, 2 bad usage\n"
	      "or a file that is not PTX.\n", out);
}

static void skipped(void *arg, const char *kernel, const char *why)
{
	fprintf(stderr, "gpuprobe: %s: kernel %s left out: %s\n", (const char *)arg, kernel, why);
}

static void noted(void *arg, const char *func, const char *note)
{
	fprintf(stderr, "gpuprobe: %s: warning: %s, line %s\n", (const char *)arg, func, note);
}

int cmd_ptx_spirv(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL, *probes[64];
	size_t nprobes = 0;
	int text_out = 0;
	struct spirv_options opts = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (++i == argc)
				return cli_usage_error("ptx spirv: %s needs a file name", argv[i - 1]);
			out_path = argv[i];
		} else if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "--probe")) {
			if (++i == argc)
				return cli_usage_error("ptx spirv: %s needs a BPF object", argv[i - 1]);
			if (nprobes == 64)
				return cli_usage_error("ptx spirv: at most 64 probe objects");
			probes[nprobes++] = argv[i];
		} else if (!strcmp(argv[i], "-S")) {
			text_out = 1;
		} else if (!strcmp(argv[i], "--no-validate")) {
			opts.no_validate = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("ptx spirv: unknown option '%s' (see 'gpuprobe ptx spirv --help')", argv[i]);
		} else if (path) {
			return cli_usage_error("ptx spirv: one input file only");
		} else {
			path = argv[i];
		}
	}
	if (!path || !out_path) {
		usage(stderr);
		return 2;
	}
	int krc = cli_expect_kind("ptx spirv", path, CLI_READS(CLI_FILE_PTX), "a PTX file", NULL);
	if (krc)
		return krc;
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return 2;
	char err[1024];
	for (size_t i = 0; i < nprobes; i++)
		if ((krc = cli_expect_kind("ptx spirv", probes[i], CLI_READS(CLI_FILE_BPF), "a BPF object", NULL))) {
			free(text);
			return krc;
		}
	if (nprobes) {   /* the probe pipeline of ptx instrument, in memory */
		struct gp_map_allocator *alloc = gp_map_allocator_host(1);
		struct gp_nv_probes_opts o = {.alloc = alloc};
		struct gp_nv_probes *ps = NULL;
		char *ins = NULL;
		size_t ins_len = 0;
		struct gp_inst_stats st;
		int rc = !alloc ? -ENOMEM : gp_nv_probes__open(probes, NULL, nprobes, &o, &ps, err, sizeof(err));
		if (!rc)
			rc = gp_nv_probes__instrument(ps, text, len, &ins, &ins_len, &st, err, sizeof(err));
		if (ps)
			gp_nv_probes__close(ps);
		free(alloc);
		if (rc) {
			free(text);
			return cli_error("ptx spirv: %s", alloc ? err : "out of memory");
		}
		if (ins) {   /* NULL: no probe has a site here; the module as it is */
			free(text);
			text = ins;
			len = ins_len;
		}
	}
	ir_module *m = ptx_parse(text, len, err, sizeof(err));
	free(text);
	if (!m) {
		fprintf(stderr, "gpuprobe: %s:%s\n", path, err);
		return 1;
	}
	uint32_t *words;
	size_t n;
	opts.skipped = skipped;
	opts.noted = noted;
	opts.skipped_arg = (void *)path;
	int r = spirv_lower_module(m, &opts, &words, &n, err, sizeof(err));
	ir_module_free(m);
	if (r < 0) {
		/* "LINE: message" when the error has a line, else "message" */
		fprintf(stderr, "gpuprobe: %s:%s%s\n", path, err[0] >= '0' && err[0] <= '9' ? "" : " ", err);
		return 1;
	}
	FILE *f = strcmp(out_path, "-") ? fopen(out_path, "wb") : stdout;
	if (!f) {
		free(words);
		return cli_error("ptx spirv: cannot create %s", out_path);
	}
	int bad;
	if (text_out) {
		char *s = spirv_disassemble(words, n);
		bad = fputs(s, f) < 0;
		free(s);
	} else {
		bad = fwrite(words, 4, n, f) != n;
	}
	free(words);
	bad |= f != stdout ? fclose(f) : fflush(f);
	if (bad)
		return cli_error("ptx spirv: write failed on %s", out_path);
	return 0;
}
