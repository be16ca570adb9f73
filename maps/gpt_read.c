/* The capture file's reader (gpt.h): one pass checks every chunk and record against the
 * bytes, so that iterating afterwards (gp_gpt__for_each) needs no checks and runs at memory
 * speed; a bad file is one line naming the chunk's offset and what is wrong with it. */
#include "maps/gpt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RINGS (1u << 16)

struct map_slot {
	struct gp_gpt_map_info info;
	char name[256];
	uint64_t *next_pos;           /* per ring: where the last span ended */
	uint32_t btf_index;
};

struct btf_slot {
	uint32_t index;
	const void *data;
	size_t len;
};

struct gp_gpt {
	const uint8_t *data;
	size_t size, end_off;         /* end_off: where whole chunks end */
	struct map_slot **maps;       /* by id (each its own allocation: info.name points into it) */
	size_t nmaps;                 /* ids 0..nmaps-1 (absent ones NULL) */
	struct btf_slot *btfs;
	size_t nbtfs;
	const struct gp_gpt_clock *clock;
	const struct gp_gpt_end *end;
	int truncated;
	uint64_t realtime_ns;
};

static int bad(char *err, size_t errlen, uint64_t off, const char *fmt, ...)
{
	char why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "chunk at byte %llu: %s", (unsigned long long)off, why);
	return -EBADMSG;
}

static int check_map(struct gp_gpt *g, uint32_t id, const uint8_t *p, uint32_t size, uint64_t off,
		     char *err, size_t errlen)
{
	if (id >= GP_GPT_MAX_MAPS)
		return bad(err, errlen, off, "map id %u is over the limit of %u", id, GP_GPT_MAX_MAPS);
	if (size < sizeof(struct gp_gpt_map))
		return bad(err, errlen, off, "map chunk of %u bytes is shorter than its %zu-byte header",
			   size, sizeof(struct gp_gpt_map));
	const struct gp_gpt_map *m = (const void *)p;
	size_t nl = m->name_len, need = sizeof(*m) + ((nl + 7) & ~(size_t)7) +
					(size_t)m->nfields * sizeof(struct gp_gpt_field);
	if (!nl || nl > 255)
		return bad(err, errlen, off, "map %u: name length %zu (1 to 255)", id, nl);
	if (m->nfields > GP_GPT_MAX_FIELDS)
		return bad(err, errlen, off, "map %u: %u fields (at most %u)", id, m->nfields,
			   GP_GPT_MAX_FIELDS);
	if (need > size)
		return bad(err, errlen, off, "map %u: name and fields need %zu bytes, the chunk has %u",
			   id, need, size);
	if (!m->nrings || m->nrings > MAX_RINGS)
		return bad(err, errlen, off, "map %u: %u rings (1 to %u)", id, m->nrings, MAX_RINGS);
	if (m->ring_bytes < 16 || (m->ring_bytes & (m->ring_bytes - 1)))
		return bad(err, errlen, off, "map %u: ring size %u is not a power of two >= 16", id,
			   m->ring_bytes);
	if (!m->sample_every)
		return bad(err, errlen, off, "map %u: sample rate 0 (1 means every event)", id);
	const char *name = (const char *)p + sizeof(*m);
	if (memchr(name, 0, nl))
		return bad(err, errlen, off, "map %u: a NUL inside its name", id);
	const struct gp_gpt_field *f = (const void *)(p + sizeof(*m) + ((nl + 7) & ~(size_t)7));
	for (unsigned i = 0; i < m->nfields; i++) {
		if (!memchr(f[i].name, 0, GP_GPT_FIELD_NAME))
			return bad(err, errlen, off, "map %u: field %u's name is not terminated", id, i);
		uint32_t k = f[i].kind, sz = f[i].size;
		if (k < GP_GPT_F_UINT || k > GP_GPT_F_BYTES)
			return bad(err, errlen, off, "map %u: field '%s' has kind %u", id, f[i].name, k);
		if ((k == GP_GPT_F_UINT || k == GP_GPT_F_INT) && sz != 1 && sz != 2 && sz != 4 && sz != 8)
			return bad(err, errlen, off, "map %u: integer field '%s' of %u bytes", id,
				   f[i].name, sz);
		if (k == GP_GPT_F_FLOAT && sz != 4 && sz != 8)
			return bad(err, errlen, off, "map %u: float field '%s' of %u bytes", id, f[i].name,
				   sz);
		if (!sz || (uint64_t)f[i].offset + sz > m->record_size)
			return bad(err, errlen, off, "map %u: field '%s' (%u bytes at %u) is outside the "
				   "%u-byte record", id, f[i].name, sz, f[i].offset, m->record_size);
	}
	if (id >= g->nmaps) {
		struct map_slot **n = realloc(g->maps, sizeof(*n) * (id + 1));
		if (!n) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		memset(n + g->nmaps, 0, sizeof(*n) * (id + 1 - g->nmaps));
		g->maps = n;
		g->nmaps = id + 1;
	}
	if (g->maps[id])
		return bad(err, errlen, off, "map %u is described twice", id);
	struct map_slot *s = calloc(1, sizeof(*s));
	if (!s || !(s->next_pos = calloc(m->nrings, sizeof(uint64_t)))) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->maps[id] = s;
	memcpy(s->name, name, nl);
	s->name[nl] = 0;
	s->info.m = m;
	s->info.name = s->name;
	s->info.fields = f;
	s->btf_index = m->btf;
	return 0;
}

static struct map_slot *map_of(struct gp_gpt *g, uint32_t id)
{
	return id < g->nmaps ? g->maps[id] : NULL;
}

static int check_span(struct gp_gpt *g, uint32_t id, uint32_t ring, const uint8_t *p,
		      uint32_t size, uint64_t off, char *err, size_t errlen)
{
	struct map_slot *s = map_of(g, id);
	if (!s)
		return bad(err, errlen, off, "span of map %u, which no map chunk before it describes", id);
	if (ring >= s->info.m->nrings)
		return bad(err, errlen, off, "span of ring %u of map '%s', which has %u rings", ring,
			   s->name, s->info.m->nrings);
	if (size < 8)
		return bad(err, errlen, off, "span of %u bytes has no position", size);
	uint64_t pos;
	memcpy(&pos, p, 8);
	if (pos < s->next_pos[ring])
		return bad(err, errlen, off, "span of ring %u of map '%s' starts at %llu, before the "
			   "end of the one before it (%llu)", ring, s->name, (unsigned long long)pos,
			   (unsigned long long)s->next_pos[ring]);
	uint32_t cap = s->info.m->ring_bytes;
	for (uint32_t at = 8; at < size;) {
		if (size - at < 8)
			return bad(err, errlen, off, "record at +%u: %u bytes left, less than its header",
				   at, size - at);
		uint32_t len, state;
		memcpy(&len, p + at, 4);
		memcpy(&state, p + at + 4, 4);
		if (state != 1 && state != 2)
			return bad(err, errlen, off, "record at +%u: state %u (1 committed, 2 discarded)",
				   at, state);
		uint64_t adv = 8 + (((uint64_t)len + 7) & ~7ull);
		if (adv > size - at || adv > cap)
			return bad(err, errlen, off, "record at +%u: %u bytes overrun the span of %u "
				   "bytes", at, len, size);
		if (state == 1)
			s->info.records++;
		else
			s->info.discarded++;
		at += (uint32_t)adv;
	}
	s->next_pos[ring] = pos + size - 8;
	return 0;
}

int gp_gpt__open_mem(const void *data, size_t size, struct gp_gpt **out, char *err, size_t errlen)
{
	*out = NULL;
	const uint8_t *d = data;
	if (size < GP_GPT_HEADER_SIZE || memcmp(d, GP_GPT_MAGIC, 8)) {
		snprintf(err, errlen, "not a gpuprobe capture (no GPTRACE header)");
		return -EBADMSG;
	}
	uint32_t version, hs;
	memcpy(&version, d + 8, 4);
	memcpy(&hs, d + 12, 4);
	if (version != GP_GPT_VERSION) {
		snprintf(err, errlen, "capture version %u (this gpuprobe reads version %u)", version,
			 GP_GPT_VERSION);
		return -EBADMSG;
	}
	if (hs != GP_GPT_HEADER_SIZE) {
		snprintf(err, errlen, "header size %u (expected %u)", hs, GP_GPT_HEADER_SIZE);
		return -EBADMSG;
	}
	struct gp_gpt *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->data = d;
	g->size = size;
	memcpy(&g->realtime_ns, d + 16, 8);
	int rc = 0;
	uint64_t off = GP_GPT_HEADER_SIZE;
	while (off < size) {
		if (g->end) {
			rc = bad(err, errlen, off, "data after the end chunk");
			break;
		}
		if (size - off < GP_GPT_CHUNK_HDR) {
			g->truncated = 1;   /* a writer stopped mid-chunk: what came before is whole */
			break;
		}
		uint32_t h[4];
		memcpy(h, d + off, sizeof(h));
		if (!h[0] && !h[1] && !h[2] && !h[3]) {
			/* space reserved and never written: the writer's process died (its file was
			 * reserved ahead, gpt_mapped.c, or a later chunk landed before this one) */
			g->truncated = 1;
			break;
		}
		if (h[1] & 7 || h[1] > GP_GPT_MAX_CHUNK) {
			rc = bad(err, errlen, off, "size %u is not a multiple of 8 up to %u", h[1],
				 GP_GPT_MAX_CHUNK);
			break;
		}
		if (h[1] > size - off - GP_GPT_CHUNK_HDR) {
			g->truncated = 1;
			break;
		}
		const uint8_t *p = d + off + GP_GPT_CHUNK_HDR;
		switch (h[0]) {
		case GP_GPT_MAP:
			rc = check_map(g, h[2], p, h[1], off, err, errlen);
			break;
		case GP_GPT_BTF: {
			struct btf_slot *n = realloc(g->btfs, sizeof(*n) * (g->nbtfs + 1));
			if (!n) {
				snprintf(err, errlen, "out of memory");
				rc = -ENOMEM;
				break;
			}
			g->btfs = n;
			g->btfs[g->nbtfs++] = (struct btf_slot){h[2], p, h[1]};
			break;
		}
		case GP_GPT_CLOCK:
			if (h[1] < sizeof(struct gp_gpt_clock))
				rc = bad(err, errlen, off, "clock chunk of %u bytes (expected %zu)", h[1],
					 sizeof(struct gp_gpt_clock));
			else
				g->clock = (const void *)p;
			break;
		case GP_GPT_SPAN:
			rc = check_span(g, h[2], h[3], p, h[1], off, err, errlen);
			break;
		case GP_GPT_DROPS: {
			struct map_slot *s = map_of(g, h[2]);
			if (!s) {
				rc = bad(err, errlen, off, "drop counts of map %u, which no map chunk "
					 "before it describes", h[2]);
				break;
			}
			if (h[1] != (uint64_t)s->info.m->nrings * 8) {
				rc = bad(err, errlen, off, "drop counts of %u bytes for map '%s' of %u rings",
					 h[1], s->name, s->info.m->nrings);
				break;
			}
			s->info.drops = (const void *)p;
			s->info.drops_total = 0;
			for (uint32_t r = 0; r < s->info.m->nrings; r++)
				s->info.drops_total += s->info.drops[r];
			break;
		}
		case GP_GPT_STATS: {
			struct map_slot *s = map_of(g, h[2]);
			if (!s) {
				rc = bad(err, errlen, off, "ring statistics of map %u, which no map chunk "
					 "before it describes", h[2]);
				break;
			}
			if (h[1] != (uint64_t)s->info.m->nrings * sizeof(struct gp_gpt_ring_stats)) {
				rc = bad(err, errlen, off, "ring statistics of %u bytes for map '%s' of %u "
					 "rings", h[1], s->name, s->info.m->nrings);
				break;
			}
			s->info.stats = (const void *)p;
			s->info.wait_ns = s->info.offered = 0;
			s->info.gave_up = 0;
			for (uint32_t r = 0; r < s->info.m->nrings; r++) {
				s->info.wait_ns += s->info.stats[r].wait_ns;
				s->info.offered += s->info.stats[r].offered;
				s->info.gave_up += s->info.stats[r].gave_up_ns != 0;
			}
			break;
		}
		case GP_GPT_END:
			if (h[1] < sizeof(struct gp_gpt_end))
				rc = bad(err, errlen, off, "end chunk of %u bytes (expected %zu)", h[1],
					 sizeof(struct gp_gpt_end));
			else
				g->end = (const void *)p;
			break;
		default:
			rc = bad(err, errlen, off, "unknown chunk type %u", h[0]);
		}
		if (rc)
			break;
		off += GP_GPT_CHUNK_HDR + h[1];
	}
	g->end_off = off;
	if (!rc && !g->end)
		g->truncated = 1;
	for (size_t i = 0; !rc && i < g->nmaps; i++) {
		struct map_slot *s = g->maps[i];
		if (!s || s->btf_index == GP_GPT_NO_BTF)
			continue;
		for (size_t b = 0; b < g->nbtfs; b++)
			if (g->btfs[b].index == s->btf_index) {
				s->info.btf = g->btfs[b].data;
				s->info.btf_len = g->btfs[b].len;
			}
	}
	if (rc) {
		gp_gpt__close(g);
		return rc;
	}
	*out = g;
	return 0;
}

void gp_gpt__close(struct gp_gpt *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nmaps; i++)
		if (g->maps[i]) {
			free(g->maps[i]->next_pos);
			free(g->maps[i]);
		}
	free(g->maps);
	free(g->btfs);
	free(g);
}

size_t gp_gpt__map_count(const struct gp_gpt *g) { return g->nmaps; }

const struct gp_gpt_map_info *gp_gpt__map(const struct gp_gpt *g, size_t id)
{
	return id < g->nmaps && g->maps[id] ? &g->maps[id]->info : NULL;
}

int gp_gpt__peek_end(int fd, uint64_t size, struct gp_gpt_end *end)
{
	uint8_t tail[GP_GPT_CHUNK_HDR + sizeof(*end)];
	if (size < GP_GPT_HEADER_SIZE + sizeof(tail) ||
	    pread(fd, tail, sizeof(tail), (off_t)(size - sizeof(tail))) != (ssize_t)sizeof(tail))
		return -ENOENT;
	uint32_t h[4];
	memcpy(h, tail, sizeof(h));
	memcpy(end, tail + GP_GPT_CHUNK_HDR, sizeof(*end));
	/* END says where it starts: a chunk that only looks like one elsewhere does not match */
	if (h[0] != GP_GPT_END || h[1] != sizeof(*end) || end->bytes != size - sizeof(tail))
		return -ENOENT;
	return 0;
}

int gp_gpt__truncated(const struct gp_gpt *g) { return g->truncated; }
const struct gp_gpt_clock *gp_gpt__clock(const struct gp_gpt *g) { return g->clock; }
const struct gp_gpt_end *gp_gpt__end(const struct gp_gpt *g) { return g->end; }
uint64_t gp_gpt__realtime_ns(const struct gp_gpt *g) { return g->realtime_ns; }

int64_t gp_gpt__for_each(const struct gp_gpt *g, gp_gpt_record_cb cb, void *user)
{
	int64_t n = 0;
	for (uint64_t off = GP_GPT_HEADER_SIZE; off < g->end_off;) {
		uint32_t h[4];
		memcpy(h, g->data + off, sizeof(h));
		if (h[0] == GP_GPT_SPAN) {
			/* Checked by open: every record lies inside the span. */
			const uint8_t *p = g->data + off + GP_GPT_CHUNK_HDR;
			for (uint32_t at = 8; at < h[1];) {
				uint64_t hdr;
				memcpy(&hdr, p + at, 8);
				uint32_t len = (uint32_t)hdr;
				if ((uint32_t)(hdr >> 32) == 1) {
					n++;
					if (cb(user, h[2], h[3], p + at + 8, len))
						return n;
				}
				at += 8 + ((len + 7) & ~7u);
			}
		}
		off += GP_GPT_CHUNK_HDR + h[1];
	}
	return n;
}

/* A field plan: loads the compiler can keep in registers, no switch on the field's kind. */
struct plan {
	uint32_t off[GP_GPT_MAX_FIELDS];
	uint8_t size[GP_GPT_MAX_FIELDS], sign[GP_GPT_MAX_FIELDS], shift[GP_GPT_MAX_FIELDS];
	uint64_t keep[GP_GPT_MAX_FIELDS];
	unsigned n;
	uint32_t record_size, reach;   /* reach: bytes past the record start an 8-byte load touches */
};

static inline uint64_t load(const uint8_t *p, unsigned size, int sign)
{
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;
	switch (size) {
	case 8: memcpy(&v8, p, 8); return v8;
	case 4: memcpy(&v4, p, 4); return sign ? (uint64_t)(int64_t)(int32_t)v4 : v4;
	case 2: memcpy(&v2, p, 2); return sign ? (uint64_t)(int64_t)(int16_t)v2 : v2;
	case 1: return sign ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
	}
	return 0;
}

int64_t gp_gpt__decode_rows(const struct gp_gpt *g, gp_gpt_rows_cb cb, void *user)
{
	enum { BATCH = 1024 };
	unsigned maxnf = 1;
	for (size_t i = 0; i < g->nmaps; i++)
		if (g->maps[i] && g->maps[i]->info.m->nfields > maxnf)
			maxnf = g->maps[i]->info.m->nfields;
	uint64_t *rows = malloc(sizeof(uint64_t) * BATCH * maxnf);
	struct plan *plans = calloc(g->nmaps + 1, sizeof(*plans));
	if (!rows || !plans) {
		free(rows);
		free(plans);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->nmaps; i++) {
		const struct map_slot *s = g->maps[i];
		if (!s)
			continue;
		struct plan *pl = &plans[i];
		pl->record_size = s->info.m->record_size;
		for (unsigned k = 0; k < s->info.m->nfields; k++) {
			const struct gp_gpt_field *f = &s->info.fields[k];
			pl->off[k] = f->offset;
			/* as gp_gpt_field__get: the bits of 1, 2, 4 or 8 bytes, else 0 (strings, arrays) */
			pl->size[k] = f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8 ?
				      (uint8_t)f->size : 0;
			pl->sign[k] = f->kind == GP_GPT_F_INT;
			pl->shift[k] = pl->size[k] ? (uint8_t)(64 - 8 * pl->size[k]) : 0;
			pl->keep[k] = pl->size[k] ? ~0ull : 0;
			if (f->offset + 8 > pl->reach)
				pl->reach = f->offset + 8;
		}
		pl->n = s->info.m->nfields;
	}
	int64_t total = 0;
	int stop = 0;
	for (uint64_t off = GP_GPT_HEADER_SIZE; off < g->end_off && !stop;) {
		uint32_t h[4];
		memcpy(h, g->data + off, sizeof(h));
		const struct plan *pl = h[0] == GP_GPT_SPAN ? &plans[h[2]] : NULL;
		if (pl && pl->n) {
			const uint8_t *p = g->data + off + GP_GPT_CHUNK_HDR;
			size_t nrows = 0;
			unsigned nf = pl->n;
			for (uint32_t at = 8; at < h[1];) {
				uint64_t hdr;
				memcpy(&hdr, p + at, 8);
				uint32_t len = (uint32_t)hdr;
				if ((uint32_t)(hdr >> 32) == 1) {
					const uint8_t *rec = p + at + 8;
					uint64_t *row = rows + nrows * nf;
					if (len >= pl->record_size && at + 8 + pl->reach <= h[1]) {
						/* 8-byte loads shifted into place: no branch on the size;
						 * the bytes past a field are inside the span (reach) */
						for (unsigned k = 0; k < nf; k++) {
							uint64_t v;
							memcpy(&v, rec + pl->off[k], 8);
							v <<= pl->shift[k];
							v = pl->sign[k] ? (uint64_t)((int64_t)v >> pl->shift[k])
									: v >> pl->shift[k];
							row[k] = v & pl->keep[k];
						}
					} else if (len >= pl->record_size) {
						for (unsigned k = 0; k < nf; k++)
							row[k] = load(rec + pl->off[k], pl->size[k], pl->sign[k]);
					} else {
						for (unsigned k = 0; k < nf; k++)
							row[k] = pl->off[k] + pl->size[k] <= len ?
								 load(rec + pl->off[k], pl->size[k], pl->sign[k]) : 0;
					}
					if (++nrows == BATCH) {
						total += (int64_t)nrows;
						stop = cb(user, h[2], h[3], rows, nrows, nf);
						nrows = 0;
						if (stop)
							break;
					}
				}
				at += 8 + ((len + 7) & ~7u);
			}
			if (nrows && !stop) {
				total += (int64_t)nrows;
				stop = cb(user, h[2], h[3], rows, nrows, nf);
			}
		}
		off += GP_GPT_CHUNK_HDR + h[1];
	}
	free(rows);
	free(plans);
	return total;
}

uint64_t gp_gpt_field__get(const struct gp_gpt_field *f, const void *rec, uint32_t size)
{
	if ((uint64_t)f->offset + f->size > size || f->size > 8)
		return 0;
	const uint8_t *p = (const uint8_t *)rec + f->offset;
	switch (f->size) {
	case 1: return f->kind == GP_GPT_F_INT ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
	case 2: { uint16_t v; memcpy(&v, p, 2);
		return f->kind == GP_GPT_F_INT ? (uint64_t)(int64_t)(int16_t)v : v; }
	case 4: { uint32_t v; memcpy(&v, p, 4);
		return f->kind == GP_GPT_F_INT ? (uint64_t)(int64_t)(int32_t)v : v; }
	case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
	return 0;
}
