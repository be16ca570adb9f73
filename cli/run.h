/* gpuprobe run, in three steps with one file each: the command line (cmd_run.c), everything
 * checked before the application starts (run_check.c), and the application itself: started in
 * its own process group, signals passed on, its exit status returned (run_child.c). */
#ifndef GPUPROBE_CLI_RUN_H
#define GPUPROBE_CLI_RUN_H

#include <stddef.h>

/* Exit status for bad usage or bad input, before the application starts (as bpftrace, env). */
#define RUN_EXIT_USAGE 2

/* What the shim is handed, once run_check accepted it. */
struct run_checked {
	char *config;      /* absolute path of the configuration, or NULL */
	char *probes;      /* -p objects, absolute, ':'-separated (GPUPROBE_PROBES), or NULL */
};

/* Parse the configuration (the shim's parser and limits) and open and verify every probe object,
 * the configuration's and the -p ones, as the shim will. probes[first_env..nprobes) came from
 * $GPUPROBE_PROBES (their messages say so). The folder of the JSON output (json, from --json, else
 * the configuration's output.json) must exist. Returns 0, or RUN_EXIT_USAGE after one line on
 * stderr naming the file (FILE:LINE:COL for the configuration's content). */
int run_check(const char *config, const char *const *probes, size_t nprobes, size_t first_env,
	      const char *json, struct run_checked *out);
void run_checked_free(struct run_checked *c);

/* Start argv[0] (searched in PATH) in a process group of its own, give it the terminal when
 * gpuprobe has it, pass SIGINT, SIGTERM, SIGHUP and SIGQUIT on to its group, and wait.
 * Returns its exit status, 128 + N when signal N killed it, 126/127 when it cannot start. */
int run_child(char *const *argv);

/* A folder only this user can use, for files gpuprobe writes for the application (the -k
 * configuration, -e's compiled objects): $XDG_RUNTIME_DIR/gpuprobe, else /tmp/gpuprobe-UID,
 * created 0700. A folder that exists must be ours and closed to others. 0 or -errno. */
int run_private_dir(char *out, size_t len);

/* The `gpuprobe` process's plane (run_planes.c, docs/architecture.md "Two planes"): a folder for
 * the run's segments in run_private_dir, named to the shim in GPUPROBE_SEGMENT_DIR, and a thread
 * that reads each process's segment and prints what it holds (text on stderr, or JSON lines into
 * json / its configuration's output.json; -i and the configuration's interval; GPUPROBE_TOP).
 * begin: 0 or RUN_EXIT_USAGE after one line. end (after the application exited): the final
 * reports, the last snapshot of any process that ended without one, the folder removed. */
struct run_planes_opts {
	const char *config;        /* the checked configuration, or NULL */
	const char *interval;      /* -i N, or NULL */
	const char *json;          /* --json FILE (or $GPUPROBE_JSON), or NULL */
	const char *probes;        /* the probe objects, ':'-separated (GPUPROBE_PROBES), or NULL */
};
int run_planes_begin(const struct run_planes_opts *o);
void run_planes_end(void);
struct gp_snap;
/* fn for each process's latest snapshot (the metrics endpoint), between run_planes_lock(1) and
 * run_planes_lock(0): the readers replace no snapshot meanwhile. */
void run_planes_each(void (*fn)(void *user, const struct gp_snap *s, long pid, int is_app),
		     void *user);
void run_planes_lock(int lock);

/* --metrics [ADDR:]PORT (run_metrics.c): every map of every process's latest snapshot as
 * OpenMetrics text over HTTP (libmicrohttpd), on 127.0.0.1 unless ADDR says otherwise. check:
 * 0 or RUN_EXIT_USAGE after one line (before the application starts); start: the same. */
int run_metrics_check(const char *spec);
int run_metrics_start(const char *spec);
void run_metrics_stop(void);

#endif
