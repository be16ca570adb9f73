/* Snapshots of map sets as one byte string, and their checked decoding (snapshot.h). */
#include "maps/snapshot.h"
#include "maps/maps.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encoding ---------------------------------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	int failed;
};

static void *grow(struct buf *b, size_t n)
{
	size_t need = gp_round_up(n, 8);
	if (b->failed)
		return NULL;
	if (b->len + need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + need)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	void *at = b->p + b->len;
	memset(at, 0, need);
	b->len += need;
	return at;
}

static void put(struct buf *b, const void *src, size_t n)
{
	void *at = grow(b, n);
	if (at && n)
		memcpy(at, src, n);
}

static void put_str(struct buf *b, const char *s, size_t n)
{
	uint8_t *at = grow(b, n + 1);
	if (at)
		memcpy(at, s, n);   /* the NUL is grow's zero */
}

struct map_head {
	uint32_t name_len, bpf_type, kind, key_size, value_size, max_entries, flags, print_as;
	uint64_t print_step, lost, count;
	uint32_t copies, zero;
};

struct clock_head {
	int64_t offset_ns;
	uint64_t uncertainty_ns;
	int64_t monotonic_offset_ns, last_offset_ns;
	uint64_t last_uncertainty_ns;
	uint32_t checks, updates;
	double span_s;
	uint64_t resolution_ns;
	uint32_t corrected, nhistory, why_len, zero;
};

struct blob_head {
	uint32_t magic, version;
	uint64_t len, time_ms;
	uint32_t nmaps, nnames, has_clock, zero;
};

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void put_map(struct buf *b, struct gp_map_inst *m)
{
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	const char *name = gp_map_inst__name(m);
	struct map_head h = {.name_len = (uint32_t)strnlen(name, GP_SNAP_MAX_NAME - 1),
			     .bpf_type = d->bpf_type, .kind = d->kind, .key_size = d->key_size,
			     .value_size = d->value_size, .max_entries = d->max_entries,
			     .flags = d->flags, .copies = 1};
	h.print_as = gp_map_inst__print_as(m, &h.print_step);
	struct gp_map_snapshot s = {0};
	uint8_t *vals = NULL;
	if (d->kind == GP_MAP_KIND_RING) {
		h.lost = gp_map_inst__ring_drops(m);
	} else if ((h.copies = d->flags & GP_MAPF_PERCPU && d->nshards > 1 ? d->nshards : 1),
		   !gp_map_inst__snapshot(m, &s) && s.key_size == d->key_size &&
		   (vals = malloc(s.count ? s.count * d->value_size * h.copies : 1))) {
		/* per-SM copies kept one by one (metrics label them by SM; the text sums them),
		 * per-thread copies summed, as Linux user space sums per-CPU values; array
		 * elements that are all zero left out (an array holds every index) */
		bool sum = d->flags & GP_MAPF_PERTHREAD;
		size_t n = 0, vsize = (size_t)d->value_size * h.copies;
		for (size_t i = 0; i < s.count; i++) {
			const uint8_t *v = s.values + i * s.value_size;
			uint8_t *dst = vals + n * vsize;
			if (sum) {
				memset(dst, 0, d->value_size);
				for (uint32_t c = 0; c < d->nshards; c++)
					gp_map_add_words(dst, v + (size_t)c * d->value_stride, d->value_size);
			} else if (h.copies > 1) {
				for (uint32_t c = 0; c < h.copies; c++)
					memcpy(dst + (size_t)c * d->value_size, v + (size_t)c * d->value_stride,
					       d->value_size);
			} else {
				memcpy(dst, v, d->value_size);
			}
			if (d->kind == GP_MAP_KIND_ARRAY && all_zero(dst, vsize))
				continue;
			if (n != i)
				memmove(s.keys + n * s.key_size, s.keys + i * s.key_size, s.key_size);
			n++;
		}
		h.count = n;
	}
	put(b, &h, sizeof(h));
	put_str(b, name, h.name_len);
	if (h.count) {
		put(b, s.keys, h.count * h.key_size);
		put(b, vals, h.count * h.value_size * h.copies);
	}
	free(vals);
	gp_map_snapshot__free(&s);
}

int gp_snap_build(const struct gp_snap_input *in, void **blob, size_t *len)
{
	struct buf b = {0};
	struct blob_head h = {.magic = GP_SNAP_MAGIC, .version = GP_SNAP_VERSION,
			      .time_ms = in->time_ms, .nnames = (uint32_t)in->nnames,
			      .has_clock = in->clock != NULL};
	for (size_t s = 0; s < in->nsets; s++)
		h.nmaps += (uint32_t)gp_map_set__count(in->sets[s]) + (gp_map_set__printk(in->sets[s]) != NULL);
	put(&b, &h, sizeof(h));
	if (in->clock) {
		const struct gp_output_clock *c = in->clock;
		unsigned nh = c->nhistory < GP_SNAP_MAX_HISTORY ? c->nhistory : GP_SNAP_MAX_HISTORY;
		const char *why = c->why ? c->why : "";
		struct clock_head ch = {c->offset_ns, c->uncertainty_ns, c->monotonic_offset_ns,
					c->last_offset_ns, c->last_uncertainty_ns, c->checks, c->updates,
					c->span_s, c->resolution_ns, (uint32_t)!!c->corrected, nh,
					(uint32_t)strnlen(why, GP_SNAP_MAX_NAME - 1), 0};
		put(&b, &ch, sizeof(ch));
		put_str(&b, why, ch.why_len);
		for (unsigned i = 0; i < nh; i++) {
			struct { double t; int64_t o; uint64_t u; } e = {
				c->history[i].time_s, c->history[i].offset_ns, c->history[i].uncertainty_ns};
			put(&b, &e, sizeof(e));
		}
	}
	for (size_t s = 0; s < in->nsets; s++) {
		for (size_t i = 0; i < gp_map_set__count(in->sets[s]); i++)
			put_map(&b, gp_map_set__map(in->sets[s], i));
		if (gp_map_set__printk(in->sets[s]))
			put_map(&b, gp_map_set__printk(in->sets[s]));
	}
	for (size_t i = 0; i < in->nnames; i++) {
		const char *n = in->names[i].name ? in->names[i].name : "";
		uint32_t e[2] = {in->names[i].hash, (uint32_t)strnlen(n, GP_SNAP_MAX_NAME - 1)};
		put(&b, e, sizeof(e));
		put_str(&b, n, e[1]);
	}
	if (b.failed) {
		free(b.p);
		return -ENOMEM;
	}
	((struct blob_head *)b.p)->len = b.len;
	*blob = b.p;
	*len = b.len;
	return 0;
}

/* ---- decoding ---------------------------------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t len, at;
	char *err;
	size_t errlen;
	int bad;
};

static int bad(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct rd *r, const char *fmt, ...)
{
	if (!r->bad && r->err && r->errlen) {
		va_list ap;
		va_start(ap, fmt);
		int n = snprintf(r->err, r->errlen, "snapshot corrupt at byte %zu: ", r->at);
		if (n >= 0 && (size_t)n < r->errlen)
			vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	r->bad = 1;
	return -EBADMSG;
}

/* n bytes (padded to 8) at the cursor, or NULL when there are not that many. */
static const uint8_t *take(struct rd *r, size_t n, const char *what)
{
	if (r->bad)
		return NULL;
	if (n > r->len - r->at || gp_round_up(n, 8) > r->len - r->at) {
		bad(r, "%s needs %zu bytes, %zu left", what, n, r->len - r->at);
		return NULL;
	}
	const uint8_t *p = r->p + r->at;
	r->at += gp_round_up(n, 8);
	return p;
}

/* A string of n bytes and its NUL, no NUL inside. */
static const char *take_str(struct rd *r, uint32_t n, const char *what)
{
	if (n >= GP_SNAP_MAX_NAME) {
		bad(r, "%s of %u bytes", what, n);
		return NULL;
	}
	const char *s = (const char *)take(r, (size_t)n + 1, what);
	if (s && (s[n] || strnlen(s, n) != n)) {
		bad(r, "%s is not a string", what);
		return NULL;
	}
	return s;
}

/* count x size bytes, checked for overflow. */
static const uint8_t *take_array(struct rd *r, uint64_t count, uint32_t size, const char *what)
{
	if (size && count > (r->len - r->at) / size) {
		bad(r, "%s: %llu of %u bytes do not fit", what, (unsigned long long)count, size);
		return NULL;
	}
	return take(r, (size_t)count * size, what);
}

int gp_snap_parse(const void *blob, size_t len, struct gp_snap *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	uint8_t *mem = malloc(len ? len : 1);
	if (!mem)
		return -ENOMEM;
	memcpy(mem, blob, len);
	struct rd r = {.p = mem, .len = len, .err = err, .errlen = errlen};
	struct blob_head h;
	const uint8_t *hp = take(&r, sizeof(h), "the header");
	if (!hp)
		goto fail;
	memcpy(&h, hp, sizeof(h));
	if (h.magic != GP_SNAP_MAGIC || h.version != GP_SNAP_VERSION) {
		bad(&r, "magic 0x%08x version %u (expected 0x%08x version %u)", h.magic, h.version,
		    GP_SNAP_MAGIC, GP_SNAP_VERSION);
		goto fail;
	}
	if (h.len != len) {
		bad(&r, "says %llu bytes, is %zu", (unsigned long long)h.len, len);
		goto fail;
	}
	if (h.nmaps > GP_SNAP_MAX_MAPS || h.nnames > GP_SNAP_MAX_NAMES || h.has_clock > 1) {
		bad(&r, "%u maps, %u names, clock %u", h.nmaps, h.nnames, h.has_clock);
		goto fail;
	}
	out->time_ms = h.time_ms;
	out->maps = calloc(h.nmaps ? h.nmaps : 1, sizeof(*out->maps));
	out->names = calloc(h.nnames ? h.nnames : 1, sizeof(*out->names));
	if (!out->maps || !out->names) {
		gp_snap_free(out);
		free(mem);
		return -ENOMEM;
	}
	if (h.has_clock) {
		struct clock_head ch;
		const uint8_t *cp = take(&r, sizeof(ch), "the clock");
		if (!cp)
			goto fail;
		memcpy(&ch, cp, sizeof(ch));
		if (ch.nhistory > GP_SNAP_MAX_HISTORY || ch.corrected > 1) {
			bad(&r, "clock with %u checks kept", ch.nhistory);
			goto fail;
		}
		const char *why = take_str(&r, ch.why_len, "the clock's reason");
		const uint8_t *hist = take_array(&r, ch.nhistory, 24, "the clock's checks");
		if (!why || !hist)
			goto fail;
		struct gp_output_clock_check *cc = calloc(ch.nhistory ? ch.nhistory : 1, sizeof(*cc));
		if (!cc) {
			gp_snap_free(out);
			free(mem);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < ch.nhistory; i++) {
			memcpy(&cc[i].time_s, hist + 24 * i, 8);
			memcpy(&cc[i].offset_ns, hist + 24 * i + 8, 8);
			memcpy(&cc[i].uncertainty_ns, hist + 24 * i + 16, 8);
		}
		out->has_clock = 1;
		out->clock = (struct gp_output_clock){
			.corrected = (int)ch.corrected, .why = ch.why_len ? why : NULL,
			.offset_ns = ch.offset_ns, .uncertainty_ns = ch.uncertainty_ns,
			.monotonic_offset_ns = ch.monotonic_offset_ns, .last_offset_ns = ch.last_offset_ns,
			.last_uncertainty_ns = ch.last_uncertainty_ns, .checks = ch.checks,
			.updates = ch.updates, .span_s = ch.span_s, .resolution_ns = ch.resolution_ns,
			.history = cc, .nhistory = ch.nhistory};
	}
	for (uint32_t i = 0; i < h.nmaps; i++) {
		struct map_head mh;
		const uint8_t *mp = take(&r, sizeof(mh), "a map's description");
		if (!mp)
			goto fail;
		memcpy(&mh, mp, sizeof(mh));
		if (mh.key_size > GP_SNAP_MAX_KEY || mh.value_size > GP_SNAP_MAX_VALUE ||
		    !mh.copies || mh.copies > GP_SNAP_MAX_COPIES || mh.count > len ||
		    (mh.count && (!mh.key_size || !mh.value_size)) ||
		    (mh.kind == GP_MAP_KIND_RING && mh.count)) {
			bad(&r, "map %u: key %u bytes, value %u bytes, %llu of %u elements", i,
			    mh.key_size, mh.value_size, (unsigned long long)mh.count, mh.max_entries);
			goto fail;
		}
		struct gp_snap_map *m = &out->maps[i];
		m->name = take_str(&r, mh.name_len, "a map's name");
		m->keys = take_array(&r, mh.count, mh.key_size, "a map's keys");
		m->values = take_array(&r, mh.count * mh.copies, mh.value_size, "a map's values");
		if (!m->name || !m->keys || !m->values)
			goto fail;
		m->bpf_type = mh.bpf_type;
		m->kind = mh.kind;
		m->key_size = mh.key_size;
		m->value_size = mh.value_size;
		m->max_entries = mh.max_entries;
		m->flags = mh.flags;
		m->print_as = mh.print_as;
		m->print_step = mh.print_step;
		m->lost = mh.lost;
		m->copies = mh.copies;
		m->count = (size_t)mh.count;
		out->nmaps++;
	}
	for (uint32_t i = 0; i < h.nnames; i++) {
		const uint8_t *e = take(&r, 8, "a kernel name");
		if (!e)
			goto fail;
		uint32_t hash, n;
		memcpy(&hash, e, 4);
		memcpy(&n, e + 4, 4);
		const char *s = take_str(&r, n, "a kernel name");
		if (!s)
			goto fail;
		out->names[i] = (struct gp_snap_name){hash, s};
		out->nnames++;
	}
	if (r.at != len) {
		bad(&r, "%zu bytes after the last part", len - r.at);
		goto fail;
	}
	out->mem = mem;
	return 0;
fail:
	gp_snap_free(out);
	free(mem);
	return -EBADMSG;
}

void gp_snap_free(struct gp_snap *s)
{
	if (!s)
		return;
	free((void *)s->clock.history);
	free(s->maps);
	free(s->names);
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

const char *gp_snap_kernel_name(const struct gp_snap *s, uint64_t id)
{
	for (size_t i = 0; s && id <= UINT32_MAX && i < s->nnames; i++)
		if (s->names[i].hash == (uint32_t)id)
			return s->names[i].name;
	return NULL;
}
