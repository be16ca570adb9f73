/* The trace model (trace.h): tracks and events, built from JSON lines (the --json stream and the
 * shim's trace records), and the order a trace file lists them in. */
#include "cli/trace_internal.h"
#include "ptx-frontend/demangle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap_unused)                                                      \
	do {                                                                          \
		if (((n) & ((n) - 1)) == 0 || !(arr)) {                               \
			size_t c_ = (n) ? (n) * 2 : 16;                               \
			void *p_ = realloc((arr), c_ * sizeof(*(arr)));               \
			if (!p_)                                                      \
				abort();                                              \
			(arr) = p_;                                                   \
		}                                                                     \
	} while (0)

uint32_t tr_name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		abort();
	return d;
}

void tr_model_init(struct tr_model *m)
{
	memset(m, 0, sizeof(*m));
	m->b = calloc(1, sizeof(*m->b));
	if (!m->b)
		abort();
	m->b->maps = json_object_new_object();
}

static void build_free(struct tr_build *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nobjects; i++)
		free(b->objects[i]);
	free(b->objects);
	for (size_t i = 0; i < b->nlaunches; i++) {
		free(b->launches[i].kernel);
		json_object_put(b->launches[i].rec);
	}
	free(b->launches);
	free(b->blocks);
	free(b->dones);
	for (size_t i = 0; i < b->nrecs; i++) {
		free(b->recs[i].map);
		free(b->recs[i].data);
	}
	free(b->recs);
	json_object_put(b->maps);
	for (size_t i = 0; i < b->nprocs; i++)
		free(b->procs[i].cmd);
	free(b->procs);
	for (size_t i = 0; i < b->nthreads; i++)
		free(b->threads[i].name);
	free(b->threads);
	for (size_t i = 0; i < b->napis; i++)
		free(b->apis[i].name);
	free(b->apis);
	for (size_t i = 0; i < b->ntypes; i++)
		free(b->types[i].map);
	free(b->types);
	free(b);
}

void tr_model_free(struct tr_model *m)
{
	for (size_t i = 0; i < m->ntracks; i++)
		free(m->tracks[i].name);
	free(m->tracks);
	for (size_t i = 0; i < m->nevents; i++) {
		free(m->events[i].name);
		if (m->events[i].args)
			json_object_put(m->events[i].args);
	}
	free(m->events);
	free(m->clock);
	build_free(m->b);
	memset(m, 0, sizeof(*m));
}

void tr_model_add_object(struct tr_model *m, const char *path)
{
	struct tr_build *b = m->b;
	GROW(b->objects, b->nobjects, 0);
	b->objects[b->nobjects++] = xstrdup(path);
}

size_t tr_track_add(struct tr_model *m, enum tr_track_kind kind, uint64_t parent, int64_t pid,
		    int64_t tid, const char *name)
{
	GROW(m->tracks, m->ntracks, 0);
	struct tr_track *t = &m->tracks[m->ntracks];
	t->uuid = 0x6770000000000000ull + m->ntracks + 1;   /* "gp": unique in this trace */
	t->parent = parent;
	t->kind = kind;
	t->pid = pid;
	t->tid = tid;
	t->name = xstrdup(name);
	return m->ntracks++;
}

struct tr_event *tr_event_add(struct tr_model *m, size_t track, uint64_t ts, uint64_t dur,
			      const char *name, const char *cat)
{
	GROW(m->events, m->nevents, 0);
	struct tr_event *e = &m->events[m->nevents++];
	memset(e, 0, sizeof(*e));
	e->track = track;
	e->ts = ts;
	e->dur = dur;
	e->name = xstrdup(name);
	e->cat = cat;
	return e;
}

/* ---- reading records --------------------------------------------------------------------- */

static int64_t jint(json_object *o, const char *key, int64_t def)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return def;
	return json_object_get_int64(v);
}

static uint64_t juint(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_uint64(v);
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static uint64_t dims(json_object *o, const char *key, unsigned d[3])
{
	json_object *a;
	d[0] = d[1] = d[2] = 1;
	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return 1;
	for (size_t i = 0; i < 3 && i < json_object_array_length(a); i++)
		d[i] = (unsigned)json_object_get_uint64(json_object_array_get_idx(a, i));
	return (uint64_t)d[0] * d[1] * d[2];
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void add_record(struct tr_build *b, json_object *j)
{
	const char *hex = jstr(j, "data"), *map = jstr(j, "map");
	if (!hex || !map)
		return;
	size_t n = strlen(hex) / 2;
	uint8_t *data = malloc(n + 1);
	if (!data)
		return;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(data);
			return;
		}
		data[i] = (uint8_t)(hi << 4 | lo);
	}
	if (!strcmp(map, "trace_blocks") && n == 32) {   /* include/gpuprobe/tools/blocks.bpf.c */
		GROW(b->blocks, b->nblocks, 0);
		struct tr_block *k = &b->blocks[b->nblocks++];
		memcpy(&k->hash, data, 4);
		memcpy(&k->sm, data + 4, 4);
		memcpy(k->block, data + 8, 12);
		memcpy(&k->end, data + 20, 4);
		memcpy(&k->ns, data + 24, 8);
		free(data);
		return;
	}
	GROW(b->recs, b->nrecs, 0);
	struct tr_ring_rec *r = &b->recs[b->nrecs++];
	r->map = xstrdup(map);
	r->ring = (unsigned)jint(j, "ring", 0);
	r->data = data;
	r->size = n;
}

int tr_model_add_line(struct tr_model *m, const char *line, char *err, size_t errlen)
{
	struct tr_build *b = m->b;
	while (*line == ' ' || *line == '\t' || *line == '\r')
		line++;
	if (!*line)
		return 0;
	json_tokener *tok = json_tokener_new();
	json_object *j = tok ? json_tokener_parse_ex(tok, line, (int)strlen(line)) : NULL;
	int bad = !j || json_tokener_get_error(tok) != json_tokener_success;
	if (tok)
		json_tokener_free(tok);
	if (bad || !json_object_is_type(j, json_type_object)) {
		snprintf(err, errlen, "not a JSON object");
		json_object_put(j);
		return -1;
	}
	const char *type = jstr(j, "type");
	if (!type)
		type = "";
	if (!strcmp(type, "trace_process")) {
		GROW(b->procs, b->nprocs, 0);
		b->procs[b->nprocs].pid = jint(j, "pid", 0);
		b->procs[b->nprocs].ts = juint(j, "ts");
		b->procs[b->nprocs++].cmd = xstrdup(jstr(j, "cmd"));
	} else if (!strcmp(type, "thread")) {
		GROW(b->threads, b->nthreads, 0);
		b->threads[b->nthreads].pid = jint(j, "pid", 0);
		b->threads[b->nthreads].tid = jint(j, "tid", 0);
		b->threads[b->nthreads++].name = xstrdup(jstr(j, "name"));
	} else if (!strcmp(type, "api")) {
		GROW(b->apis, b->napis, 0);
		b->apis[b->napis].pid = jint(j, "pid", 0);
		b->apis[b->napis].tid = jint(j, "tid", 0);
		b->apis[b->napis].ts = juint(j, "ts");
		b->apis[b->napis].dur = juint(j, "dur");
		b->apis[b->napis].rc = (int)jint(j, "rc", 0);
		b->apis[b->napis++].name = xstrdup(jstr(j, "name"));
	} else if (!strcmp(type, "launch")) {
		GROW(b->launches, b->nlaunches, 0);
		struct tr_launch *l = &b->launches[b->nlaunches++];
		memset(l, 0, sizeof(*l));
		l->pid = jint(j, "pid", 0);
		l->tid = jint(j, "tid", 0);
		l->id = juint(j, "id");
		l->ts = juint(j, "ts");
		l->dur = juint(j, "dur");
		const char *k = jstr(j, "kernel"), *st = jstr(j, "stream");
		l->kernel = xstrdup(k);
		snprintf(l->stream, sizeof(l->stream), "%s", st ? st : "");
		l->hash = tr_name_hash(l->kernel);
		unsigned g[3];
		l->grid = dims(j, "grid", g);
		l->flow = ((uint64_t)(uint32_t)l->pid << 32) | (l->id & 0xffffffffu);
		l->event = (size_t)-1;
		l->rec = json_object_get(j);   /* kept whole for the span's arguments */
	} else if (!strcmp(type, "kernel_done")) {
		GROW(b->dones, b->ndones, 0);
		b->dones[b->ndones++] = (struct tr_done){jint(j, "pid", 0), juint(j, "id"), juint(j, "ts")};
	} else if (!strcmp(type, "event")) {
		add_record(b, j);
	} else if (!strcmp(type, "clock")) {
		json_object *c;
		b->have_clock = 1;
		b->corrected = json_object_object_get_ex(j, "corrected", &c) && json_object_get_boolean(c);
		b->offset_ns = jint(j, "offset_ns", 0);
	} else if (!strcmp(type, "map") || !strcmp(type, "hist") || !strcmp(type, "top")) {
		const char *name = jstr(j, "name");
		if (name) {
			json_object_object_del(b->maps, name);
			json_object_object_add(b->maps, name, json_object_get(j));
		}
	}
	json_object_put(j);
	return 0;
}

int tr_model_add_jsonl(struct tr_model *m, const char *path, const char *text, size_t len,
		       char *err, size_t errlen)
{
	size_t lineno = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		lineno++;
		char *line = malloc(n + 1);
		if (!line)
			abort();
		memcpy(line, text + at, n);
		line[n] = 0;
		if (memchr(text + at, 0, n)) {
			snprintf(err, errlen, "%s:%zu: a NUL byte in a JSON line", path, lineno);
			free(line);
			return -1;
		}
		char why[128];
		int rc = tr_model_add_line(m, line, why, sizeof(why));
		free(line);
		if (rc) {
			/* the last line of a file cut short by a kill: ignored */
			if (!nl)
				break;
			snprintf(err, errlen, "%s:%zu: %s", path, lineno, why);
			return -1;
		}
		at += n + 1;
	}
	return 0;
}

/* ---- building the tracks ----------------------------------------------------------------- */

static size_t process_track(struct tr_model *m, int64_t pid)
{
	for (size_t i = 0; i < m->ntracks; i++)
		if (m->tracks[i].kind == TR_PROCESS && m->tracks[i].pid == pid)
			return i;
	const char *cmd = "";
	for (size_t i = 0; i < m->b->nprocs; i++)
		if (m->b->procs[i].pid == pid)
			cmd = m->b->procs[i].cmd;
	char name[600];
	snprintf(name, sizeof(name), "%.500s", *cmd ? cmd : "process");
	return tr_track_add(m, TR_PROCESS, 0, pid, 0, name);
}

static size_t thread_track(struct tr_model *m, int64_t pid, int64_t tid)
{
	for (size_t i = 0; i < m->ntracks; i++)
		if (m->tracks[i].kind == TR_THREAD && m->tracks[i].pid == pid && m->tracks[i].tid == tid)
			return i;
	size_t p = process_track(m, pid);
	const char *nm = "thread";
	for (size_t i = 0; i < m->b->nthreads; i++)
		if (m->b->threads[i].pid == pid && m->b->threads[i].tid == tid && *m->b->threads[i].name)
			nm = m->b->threads[i].name;
	char name[128];
	snprintf(name, sizeof(name), "%s %" PRId64, nm, tid);
	return tr_track_add(m, TR_THREAD, m->tracks[p].uuid, pid, tid, name);
}

static size_t gpu_track(struct tr_model *m, int lane)
{
	for (size_t i = 0; i < m->ntracks; i++)
		if (m->tracks[i].kind == TR_GPU && m->tracks[i].tid == lane)
			return i;
	if (lane == 0)
		return tr_track_add(m, TR_GPU, 0, 0, 0, "GPU 0");
	size_t g = gpu_track(m, 0);
	char name[64];
	snprintf(name, sizeof(name), "GPU 0 kernels (overlapping %d)", lane);
	return tr_track_add(m, TR_GPU, m->tracks[g].uuid, 0, lane, name);
}

static size_t sm_track(struct tr_model *m, uint32_t sm)
{
	for (size_t i = 0; i < m->ntracks; i++)
		if (m->tracks[i].kind == TR_SM && m->tracks[i].tid == sm)
			return i;
	size_t g = gpu_track(m, 0);
	char name[32];
	snprintf(name, sizeof(name), "SM %u", sm);
	return tr_track_add(m, TR_SM, m->tracks[g].uuid, 0, sm, name);
}

static char *short_kernel(const char *mangled)
{
	char *d = demangle(mangled);
	return d ? d : xstrdup(mangled);
}

static int cmp_block(const void *a, const void *b)
{
	const struct tr_block *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end; /* a difference of two uint32_t overflows int */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Launches by (kernel hash, launch time): where a block's launch is looked up. */
static struct tr_launch **by_hash;
static int cmp_by_hash(const void *a, const void *b)
{
	const struct tr_launch *x = *(struct tr_launch *const *)a, *y = *(struct tr_launch *const *)b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The launch of kernel hash whose blocks this one (begun at t, device time corrected) is:
 * the latest launched before t; without a calibrated clock, in launch order by count. */
static struct tr_launch *launch_of(struct tr_build *b, uint32_t hash, uint64_t t, int by_time)
{
	size_t lo = 0, hi = b->nlaunches;
	while (lo < hi) {   /* the first of this hash */
		size_t mid = lo + (hi - lo) / 2;
		if (by_hash[mid]->hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->nlaunches || by_hash[lo]->hash != hash)
		return NULL;
	size_t first = lo;
	if (!by_time) {
		for (size_t i = first; i < b->nlaunches && by_hash[i]->hash == hash; i++)
			if (by_hash[i]->nblocks < by_hash[i]->grid)
				return by_hash[i];
		return NULL;
	}
	hi = first;
	while (hi < b->nlaunches && by_hash[hi]->hash == hash)
		hi++;
	lo = first;
	while (lo < hi) {   /* the first launched after t */
		size_t mid = lo + (hi - lo) / 2;
		if (by_hash[mid]->ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* none before t (a device clock slightly ahead): the first launch of it */
	return lo > first ? by_hash[lo - 1] : by_hash[first];
}

static int cmp_launch(const void *a, const void *b)
{
	const struct tr_launch *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Blocks by identity (kernel, SM, block index), then time: a begin and its end side by side. */
static int cmp_block_id(const void *a, const void *b)
{
	const struct tr_block *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->sm != y->sm)
		return x->sm < y->sm ? -1 : 1;
	int c = memcmp(x->block, y->block, sizeof(x->block));
	return c ? c : cmp_block(a, b);
}

static uint64_t field_time(const struct tr_ring_type *t, const uint8_t *d, size_t n)
{
	static const char *const names[] = {"ts", "ns", "time", "timestamp", "time_ns", "t"};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		for (unsigned i = 0; i < t->nfields; i++) {
			const struct tr_field *f = &t->fields[i];
			if (f->count == 1 && f->size == 8 && f->kind != TR_F_STR &&
			    !strcmp(f->name, names[k]) && f->offset + 8 <= n) {
				uint64_t v;
				memcpy(&v, d + f->offset, 8);
				return v;
			}
		}
	return 0;
}

void tr_model_finish(struct tr_model *m)
{
	struct tr_build *b = m->b;
	uint64_t t_min = UINT64_MAX, t_max = 0;
#define SEE(t) do { if ((t) && (t) < t_min) t_min = (t); if ((t) > t_max) t_max = (t); } while (0)

	/* launches in launch order per process; completions matched to them */
	if (b->nlaunches > 1)
		qsort(b->launches, b->nlaunches, sizeof(*b->launches), cmp_launch);
	for (size_t i = 0; i < b->ndones; i++) {
		struct tr_launch key = {.pid = b->dones[i].pid, .id = b->dones[i].id};
		struct tr_launch *l = b->nlaunches ? bsearch(&key, b->launches, b->nlaunches,
							       sizeof(*b->launches), cmp_launch) : NULL;
		if (l)
			l->done = b->dones[i].ts;
	}
	by_hash = malloc((b->nlaunches + 1) * sizeof(*by_hash));
	if (!by_hash)
		abort();
	for (size_t i = 0; i < b->nlaunches; i++)
		by_hash[i] = &b->launches[i];
	if (b->nlaunches > 1)
		qsort(by_hash, b->nlaunches, sizeof(*by_hash), cmp_by_hash);

	/* host: threads (under their processes, made as needed), API spans, launches */
	for (size_t i = 0; i < b->napis; i++) {
		size_t t = thread_track(m, b->apis[i].pid, b->apis[i].tid);
		struct tr_event *e = tr_event_add(m, t, b->apis[i].ts, b->apis[i].dur, b->apis[i].name, "api");
		e->args = json_object_new_object();
		json_object_object_add(e->args, "result", json_object_new_int(b->apis[i].rc));
		SEE(b->apis[i].ts);
		SEE(b->apis[i].ts + b->apis[i].dur);
	}
	for (size_t i = 0; i < b->nlaunches; i++) {
		struct tr_launch *l = &b->launches[i];
		json_object *rec = l->rec;
		size_t t = thread_track(m, l->pid, l->tid);
		const char *api = rec ? jstr(rec, "name") : NULL;
		struct tr_event *e = tr_event_add(m, t, l->ts, l->dur, api ? api : "cuLaunchKernel", "launch");
		e->flow_out = l->flow;
		e->args = json_object_new_object();
		char *dm = short_kernel(l->kernel);
		json_object_object_add(e->args, "kernel", json_object_new_string(dm));
		free(dm);
		json_object_object_add(e->args, "launch", json_object_new_uint64(l->id));
		static const char *const keep[] = {"grid", "block", "smem", "stream", "rc"};
		for (size_t k = 0; rec && k < sizeof(keep) / sizeof(keep[0]); k++) {
			json_object *v;
			if (json_object_object_get_ex(rec, keep[k], &v))
				json_object_object_add(e->args, !strcmp(keep[k], "rc") ? "result" : keep[k],
						       json_object_get(v));
		}
		l->event = m->nevents - 1;
		SEE(l->ts);
		SEE(l->done);
	}

	/* device times: %globaltimer + the measured offset; without one, the first block is put at
	 * the end of the first launch call (said in the trace's clock line) */
	int by_time = b->corrected;
	int64_t off = b->corrected ? b->offset_ns : 0;
	if (b->nblocks > 1)
		qsort(b->blocks, b->nblocks, sizeof(*b->blocks), cmp_block);
	if (!b->corrected && b->nblocks && b->nlaunches) {
		uint64_t first = UINT64_MAX;
		for (size_t i = 0; i < b->nlaunches; i++)
			if (b->launches[i].ts + b->launches[i].dur < first)
				first = b->launches[i].ts + b->launches[i].dur;
		off = (int64_t)(first - b->blocks[0].ns);
	}
	char clock[256];
	snprintf(clock, sizeof(clock), "CLOCK_REALTIME ns; device times %s",
		 b->corrected ? "%globaltimer + the measured offset"
		 : b->nblocks ? "%globaltimer shifted to the first launch (no clock measurement)"
			      : "from launch completions");
	free(m->clock);
	m->clock = xstrdup(clock);

	/* blocks: a begin and the end that follows it of the same (kernel, SM, block) make a span
	 * (a begin followed by another begin never ended: left out); then by start time */
	if (b->nblocks > 1)
		qsort(b->blocks, b->nblocks, sizeof(*b->blocks), cmp_block_id);
	size_t npairs = 0;
	for (size_t i = 0; i + 1 < b->nblocks; i++) {
		struct tr_block *k = &b->blocks[i], *e = &b->blocks[i + 1];
		if (k->end || !e->end || e->hash != k->hash || e->sm != k->sm ||
		    memcmp(e->block, k->block, sizeof(k->block)))
			continue;
		struct tr_block pair = *k;
		pair.end = 0;
		uint64_t end_ns = e->ns;
		b->blocks[npairs] = pair;   /* npairs <= i: nothing unread is overwritten */
		b->blocks[npairs++].ns2 = end_ns;
		i++;
	}
	if (npairs > 1)
		qsort(b->blocks, npairs, sizeof(*b->blocks), cmp_block);
	for (size_t i = 0; i < npairs; i++) {
		struct tr_block *k = &b->blocks[i];
		uint64_t end = k->ns2;
		uint64_t t0 = (uint64_t)((int64_t)k->ns + off), t1 = (uint64_t)((int64_t)end + off);
		struct tr_launch *l = launch_of(b, k->hash, t0, by_time);
		const char *kname = l ? l->kernel : "";
		char *dm = short_kernel(kname);
		char name[256];
		snprintf(name, sizeof(name), "%.200s", *dm ? dm : "block");
		char *paren = strchr(name, '(');
		if (paren && paren != name)
			*paren = 0;
		size_t t = sm_track(m, k->sm);
		struct tr_event *e = tr_event_add(m, t, t0, t1 - t0, name, "block");
		e->args = json_object_new_object();
		json_object *blk = json_object_new_array();
		for (int d = 0; d < 3; d++)
			json_object_array_add(blk, json_object_new_uint64(k->block[d]));
		json_object_object_add(e->args, "block", blk);
		json_object_object_add(e->args, "kernel", json_object_new_string(dm));
		json_object_object_add(e->args, "sm", json_object_new_uint64(k->sm));
		free(dm);
		if (l) {
			json_object_object_add(e->args, "launch", json_object_new_uint64(l->id));
			l->nblocks++;
			if (!l->kbegin || t0 < l->kbegin)
				l->kbegin = t0;
			if (t1 > l->kend)
				l->kend = t1;
		}
		SEE(t0);
		SEE(t1);
	}

	/* kernels: from their blocks, else from the launch to its completion (not before the
	 * stream's previous kernel ended) */
	uint64_t *lane_end = NULL;
	int nlanes = 0;
	size_t *order = malloc((b->nlaunches + 1) * sizeof(*order));
	uint64_t *keyed = malloc((b->nlaunches + 1) * 2 * sizeof(*keyed));
	if (!order || !keyed)
		abort();
	size_t nk = 0;
	struct { int64_t pid; char name[32]; uint64_t done; } *streams = NULL;
	size_t nstreams = 0;
	for (size_t i = 0; i < b->nlaunches; i++) {
		struct tr_launch *l = &b->launches[i];
		uint64_t t0 = l->kbegin, t1 = l->kend;
		if (!l->kbegin && l->done) {
			/* not before the stream's kernel before it ended (launches are in launch
			 * order per process here) */
			t0 = l->ts + l->dur;
			size_t s = 0;
			while (s < nstreams && (streams[s].pid != l->pid || strcmp(streams[s].name, l->stream)))
				s++;
			if (s == nstreams) {
				void *n2 = realloc(streams, (nstreams + 1) * sizeof(*streams));
				if (!n2)
					abort();
				streams = n2;
				streams[s].pid = l->pid;
				snprintf(streams[s].name, sizeof(streams[s].name), "%s", l->stream);
				streams[s].done = 0;
				nstreams++;
			}
			if (streams[s].done > t0 && streams[s].done <= l->done)
				t0 = streams[s].done;
			streams[s].done = l->done;
			t1 = l->done;
		}
		if (!t1 || t1 < t0)
			continue;
		l->kbegin = t0;
		l->kend = t1;
		keyed[2 * nk] = t0;
		keyed[2 * nk + 1] = i;
		nk++;
	}
	if (nk > 1)
		qsort(keyed, nk, 2 * sizeof(*keyed), cmp_u64);
	for (size_t n = 0; n < nk; n++) {
		struct tr_launch *l = &b->launches[keyed[2 * n + 1]];
		int lane = 0;
		while (lane < nlanes && lane_end[lane] > l->kbegin)
			lane++;
		if (lane == nlanes) {
			lane_end = realloc(lane_end, (size_t)(nlanes + 1) * sizeof(*lane_end));
			if (!lane_end)
				abort();
			nlanes++;
		}
		lane_end[lane] = l->kend;
		size_t t = gpu_track(m, lane);
		char *dm = short_kernel(l->kernel);
		struct tr_event *e = tr_event_add(m, t, l->kbegin, l->kend - l->kbegin,
						  *dm ? dm : "kernel", "kernel");
		e->flow_in = l->flow;
		e->args = json_object_new_object();
		json_object_object_add(e->args, "launch", json_object_new_uint64(l->id));
		json_object_object_add(e->args, "mangled", json_object_new_string(l->kernel));
		json_object_object_add(e->args, "blocks", json_object_new_uint64(l->grid));
		if (l->nblocks)
			json_object_object_add(e->args, "blocks_seen", json_object_new_uint64(l->nblocks));
		json_object_object_add(e->args, "timed_by", json_object_new_string(
			l->nblocks ? "block probes" : "launch completion"));
		json_object_object_add(e->args, "clock", json_object_new_string(m->clock));
		json_object *la = l->event != (size_t)-1 ? m->events[l->event].args : NULL;
		json_object *v;
		if (la && json_object_object_get_ex(la, "grid", &v))
			json_object_object_add(e->args, "grid", json_object_get(v));
		if (la && json_object_object_get_ex(la, "block", &v))
			json_object_object_add(e->args, "block", json_object_get(v));
		free(dm);
		SEE(l->kbegin);
		SEE(l->kend);
	}
	free(lane_end);
	free(order);
	free(keyed);
	free(streams);
	free(by_hash);
	by_hash = NULL;
	/* launches whose kernel got no span keep no flow */
	for (size_t i = 0; i < b->nlaunches; i++)
		if (!b->launches[i].kend && b->launches[i].event != (size_t)-1)
			m->events[b->launches[i].event].flow_out = 0;

	/* ring records: on their SM's track, typed when a probe object says how */
	uint64_t when = t_max ? t_max : 1;
	for (size_t i = 0; i < b->nrecs; i++) {
		struct tr_ring_rec *r = &b->recs[i];
		struct tr_ring_type *ty = NULL;
		for (size_t k = 0; k < b->ntypes; k++)
			if (!strcmp(b->types[k].map, r->map))
				ty = b->types[k].found ? &b->types[k].t : NULL, k = b->ntypes;
		if (!ty) {
			int known = 0;
			for (size_t k = 0; k < b->ntypes; k++)
				known |= !strcmp(b->types[k].map, r->map);
			if (!known) {
				GROW(b->types, b->ntypes, 0);
				b->types[b->ntypes].map = xstrdup(r->map);
				b->types[b->ntypes].found = tr_ring_type(b, r->map, &b->types[b->ntypes].t);
				ty = b->types[b->ntypes].found ? &b->types[b->ntypes].t : NULL;
				b->ntypes++;
			}
		}
		json_object *args;
		uint64_t t = 0;
		if (ty) {
			args = tr_ring_decode(ty, r->data, r->size);
			uint64_t ft = field_time(ty, r->data, r->size);
			if (ft)
				t = (uint64_t)((int64_t)ft + off);
		} else {
			args = json_object_new_object();
			char *hex = malloc(2 * r->size + 1);
			if (!hex)
				abort();
			hex[0] = 0;   /* an empty record too */
			for (size_t k = 0; k < r->size; k++)
				snprintf(hex + 2 * k, 3, "%02x", r->data[k]);
			json_object_object_add(args, "data", json_object_new_string(hex));
			free(hex);
		}
		json_object_object_add(args, "ring", json_object_new_uint64(r->ring));
		if (!t) {
			t = when;
			json_object_object_add(args, "time", json_object_new_string(
				"not in the record (placed at the trace's end)"));
		}
		struct tr_event *e = tr_event_add(m, sm_track(m, r->ring), t, 0, r->map, "event");
		e->instant = 1;
		e->args = args;
	}

	/* maps: their final records */
	size_t mt = (size_t)-1;
	json_object_object_foreach(b->maps, key, val) {
		if (mt == (size_t)-1)
			mt = tr_track_add(m, TR_MAPS, 0, 0, 0, "maps");
		char name[300];
		snprintf(name, sizeof(name), "@%.256s", key);
		struct tr_event *e = tr_event_add(m, mt, when, 0, name, "map");
		e->instant = 1;
		e->args = json_object_new_object();
		json_object_object_add(e->args, "record", json_object_new_string(
			json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN)));
	}
#undef SEE
}

/* ---- order ------------------------------------------------------------------------------- */

static struct tr_model *sort_m;

static int cmp_ev(const void *a, const void *b)
{
	const struct tr_event *x = &sort_m->events[*(const size_t *)a];
	const struct tr_event *y = &sort_m->events[*(const size_t *)b];
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->instant != y->instant)
		return x->instant ? 1 : -1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;   /* the parent first */
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct tr_event *x = &sort_m->events[*(const size_t *)a];
	const struct tr_event *y = &sort_m->events[*(const size_t *)b];
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;   /* keeps each track's order */
}

size_t *tr_model_order(struct tr_model *m)
{
	size_t *o = malloc((m->nevents + 1) * sizeof(*o));
	uint64_t *stack = malloc((m->nevents + 1) * sizeof(*stack));
	if (!o || !stack)
		abort();
	for (size_t i = 0; i < m->nevents; i++)
		o[i] = i;
	sort_m = m;
	if (m->nevents > 1)
		qsort(o, m->nevents, sizeof(*o), cmp_ev);
	/* per track: a span that would end after its enclosing span is cut at that end */
	size_t depth = 0, track = (size_t)-1;
	for (size_t i = 0; i < m->nevents; i++) {
		struct tr_event *e = &m->events[o[i]];
		if (e->track != track) {
			track = e->track;
			depth = 0;
		}
		while (depth && stack[depth - 1] <= e->ts)
			depth--;
		if (e->instant)
			continue;
		if (depth && e->ts + e->dur > stack[depth - 1])
			e->dur = stack[depth - 1] - e->ts;
		stack[depth++] = e->ts + e->dur;
	}
	free(stack);
	/* then by time, stable: index order is each track's order after the sort above */
	size_t *rank = malloc((m->nevents + 1) * sizeof(*rank));
	if (!rank)
		abort();
	/* renumber so that the stable tie-break follows the per-track order */
	struct tr_event *copy = malloc((m->nevents + 1) * sizeof(*copy));
	if (!copy)
		abort();
	for (size_t i = 0; i < m->nevents; i++)
		copy[i] = m->events[o[i]];
	if (m->nevents)
		memcpy(m->events, copy, m->nevents * sizeof(*copy));
	free(copy);
	for (size_t i = 0; i < m->nevents; i++)
		rank[i] = i;
	if (m->nevents > 1)
		qsort(rank, m->nevents, sizeof(*rank), cmp_ts);
	free(o);
	return rank;
}
