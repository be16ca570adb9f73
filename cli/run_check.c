/* Everything `gpuprobe run` checks before the application starts (see run.h), as bpftrace and
 * bpftool load and verify everything before a target runs: the configuration through the same
 * parser and limits as the shim, every probe object opened and every program verified the way
 * the shim will. The shim checks again and only ever skips (docs/architecture.md: never break the
 * application); here a problem is the user's to fix, so it stops the run, exit 2. */
#include "cli/run.h"
#include "cli/cli.h"

#include "ebpf/object.h"
#include "ebpf/verifier.h"
#include "maps/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One line on stderr, then the exit status for bad input. */
#define FAIL(...) (cli_error(__VA_ARGS__), RUN_EXIT_USAGE)

#define BUILD_HINT "a probe is built with clang -target bpf -O2 -g -c PROG.bpf.c"

/* What a file that is not ELF is, for the one line that refuses it. NULL: let the loader say. */
static const char *not_elf_kind(const char *path)
{
	unsigned char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return n == 0 ? "an empty file" : NULL;
	if (n >= 4 && !memcmp(buf, "\177ELF", 4))
		return NULL;
	uint32_t magic = n >= 4 ? (uint32_t)buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24 : 0;
	if (magic == 0xBA55ED50u || magic == 0x466243B1u)
		return "a CUDA fatbin";
	if (memmem(buf, (size_t)n, ".version", 8) && memmem(buf, (size_t)n, ".target", 7))
		return "PTX, the code probes go into";
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0 || (buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r'))
			return NULL;
	return "a text file";
}

/* The rejection's reason (the log's last line), where (the line before) and, where the object
 * has BTF line info, the C source line before that ("; CODE @ FILE:LINE", as verify prints it). */
static void log_reason(char *log, const char **why, const char **where, const char **source)
{
	size_t n = strlen(log);
	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	char *nl = strrchr(log, '\n');
	*why = nl ? nl + 1 : log;
	*where = *source = NULL;
	if (nl) {
		*nl = 0;
		char *prev = strrchr(log, '\n');
		*where = prev ? prev + 1 : log;
		if (prev) {
			*prev = 0;
			char *before = strrchr(log, '\n');
			before = before ? before + 1 : log;
			if (before[0] == ';' && before[1] == ' ' && strstr(before, " @ "))
				*source = before + 2;
		}
	}
}

static int verify_object(const char *path, const struct gp_object *obj)
{
	size_t nmaps = gp_object__map_count(obj), nprogs = gp_object__program_count(obj);
	struct gp_map *maps = calloc(nmaps + 1, sizeof(*maps));
	uint8_t *atomic_only = calloc(nmaps + 1, 1);
	size_t log_size = 64u << 10;
	char *log = malloc(log_size);
	int rc = 0;
	if (!maps || !atomic_only || !log) {
		cli_error("out of memory");
		rc = RUN_EXIT_USAGE;
	}
	for (size_t i = 0; !rc && i < nmaps; i++)
		maps[i] = *gp_object__map(obj, i);
	size_t attached = 0;
	for (size_t p = 0; !rc && p < nprogs; p++) {
		const struct gp_program *prog = gp_object__program(obj, p);
		if (prog->attach == GP_ATTACH_NONE)
			continue;
		attached++;
		struct gp_verify_srcinfo *src = gp_verify_srcinfo_load(path, prog);   /* NULL: none */
		struct gp_verify_opts o = {.attach = prog->attach, .maps = maps, .nmaps = nmaps,
					   .ctx_size = gp_program__ctx_size(prog), .log = log,
					   .log_size = log_size, .map_atomic_only = atomic_only, .src = src};
		log[0] = 0;
		int vr = gp_verify(prog->insns, prog->ninsns, &o);
		gp_verify_srcinfo_free(src);
		if (!vr)
			continue;
		const char *why, *where, *source;
		log_reason(log, &why, &where, &source);
		cli_error("%s: program %s (%s) is rejected by the verifier: %s%s%s%s%s (gpuprobe verify "
			  "-v %s shows every step)", path, prog->name, prog->section, why,
			  where ? "; at insn " : "", where ? where : "", source ? ", source: " : "",
			  source ? source : "", path);
		rc = RUN_EXIT_USAGE;
	}
	if (!rc && !attached) {
		cli_error("%s: no program has an attach point (SEC(\"gpu/entry/KERNEL\"), ...): nothing "
			  "to attach", path);
		rc = RUN_EXIT_USAGE;
	}
	free(maps);
	free(atomic_only);
	free(log);
	return rc;
}

/* One probe object, checked as the shim will take it. where: "CONFIG:LINE:COL: " when the
 * configuration names it, else "". */
static int check_probe(const char *where, const char *path)
{
	char err[1024];
	int rc = gp_config__check_file(path, "a probe object", err, sizeof(err));
	if (rc == -ENOENT)
		return FAIL("%sprobe object %s does not exist", where, path);
	if (rc)
		return FAIL("%s%s", where, err);
	const char *kind = not_elf_kind(path);
	if (kind)
		return FAIL("%s%s: not a BPF object but %s; " BUILD_HINT, where, path, kind);
	struct gp_object *obj = NULL;
	err[0] = 0;
	if (gp_object__open_file(path, &obj, err, sizeof(err)))
		return FAIL("%s%s", where, err[0] ? err : "cannot open the BPF object");
	rc = verify_object(path, obj);
	gp_object__close(obj);
	return rc;
}

/* The folder a JSON output file is to be created in must be there: the application would
 * otherwise run to its end and its output be lost. where: "CONFIG:LINE:COL: output.json " or
 * "run: --json ". */
static int check_output(const char *where, const char *path)
{
	if (!path || !strcmp(path, "-"))
		return 0;
	char *dir = strdup(path);
	if (!dir)
		return FAIL("out of memory");
	char *slash = strrchr(dir, '/');
	const char *d = slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".";
	struct stat st;
	int rc = 0;
	if (stat(d, &st) || !S_ISDIR(st.st_mode))
		rc = FAIL("%s%s: folder %s does not exist", where, path, d);
	free(dir);
	return rc;
}

/* -p paths travel to the shim in one ':'-separated variable. */
static int add_probe(struct run_checked *out, size_t *len, const char *path)
{
	char *abs = realpath(path, NULL);
	if (!abs)
		return FAIL("%s: %s", path, strerror(errno));
	if (strchr(abs, ':')) {
		cli_error("%s: a probe path with ':' cannot be passed to the application (the list is "
			  "':'-separated): rename it or name it in the configuration", abs);
		free(abs);
		return RUN_EXIT_USAGE;
	}
	size_t add = strlen(abs) + 2;
	char *np = realloc(out->probes, *len + add);
	if (!np) {
		free(abs);
		return FAIL("out of memory");
	}
	out->probes = np;
	*len += (size_t)snprintf(np + *len, add, "%s%s", *len ? ":" : "", abs);
	free(abs);
	return 0;
}

int run_check(const char *config, const char *const *probes, size_t nprobes, size_t first_env,
	      const char *json, struct run_checked *out)
{
	memset(out, 0, sizeof(*out));
	struct gp_config cfg = {0};
	char err[1024];
	int rc = 0;
	if (config) {
		if (gp_config__load(config, &cfg, err, sizeof(err))) {
			cli_error("%s", err);
			return RUN_EXIT_USAGE;
		}
		if (!(out->config = realpath(config, NULL)))
			rc = FAIL("%s: %s", config, strerror(errno));
	}
	if (!rc && cfg.nprobes + nprobes > GP_CONFIG_MAX_PROBES)
		rc = FAIL("run: %zu probe objects (the configuration's and -p's): at most %u",
			       cfg.nprobes + nprobes, GP_CONFIG_MAX_PROBES);
	for (size_t i = 0; !rc && i < cfg.nprobes; i++) {
		char where[PATH_MAX + 64];
		snprintf(where, sizeof(where), "%s:%u:%u: ", config, cfg.probes[i].line, cfg.probes[i].col);
		rc = check_probe(where, cfg.probes[i].path);
	}
	if (!rc && cfg.json_path && !json) {
		char where[PATH_MAX + 64];
		snprintf(where, sizeof(where), "%s:%u:%u: output.json ", config, cfg.json_line, cfg.json_col);
		rc = check_output(where, cfg.json_path);
	}
	if (!rc)
		rc = check_output("run: --json ", json);
	size_t len = 0;
	for (size_t i = 0; !rc && i < nprobes; i++)
		if (!(rc = check_probe(i >= first_env ? "GPUPROBE_PROBES: " : "", probes[i])))
			rc = add_probe(out, &len, probes[i]);
	gp_config__free(&cfg);
	if (rc)
		run_checked_free(out);
	return rc;
}

void run_checked_free(struct run_checked *c)
{
	free(c->config);
	free(c->probes);
	memset(c, 0, sizeof(*c));
}
