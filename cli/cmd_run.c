/* gpuprobe run: start an application with the gpuprobe shim in place of libcuda.so.1.
 *
 * Its own arguments, the configuration and every probe object are checked before the
 * application starts (run_check.c): a mistake is one line and exit 2, never an application run
 * without the probes the user asked for. The shim is reached two ways at once, so that no way
 * of loading the driver escapes it: LD_LIBRARY_PATH (the CUDA runtime dlopens "libcuda.so.1" by
 * name), and an LD_AUDIT module that redirects loads by RUNPATH or absolute path. The real
 * driver is found here, with the shim's own test (shim/driver_find.h), and handed to the shim in
 * GPUPROBE_REAL_LIBCUDA. Probe objects and the config file travel in GPUPROBE_PROBES /
 * GPUPROBE_CONFIG (absolute paths). The application runs under run_child.c.
 */
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/run_oneliner.h"
#include "cli/run_tools.h"
#include "cli/trace_run.h"
#include "common/env.h"
#include "maps/config.h"
#include "maps/gpt.h"
#include "shim/driver_find.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *out)
{
	fputs("usage: gpuprobe run [-c CONFIG] [-p PROG.bpf.o]... [-t TOOL]... [-k KERNEL]... [--] APP [ARGS]\n\n"
	      "Run APP with the gpuprobe shim as its libcuda.so.1, and the given probes attached.\n"
	      "Everything is checked before APP starts: the options, the configuration, and every\n"
	      "probe object (opened and verified); a problem is one line and exit status 2.\n"
	      "SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to gpuprobe are passed on to APP's process\n"
	      "group. Exits with APP's exit status (128+N when APP is killed by signal N; 127: APP\n"
	      "not found, 126: it cannot be run).\n\n"
	      "options:\n"
	      "  -c, --config FILE   probe configuration file (default: $GPUPROBE_CONFIG)\n"
	      "  -p, --probe FILE    BPF object with probes to attach (repeatable; $GPUPROBE_PROBES,\n"
	      "                      ':'-separated, are attached too)\n"
	      "  -t, --tool TOOL     a built-in tool's probes (repeatable; 'gpuprobe tools' lists them)\n"
	      "  -e PROGRAM          a one-liner, compiled and verified like -p (docs/oneliners.md):\n"
	      "                      -e 'gpu/entry/* { @[kernel] = count(); }'\n"
	      "  --dry-run           check everything, print what -e compiles to; APP is not started\n"
	      "  -k, --kernel GLOB   probes only in kernels whose name matches (repeatable: any of\n"
	      "                      them): mangled, demangled, or demangled without parameters\n"
	      "  --launch-skip N     instrument launches from the Nth of each kernel on (from 0)\n"
	      "  --launch-count M    ... and only M of them; the others run the original\n"
	      "                      (counted per kernel; not with GPUPROBE_LAZY=0)\n"
	      "  -i, --interval N    print the maps every N seconds too, 0 to 86400 (default: at exit)\n"
	      "  --json FILE         JSON lines into FILE (\"-\": stdout) instead of text on stderr\n"
	      "  --output FILE.gpt   ring maps' records into FILE.gpt, raw and in bulk, at the rate the\n"
	      "                      GPU makes them (other processes of the run: FILE.gpt.PID);\n"
	      "                      'gpuprobe decode FILE.gpt' prints them with their BTF types\n"
	      "  --trace FILE        a timeline: FILE.pftrace (Perfetto) or FILE.json (Chrome): a span\n"
	      "                      per driver API call per thread, kernels per GPU, blocks per SM\n"
	      "                      (with -t blocks), ring records; the maps go into it unless\n"
	      "                      --json is given ('gpuprobe report FILE' makes an HTML report)\n"
	      "  --trace-api GLOB    only the driver calls GLOB names in the trace (repeatable;\n"
	      "                      cuMemcpy* or cuMemAlloc; launches are always traced)\n"
	      "  --metrics [ADDR:]PORT  serve every map as OpenMetrics text over HTTP while APP\n"
	      "                      runs (http://ADDR:PORT/metrics; ADDR 127.0.0.1 unless given)\n"
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
	      "  GPUPROBE_AGGREGATE=0   a probe call per memory access (default: additive probes count\n"
	      "                         a basic block's like accesses with one weighted call)\n"
	      "  GPUPROBE_DEFER=0       additive memory and basic-block probes called at their sites\n"
	      "                         (default: per-thread counts in each kernel, added where the\n"
	      "                         thread leaves)\n"
	      "  GPUPROBE_SHARED_CHECK=1  own driver: a shared-memory access outside the block fails the\n"
	      "                         launch (CUDA_ERROR_ILLEGAL_ADDRESS) instead of reaching other memory\n"
	      "  GPUPROBE_PRECOMPILE=M  check (default: the driver's JIT compiles instrumented PTX at\n"
	      "                         load, a compile error falls back there), link (cubins by the\n"
	      "                         JIT linker, cached; relocatable code), 0 (neither)\n"
	      "  GPUPROBE_CACHE_DIR=DIR cache of compile errors and link-mode cubins (default\n"
	      "                         $XDG_CACHE_HOME/gpuprobe or ~/.cache/gpuprobe); GPUPROBE_CACHE=0: none\n"
	      "  GPUPROBE_MAP_VA=ADDR   map memory address (default 0x600000000000; 0: the driver's\n"
	      "                         choice, then instrumented PTX differs per run: no JIT cache hits)\n"
	      "\nKernels compiled at run time: APP gets TRITON_PTXAS_PATH (and _BLACKWELL_PATH) set to\n"
	      "gpuprobe-ptxas unless set already, a ptxas that is gpuprobe-ptxas first on PATH (XLA),\n"
	      "NVCC (CuPy's nvcc) set to gpuprobe-nvcc unless set already, and lib/'s libnvrtc.so.13\n"
	      "and libnvJitLink.so.13: each records the PTX of the cubins it makes, which the shim\n"
	      "instruments when those cubins load (GPUPROBE_REAL_PTXAS, GPUPROBE_REAL_NVCC,\n"
	      "GPUPROBE_REAL_NVRTC, GPUPROBE_REAL_NVJITLINK: the real tools; docs/guide.md)\n", out);
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

struct driver_try {
	const char *shim;
	char why[4096 + 128];      /* the last candidate's reason */
};

/* The shim's test of a candidate (driver_check), here without keeping it loaded. */
static int try_driver(const char *path, void *ctx)
{
	struct driver_try *t = ctx;
	void *h = NULL;
	if (driver_check(path, t->shim, NULL, &h, t->why, sizeof(t->why)))
		return -1;
	dlclose(h);
	return 0;
}

/* The real driver for the shim, found and tested as the shim would; pinned so that the
 * application's processes need not search. A GPUPROBE_REAL_LIBCUDA that fails the test is the
 * user's mistake: said here, before the application runs without a driver. No driver at all is
 * not an error here (a machine without NVIDIA's driver: the shim says so and the backends may
 * serve). */
static int pin_driver(const char *shim)
{
	char found[PATH_MAX], looked[2048];
	struct driver_try t = {.shim = shim};
	const char *env = gp_env_str(GP_VAR_REAL_LIBCUDA);   /* common/env.c */
	if (!driver_find(shim, try_driver, &t, found, sizeof(found), looked, sizeof(looked)))
		return setenv("GPUPROBE_REAL_LIBCUDA", found, 1) ? RUN_EXIT_USAGE : 0;
	if (env && *env) {
		cli_error("run: no usable driver: %s%s%s", looked, t.why[0] ? ": " : "", t.why);
		return RUN_EXIT_USAGE;
	}
	return 0;
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cli_error("run: %s (see 'gpuprobe run --help')", line);
	return RUN_EXIT_USAGE;
}

struct run_args {
	const char *config;
	const char **probes;       /* -p, then $GPUPROBE_PROBES */
	size_t nprobes;
	size_t first_env;          /* probes[first_env..] are $GPUPROBE_PROBES' */
	char *env_probes;          /* the copy $GPUPROBE_PROBES' entries point into */
	const char *interval, *json;
	const char *metrics;       /* --metrics [ADDR:]PORT */
	struct run_filter filter;  /* -k, --launch-skip, --launch-count (run_tools.c) */
	char **tools;              /* -t objects' paths, freed at the end */
	size_t ntools;
	const char *oneliner;      /* -e */
	char *oneliner_path;       /* its object (run_oneliner.c) */
	int dry_run;
	const char *trace;         /* --trace FILE */
	char *output;              /* --output FILE.gpt, made absolute (the app may chdir) */
	char *trace_api;           /* --trace-api globs, comma-separated */
};


static int add_probe_arg(struct run_args *a, const char *path)
{
	if (!*path)
		return bad_usage("-p needs a file name");
	if (a->nprobes >= GP_CONFIG_MAX_PROBES) {
		cli_error("run: more than %u probe objects", GP_CONFIG_MAX_PROBES);
		return RUN_EXIT_USAGE;
	}
	if (!a->probes && !(a->probes = calloc(GP_CONFIG_MAX_PROBES, sizeof(*a->probes))))
		return cli_error("out of memory"), RUN_EXIT_USAGE;
	a->probes[a->nprobes++] = path;
	return 0;
}

/* -t NAME: the tool's object, as a -p. */
static int add_tool_arg(struct run_args *a, const char *name)
{
	char *path = run_tool_path(name);
	if (!path)
		return RUN_EXIT_USAGE;
	char **t = realloc(a->tools, (a->ntools + 1) * sizeof(*t));
	if (!t) {
		free(path);
		return cli_error("out of memory"), RUN_EXIT_USAGE;
	}
	a->tools = t;
	a->tools[a->ntools++] = path;
	return add_probe_arg(a, path);
}

/* -i: what the shim's output accepts (GPUPROBE_INTERVAL), said here rather than ignored there. */
static int check_interval(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
	if (*s < '0' || *s > '9' || *end || errno || v > 86400) {
		cli_error("run: -i %s: the interval must be a whole number of seconds from 0 to 86400", s);
		return RUN_EXIT_USAGE;
	}
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct run_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"probe", required_argument, NULL, 'p'},
		{"interval", required_argument, NULL, 'i'},
		{"json", required_argument, NULL, 'J'},
		{"tool", required_argument, NULL, 't'},
		{"kernel", required_argument, NULL, 'k'},
		{"launch-skip", required_argument, NULL, 'S'},
		{"launch-count", required_argument, NULL, 'C'},
		{"dry-run", no_argument, NULL, 'D'},
		{"trace", required_argument, NULL, 'T'},
		{"trace-api", required_argument, NULL, 'A'},
		{"metrics", required_argument, NULL, 'M'},
		{"output", required_argument, NULL, 'O'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c, rc;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so APP's own options stay APP's; ':': a missing
	 * argument is told apart from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:c:p:i:t:k:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (a->config)
				return bad_usage("-c given twice (one configuration file)");
			if (!*optarg)
				return bad_usage("-c needs a file name");
			a->config = optarg;
			break;
		case 'p':
			if ((rc = add_probe_arg(a, optarg)))
				return rc;
			break;
		case 'i':
			if ((rc = check_interval(optarg)))
				return rc;
			a->interval = optarg;
			break;
		case 'J':
			if (!*optarg)
				return bad_usage("--json needs a file name or -");
			a->json = optarg;
			break;
		case 't':
			if ((rc = add_tool_arg(a, optarg)))
				return rc;
			break;
		case 'k':
			if ((rc = run_filter_kernel(&a->filter, optarg)))
				return rc;
			break;
		case 'S':
			if ((rc = run_filter_launch(&a->filter, "--launch-skip", optarg, &a->filter.launch_skip)))
				return rc;
			break;
		case 'C':
			if ((rc = run_filter_launch(&a->filter, "--launch-count", optarg, &a->filter.launch_count)))
				return rc;
			break;
		case 'e':
			if (a->oneliner)
				return bad_usage("-e given twice (one program may hold several probes)");
			a->oneliner = optarg;
			if (!(a->oneliner_path = run_oneliner_file(optarg)))
				return RUN_EXIT_USAGE;
			if ((rc = add_probe_arg(a, a->oneliner_path)))
				return rc;
			break;
		case 'D':
			a->dry_run = 1;
			break;
		case 'T':
			if (!*optarg)
				return bad_usage("--trace needs a file name");
			if ((rc = trace_run_check(optarg)))
				return rc;
			a->trace = optarg;
			break;
		case 'A': {
			if (!*optarg || strchr(optarg, ','))
				return bad_usage("--trace-api needs a glob (one per option, no commas)");
			size_t old = a->trace_api ? strlen(a->trace_api) : 0;
			char *g = realloc(a->trace_api, old + strlen(optarg) + 2);
			if (!g)
				return cli_error("out of memory"), RUN_EXIT_USAGE;
			snprintf(g + old, strlen(optarg) + 2, "%s%s", old ? "," : "", optarg);
			a->trace_api = g;
			break;
		}
		case 'M':
			if ((rc = run_metrics_check(optarg)))
				return rc;
			a->metrics = optarg;
			break;
		case 'O': {
			size_t l = strlen(optarg);
			if (a->output)
				return bad_usage("--output given twice (one capture file)");
			if (l < 5 || strcmp(optarg + l - 4, ".gpt"))
				return bad_usage("--output %s: a capture's name ends in .gpt", optarg);
			char cwd[PATH_MAX];
			if (optarg[0] != '/' && !getcwd(cwd, sizeof(cwd)))
				return cli_error("run: --output: %s", strerror(errno)), RUN_EXIT_USAGE;
			if (asprintf(&a->output, "%s%s%s", optarg[0] == '/' ? "" : cwd,
				     optarg[0] == '/' ? "" : "/", optarg) < 0)
				return cli_error("out of memory"), RUN_EXIT_USAGE;
			break;
		}
		case 'h':
			run_usage(stdout);
			return 0;
		case ':':
			return bad_usage("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt) {
				char opt[3] = {'-', (char)optopt, 0};
				return bad_usage("unknown option '%s'", opt);
			}
			return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc && !a->dry_run) {
		cli_error("run: no application given (usage: gpuprobe run [-c CONFIG] [-p PROG.bpf.o]... "
			  "-- APP [ARGS])");
		return RUN_EXIT_USAGE;
	}
	/* What the environment already names is checked like the command line: the shim would
	 * read it all the same. */
	const char *env = gp_env_str(GP_VAR_CONFIG);   /* common/env.c */
	if (!a->config && env && *env)
		a->config = env;
	env = gp_env_str(GP_VAR_JSON);
	if (!a->json && env && *env)
		a->json = env;
	env = gp_env_str(GP_VAR_PROBES);
	a->first_env = a->nprobes;
	if (env && *env) {
		if (!(a->env_probes = strdup(env)))
			return cli_error("out of memory"), RUN_EXIT_USAGE;
		for (char *save = NULL, *t = strtok_r(a->env_probes, ":", &save); t;
		     t = strtok_r(NULL, ":", &save))
			if ((rc = add_probe_arg(a, t)))
				return rc;
	}
	return -1;
}

/* Kernels compiled at run time (issue 16, shim/jit_capture.h): Triton runs the ptxas that
 * TRITON_PTXAS_PATH names (TRITON_PTXAS_BLACKWELL_PATH for sm_100 and later), XLA the first ptxas
 * of its search (--xla_gpu_cuda_data_dir's bin/, then PATH): both get gpuprobe-ptxas, which
 * records the PTX of every cubin it makes, unless the user named a ptxas already; NVCC (CuPy's
 * nvcc) is gpuprobe-nvcc unless set. NVRTC and nvJitLink are lib/'s libnvrtc.so.13 and
 * libnvJitLink.so.13 through LD_LIBRARY_PATH. */
static int set_jit_env(const char *lib)
{
	char wrap[PATH_MAX + 64], dir[PATH_MAX + 32];
	snprintf(wrap, sizeof(wrap), "%s/../bin/gpuprobe-ptxas", lib);
	snprintf(dir, sizeof(dir), "%s/gpuprobe-jit", lib);   /* ptxas -> ../../bin/gpuprobe-ptxas */
	if (access(wrap, X_OK))
		return 0;   /* not built: compilers run as they would */
	char *real = realpath(wrap, NULL);
	int rc = 0;
	if (real && !getenv("TRITON_PTXAS_PATH"))
		rc |= setenv("TRITON_PTXAS_PATH", real, 1);
	if (real && !getenv("TRITON_PTXAS_BLACKWELL_PATH"))
		rc |= setenv("TRITON_PTXAS_BLACKWELL_PATH", real, 1);
	free(real);
	/* CuPy's backend="nvcc" runs $NVCC first: gpuprobe-nvcc, whose ptxas steps are
	 * gpuprobe-ptxas (nvcc itself runs its own bin directory's ptxas, whatever PATH says) */
	snprintf(wrap, sizeof(wrap), "%s/../bin/gpuprobe-nvcc", lib);
	real = access(wrap, X_OK) ? NULL : realpath(wrap, NULL);
	if (real && !getenv("NVCC"))
		rc |= setenv("NVCC", real, 1);
	free(real);
	if (!access(dir, X_OK))
		rc |= env_prepend("PATH", dir);
	return rc;
}

/* --output: one line per capture of this run (the application's FILE.gpt, and FILE.gpt.PID of
 * any other process, as --json names its files: a wrapper script's CUDA child is one), from
 * each file's END chunk read at its tail (a file of GBs is not read again here). */
static int capture_one(const char *path, int fd)
{
	struct stat sb;
	struct gp_gpt_end e;
	if (!fstat(fd, &sb) && !gp_gpt__peek_end(fd, (uint64_t)sb.st_size, &e))
		fprintf(stderr, "gpuprobe: capture %s: %llu records, %llu bytes%s ('gpuprobe decode %s')\n",
			path, (unsigned long long)e.records, (unsigned long long)sb.st_size,
			e.host_lost ? ", some consumed and not written (see above)" : "", path);
	else
		fprintf(stderr, "gpuprobe: capture %s: no end chunk: the process did not finish its "
			"capture ('gpuprobe decode %s' reads what is whole)\n", path, path);
	close(fd);
	return 1;
}

static void capture_said(const char *path, time_t since)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd >= 0)
		found += capture_one(path, fd);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');   /* the path is absolute (parse_args made it so) */
	const char *base = slash ? slash + 1 : path;
	size_t bl = strlen(base);
	if (slash)
		*slash = 0;
	DIR *d = opendir(slash && *dir ? dir : "/");
	for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
		const char *n = de->d_name;
		if (strncmp(n, base, bl) || n[bl] != '.' || !n[bl + 1] ||
		    strspn(n + bl + 1, "0123456789") != strlen(n + bl + 1))
			continue;   /* not FILE.gpt.PID */
		char other[PATH_MAX + 300];
		snprintf(other, sizeof(other), "%s/%s", dir, n);
		struct stat sb;
		int ofd = open(other, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (ofd < 0)
			continue;
		if (fstat(ofd, &sb) || sb.st_mtime < since) {   /* an earlier run's */
			close(ofd);
			continue;
		}
		found += capture_one(other, ofd);
	}
	if (d)
		closedir(d);
	if (!found)
		fprintf(stderr, "gpuprobe: capture %s: not written (the application set no probes up, "
			"or could not create it: then a line above says why)\n", path);
}

/* Everything the shim reads, into the environment the application inherits. */
static int set_env(const struct run_args *a, const struct run_checked *ck, const char *lib,
		   const char *shim, const char *audit)
{
	if (ck->config ? setenv("GPUPROBE_CONFIG", ck->config, 1) : unsetenv("GPUPROBE_CONFIG"))
		return -1;
	if (ck->probes ? setenv("GPUPROBE_PROBES", ck->probes, 1) : unsetenv("GPUPROBE_PROBES"))
		return -1;
	if (a->interval && setenv("GPUPROBE_INTERVAL", a->interval, 1))
		return -1;
	if (a->json && setenv("GPUPROBE_JSON", a->json, 1))
		return -1;
	if (a->output ? setenv("GPUPROBE_CAPTURE", a->output, 1) : unsetenv("GPUPROBE_CAPTURE"))
		return -1;
	if (setenv("GPUPROBE_SHIM", shim, 1))
		return -1;
	/* The application is our child: it owns GPUPROBE_JSON's file, and every other process of
	 * the run that uses CUDA (a forked or exec'd child, a spawned worker) writes FILE.PID
	 * (common/safe_open.h, maps/output.h). */
	char run_pid[24];
	snprintf(run_pid, sizeof(run_pid), "%ld", (long)getpid());
	if (setenv("GPUPROBE_RUN_PID", run_pid, 1))
		return -1;
	if (set_jit_env(lib))
		return -1;
	return env_prepend("LD_LIBRARY_PATH", lib) || env_prepend("LD_AUDIT", audit) ? -1 : 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {0};
	struct run_checked ck = {0};
	struct trace_run tr = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		goto out;

	if ((rc = run_filter_config(&a.filter, &a.config)))   /* -k: a configuration of its own */
		goto out;
	if ((rc = run_check(a.config, a.probes, a.nprobes, a.first_env, a.json, &ck)))
		goto out;
	if (a.dry_run) {   /* everything checked: what -e compiles to, and no application */
		rc = a.oneliner ? run_oneliner_dump(a.oneliner) : 0;
		goto out;
	}
	char lib[PATH_MAX], shim[PATH_MAX + 32], audit[PATH_MAX + 32];
	rc = RUN_EXIT_USAGE;
	if (find_lib_dir(lib, sizeof(lib))) {
		cli_error("run: cannot find gpuprobe's own directory");
		goto out;
	}
	snprintf(shim, sizeof(shim), "%s/libcuda.so.1", lib);
	snprintf(audit, sizeof(audit), "%s/libgpuprobe-audit.so", lib);
	if (access(shim, R_OK) || access(audit, R_OK)) {
		cli_error("run: the shim is missing (%s, %s): build the 'shim' and 'gpuprobe-audit' "
			  "targets", shim, audit);
		goto out;
	}
	if ((rc = pin_driver(shim)))
		goto out;
	/* --trace: the shim's records and (without --json) the JSON stream into a private folder */
	if (a.trace && (rc = trace_run_prepare(&tr, a.trace_api, a.json)))
		goto out;
	if (a.trace && !a.json && tr.json[0])
		a.json = tr.json;
	if (set_env(&a, &ck, lib, shim, audit) || run_filter_env(&a.filter)) {
		cli_error("run: cannot set the environment: %s", strerror(errno));
		rc = RUN_EXIT_USAGE;
		goto out;
	}
	/* Two planes (docs/architecture.md): with probes, the shim snapshots their maps into
	 * segments that this process reads and prints (run_planes.c). */
	int planes = ck.config || ck.probes || a.metrics;
	if (planes) {
		struct run_planes_opts po = {.config = ck.config, .interval = a.interval,
					     .json = a.json, .probes = ck.probes};
		/* without a folder for the segments the shim prints in the application's
		 * process, as without gpuprobe run (the metrics endpoint needs them) */
		if ((rc = run_planes_begin(&po)) && a.metrics)
			goto out;
		planes = !rc;
		if (a.metrics && (rc = run_metrics_start(a.metrics))) {
			run_planes_end();
			goto out;
		}
	}
	/* the capture is this run's: a file left by an earlier one must not be reported as it */
	if (a.output && unlink(a.output) && errno != ENOENT) {
		cli_error("run: --output %s: cannot replace it: %s", a.output, strerror(errno));
		rc = RUN_EXIT_USAGE;
		if (planes)
			run_planes_end();
		goto out;
	}
	time_t started = time(NULL);
	rc = run_child(argv + optind);
	if (planes)
		run_planes_end();
	if (a.output)
		capture_said(a.output, started);
out:
	if (tr.dir[0] && trace_run_finish(&tr, a.trace, ck.probes) && !rc)
		rc = 1;
	run_checked_free(&ck);
	free(a.probes);
	for (size_t i = 0; i < a.ntools; i++)
		free(a.tools[i]);
	free(a.tools);
	run_filter_free(&a.filter);
	free(a.env_probes);
	free(a.oneliner_path);
	free(a.trace_api);
	free(a.output);
	return rc;
}
