/* gpuprobe verify [-v] [--json] [--against APP] PROG.bpf.o: verify every program of a BPF object
 * for its attach point and say, for a rejection, which instruction and why (the last lines of the
 * verifier's log). Warns about host sections that name no host API gpuprobe sees, and, given the
 * application (--against), about kernel globs that match none of its kernels.
 * Exit status: 0 when every program verifies (warnings or not), 1 when one is rejected, 2 for bad
 * usage or a file that is not a BPF object. */
#include "cli/cli.h"
#include "cli/file_kind.h"

#include "ebpf/object.h"
#include "ebpf/oneliner.h"
#include "ebpf/verifier.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/kernel_match.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define HELPER_DEVICE 1
#define HELPER_HOST 2
#define HELPER_BOTH 3
struct helper_row {
	const char *name;
	int where;
};
static const struct helper_row helper_rows[] = {
#define HELPER(id, name, ret, a1, a2, a3, a4, a5, where) {#name, where},
#include "ebpf/helpers.def"
#undef HELPER
};
#define NHELPERS (sizeof(helper_rows) / sizeof(helper_rows[0]))

static void print_helpers(FILE *out, int where, const char *label)
{
	size_t col = (size_t)fprintf(out, "  %s:", label);
	for (size_t i = 0; i < NHELPERS; i++) {
		if (!(helper_rows[i].where & where))
			continue;
		size_t w = strlen(helper_rows[i].name) + 5;
		if (col + w > 96) {
			fputs("\n   ", out);
			col = 3;
		}
		col += (size_t)fprintf(out, " bpf_%s", helper_rows[i].name);
	}
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fputs("usage: gpuprobe verify [-v] [--json] [-o FILE] [--against APP] [-p] PROG.bpf.o\n"
	      "       gpuprobe verify [-v] -e PROGRAM\n\n"
	      "Verify every program of a BPF object for the attach point its section names.\n"
	      "Prints 'NAME (SECTION): OK, N insns, stack S' per program, or the rejected\n"
	      "instruction (index, opcode, disassembly) and the reason, as the Linux verifier does.\n"
	      "Warns (exit status unchanged) about a host/entry or host/exit section that names no\n"
	      "host API gpuprobe sees, and with --against about a kernel glob that matches no kernel\n"
	      "of APP.\n\n"
	      "  -p, --probe FILE     the BPF object (the same as giving it without -p)\n"
	      "  --against APP        an application, library, fatbin, cubin or PTX file: warn about\n"
	      "                       sections whose glob matches none of its kernels or functions\n"
	      "  --json               one JSON object instead of text\n"
	      "  -o, --output FILE    write there instead of standard output\n"
	      "  -v, --verbose        print the verifier's full log (every instruction explored)\n"
	      "  -e PROGRAM           verify a one-liner (docs/oneliners.md) instead of a file\n"
	      "  -h, --help           this text\n\n"
	      "Kernel matching: a glob matches a kernel's mangled name, its demangled name without\n"
	      "return type (scale<512>(float*, int)), that without parameters (scale<512>), or its base\n"
	      "name (scale). 'gpuprobe list --match SECTION APP' shows what a section attaches to.\n\n"
	      "Helpers (include/gpuprobe/gpuprobe.h):\n", out);
	print_helpers(out, HELPER_DEVICE, "in GPU probes (gpu/...)");
	print_helpers(out, HELPER_HOST, "in host probes (host/...)");
	fputs("\nExit status: 0 all programs verify, 1 a program is rejected, 2 bad usage or file.\n", out);
}

/* The log's last lines: the C source line when the object has line info ("; ... @ f.c:12"),
 * the instruction and the reason. */
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
	if (p > log && p - log >= 2) {   /* the line before: the source line? */
		const char *q = p - 1;
		while (q > log && q[-1] != '\n')
			q--;
		if (q[0] == ';' && q[1] == ' ')
			p = q;
	}
	return p;
}

/* Warnings about what a program's section names (not the verifier's). */
struct warn {
	FILE *out;
	json_object *arr;    /* --json: strings */
};

static void warn(struct warn *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct warn *w, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->arr)
		json_object_array_add(w->arr, json_object_new_string(line));
	else
		fprintf(w->out, "warning: %s\n", line);
}

static void seen_list(char *buf, size_t cap, const struct cli_names *n)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n->n && o + 40 < cap; i++) {
		char *d = demangle(n->v[i]);
		char a[512], b[512], c[512];
		gp_kernel_names(d, a, b, c, sizeof(a));
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", b[0] ? b : n->v[i]);
		free(d);
		if (o >= cap)
			break;
		if (i + 1 < n->n && o + 40 >= cap)
			snprintf(buf + o, cap - o, ", ... (%zu in all)", n->n);
	}
}

static void check_targets(const struct gp_program *prog, const struct cli_names *kernels,
			  const struct cli_names *funcs, const char *against, struct warn *w)
{
	const char *t = prog->target && *prog->target ? prog->target : "*";
	if (prog->attach == GP_ATTACH_HOST_ENTRY || prog->attach == GP_ATTACH_HOST_EXIT) {
		if (!cli_host_api_known(t))
			warn(w, "%s: '%s' names no host API gpuprobe sees ('gpuprobe list --probes FILE' lists "
			     "them: cuLaunchKernel, cuMemcpy*, cuCtxSynchronize ...); this program never runs",
			     prog->section, t);
		return;
	}
	if (!against || prog->attach == GP_ATTACH_NONE)
		return;
	bool fn = prog->attach == GP_ATTACH_FUNC_ENTRY || prog->attach == GP_ATTACH_FUNC_EXIT;
	const struct cli_names *n = fn ? funcs : kernels;
	for (size_t i = 0; i < n->n; i++)
		if (gp_kernel_match(t, n->v[i]))
			return;
	char seen[600];
	seen_list(seen, sizeof(seen), n);
	warn(w, "%s: no %s of %s matches '%s'; %s seen: %s", prog->section, fn ? "device function" : "kernel",
	     against, t, fn ? "functions" : "kernels", n->n ? seen : "none");
}

int cmd_verify(int argc, char **argv)
{
	int verbose = 0, oneliner = 0, json = 0;
	const char *path = NULL, *against = NULL, *out_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		bool val = i + 1 < argc;
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "-e") && val && !path) {
			path = argv[++i];
			oneliner = 1;
		} else if ((!strcmp(a, "-p") || !strcmp(a, "--probe")) && val && !path) {
			path = argv[++i];
		} else if (!strcmp(a, "--against") && val) {
			against = argv[++i];
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && val) {
			out_path = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return cli_usage_error("verify: unknown option or missing value '%s' (see 'gpuprobe verify --help')", a);
		} else if (path) {
			return cli_usage_error("verify: one object file at a time ('%s' and '%s')", path, a);
		} else {
			path = a;
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
		if ((rc = cli_expect_kind("verify", path, CLI_READS(CLI_FILE_BPF), "a BPF object (clang -target bpf)", NULL)))
			return rc;
		rc = gp_object__open_file(path, &obj, err, sizeof(err));
	}
	if (rc) {
		cli_error("%s", err[0] ? err : "cannot open BPF object");
		return 2;
	}
	struct cli_names kernels = {0}, funcs = {0};
	if (against && (rc = cli_gpu_names(against, &kernels, &funcs))) {
		gp_object__close(obj);
		return rc;
	}
	size_t nprogs = gp_object__program_count(obj), nmaps = gp_object__map_count(obj);
	if (!nprogs) {
		cli_error("%s: no programs to verify", path);
		gp_object__close(obj);
		return 2;
	}
	FILE *out = out_path ? fopen(out_path, "w") : stdout;
	if (!out) {
		cli_error("verify: cannot create %s: %m", out_path);
		gp_object__close(obj);
		cli_names_free(&kernels);
		cli_names_free(&funcs);
		return 1;
	}
	struct gp_map *maps = calloc(nmaps + 1, sizeof(*maps));
	uint8_t *atomic_only = calloc(nmaps + 1, 1);
	size_t log_size = verbose ? (64u << 20) : (64u << 10);
	char *log = malloc(log_size);
	json_object *root = json ? json_object_new_object() : NULL, *jprogs = NULL;
	if (root) {
		json_object_object_add(root, "file", json_object_new_string(path));
		if (against)
			json_object_object_add(root, "against", json_object_new_string(against));
		json_object_object_add(root, "programs", jprogs = json_object_new_array());
	}
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
		char warnings[2048] = "";
		o.warnings = warnings;
		o.warnings_size = sizeof(warnings);
		log[0] = 0;
		struct gp_verify_srcinfo *src = oneliner ? NULL : gp_verify_srcinfo_load(path, prog);
		o.src = src;   /* C source lines in the log (BTF line info) */
		int vr = gp_verify(prog->insns, prog->ninsns, &o);
		gp_verify_srcinfo_free(src);
		json_object *jp = NULL, *jw = NULL;
		if (root) {
			jp = json_object_new_object();
			json_object_object_add(jp, "name", json_object_new_string(prog->name));
			json_object_object_add(jp, "section", json_object_new_string(prog->section));
			json_object_object_add(jp, "ok", json_object_new_boolean(!vr));
			json_object_object_add(jp, "insns", json_object_new_int64((int64_t)prog->ninsns));
			json_object_object_add(jp, "warnings", jw = json_object_new_array());
			json_object_array_add(jprogs, jp);
		}
		struct warn w = {.out = out, .arr = jw};
		if (verbose && !root)
			fputs(log, out);
		if (!vr) {
			if (root) {
				json_object_object_add(jp, "stack", json_object_new_int64(o.stack_depth));
				for (char *s = warnings, *nl; *s; s = nl + 1) {
					if (!(nl = strchr(s, '\n')))
						nl = s + strlen(s) - 1;
					char *line = strndup(s, (size_t)(nl - s + (*nl != '\n')));
					char *t = line;
					while (*t == ' ')
						t++;
					if (!strncmp(t, "warning: ", 9))
						t += 9;
					json_object_array_add(jw, json_object_new_string(t));
					free(line);
				}
			} else {
				fprintf(out, "%s (%s): OK, %zu insns, stack %u\n", prog->name, prog->section, prog->ninsns,
					o.stack_depth);
				fputs(warnings, out);
			}
			check_targets(prog, &kernels, &funcs, against, &w);
			if (verbose && !root)
				for (size_t m = 0; m < nmaps; m++)
					if (atomic_only[m])
						fprintf(out, "  map %s: changed only by atomic add (sharded per SM)\n",
							maps[m].name);
			if (verbose && !root && o.additive == 2)
				fprintf(out, "  additive: yes, after a first run (the sites of a basic block "
					     "with equal context bytes may be counted by a run of weight 1 and "
					     "one with its adds multiplied: it inserts into a hash map)\n");
			else if (verbose && !root && o.additive)
				fprintf(out, "  additive: yes (the sites of a basic block with equal context "
					     "bytes may be counted by one run with its adds multiplied)\n");
			else if (verbose && !root)
				fprintf(out, "  additive: no (%s)\n", o.additive_why);
			continue;
		}
		rejected = 1;
		if (root) {
			char *tail = strdup(log_tail(log));
			if (tail) {
				size_t n = strlen(tail);
				while (n && tail[n - 1] == '\n')
					tail[--n] = 0;
				json_object_object_add(jp, "error", json_object_new_string(tail));
				free(tail);
			}
		} else {
			fprintf(out, "%s (%s): rejected\n", prog->name, prog->section);
			if (!verbose)
				fputs(log_tail(log), out);
		}
	}
	rc = rejected;
out:
	if (root) {
		json_object_object_add(root, "ok", json_object_new_boolean(!rc));
		fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	}
	if ((out_path ? fclose(out) : fflush(out)) && !rc)
		rc = cli_error("verify: write failed%s%s", out_path ? " on " : "", out_path ? out_path : "");
	free(maps);
	free(atomic_only);
	free(log);
	cli_names_free(&kernels);
	cli_names_free(&funcs);
	gp_object__close(obj);
	return rc;
}
