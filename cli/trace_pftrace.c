/* Perfetto traces (trace.h): the TracePacket protobuf, encoded and decoded by protobuf-c from
 * cli/trace_perfetto.proto. A trace is the packets of a Trace message, field 1 each, so packets
 * are written one by one. Tracks are TrackDescriptors (processes and threads with their
 * descriptors, the GPU and its SMs by name and parent), spans are SLICE_BEGIN/SLICE_END pairs
 * on one sequence in time order, instants TYPE_INSTANT; a launch's flow id is a flow_ids entry of
 * its span and a terminating_flow_ids entry of its kernel's. */
#include "cli/trace_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPUPROBE_HAVE_PROTOBUF_C
#include "trace_perfetto.pb-c.h"

#define SEQ_ID 7   /* trusted_packet_sequence_id: one sequence */

int tr_have_pftrace(void) { return 1; }

struct pw {
	FILE *f;
	uint8_t *buf;
	size_t cap;
	int failed;
};

static void put_packet(struct pw *w, const Perfetto__Protos__TracePacket *p)
{
	size_t n = perfetto__protos__trace_packet__get_packed_size(p);
	if (n + 16 > w->cap) {
		size_t cap = (n + 16) * 2;
		uint8_t *b = realloc(w->buf, cap);
		if (!b) {
			w->failed = ENOMEM;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	uint8_t hdr[11];
	size_t h = 0;
	hdr[h++] = 0x0a;   /* Trace.packet: field 1, length-delimited */
	for (uint64_t v = n; ; v >>= 7) {
		hdr[h++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		if (v < 0x80)
			break;
	}
	perfetto__protos__trace_packet__pack(p, w->buf);
	if (fwrite(hdr, 1, h, w->f) != h || fwrite(w->buf, 1, n, w->f) != n)
		w->failed = errno ? errno : EIO;
}

static Perfetto__Protos__DebugAnnotation *annotation(const char *key, json_object *v);

/* An array of scalars as array_values (Perfetto shows key[0], key[1], ...). */
static int scalar_array(json_object *v)
{
	size_t n = json_object_array_length(v);
	if (!n || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		enum json_type t = json_object_get_type(json_object_array_get_idx(v, i));
		if (t != json_type_int && t != json_type_double && t != json_type_boolean &&
		    t != json_type_string)
			return 0;
	}
	return 1;
}

static void annotation_free(Perfetto__Protos__DebugAnnotation *a)
{
	for (size_t i = 0; i < a->n_array_values; i++)
		annotation_free(a->array_values[i]);
	free(a->array_values);
	free(a);
}

/* One argument: scalars as themselves, arrays of scalars as array_values, anything else as its
 * JSON text. */
static Perfetto__Protos__DebugAnnotation *annotation(const char *key, json_object *v)
{
	Perfetto__Protos__DebugAnnotation *a = calloc(1, sizeof(*a));
	if (!a)
		abort();
	perfetto__protos__debug_annotation__init(a);
	a->name = (char *)key;
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		a->has_bool_value = 1;
		a->bool_value = json_object_get_boolean(v);
		break;
	case json_type_int:
		if (json_object_get_int64(v) < 0) {
			a->has_int_value = 1;
			a->int_value = json_object_get_int64(v);
		} else {
			a->has_uint_value = 1;
			a->uint_value = json_object_get_uint64(v);
		}
		break;
	case json_type_double:
		a->has_double_value = 1;
		a->double_value = json_object_get_double(v);
		break;
	case json_type_string:
		a->string_value = (char *)json_object_get_string(v);
		break;
	case json_type_array:
		if (scalar_array(v)) {
			size_t n = json_object_array_length(v);
			a->array_values = calloc(n, sizeof(*a->array_values));
			if (!a->array_values)
				abort();
			for (size_t i = 0; i < n; i++)
				a->array_values[i] = annotation(NULL, json_object_array_get_idx(v, i));
			a->n_array_values = n;
			break;
		}
		/* fall through */
	default:
		a->string_value = (char *)json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
		break;
	}
	return a;
}

static void put_event(struct pw *w, struct tr_model *m, const struct tr_event *e, int type,
		      uint64_t ts)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.has_trusted_packet_sequence_id = 1;
	p.trusted_packet_sequence_id = SEQ_ID;
	p.track_event = &te;
	te.has_type = 1;
	te.type = type;
	te.has_track_uuid = 1;
	te.track_uuid = m->tracks[e->track].uuid;
	char *cats[1] = {(char *)e->cat};
	uint64_t fo = e->flow_out, fi = e->flow_in;
	Perfetto__Protos__DebugAnnotation **anns = NULL;
	size_t nann = 0;
	if (type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
		te.name = e->name;
		if (e->cat) {
			te.n_categories = 1;
			te.categories = cats;
		}
		if (fo) {
			te.n_flow_ids = 1;
			te.flow_ids = &fo;
		}
		if (fi) {
			te.n_terminating_flow_ids = 1;
			te.terminating_flow_ids = &fi;
		}
		if (e->args && json_object_is_type(e->args, json_type_object)) {
			anns = calloc((size_t)json_object_object_length(e->args) + 1, sizeof(*anns));
			if (!anns)
				abort();
			json_object_object_foreach(e->args, key, val)
				anns[nann++] = annotation(key, val);
			te.n_debug_annotations = nann;
			te.debug_annotations = anns;
		}
	}
	put_packet(w, &p);
	for (size_t i = 0; i < nann; i++)
		annotation_free(anns[i]);
	free(anns);
}

int tr_write_pftrace(struct tr_model *m, const char *path, char *err, size_t errlen)
{
	struct pw w = {0};
	w.f = fopen(path, "wb");
	if (!w.f) {
		snprintf(err, errlen, "%s: cannot write it: %s", path, strerror(errno));
		return -1;
	}
	/* the first packet: the sequence's state is clear */
	Perfetto__Protos__TracePacket first = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	first.has_trusted_packet_sequence_id = 1;
	first.trusted_packet_sequence_id = SEQ_ID;
	first.has_sequence_flags = 1;
	first.sequence_flags = 1;   /* SEQ_INCREMENTAL_STATE_CLEARED */
	put_packet(&w, &first);
	for (size_t i = 0; i < m->ntracks; i++) {
		const struct tr_track *t = &m->tracks[i];
		Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
		Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
		p.has_trusted_packet_sequence_id = 1;
		p.trusted_packet_sequence_id = SEQ_ID;
		p.track_descriptor = &d;
		d.has_uuid = 1;
		d.uuid = t->uuid;
		if (t->parent) {
			d.has_parent_uuid = 1;
			d.parent_uuid = t->parent;
		}
		if (t->kind == TR_PROCESS) {
			pd.has_pid = 1;
			pd.pid = (int32_t)t->pid;
			pd.process_name = t->name;
			d.process = &pd;
		} else if (t->kind == TR_THREAD) {
			td.has_pid = 1;
			td.pid = (int32_t)t->pid;
			td.has_tid = 1;
			td.tid = (int32_t)t->tid;
			td.thread_name = t->name;
			d.thread = &td;
			d.name = t->name;
		} else {
			d.name = t->name;
		}
		put_packet(&w, &p);
	}
	size_t *order = tr_model_order(m);
	/* begin/end pairs: a span's end comes out before the first event at or after it (any
	 * track), per track from a stack of open spans */
	size_t *stack = malloc((m->nevents + 1) * sizeof(*stack));
	size_t *depth = calloc(m->ntracks + 1, sizeof(*depth));
	size_t **stk = calloc(m->ntracks + 1, sizeof(*stk));
	if (!stack || !depth || !stk)
		abort();
	/* a stack per track, carved out of one array by each track's event count */
	size_t *count = calloc(m->ntracks + 1, sizeof(*count));
	if (!count)
		abort();
	for (size_t i = 0; i < m->nevents; i++)
		count[m->events[i].track]++;
	size_t at = 0;
	for (size_t t = 0; t < m->ntracks; t++) {
		stk[t] = stack + at;
		at += count[t];
	}
	for (size_t k = 0; k <= m->nevents; k++) {
		uint64_t now = k < m->nevents ? m->events[order[k]].ts : UINT64_MAX;
		for (;;) {   /* every end due at or before now, earliest first */
			size_t best = (size_t)-1;
			uint64_t bt = UINT64_MAX;
			for (size_t t = 0; t < m->ntracks; t++) {
				if (!depth[t])
					continue;
				const struct tr_event *e = &m->events[stk[t][depth[t] - 1]];
				uint64_t end = e->ts + e->dur;
				if (end <= now && (best == (size_t)-1 || end < bt)) {
					best = t;
					bt = end;
				}
			}
			if (best == (size_t)-1)
				break;
			/* (an end at the time the next event begins comes first: tr_model_order made
			 * such an event a sibling, not a child) */
			const struct tr_event *e = &m->events[stk[best][--depth[best]]];
			put_event(&w, m, e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, bt);
		}
		if (k == m->nevents)
			break;
		const struct tr_event *e = &m->events[order[k]];
		if (e->instant) {
			put_event(&w, m, e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, e->ts);
			continue;
		}
		put_event(&w, m, e, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, e->ts);
		stk[e->track][depth[e->track]++] = order[k];
	}
	free(count);
	free(stk);
	free(depth);
	free(stack);
	free(order);
	free(w.buf);
	if (fclose(w.f) && !w.failed)
		w.failed = errno ? errno : EIO;
	if (w.failed) {
		snprintf(err, errlen, "%s: write failed: %s", path, strerror(w.failed));
		return -1;
	}
	return 0;
}

static json_object *from_annotation(const Perfetto__Protos__DebugAnnotation *a, int depth)
{
	if (a->n_array_values && depth < 8) {
		json_object *arr = json_object_new_array();
		for (size_t i = 0; i < a->n_array_values; i++) {
			json_object *v = from_annotation(a->array_values[i], depth + 1);
			json_object_array_add(arr, v ? v : NULL);
		}
		return arr;
	}
	if (a->has_bool_value)
		return json_object_new_boolean(a->bool_value);
	if (a->has_uint_value)
		return json_object_new_uint64(a->uint_value);
	if (a->has_int_value)
		return json_object_new_int64(a->int_value);
	if (a->has_double_value)
		return json_object_new_double(a->double_value);
	if (a->string_value)
		return json_object_new_string(a->string_value);
	return NULL;
}

static const char *intern_cat(const char *c)
{
	static const char *const known[] = {"api", "launch", "kernel", "block", "event", "map"};
	for (size_t i = 0; c && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(c, known[i]))
			return known[i];
	return "other";
}

int tr_read_pftrace(struct tr_model *m, const uint8_t *data, size_t len, char *err, size_t errlen)
{
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(NULL, len, data);
	if (!tr) {
		snprintf(err, errlen, "not a Perfetto trace (the protobuf does not decode)");
		return -1;
	}
	int rc = 0;
	/* tracks first, wherever their descriptors are */
	for (size_t i = 0; i < tr->n_packet; i++) {
		const Perfetto__Protos__TrackDescriptor *d = tr->packet[i]->track_descriptor;
		if (!d || !d->has_uuid)
			continue;
		enum tr_track_kind kind = TR_GPU;
		int64_t pid = 0, tid = 0;
		const char *name = d->name ? d->name : "";
		if (d->process) {
			kind = TR_PROCESS;
			pid = d->process->pid;
			if (d->process->process_name)
				name = d->process->process_name;
		} else if (d->thread) {
			kind = TR_THREAD;
			pid = d->thread->pid;
			tid = d->thread->tid;
			if (d->thread->thread_name)
				name = d->thread->thread_name;
		} else if (!strncmp(name, "SM ", 3)) {
			kind = TR_SM;
			tid = strtol(name + 3, NULL, 10);
		} else if (!strcmp(name, "maps")) {
			kind = TR_MAPS;
		}
		size_t t = tr_track_add(m, kind, d->has_parent_uuid ? d->parent_uuid : 0, pid, tid, name);
		m->tracks[t].uuid = d->uuid;
	}
	size_t **open = calloc(m->ntracks + 1, sizeof(*open));
	size_t *depth = calloc(m->ntracks + 1, sizeof(*depth));
	if (!open || !depth)
		abort();
	for (size_t i = 0; i < tr->n_packet && !rc; i++) {
		const Perfetto__Protos__TracePacket *p = tr->packet[i];
		const Perfetto__Protos__TrackEvent *te = p->track_event;
		if (!te)
			continue;
		size_t t = (size_t)-1;
		for (size_t k = 0; k < m->ntracks; k++)
			if (m->tracks[k].uuid == te->track_uuid)
				t = k;
		if (t == (size_t)-1) {
			snprintf(err, errlen, "packet %zu: an event on track %llu, which no descriptor names",
				 i, (unsigned long long)te->track_uuid);
			rc = -1;
			break;
		}
		if (te->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
			if (!depth[t]) {
				snprintf(err, errlen, "packet %zu: a slice ends on track '%s' where none began",
					 i, m->tracks[t].name);
				rc = -1;
				break;
			}
			struct tr_event *e = &m->events[open[t][--depth[t]]];
			e->dur = p->timestamp >= e->ts ? p->timestamp - e->ts : 0;
			continue;
		}
		if (te->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN &&
		    te->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT)
			continue;
		struct tr_event *e = tr_event_add(m, t, p->timestamp, 0, te->name ? te->name : "",
						  intern_cat(te->n_categories ? te->categories[0] : NULL));
		e->instant = te->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
		if (te->n_flow_ids)
			e->flow_out = te->flow_ids[0];
		if (te->n_terminating_flow_ids)
			e->flow_in = te->terminating_flow_ids[0];
		if (te->n_debug_annotations) {
			e->args = json_object_new_object();
			for (size_t k = 0; k < te->n_debug_annotations; k++) {
				json_object *v = from_annotation(te->debug_annotations[k], 0);
				if (v && te->debug_annotations[k]->name)
					json_object_object_add(e->args, te->debug_annotations[k]->name, v);
				else
					json_object_put(v);
			}
		}
		if (!e->instant) {
			size_t *o = realloc(open[t], (depth[t] + 1) * sizeof(*o));
			if (!o)
				abort();
			open[t] = o;
			open[t][depth[t]++] = m->nevents - 1;
		}
	}
	for (size_t t = 0; t < m->ntracks; t++)
		free(open[t]);
	free(open);
	free(depth);
	perfetto__protos__trace__free_unpacked(tr, NULL);
	if (!rc && !m->clock)
		m->clock = strdup("as recorded (Perfetto trace)");
	return rc;
}

#else

int tr_have_pftrace(void) { return 0; }

int tr_write_pftrace(struct tr_model *m, const char *path, char *err, size_t errlen)
{
	(void)m;
	snprintf(err, errlen, "%s: this gpuprobe was built without protobuf-c: no Perfetto traces "
		 "(write FILE.json, Chrome's format, or install libprotobuf-c-dev and protobuf-c-compiler)",
		 path);
	return -1;
}

int tr_read_pftrace(struct tr_model *m, const uint8_t *data, size_t len, char *err, size_t errlen)
{
	(void)m, (void)data, (void)len;
	snprintf(err, errlen, "this gpuprobe was built without protobuf-c: it cannot read Perfetto traces");
	return -1;
}

#endif
