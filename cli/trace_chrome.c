/* Chrome's JSON trace format (trace.h), as chrome://tracing and Perfetto's UI read it:
 * {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}. Times are microseconds from
 * the trace's first event (otherData.base_ns: its CLOCK_REALTIME ns), so that doubles keep ns.
 * Host threads are their process's pid and thread's tid; the GPU is pid GPU_PID (its kernel
 * lanes tids 0, 1, ...; SM n tid SM_TID + n), maps pid MAPS_PID. Spans are "X" events, ring
 * records "i", flows an "s"/"f" pair ("f" bound to the kernel's span). */
#include "cli/trace_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_PID ((int64_t)2147418112)  /* 0x7fff0000 */
#define MAPS_PID ((int64_t)2147422208)  /* 0x7fff1000 */
#define SM_TID ((int64_t)1000000)

static void ids(const struct tr_model *m, size_t t, int64_t *pid, int64_t *tid)
{
	const struct tr_track *k = &m->tracks[t];
	switch (k->kind) {
	case TR_PROCESS: *pid = k->pid; *tid = k->pid; break;
	case TR_THREAD: *pid = k->pid; *tid = k->tid; break;
	case TR_GPU: *pid = GPU_PID; *tid = k->tid; break;
	case TR_SM: *pid = GPU_PID; *tid = SM_TID + k->tid; break;
	default: *pid = MAPS_PID; *tid = 0; break;
	}
}

static json_object *meta(const char *what, int64_t pid, int64_t tid, const char *key,
			 json_object *val)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ph", json_object_new_string("M"));
	json_object_object_add(o, "name", json_object_new_string(what));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	json_object *args = json_object_new_object();
	json_object_object_add(args, key, val);
	json_object_object_add(o, "args", args);
	return o;
}

static json_object *us(uint64_t ns, uint64_t base)
{
	return json_object_new_double((double)(int64_t)(ns - base) / 1000.0);
}

int tr_write_chrome(struct tr_model *m, const char *path, char *err, size_t errlen)
{
	size_t *order = tr_model_order(m);
	uint64_t base = m->nevents ? m->events[order[0]].ts : 0;
	json_object *root = json_object_new_object();
	json_object *evs = json_object_new_array();
	int gpu_named = 0, maps_named = 0;
	for (size_t t = 0; t < m->ntracks; t++) {
		const struct tr_track *k = &m->tracks[t];
		int64_t pid, tid;
		ids(m, t, &pid, &tid);
		if (k->kind == TR_PROCESS) {
			json_object_array_add(evs, meta("process_name", pid, 0, "name",
							 json_object_new_string(k->name)));
		} else if (k->kind == TR_THREAD) {
			json_object_array_add(evs, meta("thread_name", pid, tid, "name",
							 json_object_new_string(k->name)));
		} else if (k->kind == TR_GPU || k->kind == TR_SM) {
			if (!gpu_named++)
				json_object_array_add(evs, meta("process_name", pid, 0, "name",
								 json_object_new_string("GPU 0")));
			json_object_array_add(evs, meta("thread_name", pid, tid, "name",
							 json_object_new_string(k->name)));
			json_object_array_add(evs, meta("thread_sort_index", pid, tid, "sort_index",
							 json_object_new_int64(tid)));
		} else if (!maps_named++) {
			json_object_array_add(evs, meta("process_name", pid, 0, "name",
							 json_object_new_string("maps")));
		}
	}
	for (size_t i = 0; i < m->nevents; i++) {
		const struct tr_event *e = &m->events[order[i]];
		int64_t pid, tid;
		ids(m, e->track, &pid, &tid);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(e->name));
		json_object_object_add(o, "cat", json_object_new_string(e->cat ? e->cat : "other"));
		json_object_object_add(o, "ph", json_object_new_string(e->instant ? "i" : "X"));
		json_object_object_add(o, "ts", us(e->ts, base));
		if (e->instant)
			json_object_object_add(o, "s", json_object_new_string("t"));
		else
			json_object_object_add(o, "dur", json_object_new_double((double)e->dur / 1000.0));
		json_object_object_add(o, "pid", json_object_new_int64(pid));
		json_object_object_add(o, "tid", json_object_new_int64(tid));
		if (e->args)
			json_object_object_add(o, "args", json_object_get(e->args));
		json_object_array_add(evs, o);
		for (int dir = 0; dir < 2; dir++) {
			uint64_t id = dir ? e->flow_in : e->flow_out;
			if (!id)
				continue;
			json_object *f = json_object_new_object();
			json_object_object_add(f, "name", json_object_new_string("launch"));
			json_object_object_add(f, "cat", json_object_new_string("flow"));
			json_object_object_add(f, "ph", json_object_new_string(dir ? "f" : "s"));
			if (dir)
				json_object_object_add(f, "bp", json_object_new_string("e"));
			char idtxt[24];
			snprintf(idtxt, sizeof(idtxt), "0x%" PRIx64, id);
			json_object_object_add(f, "id", json_object_new_string(idtxt));
			json_object_object_add(f, "ts", us(e->ts, base));
			json_object_object_add(f, "pid", json_object_new_int64(pid));
			json_object_object_add(f, "tid", json_object_new_int64(tid));
			json_object_array_add(evs, f);
		}
	}
	free(order);
	json_object_object_add(root, "traceEvents", evs);
	json_object_object_add(root, "displayTimeUnit", json_object_new_string("ns"));
	json_object *other = json_object_new_object();
	json_object_object_add(other, "producer", json_object_new_string("gpuprobe"));
	json_object_object_add(other, "clock", json_object_new_string(m->clock ? m->clock : ""));
	json_object_object_add(other, "base_ns", json_object_new_uint64(base));
	json_object_object_add(root, "otherData", other);
	int rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(root);
	if (rc) {
		snprintf(err, errlen, "%s: cannot write it: %s", path, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/* ---- reading ----------------------------------------------------------------------------- */

static const char *cat_of(const char *c)
{
	static const char *const known[] = {"api", "launch", "kernel", "block", "event", "map"};
	for (size_t i = 0; c && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(c, known[i]))
			return known[i];
	return "other";
}

static int64_t num(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static const char *str(json_object *o, const char *k)
{
	json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static int64_t ns_of(json_object *o, const char *k)
{
	json_object *v;
	if (!json_object_object_get_ex(o, k, &v))
		return 0;
	double d = json_object_get_double(v) * 1000.0;
	if (!(d > -4e18 && d < 4e18))   /* out of range, or NaN: no time */
		return 0;
	return (int64_t)(d + (d < 0 ? -0.5 : 0.5));
}

/* The track of (pid, tid), made on first sight: a thread unless it is the GPU's or the maps'. */
static size_t track_of(struct tr_model *m, int64_t pid, int64_t tid, const char *name)
{
	for (size_t i = 0; i < m->ntracks; i++) {
		int64_t p, t;
		ids(m, i, &p, &t);
		if (p == pid && t == tid && m->tracks[i].kind != TR_PROCESS)
			return i;
	}
	char def[64];
	if (pid == GPU_PID) {
		int sm = tid >= SM_TID;
		snprintf(def, sizeof(def), sm ? "SM %" PRId64 : "GPU 0 lane %" PRId64, sm ? tid - SM_TID : tid);
		return tr_track_add(m, sm ? TR_SM : TR_GPU, 0, 0, sm ? tid - SM_TID : tid, name ? name : def);
	}
	if (pid == MAPS_PID)
		return tr_track_add(m, TR_MAPS, 0, 0, 0, "maps");
	snprintf(def, sizeof(def), "thread %" PRId64, tid);
	return tr_track_add(m, TR_THREAD, 0, pid, tid, name ? name : def);
}

int tr_read_chrome(struct tr_model *m, const char *text, size_t len, char *err, size_t errlen)
{
	json_tokener *tok = json_tokener_new();
	if (!tok)
		abort();
	json_object *root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!root || je != json_tokener_success) {
		snprintf(err, errlen, "not a JSON trace: %s", root ? "trailing data" : json_tokener_error_desc(je));
		json_object_put(root);
		return -1;
	}
	json_object *evs = NULL;
	if (json_object_is_type(root, json_type_array))
		evs = root;
	else if (!json_object_is_type(root, json_type_object) ||
		 !json_object_object_get_ex(root, "traceEvents", &evs) ||
		 !json_object_is_type(evs, json_type_array)) {
		snprintf(err, errlen, "not a Chrome trace (no traceEvents array)");
		json_object_put(root);
		return -1;
	}
	int64_t base = 0;
	json_object *other;
	if (json_object_is_type(root, json_type_object) &&
	    json_object_object_get_ex(root, "otherData", &other) && json_object_is_type(other, json_type_object)) {
		base = num(other, "base_ns");
		const char *c = str(other, "clock");
		if (c)
			m->clock = strdup(c);
	}
	size_t n = json_object_array_length(evs);
	/* names first */
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i);
		const char *ph = json_object_is_type(e, json_type_object) ? str(e, "ph") : NULL;
		if (!ph || strcmp(ph, "M"))
			continue;
		json_object *args;
		const char *what = str(e, "name"), *nm = NULL;
		if (json_object_object_get_ex(e, "args", &args) && json_object_is_type(args, json_type_object))
			nm = str(args, "name");
		if (!what || !nm)
			continue;
		int64_t pid = num(e, "pid"), tid = num(e, "tid");
		if (!strcmp(what, "process_name") && pid != GPU_PID && pid != MAPS_PID) {
			size_t t = tr_track_add(m, TR_PROCESS, 0, pid, 0, nm);
			(void)t;
		} else if (!strcmp(what, "thread_name")) {
			track_of(m, pid, tid, nm);
		}
	}
	/* parents: threads under their process, the GPU's lanes and SMs under lane 0 */
	for (size_t i = 0; i < m->ntracks; i++) {
		struct tr_track *t = &m->tracks[i];
		for (size_t k = 0; k < m->ntracks; k++) {
			const struct tr_track *p = &m->tracks[k];
			if ((t->kind == TR_THREAD && p->kind == TR_PROCESS && p->pid == t->pid) ||
			    ((t->kind == TR_SM || (t->kind == TR_GPU && t->tid)) && p->kind == TR_GPU && !p->tid))
				t->parent = p->uuid;
		}
	}
	struct flow { int64_t pid, tid, ts; uint64_t id; int in; } *flows = NULL;
	size_t nflows = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i);
		if (!json_object_is_type(e, json_type_object))
			continue;
		const char *ph = str(e, "ph");
		if (!ph)
			continue;
		int64_t pid = num(e, "pid"), tid = num(e, "tid");
		int64_t ts = ns_of(e, "ts") + base;
		if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
			const char *id = str(e, "id");
			struct flow *f = realloc(flows, (nflows + 1) * sizeof(*f));
			if (!f)
				abort();
			flows = f;
			flows[nflows++] = (struct flow){pid, tid, ts, id ? strtoull(id, NULL, 0) : (uint64_t)num(e, "id"),
							 ph[0] == 'f'};
			continue;
		}
		if (strcmp(ph, "X") && strcmp(ph, "i") && strcmp(ph, "I"))
			continue;
		const char *name = str(e, "name");
		struct tr_event *ev = tr_event_add(m, track_of(m, pid, tid, NULL), (uint64_t)ts,
						   ph[0] == 'X' ? (uint64_t)(ns_of(e, "dur") > 0 ? ns_of(e, "dur") : 0) : 0,
						   name ? name : "", cat_of(str(e, "cat")));
		ev->instant = ph[0] != 'X';
		json_object *args;
		if (json_object_object_get_ex(e, "args", &args) && json_object_is_type(args, json_type_object))
			ev->args = json_object_get(args);
	}
	for (size_t f = 0; f < nflows; f++)
		for (size_t i = 0; i < m->nevents; i++) {
			struct tr_event *ev = &m->events[i];
			int64_t pid, tid;
			ids(m, ev->track, &pid, &tid);
			if (pid == flows[f].pid && tid == flows[f].tid && (int64_t)ev->ts == flows[f].ts && !ev->instant) {
				if (flows[f].in)
					ev->flow_in = flows[f].id;
				else
					ev->flow_out = flows[f].id;
				break;
			}
		}
	free(flows);
	json_object_put(root);
	if (!m->clock)
		m->clock = strdup("as recorded (Chrome JSON trace)");
	return 0;
}
