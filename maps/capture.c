/* Consumer threads of a capture (capture.h). */
#include "maps/capture.h"
#include "maps/gpt_btf.h"
#include "maps/map_internal.h"
#include "maps/maps.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RINGS_PER_THREAD 16
#define MAX_THREADS 8   /* and at most half the CPUs: the application keeps the rest */
#define DIRECT_BATCH (256u << 10)   /* a round's spans this large go to the file uncopied */
#define MAX_ROUNDS 64
#define SPAN_MAX (64u << 20)        /* bytes taken from a ring at once (a chunk holds < 1 GiB) */

struct ring_ref {
	struct gp_map_inst *m;
	uint32_t id;                 /* the map's id in the file */
	unsigned ring;
};

struct held;

struct consumer {
	struct gp_capture *c;
	pthread_t t;
	struct ring_ref *refs;
	size_t n;
	struct held *held;                 /* n: a round's spans */
	struct gp_gpt_span_ref *refs_out;  /* n: the same for the writer */
	struct gp_gpt_buf buf;
	uint64_t records, bytes, host_lost;
	int started;
};

struct gp_capture {
	struct gp_gpt_writer *w;
	struct gp_map_inst **maps;   /* by file id */
	size_t nmaps;
	struct ring_ref *refs;
	size_t nrefs;
	struct consumer cons[MAX_THREADS];
	unsigned nthreads, idle_max_us;
	int stop;                    /* atomic */
};

/* One round's spans (one per ring of the group), held until they are in the file. */
struct held {
	struct ring_ref *ref;
	struct gp_ring_span sp;
	uint64_t adv;
};

/* A round's spans: into the buffer when they are small (a few records: a copy is cheaper than a
 * system call each), else straight from the rings into the file with one pwritev, then freed.
 * A failed file still frees them: lossless producers must never wait on a dead file. */
static void put(struct consumer *co, struct held *h, size_t n, size_t bytes)
{
	int failed = 0;
	if (bytes >= DIRECT_BATCH) {
		failed = gp_gpt_buf__flush(co->c->w, &co->buf) != 0;   /* earlier spans first */
		for (size_t i = 0; i < n && !failed; i++)
			co->refs_out[i] = (struct gp_gpt_span_ref){h[i].ref->id, h[i].ref->ring,
								   h[i].sp.pos, h[i].sp.bytes, h[i].sp.len};
		if (!failed)
			failed = gp_gpt_writer__spans(co->c->w, co->refs_out, n) != 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (bytes < DIRECT_BATCH)
			failed = gp_gpt_buf__span(co->c->w, &co->buf, h[i].ref->id, h[i].ref->ring,
						  h[i].sp.pos, h[i].sp.bytes, h[i].sp.len) != 0;
		if (failed)
			co->host_lost += h[i].sp.committed;
		else
			co->records += h[i].sp.committed;
		co->bytes += h[i].sp.len;
		gp_map_inst__ring_release(h[i].ref->m, h[i].ref->ring, h[i].sp.pos, h[i].adv);
	}
}

/* Rounds over the thread's rings until one finds nothing (at most MAX_ROUNDS, so that stop is
 * seen): the bytes consumed. Each round takes one span from every ring that has records, so a
 * busy ring does not starve the others of its group. */
static uint64_t pass(struct consumer *co)
{
	uint64_t got = 0;
	for (int round = 0; round < MAX_ROUNDS; round++) {
		size_t n = 0, bytes = 0;
		uint64_t before = got;
		for (size_t i = 0; i < co->n; i++) {
			struct ring_ref *ref = &co->refs[i];
			struct held *h = &co->held[n];
			int64_t adv = gp_map_inst__ring_peek_span(ref->m, ref->ring, SPAN_MAX, &h->sp);
			if (adv <= 0)
				continue;
			got += (uint64_t)adv;
			if (!h->sp.len) {   /* only a PAD at the end of the ring */
				gp_map_inst__ring_release(ref->m, ref->ring, h->sp.pos, (uint64_t)adv);
				continue;
			}
			h->ref = ref;
			h->adv = (uint64_t)adv;
			bytes += h->sp.len;
			n++;
		}
		if (n)
			put(co, co->held, n, bytes);
		if (got == before)
			break;
	}
	return got;
}

static void *consume(void *arg)
{
	struct consumer *co = arg;
	unsigned idle_us = 0;
	for (;;) {
		/* Read stop before the pass: a pass that began after stop and found nothing means
		 * every record committed before stop has been taken. */
		int stopping = __atomic_load_n(&co->c->stop, __ATOMIC_ACQUIRE);
		if (pass(co)) {
			idle_us = 0;
			continue;
		}
		gp_gpt_buf__flush(co->c->w, &co->buf);   /* idle: what we hold reaches the file */
		if (stopping)
			break;
		idle_us = idle_us ? idle_us * 2 : 20;
		if (idle_us > co->c->idle_max_us)
			idle_us = co->c->idle_max_us;
		struct timespec ts = {0, (long)idle_us * 1000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int gp_capture__owns(const struct gp_capture *c, const struct gp_map_inst *m)
{
	for (size_t i = 0; c && i < c->nmaps; i++)
		if (c->maps[i] == m)
			return 1;
	return 0;
}

const char *gp_capture__path(const struct gp_capture *c)
{
	return c ? gp_gpt_writer__path(c->w) : "";
}

/* The map's description, with its record type from the first object whose BTF names it. */
static int describe(struct gp_capture *c, uint32_t id, struct gp_map_inst *m, struct btf **btfs,
		    size_t nbtf, int *btf_written)
{
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	const char *name = gp_map_inst__name(m);
	struct gp_gpt_map gm = {.bpf_type = d->bpf_type, .value_size = d->value_size,
				.nrings = d->nshards, .ring_bytes = d->capacity, .sample_every = 1,
				.btf = GP_GPT_NO_BTF};
#ifdef GP_MD_SAMPLE_RATE
	if (d->flags & GP_MAPF_LOSSLESS)
		gm.flags |= GP_GPT_LOSSLESS;
	if (d->flags & GP_MAPF_SAMPLED && d->sample_rate > 1)
		gm.sample_every = d->sample_rate;
#endif
	size_t nl = strlen(name);
	gm.name_len = (uint16_t)(nl > 255 ? 255 : nl);
	struct gp_gpt_field f[GP_GPT_MAX_FIELDS];
	size_t found = nbtf;
	for (size_t b = 0; b < nbtf; b++) {
		unsigned nf = 0;
		uint32_t tid, size;
		if (gp_gpt_btf__record(btfs[b], name, &tid, &size, f, &nf))
			continue;
		gm.btf = (uint32_t)b;
		gm.btf_type_id = tid;
		gm.record_size = size;
		gm.nfields = (uint16_t)nf;
		found = b;
		break;
	}
	int rc = gp_gpt_writer__map(c->w, id, &gm, name, f);
	if (found < nbtf && !btf_written[found]) {
		/* the raw BTF too, once per object: what other tools (bpftool) read types from */
		uint32_t len;
		const void *raw = btf__raw_data(btfs[found], &len);
		struct iovec v = {(void *)raw, len};
		if (raw)
			gp_gpt_writer__chunk(c->w, GP_GPT_BTF, (uint32_t)found, 0, &v, 1);
		btf_written[found] = 1;
	}
	return rc;
}

int gp_capture__start(const char *path, struct gp_map_set *const *sets, size_t n,
		      const struct gp_capture_opts *opts, struct gp_capture **out, char *err,
		      size_t errlen)
{
	*out = NULL;
	struct gp_capture_opts o = opts ? *opts : (struct gp_capture_opts){0};
	struct gp_capture *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "capture %s: out of memory", path);
		return -ENOMEM;
	}
	c->idle_max_us = o.idle_max_us ? o.idle_max_us : 1000;
	int rc = gp_gpt_writer__open(path, &c->w, err, errlen);
	if (rc) {
		free(c);
		return rc;
	}
	size_t nrings = 0;
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < gp_map_set__count(sets[s]); i++) {
			struct gp_map_inst *m = gp_map_set__map(sets[s], i);
			if (gp_map_inst__desc(m)->kind != GP_MAP_KIND_RING)
				continue;
			struct gp_map_inst **nm = realloc(c->maps, sizeof(*nm) * (c->nmaps + 1));
			if (!nm)
				goto oom;
			c->maps = nm;
			c->maps[c->nmaps++] = m;
			nrings += gp_map_inst__desc(m)->nshards;
		}
	struct btf **btfs = calloc(o.nobjects + 1, sizeof(*btfs));
	int *written = calloc(o.nobjects + 1, sizeof(int));
	c->refs = calloc(nrings + 1, sizeof(*c->refs));
	if (!btfs || !written || !c->refs) {
		free(btfs);
		free(written);
		goto oom;
	}
	for (size_t b = 0; b < o.nobjects; b++) {
		btfs[b] = btf__parse_elf(o.objects[b], NULL);
		if (!btfs[b] || (uintptr_t)btfs[b] >= (uintptr_t)-4095)
			btfs[b] = NULL;   /* no BTF: its maps' records print as bytes */
	}
	for (size_t i = 0; i < c->nmaps; i++)
		describe(c, (uint32_t)i, c->maps[i], btfs, o.nobjects, written);
	for (size_t b = 0; b < o.nobjects; b++)
		btf__free(btfs[b]);
	free(btfs);
	free(written);
	/* Groups of neighbouring SMs: ring r of every map goes to the same thread. */
	unsigned maxr = 0;
	for (size_t i = 0; i < c->nmaps; i++)
		if (gp_map_inst__desc(c->maps[i])->nshards > maxr)
			maxr = gp_map_inst__desc(c->maps[i])->nshards;
	for (unsigned r = 0; r < maxr; r++)
		for (size_t i = 0; i < c->nmaps; i++)
			if (r < gp_map_inst__desc(c->maps[i])->nshards)
				c->refs[c->nrefs++] = (struct ring_ref){c->maps[i], (uint32_t)i, r};
	unsigned t = o.threads ? o.threads : (unsigned)((maxr + RINGS_PER_THREAD - 1) / RINGS_PER_THREAD);
	if (t < 1)
		t = 1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned most = cpus >= 4 ? (unsigned)(cpus / 2) : 1;
	if (!o.threads && t > most)
		t = most;
	if (t > MAX_THREADS)
		t = MAX_THREADS;
	if (t > maxr && maxr)
		t = maxr;
	for (unsigned k = 0; k < t; k++) {
		struct consumer *co = &c->cons[k];
		co->c = c;
		/* rings [maxr*k/t, maxr*(k+1)/t) */
		unsigned r0 = (unsigned)((uint64_t)maxr * k / t), r1 = (unsigned)((uint64_t)maxr * (k + 1) / t);
		size_t a = c->nrefs, b = c->nrefs;
		for (size_t j = 0; j < c->nrefs; j++) {
			if (a == c->nrefs && c->refs[j].ring >= r0)
				a = j;
			if (c->refs[j].ring >= r1) {
				b = j;
				break;
			}
		}
		co->refs = c->refs + a;
		co->n = b > a ? b - a : 0;
		co->held = calloc(co->n + 1, sizeof(*co->held));
		co->refs_out = calloc(co->n + 1, sizeof(*co->refs_out));
		if (!co->held || !co->refs_out) {
			for (unsigned j = 0; j <= k; j++) {
				free(c->cons[j].held);
				free(c->cons[j].refs_out);
			}
			goto oom;
		}
	}
	c->nthreads = t;
	for (unsigned k = 0; k < t; k++) {
		rc = -pthread_create(&c->cons[k].t, NULL, consume, &c->cons[k]);
		if (rc) {
			snprintf(err, errlen, "capture %s: cannot start a consumer thread (%s)", path,
				 strerror(-rc));
			__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
			for (unsigned j = 0; j < k; j++)
				pthread_join(c->cons[j].t, NULL);
			for (unsigned j = 0; j < t; j++) {
				free(c->cons[j].held);
				free(c->cons[j].refs_out);
				free(c->cons[j].buf.p);
			}
			gp_gpt_writer__close(c->w, 0, 0);
			free(c->refs);
			free(c->maps);
			free(c);
			return rc;
		}
		c->cons[k].started = 1;
	}
	*out = c;
	return 0;
oom:
	snprintf(err, errlen, "capture %s: out of memory", path);
	gp_gpt_writer__close(c->w, 0, 0);
	free(c->refs);
	free(c->maps);
	free(c);
	return -ENOMEM;
}

/* The producers' other counters, where this build's ring layout has them (the lossless and
 * sampled modes' words of the producer state, maps/map_layout.h). */
static void write_stats(struct gp_capture *c, uint32_t id)
{
#if defined(GP_RP_WAIT_NS) && defined(GP_RP_GAVE_UP) && defined(GP_RP_OFFERED)
	struct gp_map_inst *m = c->maps[id];
	unsigned nr = m->d.nshards;
	struct gp_gpt_ring_stats *st = calloc(nr, sizeof(*st));
	if (!st)
		return;
	for (unsigned r = 0; r < nr; r++) {
		uint64_t base = (uint64_t)r * GP_RING_STATE_STRIDE;
		gp_region_read(m, &m->data, base + GP_RP_WAIT_NS, &st[r].wait_ns, 8);
		gp_region_read(m, &m->data, base + GP_RP_GAVE_UP, &st[r].gave_up_ns, 8);
		gp_region_read(m, &m->data, base + GP_RP_OFFERED, &st[r].offered, 8);
	}
	struct iovec v = {st, (size_t)nr * sizeof(*st)};
	gp_gpt_writer__chunk(c->w, GP_GPT_STATS, id, 0, &v, 1);
	free(st);
#else
	(void)c;
	(void)id;
#endif
}

int gp_capture__stop(struct gp_capture *c, const struct gp_gpt_clock *clock,
		     struct gp_capture_stats *st)
{
	if (!c)
		return 0;
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	struct gp_capture_stats s = {.threads = c->nthreads, .rings = (unsigned)c->nrefs};
	for (unsigned k = 0; k < c->nthreads; k++) {
		struct consumer *co = &c->cons[k];
		if (co->started)
			pthread_join(co->t, NULL);
		gp_gpt_buf__flush(c->w, &co->buf);
		free(co->buf.p);
		free(co->held);
		free(co->refs_out);
		s.records += co->records;
		s.bytes += co->bytes;
		s.host_lost += co->host_lost;
	}
	for (size_t i = 0; i < c->nmaps; i++) {
		unsigned nr = gp_map_inst__desc(c->maps[i])->nshards;
		uint64_t *d = calloc(nr, 8);
		if (!d)
			continue;
		gp_map_inst__ring_drops_each(c->maps[i], d);
		for (unsigned r = 0; r < nr; r++)
			s.drops += d[r];
		struct iovec v = {d, (size_t)nr * 8};
		gp_gpt_writer__chunk(c->w, GP_GPT_DROPS, (uint32_t)i, 0, &v, 1);
		free(d);
		write_stats(c, (uint32_t)i);
	}
	if (clock) {
		struct iovec v = {(void *)clock, sizeof(*clock)};
		gp_gpt_writer__chunk(c->w, GP_GPT_CLOCK, 0, 0, &v, 1);
	}
	int rc = gp_gpt_writer__error(c->w);
	int rc2 = gp_gpt_writer__close(c->w, s.records, s.host_lost);
	if (!rc)
		rc = rc2;
	free(c->refs);
	free(c->maps);
	free(c);
	if (st)
		*st = s;
	return rc;
}
