/* gpuprobe run's output: the poll loop, ring-buffer events, printk lines, lost counts, and the
 * periodic and final map prints (tables and histograms in output_maps.c). */
#include "maps/output_internal.h"
#include "maps/gpt.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ms(void *user)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t gp_output_now(struct gp_output *o) { return o->o.now_ms(o->o.now_user); }

int gp_output__open(const struct gp_output_opts *opts, struct gp_output **out)
{
	struct gp_output *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	if (opts)
		o->o = *opts;
	if (!o->o.out)
		o->o.out = stdout;
	if (!o->o.top_n)
		o->o.top_n = 10;
	if (!o->o.now_ms)
		o->o.now_ms = mono_ms;
	o->start_ms = o->last_print_ms = gp_output_now(o);
	pthread_mutex_init(&o->lock, NULL);
	*out = o;
	return 0;
}

int gp_output__add_set(struct gp_output *o, struct gp_map_set *set)
{
	pthread_mutex_lock(&o->lock);   /* the polling thread may be walking o->sets */
	struct gp_map_set **n = realloc(o->sets, (o->nsets + 1) * sizeof(*n));
	if (n) {
		o->sets = n;
		o->sets[o->nsets++] = set;
	}
	pthread_mutex_unlock(&o->lock);
	return n ? 0 : -ENOMEM;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;   /* gp_name_hash of include/gpuprobe/context.h */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int gp_output__add_kernel_name(struct gp_output *o, const char *mangled)
{
	uint32_t h = name_hash(mangled);
	int rc = 0;
	pthread_mutex_lock(&o->lock);
	if ((o->nknames + 1) * 2 > o->kcap) {
		size_t cap = o->kcap ? o->kcap * 2 : 64;
		struct gp_kname *t = calloc(cap, sizeof(*t));
		if (!t) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < o->kcap; i++) {
			if (!o->knames[i].name)
				continue;
			size_t j = o->knames[i].hash & (cap - 1);
			while (t[j].name)
				j = (j + 1) & (cap - 1);
			t[j] = o->knames[i];
		}
		free(o->knames);
		o->knames = t;
		o->kcap = cap;
	}
	size_t j = h & (o->kcap - 1);
	while (o->knames[j].name && o->knames[j].hash != h)
		j = (j + 1) & (o->kcap - 1);
	if (!o->knames[j].name) {   /* the first name with this hash stays */
		if (!(o->knames[j].name = strdup(mangled))) {
			rc = -ENOMEM;
			goto out;
		}
		o->knames[j].hash = h;
		o->nknames++;
	}
out:
	pthread_mutex_unlock(&o->lock);
	return rc;
}

const char *gp_output_kernel_name(struct gp_output *o, uint64_t id)
{
	if (!o->kcap || id > UINT32_MAX)
		return NULL;
	size_t j = (uint32_t)id & (o->kcap - 1);
	while (o->knames[j].name) {
		if (o->knames[j].hash == (uint32_t)id)
			return o->knames[j].name;
		j = (j + 1) & (o->kcap - 1);
	}
	return NULL;
}

void gp_output__close(struct gp_output *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->kcap; i++)
		free(o->knames[i].name);
	free(o->knames);
	pthread_mutex_destroy(&o->lock);
	gp_snap_free(&o->snap);
	gp_output_types_free(o->types);
	free(o->sets);
	free(o);
}

/* ---- events ------------------------------------------------------------------------------ */

struct drain_ctx {
	struct gp_output *o;
	const char *map;
	int printk;
};

static void hex_bytes(char *dst, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = hx[p[i] >> 4];
		dst[2 * i + 1] = hx[p[i] & 15];
	}
	dst[2 * n] = 0;
}

/* One record, one write(): a reader (or a kill at any moment) sees whole lines only. Whatever
 * stdio holds for the stream goes first, to keep the order. Streams without a descriptor (a
 * memory stream in tests) get the two stdio calls. */
void gp_output_json(struct gp_output *o, json_object *j)
{
	size_t n = 0;
	const char *s = json_object_to_json_string_length(
		j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	int fd = fileno(o->o.out);
	char *line = fd >= 0 ? malloc(n + 1) : NULL;
	if (!line) {
		fputs(s, o->o.out);
		fputc('\n', o->o.out);
		json_object_put(j);
		return;
	}
	memcpy(line, s, n);
	line[n] = '\n';
	fflush(o->o.out);
	for (size_t done = 0; done < n + 1;) {
		ssize_t w = write(fd, line + done, n + 1 - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	free(line);
	json_object_put(j);
}

static void record_locked(struct gp_output *o, int printk, const char *map, unsigned ring,
			  const void *data, size_t size)
{
	if (printk) {
		char line[1024];
		int n = gp_printk_format(data, size, line, sizeof(line));
		if (n < 0)
			snprintf(line, sizeof(line), "(malformed printk record of %zu bytes)", size);
		if (o->o.json) {
			json_object *j = json_object_new_object();
			json_object_object_add(j, "type", json_object_new_string("printk"));
			size_t l = strlen(line);
			while (l && line[l - 1] == '\n')
				line[--l] = 0;
			json_object_object_add(j, "text", json_object_new_string(line));
			gp_output_json(o, j);
		} else {
			size_t l = strlen(line);
			fputs(line, o->o.out);
			if (!l || line[l - 1] != '\n')
				fputc('\n', o->o.out);
		}
		return;
	}
	const struct gp_gpt_map_info *ty = gp_output_type(o, map);
	if (ty && size < ty->m->record_size)
		ty = NULL;   /* shorter than its type: words */
	char *typed = ty ? malloc(gp_gpt_format_max(ty, (uint32_t)size)) : NULL;
	if (typed)   /* "MAP ring R: f=v ...\n", or {"map":..,"ring":..,"f":v,...}\n */
		typed[gp_gpt_format(ty, ring, data, (uint32_t)size, o->o.json, typed)] = 0;
	if (o->o.json) {
		char *hex = malloc(2 * size + 1);
		if (!hex) {
			free(typed);
			return;
		}
		hex_bytes(hex, data, size);
		json_object *j = json_object_new_object();
		json_object_object_add(j, "type", json_object_new_string("event"));
		json_object_object_add(j, "map", json_object_new_string(map));
		json_object_object_add(j, "ring", json_object_new_int((int)ring));
		json_object_object_add(j, "data", json_object_new_string(hex));
		json_object *f = typed ? json_tokener_parse(typed) : NULL;
		if (f) {   /* the fields, without the map and ring said above */
			json_object_object_del(f, "map");
			json_object_object_del(f, "ring");
			json_object_object_add(j, "fields", f);
		}
		gp_output_json(o, j);
		free(hex);
		free(typed);
		return;
	}
	if (typed) {
		const char *fields = strchr(typed, ':');   /* after "MAP ring R" */
		fprintf(o->o.out, "@%s[ring %u]:%s", map, ring, fields ? fields + 1 : "\n");
		free(typed);
		return;
	}
	fprintf(o->o.out, "@%s[ring %u]:", map, ring);
	const uint8_t *p = data;
	for (size_t i = 0; i < size; i += 8) {
		uint64_t w = 0;
		memcpy(&w, p + i, size - i < 8 ? size - i : 8);
		fprintf(o->o.out, " 0x%016llx", (unsigned long long)w);
	}
	fputc('\n', o->o.out);
}

static int on_record(void *user, unsigned ring, const void *data, size_t size)
{
	struct drain_ctx *c = user;
	record_locked(c->o, c->printk, c->map, ring, data, size);
	return 0;
}

void gp_output__record(struct gp_output *o, int printk, const char *map, unsigned ring,
		       const void *data, size_t size)
{
	pthread_mutex_lock(&o->lock);
	record_locked(o, printk, map, ring, data, size);
	fflush(o->o.out);
	pthread_mutex_unlock(&o->lock);
}

static int drain_all(struct gp_output *o)
{
	int total = 0;
	for (size_t s = 0; s < o->nsets; s++) {
		struct gp_map_set *set = o->sets[s];
		struct gp_map_inst *pk = gp_map_set__printk(set);
		if (pk) {
			struct drain_ctx c = {o, gp_map_inst__name(pk), 1};
			int n = gp_map_inst__ring_drain(pk, on_record, &c);
			total += n > 0 ? n : 0;
		}
		for (size_t i = 0; i < gp_map_set__count(set); i++) {
			struct gp_map_inst *m = gp_map_set__map(set, i);
			if (gp_map_inst__desc(m)->kind != GP_MAP_KIND_RING)
				continue;
			struct drain_ctx c = {o, gp_map_inst__name(m), 0};
			int n = gp_map_inst__ring_drain(m, on_record, &c);
			total += n > 0 ? n : 0;
		}
	}
	return total;
}

/* The snapshot this print is made from: the one handed over, or one of the sets taken now
 * (caller holds o->lock). */
static void take_snapshot(struct gp_output *o)
{
	if (o->fed)
		return;
	gp_snap_free(&o->snap);
	struct gp_output_clock c = {0};
	int clock = o->o.clock && !o->o.clock(o->o.clock_user, &c);
	struct gp_snap_input in = {.sets = o->sets, .nsets = o->nsets, .clock = clock ? &c : NULL,
				   .time_ms = gp_output_now(o) - o->start_ms};
	void *blob = NULL;
	size_t len = 0;
	if (!gp_snap_build(&in, &blob, &len))
		gp_snap_parse(blob, len, &o->snap, NULL, 0);
	free(blob);
}

int gp_output__use_snapshot(struct gp_output *o, const void *blob, size_t len, char *err,
			    size_t errlen)
{
	struct gp_snap s;
	int rc = gp_snap_parse(blob, len, &s, err, errlen);
	if (rc)
		return rc;
	pthread_mutex_lock(&o->lock);
	gp_snap_free(&o->snap);
	o->snap = s;
	o->fed = 1;
	pthread_mutex_unlock(&o->lock);
	return 0;
}

static void print_maps_locked(struct gp_output *o, int periodic)
{
	double t = (double)(gp_output_now(o) - o->start_ms) / 1000.0;
	take_snapshot(o);
	if (periodic && !o->o.json)
		fprintf(o->o.out, "--- %.1fs ---\n", t);
	for (size_t i = 0; i < o->snap.nmaps; i++)
		gp_output_print_map(o, &o->snap.maps[i], t);
	fflush(o->o.out);
}

int gp_output__poll(struct gp_output *o)
{
	pthread_mutex_lock(&o->lock);
	int n = drain_all(o);
	if (o->o.interval_ms) {
		uint64_t now = gp_output_now(o);
		if (now - o->last_print_ms >= o->o.interval_ms) {
			o->last_print_ms = now;
			print_maps_locked(o, 1);
		}
	}
	fflush(o->o.out);
	pthread_mutex_unlock(&o->lock);
	return n;
}

void gp_output__print_maps(struct gp_output *o)
{
	pthread_mutex_lock(&o->lock);
	print_maps_locked(o, 0);
	pthread_mutex_unlock(&o->lock);
}

void gp_output__print_final(struct gp_output *o)
{
	pthread_mutex_lock(&o->lock);
	drain_all(o);
	take_snapshot(o);
	if (o->snap.has_clock)
		gp_output_print_clock(o, &o->snap.clock);
	o->fed |= 2;   /* the maps below from this same snapshot */
	print_maps_locked(o, 0);
	o->fed &= ~2;
	for (size_t i = 0; i < o->snap.nmaps; i++) {
		const struct gp_snap_map *m = &o->snap.maps[i];
		if (m->kind != GP_MAP_KIND_RING || !m->lost)
			continue;
		if (o->o.json) {
			json_object *j = json_object_new_object();
			json_object_object_add(j, "type", json_object_new_string("lost"));
			json_object_object_add(j, "map", json_object_new_string(m->name));
			json_object_object_add(j, "count", json_object_new_uint64(m->lost));
			gp_output_json(o, j);
		} else {
			fprintf(o->o.out, "@%s: %llu lost\n", m->name, (unsigned long long)m->lost);
		}
	}
	fflush(o->o.out);
	pthread_mutex_unlock(&o->lock);
}
