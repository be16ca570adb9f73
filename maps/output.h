/* How what the probes collect prints: text (bpftrace's look) or JSON lines. Every print is made
 * from a snapshot (maps/snapshot.h), so one formatter serves both planes (docs/architecture.md,
 * "Two planes"):
 * - the `gpuprobe` process hands it the snapshots and event records it reads from an
 *   application's segment (maps/segment.h): gp_output__use_snapshot, gp_output__record;
 * - where the maps are in this process (the shim when an application runs without `gpuprobe
 *   run`, and the tests), gp_output__add_set: each print takes a snapshot of the sets first,
 *   and gp_output__poll drains their rings.
 * How a map prints (its key type from BTF, else its name): include/gpuprobe/output.h.
 *
 *   struct gp_output_opts o = {.out = stdout, .json = 0, .interval_ms = 1000 * N};
 *   gp_output__open(&o, &out);
 *   gp_output__add_set(out, set);             per BPF object's map set
 *   while (app runs) { gp_output__poll(out); sleep 100 ms; }   events, printk, maps every N s
 *   gp_output__print_final(out);              drains rings, prints every map and lost counts
 *   gp_output__close(out);
 *
 * Text (like bpftrace):
 *   <printk line>
 *   @events[ring 3]: 0x0000000000000001 0x00000000000000ff
 *   @counts[7]: 12                                   counts, largest last
 *   @lat_hist:                                        histograms
 *   [2, 4)                 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
 *   @launches_by_kernel[vecAdd(float*, int)]: 4      kernel- or API-keyed, top N, largest last
 *   @events: 12 lost                                  at exit, rings that lost records
 * Maps print as one block, headed "--- <seconds>s ---" for periodic prints (-i N).
 * JSON (--json): one object per line, each written whole by one write() (never a torn record):
 *   {"type":"process","pid":4242,"ppid":4200}        first, in a file (whose output it is)
 *   {"type":"printk","text":"..."}
 *   {"type":"event","map":"events","ring":3,"data":"0100000000000000ff00000000000000"}
 *   {"type":"map","name":"counts","time":1.5,"data":{"7":12}}                    counts
 *   {"type":"hist","name":"lat_hist","time":1.5,"data":[{"min":2,"max":3,"count":3}]}
 *   {"type":"top","name":"launches_by_kernel","time":1.5,"data":[{"key":"vecAdd(float*, int)","id":5,"value":4}]}
 *   {"type":"lost","map":"events","count":12}
 * docs/guide.md ("How maps print") documents every record type for users. */
#ifndef GPUPROBE_MAPS_OUTPUT_H
#define GPUPROBE_MAPS_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "maps/snapshot.h"   /* struct gp_output_clock */

struct gp_map_set;

struct gp_output_opts {
	FILE *out;                 /* where to print (NULL: stdout) */
	int json;                  /* --json */
	unsigned interval_ms;      /* -i N: print the maps every interval_ms (0: only at exit) */
	unsigned top_n;            /* rows of count and kernel tables (0: 10; -1u: all) */
	/* Kernel names for maps keyed by kernel (the shim's name table); may return a mangled
	 * name, which is demangled; NULL: the names given to gp_output__add_kernel_name, else
	 * printed as "kernel#<id>". */
	const char *(*kernel_name)(void *user, uint64_t id);
	void *kernel_name_user;
	/* Clock for the periodic prints and the "time" fields, in ms (NULL: CLOCK_MONOTONIC). */
	uint64_t (*now_ms)(void *user);
	void *now_user;
	/* Optional: called on the output's polling thread after each poll (the shim re-checks the
	   offset of the GPU's clock there, off the application's threads). */
	void (*tick)(void *user);
	/* Optional: what clock probe times are on; the final report then begins with a "clock:"
	   line (text) or a {"type":"clock"} object (JSON). Nonzero return: nothing printed. */
	int (*clock)(void *user, struct gp_output_clock *c);
	void *clock_user;          /* for tick and clock */
};

struct gp_output;

int gp_output__open(const struct gp_output_opts *opts, struct gp_output **out);
/* Print the maps of set too (the set must outlive the output). Returns 0 or -ENOMEM. */
int gp_output__add_set(struct gp_output *o, struct gp_map_set *set);
/* Print new ring records and printk lines; print the maps when the interval has passed.
 * Returns the number of records printed. Thread-safe against the device writing. */
int gp_output__poll(struct gp_output *o);
/* Print from this snapshot (maps/snapshot.h) from now on, instead of reading map sets: the
 * `gpuprobe` process's side. Its kernel names and clock are used too. Returns 0, -ENOMEM, or
 * -EBADMSG with one line in err (the snapshot is corrupt; the one before stays). */
int gp_output__use_snapshot(struct gp_output *o, const void *blob, size_t len, char *err,
			    size_t errlen);
/* Print one record read from a segment: a printk line (printk set) or a ring's record. */
void gp_output__record(struct gp_output *o, int printk, const char *map, unsigned ring,
		       const void *data, size_t size);
/* Print every map now (one block). */
void gp_output__print_maps(struct gp_output *o);
/* At exit: drain every ring, print the maps, then the lost-record counts. */
void gp_output__print_final(struct gp_output *o);
void gp_output__close(struct gp_output *o);

/* Tell the output a kernel's (mangled) name, so that maps keyed by kernel print it: the key is
 * gp_name_hash(name) (include/gpuprobe/context.h: ctx->kernel_hash). Used when opts.kernel_name
 * is NULL or returns NULL. The shim calls it for every kernel of every module it instruments.
 * Returns 0 or -ENOMEM. */
int gp_output__add_kernel_name(struct gp_output *o, const char *mangled);
/* The probe object at path: ring maps its BTF declares with __type(value, struct T) print their
 * records by field (text: `@MAP[ring R]: field=value ...`; JSON: a "fields" object beside
 * "data"), as `gpuprobe decode` does. 0, or a negative errno (no BTF: words, as before). */
int gp_output__add_types(struct gp_output *o, const char *path);
/* The same for each object of a ':'-separated list (GPUPROBE_PROBES); 0 or the first error. */
int gp_output__add_types_list(struct gp_output *o, const char *paths);

/* A thread of its own that polls every poll_ms (0: 50 ms) until stop; stop joins it and, when
 * final is set, prints the final report. For the shim: start after the map sets exist, stop at
 * exit (after the last kernel finished). Returns 0 or -errno. */
int gp_output__start_thread(struct gp_output *o, unsigned poll_ms);
void gp_output__stop_thread(struct gp_output *o, int final);

/* Output options `gpuprobe run` hands to the shim through the environment, and the shim reads:
 *   GPUPROBE_INTERVAL=N     print the maps every N seconds
 *   GPUPROBE_JSON=PATH      JSON lines into PATH, "-" for stdout. One process of a run owns
 *                           PATH (created 0600, or the user's own regular file, truncated): under
 *                           `gpuprobe run` (GPUPROBE_RUN_PID) the application it started, else
 *                           the first live one; every other process that uses CUDA (a forked or
 *                           exec'd child, a spawned worker) writes PATH.PID
 *   GPUPROBE_TOP=N          rows of count tables
 * Fills opts (out, json, interval_ms, top_n); *opened is the file to fclose at the end, or NULL.
 * Returns 0, or -EINVAL / -errno with one line in err. */
#define GP_ENV_INTERVAL "GPUPROBE_INTERVAL"
#define GP_ENV_JSON "GPUPROBE_JSON"
#define GP_ENV_TOP "GPUPROBE_TOP"
int gp_output_opts__from_env(struct gp_output_opts *opts, FILE **opened, char *err, size_t errlen);
/* An output file for JSON lines: PATH, or PATH.PID when another process of the run owns PATH
 * (above; common/safe_open.h, gp_open_output); unbuffered, its first record the process's. used gets the path; NULL with errno and
 * one line in err ("<what>PATH: cannot write it: ...", what e.g. "GPUPROBE_JSON="). */
FILE *gp_output_file_open(const char *what, const char *path, char *used, size_t usedlen,
			  char *err, size_t errlen);
/* The same for the `gpuprobe` process writing on behalf of process pid (parent ppid): PATH when
 * own is set (the application it started), else PATH.PID; the process record names pid. */
FILE *gp_output_file_open_for(const char *what, const char *path, int own, long pid, long ppid,
			      char *used, size_t usedlen, char *err, size_t errlen);

/* Demangle a C++ (Itanium) name; returns a malloc'd string, or a copy of name when it is not
 * mangled. */
char *gp_output_demangle(const char *name);

#endif
