/* Built-in tools, the kernel filter and the launch window of `gpuprobe run` (run_tools.h), and
 * `gpuprobe tools`. A tool is an ordinary probe object: include/gpuprobe/tools/NAME.bpf.c, built
 * with the shim into lib/gpuprobe-tools/NAME.bpf.o (cli/CMakeLists.txt); -t NAME is -p of it. */
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/run_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One line each; the test (tests/tools) checks the list against include/gpuprobe/tools/ and
 * docs/tools.md documents each. An alias (of set) is another name of a tool, kept for the name
 * it had before. */
static const struct tool {
	const char *name, *what, *of;
} tools[] = {
	{"bbcount", "basic blocks and PTX instructions executed per kernel, per thread (gpu/bb)", NULL},
	{"blocks", "thread blocks as spans per SM, for run --trace (gpu/block_begin, block_end)", NULL},
	{"divergence", "active lanes per warp at each basic block: SIMD efficiency per kernel (gpu/bb)", NULL},
	{"instrcount", NULL, "bbcount"},
	{"kcount", "launches, blocks and threads per kernel (gpu/entry, gpu/block_begin)", NULL},
	{"kernels", NULL, "kcount"},
	{"ktime", "GPU time per kernel and a histogram of launch durations (gpu/block_begin, block_end)", NULL},
	{"launches", "launches per kernel and driver function, grid and block sizes (host/entry/cuLaunch*)", NULL},
	{"memcount", "loads, stores and atomics executed per kernel, every state space (gpu/mem)", NULL},
	{"memtrace", "every global access as a ring record: address, size, direction, kernel (gpu/mem)", NULL},
	{"opcodes", "PTX instructions executed per kernel by class: int, fp32, load, control... (gpu/bb)", NULL},
	{"warptrace", "every global access of a warp as one lossless record: base + stride or each lane's address (gpu/mem)", NULL},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

/* build/bin/gpuprobe -> build/lib/gpuprobe-tools */
static int tools_dir(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return -1;
		*slash = 0;
	}
	return (size_t)snprintf(out, len, "%s/lib/gpuprobe-tools", exe) < len ? 0 : -1;
}

/* The tool of name, an alias resolved to the tool it names. */
static const struct tool *find_tool(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return tools[i].of ? find_tool(tools[i].of) : &tools[i];
	return NULL;
}

static void names(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NTOOLS && o < len; i++)
		if (!tools[i].of)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", tools[i].name);
}

char *run_tool_path(const char *name)
{
	char dir[PATH_MAX], list[256], *path = NULL;
	names(list, sizeof(list));
	const struct tool *t = find_tool(name);
	if (!t) {
		cli_error("run: -t %s: no such tool (tools: %s; see 'gpuprobe tools')", name, list);
		return NULL;
	}
	if (tools_dir(dir, sizeof(dir)) || asprintf(&path, "%s/%s.bpf.o", dir, t->name) < 0) {
		cli_error("run: -t %s: cannot find gpuprobe's own directory", name);
		return NULL;
	}
	if (access(path, R_OK)) {
		cli_error("run: -t %s: %s is missing: build the 'gpuprobe_tools' target (it needs clang)",
			  name, path);
		free(path);
		return NULL;
	}
	return path;
}

int cmd_tools(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: gpuprobe tools\n\n"
		     "List the built-in tools: probes shipped with gpuprobe, attached with\n"
		     "'gpuprobe run -t TOOL [-k KERNEL] -- APP'. Their sources are in\n"
		     "include/gpuprobe/tools/ (a start for probes of your own); docs/tools.md\n"
		     "shows what each prints.");
		return 0;
	}
	if (argc > 1) {
		cli_error("tools: unexpected argument '%s' (see 'gpuprobe tools --help')", argv[1]);
		return RUN_EXIT_USAGE;
	}
	char dir[PATH_MAX];
	int have_dir = !tools_dir(dir, sizeof(dir));
	for (size_t i = 0; i < NTOOLS; i++) {
		if (tools[i].of) {
			printf("%-11s the same as %s\n", tools[i].name, tools[i].of);
			continue;
		}
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/%s.bpf.o", have_dir ? dir : ".", tools[i].name);
		printf("%-11s %s%s\n", tools[i].name, tools[i].what,
		       have_dir && !access(path, R_OK) ? "" : " (not built)");
	}
	return 0;
}

/* ---- -k and the launch window ----------------------------------------------------------- */

int run_filter_kernel(struct run_filter *f, const char *glob)
{
	if (!*glob) {
		cli_error("run: -k needs a kernel name or glob (see 'gpuprobe run --help')");
		return RUN_EXIT_USAGE;
	}
	for (const char *p = glob; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			cli_error("run: -k %s: a kernel glob has no control characters", glob);
			return RUN_EXIT_USAGE;
		}
	const char **k = realloc(f->kernels, (f->nkernels + 1) * sizeof(*k));
	if (!k)
		return cli_error("out of memory"), RUN_EXIT_USAGE;
	f->kernels = k;
	f->kernels[f->nkernels++] = glob;
	return 0;
}

int run_filter_launch(struct run_filter *f, const char *opt, const char *n, const char **slot)
{
	(void)f;
	char *end;
	errno = 0;
	unsigned long long v = *n >= '0' && *n <= '9' ? strtoull(n, &end, 10) : 0;
	int count = !strcmp(opt, "--launch-count");
	if (*n < '0' || *n > '9' || *end || errno || v > UINT32_MAX || (count && !v)) {
		cli_error("run: %s %s: expected a whole number from %d to 4294967295", opt, n, count);
		return RUN_EXIT_USAGE;
	}
	*slot = n;
	return 0;
}

/* run.h: for the -k configuration and -e's objects. */
int run_private_dir(char *out, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (rt && *rt == '/')
		snprintf(out, len, "%s/gpuprobe", rt);
	else
		snprintf(out, len, "/tmp/gpuprobe-%u", (unsigned)getuid());
	if (mkdir(out, 0700) && errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* YAML single-quoted scalar: ' doubled. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

int run_filter_config(struct run_filter *f, const char **config)
{
	if (!f->nkernels)
		return 0;
	if (*config) {
		cli_error("run: -k with a configuration file (%s): put the kernels in its 'kernels: "
			  "include:' list instead", *config);
		return RUN_EXIT_USAGE;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return cli_error("out of memory"), RUN_EXIT_USAGE;
	fputs("# written by gpuprobe run for -k: only these kernels get probes\nkernels:\n  include: [", m);
	for (size_t i = 0; i < f->nkernels; i++) {
		if (i)
			fputs(", ", m);
		put_quoted(m, f->kernels[i]);
		/* as a section's glob matches (ptx-frontend/instrument.c), the demangled name without
		 * its parameter list too: -k vectorAdd selects vectorAdd(float const*, ...) */
		if (!strchr(f->kernels[i], '(')) {
			char *with = NULL;
			if (asprintf(&with, "%s(*", f->kernels[i]) < 0)
				return fclose(m), free(text), cli_error("out of memory"), RUN_EXIT_USAGE;
			fputs(", ", m);
			put_quoted(m, with);
			free(with);
		}
	}
	fputs("]\n", m);
	fclose(m);
	/* Named by its content: the same -k gives the same file, so the shim's cache of
	 * instrumented code (keyed by the configuration's path and bytes) hits from run to run. */
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)text[i]) * 1099511628211ull;
	char dir[PATH_MAX - 64], tmp[PATH_MAX];
	int rc = run_private_dir(dir, sizeof(dir));
	if (rc) {
		cli_error("run: -k: no private folder for its configuration (%s): %s", dir, strerror(-rc));
		free(text);
		return RUN_EXIT_USAGE;
	}
	snprintf(tmp, sizeof(tmp), "%s/kernels.XXXXXX", dir);
	int fd = mkstemp(tmp);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fchmod(fd, 0600) || close(fd) ||
	    asprintf(&f->config, "%s/kernels-%016llx.yaml", dir, (unsigned long long)h) < 0 ||
	    rename(tmp, f->config)) {
		cli_error("run: -k: cannot write its configuration in %s: %s", dir, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		free(text);
		return RUN_EXIT_USAGE;
	}
	free(text);
	*config = f->config;
	return 0;
}

int run_filter_env(const struct run_filter *f)
{
	/* the shim counts launches per kernel where it picks the function (shim/launch_window.c) */
	if (f->launch_skip && setenv("GPUPROBE_LAUNCH_SKIP", f->launch_skip, 1))
		return -1;
	if (f->launch_count && setenv("GPUPROBE_LAUNCH_COUNT", f->launch_count, 1))
		return -1;
	return 0;
}

void run_filter_free(struct run_filter *f)
{
	free(f->kernels);
	free(f->config);
}
