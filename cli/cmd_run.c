/* gpuprobe run: start an application with the gpuprobe shim in place of libcuda.so.1.
 *
 * The shim is reached three ways at once, so that no way of loading the driver escapes it:
 * LD_LIBRARY_PATH (the CUDA runtime dlopens "libcuda.so.1" by name), and an LD_AUDIT module
 * that redirects loads by RUNPATH or absolute path. The real driver is found here, once, and
 * handed to the shim in GPUPROBE_REAL_LIBCUDA. Probe objects and the config file travel in
 * GPUPROBE_PROBES / GPUPROBE_CONFIG (absolute paths, checked readable here).
 */
#include "cli/cli.h"
#include "shim/driver_find.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_usage(FILE *out)
{
	fputs("usage: gpuprobe run [-c CONFIG] [-p PROG.bpf.o]... [--] APP [ARGS]\n\n"
	      "Run APP with the gpuprobe shim as its libcuda.so.1, and the given probes attached.\n"
	      "Exits with APP's exit status (128+N when APP is killed by signal N).\n\n"
	      "options:\n"
	      "  -c, --config FILE   probe configuration file\n"
	      "  -p, --probe FILE    BPF object with probes to attach (repeatable)\n"
	      "  -i, --interval N    print the maps every N seconds too (default: at exit)\n"
	      "  --json FILE         JSON lines into FILE (\"-\": stdout) instead of text on stderr\n"
	      "  -h, --help          this help\n\n"
	      "Probe sections: see include/gpuprobe/gpuprobe.h. bpftime's uprobe/<binary>:cudaLaunchKernel\n"
	      "(and uretprobe/) run at the driver calls the function makes (cuLaunchKernel*); the\n"
	      "<binary> part is ignored (GPUPROBE_LOG=1 says so per program).\n\n"
	      "environment (read by the shim):\n"
	      "  GPUPROBE_REAL_LIBCUDA  the real driver (found automatically when unset)\n"
	      "  GPUPROBE_LOG=1         one line per module loaded and per kernel's first launch\n"
	      "  GPUPROBE_DUMP_DIR=DIR  write the PTX of every module loaded into DIR\n"
	      "  GPUPROBE_ROUNDTRIP=1   load every module from its parsed and printed PTX, no probes\n"
	      "  GPUPROBE_INLINE=0      keep probe calls as calls (default: inlined into each site)\n"
	      "  GPUPROBE_PRECOMPILE=M  check (default: the driver's JIT compiles instrumented PTX at\n"
	      "                         load, a compile error falls back there), link (cubins by the\n"
	      "                         JIT linker, cached; relocatable code), 0 (neither)\n"
	      "  GPUPROBE_CACHE_DIR=DIR cache of compile errors and link-mode cubins (default\n"
	      "                         $XDG_CACHE_HOME/gpuprobe or ~/.cache/gpuprobe); GPUPROBE_CACHE=0: none\n"
	      "  GPUPROBE_MAP_VA=ADDR   map memory address (default 0x600000000000; 0: the driver's\n"
	      "                         choice, then instrumented PTX differs per run: no JIT cache hits)\n", out);
}

/* build/bin/gpuprobe -> build/lib */
static int find_lib_dir(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -EINVAL;
	*slash = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(out, len, "%s/lib", exe) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int readable_elf(const char *path, void *ctx)
{
	(void)ctx;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	char magic[4] = {0};
	size_t n = fread(magic, 1, 4, f);
	fclose(f);
	return n == 4 && !memcmp(magic, "\177ELF", 4) ? 0 : -1;
}

/* VAR=first[:old] */
static int env_prepend(const char *var, const char *first)
{
	const char *old = getenv(var);
	size_t len = strlen(first) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(len);
	if (!v)
		return -1;
	snprintf(v, len, "%s%s%s", first, old && *old ? ":" : "", old && *old ? old : "");
	int rc = setenv(var, v, 1);
	free(v);
	return rc;
}

/* Probe files decide what runs inside the application: like the shim, refuse any that someone
 * else could have changed (DESIGN.md: nothing is opened to others). */
static int absolute_readable(const char *what, const char *path, char *out)
{
	struct stat st;
	if (!realpath(path, out) || access(out, R_OK) || stat(out, &st))
		return cli_error("%s %s: %s", what, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cli_error("%s %s: not a regular file", what, path);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return cli_error("%s %s is group- or world-writable: refusing it (chmod go-w %s)",
				 what, path, path);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"probe", required_argument, NULL, 'p'},
		{"interval", required_argument, NULL, 'i'},
		{"json", required_argument, NULL, 'J'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *config = NULL;
	char *probes = NULL;
	size_t probes_len = 0;
	char abs[PATH_MAX];
	int c;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so APP's own options stay APP's. */
	while ((c = getopt_long(argc, argv, "+c:p:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'p': {
			if (absolute_readable("probe", optarg, abs)) {
				free(probes);
				return 1;
			}
			size_t add = strlen(abs) + 2;
			char *np = realloc(probes, probes_len + add);
			if (!np) {
				free(probes);
				return cli_error("out of memory");
			}
			probes = np;
			probes_len += snprintf(probes + probes_len, add, "%s%s",
					       probes_len ? ":" : "", abs);
			break;
		}
		case 'i':
		case 'J':
			/* read by the shim's output (cli/run_output.h) */
			setenv(c == 'i' ? "GPUPROBE_INTERVAL" : "GPUPROBE_JSON", optarg, 1);
			break;
		case 'h':
			run_usage(stdout);
			free(probes);
			return 0;
		default:
			free(probes);
			if (optopt)
				return cli_error("run: unknown option '-%c' or missing argument "
						 "(see 'gpuprobe run --help')", optopt);
			return cli_error("run: unknown option '%s' (see 'gpuprobe run --help')",
					 argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		free(probes);
		return cli_error("run: no application given (usage: gpuprobe run [-p PROG.bpf.o]... "
				 "-- APP [ARGS])");
	}

	char lib[PATH_MAX], shim[PATH_MAX + 32], audit[PATH_MAX + 32];
	if (find_lib_dir(lib, sizeof(lib))) {
		free(probes);
		return cli_error("run: cannot find gpuprobe's own directory");
	}
	snprintf(shim, sizeof(shim), "%s/libcuda.so.1", lib);
	snprintf(audit, sizeof(audit), "%s/libgpuprobe-audit.so", lib);
	if (access(shim, R_OK) || access(audit, R_OK)) {
		free(probes);
		return cli_error("run: the shim is missing (%s, %s): build the 'shim' and "
				 "'gpuprobe-audit' targets", shim, audit);
	}

	if (config) {
		if (absolute_readable("config", config, abs)) {
			free(probes);
			return 1;
		}
		setenv("GPUPROBE_CONFIG", abs, 1);
	}
	if (probes)
		setenv("GPUPROBE_PROBES", probes, 1);
	free(probes);

	/* Resolve the real driver once here; the shim still searches itself when none is found
	 * (and then prints its own one line saying where it looked). */
	const char *real = getenv("GPUPROBE_REAL_LIBCUDA");
	if (!real || !*real) {
		char found[PATH_MAX], looked[2048];
		if (driver_find(shim, readable_elf, NULL, found, sizeof(found), looked,
				sizeof(looked)) == 0)
			setenv("GPUPROBE_REAL_LIBCUDA", found, 1);
	}
	setenv("GPUPROBE_SHIM", shim, 1);
	if (env_prepend("LD_LIBRARY_PATH", lib) || env_prepend("LD_AUDIT", audit))
		return cli_error("run: cannot set the environment: %s", strerror(errno));

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return cli_error("run: fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "gpuprobe: run: cannot start %s: %s\n", argv[optind],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	/* The terminal's Ctrl-C reaches the app directly (same process group); we outlive it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return cli_error("run: waitpid: %s", strerror(errno));
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
