/* gpuprobe run --trace (cli/trace_run.c). */
#ifndef GPUPROBE_CLI_TRACE_RUN_H
#define GPUPROBE_CLI_TRACE_RUN_H

enum tr_format { TR_FORMAT_UNKNOWN, TR_FORMAT_PFTRACE, TR_FORMAT_CHROME, TR_FORMAT_HTML, TR_FORMAT_JSONL };
/* By the file name's ending: .pftrace/.perfetto-trace/.pb, .json, .html, .jsonl. */
enum tr_format tr_format_of(const char *path);

struct trace_run {
	char dir[4200];    /* the private folder of the shim's records */
	char json[4300];   /* the --json stream's file to read ("" none) */
};

/* Before the application: --trace FILE's name and whether it can be written (0, or
 * RUN_EXIT_USAGE after one line). */
int trace_run_check(const char *out);
/* Set GPUPROBE_TRACE (and GPUPROBE_TRACE_API, comma-separated globs, when given); GPUPROBE_JSON
 * into the folder when json (the --json the run has) is NULL. */
int trace_run_prepare(struct trace_run *t, const char *api_globs, const char *json);
/* After it: the trace written to out from the records (probes: the ':'-separated probe objects,
 * whose BTF types ring records). Removes the folder. 0, or 1 after one line. */
int trace_run_finish(struct trace_run *t, const char *out, const char *probes);

#endif
