/* gpuprobe verify [-v] PROG.bpf.o: verify every program of a BPF object for its attach point and
 * say, for a rejection, which instruction and why (the last lines of the verifier's log).
 * Exit status: 0 when every program verifies, 1 when one is rejected, 2 for bad usage or a file
 * that cannot be opened as a BPF object. */
#include "cli/cli.h"

#include "ebpf/object.h"
#include "ebpf/oneliner.h"
#include "ebpf/verifier.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe verify [-v] PROG.bpf.o | -e PROGRAM\n\n"
	      "Verify every program of a BPF object for the attach point its section names.\n"
	      "Prints 'NAME (SECTION): OK, N insns, stack S' per program, or the rejected\n"
	      "instruction (index, opcode, disassembly) and the reason, as the Linux verifier does.\n\n"
	      "  -v, --verbose   print the verifier's full log (every instruction explored)\n"
	      "  -e PROGRAM      verify a one-liner (docs/oneliners.md) instead of a file\n"
	      "  -h, --help      this text\n\n"
	      "Exit status: 0 all programs verify, 1 a program is rejected, 2 bad usage or file.\n", out);
}

/* The log's last two lines: the instruction and the reason. */
static const char *log_tail(const char *log)
{
	const char *end = log + strlen(log);
	while (end > log && end[-1] == '\n')
		end--;
	int lines = 0;
	const char *p = end;
	while (p > log) {
		if (p[-1] == '\n' && ++lines == 2)
			break;
		p--;
	}
	return p;
}

int cmd_verify(int argc, char **argv)
{
	int verbose = 0, oneliner = 0;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "-e") && i + 1 < argc && !path) {
			path = argv[++i];
			oneliner = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("verify: unknown option '%s' (see 'gpuprobe verify --help')", argv[i]);
			return 2;
		} else if (path) {
			cli_error("verify: one object file at a time ('%s' and '%s')", path, argv[i]);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	char err[512] = "";
	struct gp_object *obj = NULL;
	int rc;
	if (oneliner) {   /* compiled in memory, opened as a file would be */
		void *elf = NULL;
		size_t size = 0;
		rc = gp_oneliner_compile(path, &elf, &size, err, sizeof(err));
		if (rc) {
			cli_error("verify: -e: %s", err);
			return 2;
		}
		rc = gp_object__open_mem(elf, size, "one-liner", &obj, err, sizeof(err));
		free(elf);
		path = "one-liner";
	} else {
		rc = gp_object__open_file(path, &obj, err, sizeof(err));
	}
	if (rc) {
		cli_error("%s", err[0] ? err : "cannot open BPF object");
		return 2;
	}
	size_t nprogs = gp_object__program_count(obj), nmaps = gp_object__map_count(obj);
	if (!nprogs) {
		cli_error("%s: no programs to verify", path);
		gp_object__close(obj);
		return 2;
	}
	struct gp_map *maps = calloc(nmaps + 1, sizeof(*maps));
	uint8_t *atomic_only = calloc(nmaps + 1, 1);
	size_t log_size = verbose ? (64u << 20) : (64u << 10);
	char *log = malloc(log_size);
	if (!maps || !atomic_only || !log) {
		cli_error("out of memory");
		rc = 2;
		goto out;
	}
	for (size_t i = 0; i < nmaps; i++)
		maps[i] = *gp_object__map(obj, i);
	int rejected = 0;
	for (size_t p = 0; p < nprogs; p++) {
		const struct gp_program *prog = gp_object__program(obj, p);
		struct gp_verify_opts o = {0};
		o.attach = prog->attach;
		o.maps = maps;
		o.nmaps = nmaps;
		o.ctx_size = gp_program__ctx_size(prog);
		o.log = log;
		o.log_size = log_size;
		o.log_level = verbose;
		o.map_atomic_only = atomic_only;
		char warnings[2048];
		o.warnings = warnings;
		o.warnings_size = sizeof(warnings);
		int vr = gp_verify(prog->insns, prog->ninsns, &o);
		if (verbose)
			fputs(log, stdout);
		if (!vr) {
			printf("%s (%s): OK, %zu insns, stack %u\n", prog->name, prog->section, prog->ninsns,
			       o.stack_depth);
			fputs(warnings, stdout);
			if (verbose)
				for (size_t m = 0; m < nmaps; m++)
					if (atomic_only[m])
						printf("  map %s: changed only by atomic add (sharded per SM)\n",
						       maps[m].name);
			continue;
		}
		rejected = 1;
		printf("%s (%s): rejected\n", prog->name, prog->section);
		if (!verbose)
			fputs(log_tail(log), stdout);
	}
	rc = rejected;
out:
	free(maps);
	free(atomic_only);
	free(log);
	gp_object__close(obj);
	return rc;
}
