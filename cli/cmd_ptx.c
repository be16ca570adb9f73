/* gpuprobe ptx: parse, print, instrument and translate PTX modules. */
#include "cli/cmd_ptx.h"

#include "cli/cli.h"
#include "cli/file_kind.h"
#include "ptx-frontend/ir.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptx_subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* One line per subcommand. */
static const struct ptx_subcommand subcommands[] = {
	{"print", cmd_ptx_print, "parse FILE.ptx and print it again (the round trip)"},
	{"instrument", cmd_ptx_instrument, "print FILE.ptx with probes spliced in"},
	{"spirv", cmd_ptx_spirv, "translate FILE.ptx to SPIR-V"},
	{"llvm", cmd_ptx_llvm, "translate FILE.ptx to LLVM IR (amdgcn or nvptx64; LLVM 19)"},
	{"amdgpu", cmd_ptx_amdgpu, "translate FILE.ptx to an AMDGCN code object (gfx90a, gfx942, gfx1100)"},
};
#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *out)
{
	fputs("usage: gpuprobe ptx SUBCOMMAND [ARGS]\n\nsubcommands:\n", out);
	for (size_t i = 0; i < NSUB; i++)
		fprintf(out, "  %-11s %s%s\n", subcommands[i].name, subcommands[i].summary,
			subcommands[i].fn ? "" : " (not in this build)");
	fputs("\nRun 'gpuprobe ptx SUBCOMMAND --help' for its options.\n", out);
}

int cmd_ptx(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < NSUB; i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		if (!subcommands[i].fn)
			return cli_error("ptx %s: not available in this build", argv[1]);
		return subcommands[i].fn(argc - 1, argv + 1);
	}
	return cli_usage_error("ptx: unknown subcommand '%s' (see 'gpuprobe ptx --help')", argv[1]);
}

static void print_usage(FILE *out)
{
	fputs("usage: gpuprobe ptx print [--canonical] [-o OUT] FILE.ptx\n\n"
	      "Parse a PTX module and print it again. ptxas compiles the output to the same cubin as\n"
	      "the input.\n\n"
	      "  --canonical  print every statement from the IR (uniform layout, comments dropped);\n"
	      "               code is unchanged, debug sections of modules with .loc are not\n"
	      "  -o, --output OUT  write to OUT instead of standard output\n"
	      "  -h, --help   this text\n\n"
	      "Exit status: 0 printed, 1 the PTX does not parse or cannot be written, 2 bad usage or\n"
	      "a file that is not PTX.\n", out);
}

int cmd_ptx_print(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL;
	bool canonical = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--canonical")) {
			canonical = true;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (++i == argc)
				return cli_usage_error("ptx print: %s needs a file name", argv[i - 1]);
			out_path = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("ptx print: unknown option '%s' (see 'gpuprobe ptx print --help')", argv[i]);
		} else if (path) {
			return cli_usage_error("ptx print: one input file only");
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		print_usage(stderr);
		return 2;
	}
	int krc = cli_expect_kind("ptx print", path, CLI_READS(CLI_FILE_PTX), "a PTX file", NULL);
	if (krc)
		return krc;
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return 2;
	char err[256];
	ir_module *m = ptx_parse(text, len, err, sizeof(err));
	free(text);
	if (!m) {
		fprintf(stderr, "%s:%s\n", path, err);   /* FILE:LINE:COL: message, as compilers say it */
		return 1;
	}
	size_t olen;
	char *out = canonical ? ptx_print_canonical(m, &olen) : ptx_print(m, &olen);
	ir_module_free(m);
	FILE *f = out_path ? fopen(out_path, "wb") : stdout;
	if (!f) {
		free(out);
		return cli_error("ptx print: cannot create %s: %m", out_path);
	}
	size_t w = fwrite(out, 1, olen, f);
	free(out);
	int bad = w != olen || (out_path ? fclose(f) : fflush(f));
	if (bad)
		return cli_error("ptx print: write failed%s%s", out_path ? " on " : "",
				 out_path ? out_path : "");
	return 0;
}
