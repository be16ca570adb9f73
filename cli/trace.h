/* Timelines: gpuprobe run --trace and gpuprobe report (docs/guide.md "Traces").
 *
 * One model (struct tr_model) between the inputs and the outputs:
 *   in:  JSON lines, the --json stream's records (event, clock, map, hist, top, ...) and the
 *        shim's trace records (trace_process, thread, api, launch, kernel_done: shim/api_trace.c)
 *        -> tr_model_add_line, then tr_model_finish (kernel spans, blocks, flows)
 *        a Perfetto trace (tr_read_pftrace) or a Chrome JSON trace (tr_read_chrome) we wrote
 *   out: Perfetto TracePacket protobuf (tr_write_pftrace), Chrome JSON (tr_write_chrome), the
 *        HTML report (cli/report.c)
 *
 * Tracks: a process with one track per host thread (a span per driver API call, launches with
 * their kernel's arguments); a GPU with its kernels (a span per launch, from its blocks' probe
 * times, else from the launch to its completion) and one track per SM (block spans, the SM's
 * ring records as instants with typed fields). A flow joins each launch to its kernel. Maps
 * (the final map, hist and top records) ride along as instants of a "maps" track, their JSON
 * record as the argument "record". Times are CLOCK_REALTIME ns; device probe times are corrected
 * by the clock record's offset (docs/architecture.md "One clock"). */
#ifndef GPUPROBE_CLI_TRACE_H
#define GPUPROBE_CLI_TRACE_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

enum tr_track_kind { TR_PROCESS, TR_THREAD, TR_GPU, TR_SM, TR_MAPS };

struct tr_track {
	uint64_t uuid, parent;     /* parent: 0 for top-level tracks */
	enum tr_track_kind kind;
	int64_t pid, tid;          /* processes and threads; GPU: device number; SM: its number */
	char *name;
};

struct tr_event {
	size_t track;              /* index into tracks */
	uint64_t ts, dur;          /* ns */
	int instant;
	char *name;
	const char *cat;           /* "api", "launch", "kernel", "block", "event", "map" */
	json_object *args;         /* an object, or NULL */
	uint64_t flow_out, flow_in;   /* 0: none */
};

struct tr_model {
	struct tr_track *tracks;
	size_t ntracks;
	struct tr_event *events;
	size_t nevents;
	char *clock;               /* "CLOCK_REALTIME", with how device times were placed */
	/* building (tr_model_add_line) */
	struct tr_build *b;
};

void tr_model_init(struct tr_model *m);
void tr_model_free(struct tr_model *m);
/* Probe objects whose BTF types ring records (a ring map declared with __type(value, T)). */
void tr_model_add_object(struct tr_model *m, const char *path);
/* One JSON line. Unknown record types are ignored; a line that is not a JSON object is an
 * error: -1 with a reason in err. */
int tr_model_add_line(struct tr_model *m, const char *line, char *err, size_t errlen);
/* Every line of a file (path for messages). 0, or -1 with "PATH:LINE: reason" in err. */
int tr_model_add_jsonl(struct tr_model *m, const char *path, const char *text, size_t len,
		       char *err, size_t errlen);
/* After the last line: kernel and block spans, flows, track order. */
void tr_model_finish(struct tr_model *m);

size_t tr_track_add(struct tr_model *m, enum tr_track_kind kind, uint64_t parent, int64_t pid,
		    int64_t tid, const char *name);
struct tr_event *tr_event_add(struct tr_model *m, size_t track, uint64_t ts, uint64_t dur,
			      const char *name, const char *cat);
/* The events in the order a trace lists them: per track nested properly (a span that overlaps
 * its parent's end is cut there), by time. Returns a malloc'd array of indices. */
size_t *tr_model_order(struct tr_model *m);

/* Writers: 0, or -1 with a reason in err. */
int tr_write_pftrace(struct tr_model *m, const char *path, char *err, size_t errlen);
int tr_write_chrome(struct tr_model *m, const char *path, char *err, size_t errlen);
/* Readers of what the writers wrote (and Chrome traces like it): 0, or -1 with a reason. */
int tr_read_pftrace(struct tr_model *m, const uint8_t *data, size_t len, char *err, size_t errlen);
int tr_read_chrome(struct tr_model *m, const char *text, size_t len, char *err, size_t errlen);
/* Whether the pftrace writer and reader are built (protobuf-c was found). */
int tr_have_pftrace(void);

/* gp_name_hash (include/gpuprobe/context.h): FNV-1a 32 of a kernel's mangled name. */
uint32_t tr_name_hash(const char *s);

#endif
