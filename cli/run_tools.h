/* gpuprobe run's one-liner options, kept out of cmd_run.c: built-in tools (-t NAME: a probe
 * object shipped beside the shim, from include/gpuprobe/tools/NAME.bpf.c), the kernel filter
 * (-k GLOB) and the launch window (--launch-skip N, --launch-count M). `gpuprobe tools` lists
 * the tools. */
#ifndef GPUPROBE_CLI_RUN_TOOLS_H
#define GPUPROBE_CLI_RUN_TOOLS_H

#include <stddef.h>

/* The object of built-in tool name (a malloc'd absolute path), or NULL after one line naming
 * the tools there are (exit status 2 is the caller's). */
char *run_tool_path(const char *name);

/* -k globs: where the run's kernel filter goes. */
struct run_filter {
	const char **kernels;      /* -k, in order */
	size_t nkernels;
	const char *launch_skip, *launch_count;   /* checked numbers, or NULL */
	char *config;              /* the configuration written for -k (malloc'd path), or NULL */
};

/* Record -k GLOB / --launch-skip N / --launch-count M; 0 or the exit status after one line. */
int run_filter_kernel(struct run_filter *f, const char *glob);
int run_filter_launch(struct run_filter *f, const char *opt, const char *n, const char **slot);

/* Before the checks: -k becomes a configuration file of its own (kernels.include: the globs),
 * which the shim reads as it reads -c (and which, being part of the probe set's bytes, keys the
 * cache of instrumented code). -k with a configuration file of the user's (-c or
 * $GPUPROBE_CONFIG) is refused: its kernels section says the same. *config is replaced by the
 * written file. Returns 0 or the exit status after one line. */
int run_filter_config(struct run_filter *f, const char **config);
/* After the checks, into the application's environment: GPUPROBE_LAUNCH_SKIP/COUNT, which the
 * shim applies (shim/launch_window.h). */
int run_filter_env(const struct run_filter *f);
void run_filter_free(struct run_filter *f);

#endif
