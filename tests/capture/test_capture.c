/* Capture files without a GPU (maps/capture.h, maps/gpt.h): rings on the plain host allocator,
 * records written by the host producer (the same layout the device writes), consumer threads
 * moving whole spans into a file, and the reader: exact counts (delivered + lost == made, per
 * ring in order), typed fields from rec.bpf.o's BTF, exact lines, exact errors for truncated and
 * hostile files, and thousands of corrupted copies read without a crash.
 *
 * usage: test_capture REC.bpf.o DIR          the checks (files in DIR)
 *        test_capture REC.bpf.o --sample F   write a small capture F for decode_test.sh */
#include "../maps/check.h"
#include "ebpf/object.h"
#include "maps/capture.h"
#include "maps/gpt.h"
#include "maps/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cap_rec {
	uint64_t seq;
	uint32_t sm;
	int32_t neg;
	char tag[8];
	struct { uint16_t lo, hi; } pair;
	float f;
};

static const char *obj_path;
static struct gp_object *obj;

static struct gp_map_allocator *allocators[16];   /* freed at the end (they outlive the sets) */
static unsigned nallocators;

static struct gp_map_set *make_set(unsigned nsms)
{
	struct gp_map_allocator *a = gp_map_allocator_host(nsms);
	if (nallocators < 16)
		allocators[nallocators++] = a;
	size_t n = gp_object__map_count(obj);
	struct gp_map *defs = calloc(n, sizeof(*defs));
	for (size_t i = 0; i < n; i++)
		defs[i] = *gp_object__map(obj, i);
	struct gp_map_set_opts so = {.alloc = a};
	struct gp_map_set *set = NULL;
	char err[256] = "";
	int rc = gp_map_set__create(defs, n, &so, &set, err, sizeof(err));
	if (rc)
		fprintf(stderr, "map set: %s\n", err);
	CHECK_EQ(rc, 0);
	free(defs);
	return set;
}

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *p = malloc((size_t)n + 1);
	*len = fread(p, 1, (size_t)n, f);
	fclose(f);
	return p;
}

static struct cap_rec rec_of(uint64_t seq, unsigned ring)
{
	struct cap_rec r = {.seq = seq, .sm = ring, .neg = -(int32_t)(seq % 1000) - 1,
			    .pair = {(uint16_t)(seq & 0xffff), 2}, .f = 0.5f};
	snprintf(r.tag, sizeof(r.tag), "t%u", (unsigned)(seq % 100000));
	return r;
}

/* ---- spans straight from a ring: order, PAD at the end, zeroing, committed counts -------- */
struct spans { int calls; size_t bytes; unsigned committed; uint64_t first_pos; };

static int on_span(void *user, unsigned ring, uint64_t pos, const void *bytes, size_t len,
		   unsigned committed)
{
	struct spans *s = user;
	(void)ring;
	(void)bytes;
	if (!s->calls)
		s->first_pos = pos;
	s->calls++;
	s->bytes += len;
	s->committed += committed;
	return 0;
}

static void test_spans(void)
{
	struct gp_map_set *set = make_set(1);
	struct gp_map_inst *m = gp_map_set__find(set, "events");
	CHECK(m != NULL);
	CHECK_EQ(gp_map_inst__desc(m)->capacity, 65536);   /* 1 << 16 over one SM */
	struct cap_rec r = rec_of(1, 0);
	/* 40 bytes a record (8 header + 32): 1638 fit, 1639th needs a PAD of 16 at the end */
	for (int i = 0; i < 1638; i++)
		CHECK_EQ(gp_map_inst__ring_output(m, 0, &r, sizeof(r)), 0);
	struct spans s = {0};
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 0, 4000, on_span, &s), 4000);   /* 100 records */
	CHECK_EQ(s.committed, 100);
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 0, 0, on_span, &s), 65520 - 4000);
	CHECK_EQ(s.committed, 1638);
	CHECK_EQ(s.calls, 2);
	CHECK_EQ(s.first_pos, 0);
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 0, 0, on_span, &s), 0);   /* nothing ready */
	/* the next record wraps: a PAD fills 16 bytes, the span skips it without a call */
	CHECK_EQ(gp_map_inst__ring_output(m, 0, &r, sizeof(r)), 0);
	memset(&s, 0, sizeof(s));
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 0, 0, on_span, &s), 16);
	CHECK_EQ(s.calls, 0);
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 0, 0, on_span, &s), 40);
	CHECK_EQ(s.first_pos, 65536);
	CHECK_EQ(s.committed, 1);
	CHECK_EQ(gp_map_inst__ring_drain_span(m, 9, 0, on_span, &s), -EINVAL);
	/* peek holds the span (a second peek sees the same), release frees exactly it */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(gp_map_inst__ring_output(m, 0, &r, sizeof(r)), 0);
	struct gp_ring_span sp, sp2;
	CHECK_EQ(gp_map_inst__ring_peek_span(m, 0, 0, &sp), 120);
	CHECK_EQ(sp.pos, 65576);
	CHECK_EQ(sp.len, 120);
	CHECK_EQ(sp.committed, 3);
	CHECK_EQ(gp_map_inst__ring_peek_span(m, 0, 0, &sp2), 120);
	CHECK_EQ(sp2.pos, sp.pos);
	CHECK_EQ(gp_map_inst__ring_release(m, 0, sp.pos + 40, 120), -EINVAL);   /* not peek's */
	CHECK_EQ(gp_map_inst__ring_release(m, 0, sp.pos, 70000), -EINVAL);      /* past the end */
	CHECK_EQ(gp_map_inst__ring_release(m, 0, sp.pos, 120), 0);
	CHECK_EQ(gp_map_inst__ring_peek_span(m, 0, 0, &sp), 0);
	CHECK_EQ(sp.pos, 65696);
	gp_map_set__free(set);
}

/* ---- a capture under load: 4 producers on 8 rings, 2 consumers --------------------------- */
#define NSMS 8
#define PER_PRODUCER 300000
struct producer { struct gp_map_inst *m; unsigned first; uint64_t ok, fail; int lossless; };
static uint64_t next_seq[NSMS];

static void *produce(void *arg)
{
	struct producer *p = arg;
	/* a producer owns rings first and first+4: the sequence of each ring is its own */
	for (uint64_t i = 0; i < PER_PRODUCER; i++) {
		unsigned ring = p->first + 4 * (unsigned)(i & 1);
		struct cap_rec r = rec_of(next_seq[ring], ring);
		int rc;
		while ((rc = gp_map_inst__ring_output(p->m, ring, &r, sizeof(r))) && p->lossless)
			p->fail++;   /* lossless: wait for space as a lossless device producer does */
		if (rc) {
			p->fail++;
		} else {
			p->ok++;
			next_seq[ring]++;
		}
	}
	return NULL;
}

struct order { uint64_t expect[NSMS]; uint64_t n, bad; };

static int check_order(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct order *o = user;
	struct cap_rec r;
	if (map || ring >= NSMS || size != sizeof(r)) {
		o->bad++;
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	/* lossy rings skip what they dropped, but never go back or repeat */
	if (r.sm != ring || r.seq < o->expect[ring])
		o->bad++;
	o->expect[ring] = r.seq + 1;
	o->n++;
	return 0;
}

/* The bulk path: the same records as rows of typed fields (seq, sm, neg, tag bits, pair.lo,
 * pair.hi, f bits). */
static int check_rows(void *user, uint32_t map, uint32_t ring, const uint64_t *rows, size_t n,
		      unsigned nf)
{
	struct order *o = user;
	if (map || ring >= NSMS || nf != 7) {
		o->bad++;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t *r = rows + i * nf;
		struct cap_rec want = rec_of(r[0], ring);
		uint64_t tag;
		memcpy(&tag, want.tag, 8);
		if (r[1] != ring || r[0] < o->expect[ring] || r[2] != (uint64_t)(int64_t)want.neg ||
		    r[3] != tag || r[4] != want.pair.lo || r[5] != 2 || r[6] != 0x3f000000u)
			o->bad++;
		o->expect[ring] = r[0] + 1;
		o->n++;
	}
	return 0;
}

static void run_capture(const char *dir, int lossless)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/load-%s.gpt", dir, lossless ? "lossless" : "lossy");
	struct gp_map_set *set = make_set(NSMS);
	struct gp_capture *c;
	char err[512] = "";
	struct gp_capture_opts o = {.threads = 2, .objects = &obj_path, .nobjects = 1};
	int rc = gp_capture__start(path, &set, 1, &o, &c, err, sizeof(err));
	CHECK_EQ(rc, 0);
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(gp_capture__owns(c, gp_map_set__find(set, "events")));
	memset(next_seq, 0, sizeof(next_seq));
	struct producer p[4];
	pthread_t t[4];
	for (unsigned i = 0; i < 4; i++) {
		p[i] = (struct producer){gp_map_set__find(set, "events"), i, 0, 0, lossless};
		pthread_create(&t[i], NULL, produce, &p[i]);
	}
	uint64_t ok = 0, fail = 0;
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok += p[i].ok;
		fail += p[i].fail;
	}
	struct gp_capture_stats st;
	CHECK_EQ(gp_capture__stop(c, NULL, &st), 0);
	CHECK_EQ(st.records, ok);
	CHECK_EQ(st.host_lost, 0);
	CHECK_EQ(st.drops, fail);   /* every failed attempt was counted by the ring */
	CHECK_EQ(st.threads, 2);
	CHECK_EQ(st.rings, NSMS);
	if (lossless)
		CHECK_EQ(ok, 4ull * PER_PRODUCER);   /* lossless: everything arrived */
	size_t len;
	void *file = read_file(path, &len);
	struct gp_gpt *g;
	rc = gp_gpt__open_mem(file, len, &g, err, sizeof(err));
	CHECK_EQ(rc, 0);
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_EQ(gp_gpt__truncated(g), 0);
	const struct gp_gpt_map_info *mi = gp_gpt__map(g, 0);
	CHECK(mi != NULL);
	CHECK_STR(mi->name, "events");
	CHECK_EQ(mi->records, ok);
	CHECK_EQ(mi->drops_total, fail);
	CHECK_EQ(mi->m->nrings, NSMS);
	CHECK_EQ(gp_gpt__end(g)->records, ok);
	struct order ord = {0};
	CHECK_EQ(gp_gpt__for_each(g, check_order, &ord), (int64_t)ok);
	CHECK_EQ(ord.bad, 0);
	for (unsigned r = 0; r < NSMS; r++)
		CHECK_EQ(ord.expect[r], next_seq[r]);   /* each ring's last record arrived */
	struct order rows = {0};
	CHECK_EQ(gp_gpt__decode_rows(g, check_rows, &rows), (int64_t)ok);
	CHECK_EQ(rows.n, ok);
	CHECK_EQ(rows.bad, 0);
	printf("capture %s: %llu records delivered, %llu %s (%llu + %llu == %llu attempts), "
	       "%llu bytes\n", lossless ? "lossless" : "lossy", (unsigned long long)ok,
	       (unsigned long long)fail, lossless ? "full-ring retries" : "lost",
	       (unsigned long long)ok, (unsigned long long)fail, (unsigned long long)(ok + fail),
	       (unsigned long long)len);
	gp_gpt__close(g);
	free(file);
	gp_map_set__free(set);
}

/* ---- the record's type, and its lines ---------------------------------------------------- */
static void write_sample(const char *path, unsigned nrec)
{
	struct gp_map_set *set = make_set(2);
	struct gp_map_inst *m = gp_map_set__find(set, "events");
	for (unsigned i = 0; i < nrec; i++) {
		struct cap_rec r = rec_of(i, i % 2);
		gp_map_inst__ring_output(m, i % 2, &r, sizeof(r));
	}
	struct gp_capture *c;
	char err[512] = "";
	struct gp_capture_opts o = {.threads = 1, .objects = &obj_path, .nobjects = 1};
	CHECK_EQ(gp_capture__start(path, &set, 1, &o, &c, err, sizeof(err)), 0);
	struct gp_gpt_clock clk = {.offset_ns = -5000, .uncertainty_ns = 100, .corrected = 1};
	CHECK_EQ(gp_capture__stop(c, &clk, NULL), 0);
	gp_map_set__free(set);
}

struct lines { const struct gp_gpt *g; char out[4][1024]; int n; int json; };

static int format_line(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct lines *l = user;
	const struct gp_gpt_map_info *mi = gp_gpt__map(l->g, map);
	CHECK(gp_gpt_format_max(mi, size) < sizeof(l->out[0]));
	size_t k = gp_gpt_format(mi, ring, data, size, l->json, l->out[l->n]);
	l->out[l->n][k] = 0;
	return ++l->n == 2;
}

static void test_types(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/sample.gpt", dir);
	write_sample(path, 5);
	size_t len;
	void *file = read_file(path, &len);
	struct gp_gpt *g;
	char err[512] = "";
	CHECK_EQ(gp_gpt__open_mem(file, len, &g, err, sizeof(err)), 0);
	const struct gp_gpt_map_info *mi = gp_gpt__map(g, 0);
	CHECK_EQ(mi->m->record_size, 32);
	CHECK_EQ(mi->m->nfields, 7);
	CHECK(mi->btf != NULL && mi->btf_len > 24);
	const char *names[] = {"seq", "sm", "neg", "tag", "pair.lo", "pair.hi", "f"};
	const uint32_t offs[] = {0, 8, 12, 16, 24, 26, 28}, sizes[] = {8, 4, 4, 8, 2, 2, 4};
	const uint32_t kinds[] = {GP_GPT_F_UINT, GP_GPT_F_UINT, GP_GPT_F_INT, GP_GPT_F_CHARS,
				  GP_GPT_F_UINT, GP_GPT_F_UINT, GP_GPT_F_FLOAT};
	for (unsigned i = 0; i < 7 && i < mi->m->nfields; i++) {
		CHECK_STR(mi->fields[i].name, names[i]);
		CHECK_EQ(mi->fields[i].offset, offs[i]);
		CHECK_EQ(mi->fields[i].size, sizes[i]);
		CHECK_EQ(mi->fields[i].kind, kinds[i]);
	}
	CHECK_EQ(gp_gpt__clock(g)->offset_ns, -5000);
	struct lines l = {.g = g};
	CHECK_EQ(gp_gpt__for_each(g, format_line, &l), 2);
	CHECK_STR(l.out[0], "events ring 0: seq=0 sm=0 neg=-1 tag=\"t0\" pair.lo=0 pair.hi=2 f=0.5\n");
	CHECK_STR(l.out[1], "events ring 0: seq=2 sm=0 neg=-3 tag=\"t2\" pair.lo=2 pair.hi=2 f=0.5\n");
	l = (struct lines){.g = g, .json = 1};
	gp_gpt__for_each(g, format_line, &l);
	CHECK_STR(l.out[0], "{\"map\":\"events\",\"ring\":0,\"seq\":0,\"sm\":0,\"neg\":-1,"
		  "\"tag\":\"t0\",\"pair.lo\":0,\"pair.hi\":2,\"f\":0.5}\n");
	gp_gpt__close(g);
	free(file);
}

/* Any record of any file: formatted into a buffer of the size format_max says. */
static int format_any(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	const struct gp_gpt_map_info *mi = gp_gpt__map(user, map);
	size_t max = gp_gpt_format_max(mi, size);
	char *b = malloc(max);
	CHECK(gp_gpt_format(mi, ring, data, size, ring & 1, b) <= max);
	free(b);
	return 0;
}

/* ---- truncated and hostile files: one exact line each ------------------------------------ */
static void expect_error(const void *data, size_t len, const char *want)
{
	struct gp_gpt *g = NULL;
	char err[512] = "";
	int rc = gp_gpt__open_mem(data, len, &g, err, sizeof(err));
	CHECK_EQ(rc, -EBADMSG);
	CHECK_STR(err, want);
	gp_gpt__close(g);
}

static void test_hostile(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/sample.gpt", dir);
	size_t len;
	uint8_t *file = read_file(path, &len);
	uint8_t *b = malloc(len);
	/* the chunks of the sample, in order: MAP 0 at 32, BTF, then spans, drops, clock, end */
	uint32_t h[4];
	memcpy(h, file + 32, 16);
	CHECK_EQ(h[0], GP_GPT_MAP);
	expect_error(file, 10, "not a gpuprobe capture (no GPTRACE header)");
	memcpy(b, file, len);
	b[8] = 2;
	expect_error(b, len, "capture version 2 (this gpuprobe reads version 1)");
	memcpy(b, file, len);
	b[32] = 9;
	expect_error(b, len, "chunk at byte 32: unknown chunk type 9");
	memcpy(b, file, len);
	uint32_t three = 3;
	memcpy(b + 36, &three, 4);
	expect_error(b, len, "chunk at byte 32: size 3 is not a multiple of 8 up to 1073741824");
	/* the map's name length 0, its ring count 0 */
	memcpy(b, file, len);
	memset(b + 48 + 36, 0, 2);
	expect_error(b, len, "chunk at byte 32: map 0: name length 0 (1 to 255)");
	memcpy(b, file, len);
	memset(b + 48 + 8, 0, 4);
	expect_error(b, len, "chunk at byte 32: map 0: 0 rings (1 to 65536)");
	/* a field outside the record */
	memcpy(b, file, len);
	uint32_t big = 30;
	memcpy(b + 48 + 40 + 8 + 64 * 6, &big, 4);   /* field "f" (4 bytes) at 30 of 32 */
	expect_error(b, len, "chunk at byte 32: map 0: field 'f' (4 bytes at 30) is outside the "
		     "32-byte record");
	/* find the first span; corrupt its first record's state, then its length */
	size_t off = 32;
	while (off + 16 <= len) {
		memcpy(h, file + off, 16);
		if (h[0] == GP_GPT_SPAN)
			break;
		off += 16 + h[1];
	}
	CHECK_EQ(h[0], GP_GPT_SPAN);
	char want[256];
	memcpy(b, file, len);
	b[off + 16 + 8 + 4] = 7;
	snprintf(want, sizeof(want), "chunk at byte %zu: record at +8: state 7 (1 committed, 2 "
		 "discarded)", off);
	expect_error(b, len, want);
	memcpy(b, file, len);
	uint32_t huge = 4000;
	memcpy(b + off + 16 + 8, &huge, 4);
	snprintf(want, sizeof(want), "chunk at byte %zu: record at +8: 4000 bytes overrun the span "
		 "of %u bytes", off, h[1]);
	expect_error(b, len, want);
	memcpy(b, file, len);
	b[off + 12] = 5;   /* ring 5 of a 2-ring map */
	snprintf(want, sizeof(want), "chunk at byte %zu: span of ring 5 of map 'events', which has "
		 "2 rings", off);
	expect_error(b, len, want);
	memcpy(b, file, len);
	b[off + 8] = 3;    /* map 3: never described */
	snprintf(want, sizeof(want), "chunk at byte %zu: span of map 3, which no map chunk before "
		 "it describes", off);
	expect_error(b, len, want);
	/* a file cut anywhere opens as truncated (whole chunks only) or fails with one line */
	struct gp_gpt *g;
	char err[512];
	CHECK_EQ(gp_gpt__open_mem(file, len - 1, &g, err, sizeof(err)), 0);
	CHECK_EQ(gp_gpt__truncated(g), 1);
	CHECK(gp_gpt__end(g) == NULL);
	gp_gpt__close(g);
	CHECK_EQ(gp_gpt__open_mem(file, off + 16 + 8 + 40, &g, err, sizeof(err)), 0);
	CHECK_EQ(gp_gpt__truncated(g), 1);
	CHECK_EQ(gp_gpt__map(g, 0)->records, 0);   /* the span cut in the middle is not read */
	CHECK(gp_gpt__map(g, 0)->drops == NULL);
	gp_gpt__close(g);
	for (size_t cut = 0; cut <= len; cut++) {
		g = NULL;
		int rc = gp_gpt__open_mem(file, cut, &g, err, sizeof(err));
		CHECK(rc == 0 || rc == -EBADMSG);
		gp_gpt__close(g);
	}
	/* data after the end */
	uint8_t *longer = calloc(1, len + 16);
	memcpy(longer, file, len);
	longer[len] = GP_GPT_END;
	snprintf(want, sizeof(want), "chunk at byte %zu: data after the end chunk", len);
	expect_error(longer, len + 16, want);
	free(longer);
	/* random damage: never a crash, always 0 or one line */
	srand(18);
	unsigned bad = 0;
	for (int i = 0; i < 20000; i++) {
		memcpy(b, file, len);
		for (int k = 0; k < 1 + i % 4; k++)
			b[32 + (size_t)rand() % (len - 32)] ^= (uint8_t)(1u << (rand() % 8));
		g = NULL;
		err[0] = 0;
		int rc = gp_gpt__open_mem(b, len, &g, err, sizeof(err));
		if (rc) {
			CHECK(strncmp(err, "chunk at byte ", 14) == 0);
			bad++;
		} else {
			gp_gpt__for_each(g, format_any, g);
		}
		gp_gpt__close(g);
	}
	CHECK(bad > 1000);
	free(b);
	free(file);
}

/* STATS: the producers' waits, give-ups and offered counts, summed per map; a wrong size is one
 * line. Written by hand through the writer (this build's rings may not have those counters). */
static void test_stats(const char *dir)
{
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), "%s/stats.gpt", dir);
	struct gp_gpt_writer *w;
	CHECK_EQ(gp_gpt_writer__open(path, &w, err, sizeof(err)), 0);
	struct gp_gpt_map m = {.bpf_type = 27, .nrings = 2, .ring_bytes = 4096, .flags = GP_GPT_LOSSLESS,
			       .sample_every = 4, .btf = GP_GPT_NO_BTF, .name_len = 2};
	CHECK_EQ(gp_gpt_writer__map(w, 0, &m, "rb", NULL), 0);
	struct gp_gpt_ring_stats st[2] = {{1500000, 0, 40, 0}, {2500000, 77, 60, 0}};
	struct iovec v = {st, sizeof(st)};
	CHECK_EQ(gp_gpt_writer__chunk(w, GP_GPT_STATS, 0, 0, &v, 1), 0);
	CHECK_EQ(gp_gpt_writer__close(w, 0, 0), 0);
	size_t len;
	uint8_t *file = read_file(path, &len);
	struct gp_gpt *g;
	CHECK_EQ(gp_gpt__open_mem(file, len, &g, err, sizeof(err)), 0);
	const struct gp_gpt_map_info *mi = gp_gpt__map(g, 0);
	CHECK_EQ(mi->wait_ns, 4000000);
	CHECK_EQ(mi->gave_up, 1);
	CHECK_EQ(mi->offered, 100);
	CHECK_EQ(mi->m->sample_every, 4);
	CHECK_EQ(gp_gpt__truncated(g), 0);
	gp_gpt__close(g);
	/* the STATS chunk follows the map chunk (32 + 16 + 40 + 8) */
	uint32_t h[4], small = 32;
	memcpy(h, file + 96, 16);
	CHECK_EQ(h[0], GP_GPT_STATS);
	memcpy(file + 100, &small, 4);
	expect_error(file, len, "chunk at byte 96: ring statistics of 32 bytes for map 'rb' of 2 rings");
	free(file);
}

/* A capture's ring floor (gp_map_set_opts.ring_floor_total): each SM's ring at least the next
 * power of two of its share, at most 16 MiB; a ring already larger, and printk, as they were. */
static void test_floor(void)
{
	struct { unsigned nsms; uint64_t floor; uint32_t want; } c[] = {
		{132, GP_CAPTURE_RING_FLOOR_TOTAL, 256u << 10},   /* 32 MiB / 132 = 254 KiB */
		{16, GP_CAPTURE_RING_FLOOR_TOTAL, 2u << 20},
		{1, GP_CAPTURE_RING_FLOOR_TOTAL, 16u << 20},      /* the cap, not 32 MiB */
		{4, 0, 16384},                                    /* 1 << 16 / 4: as defined */
		{1, 4096, 65536},                                 /* defined larger than the floor */
	};
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct gp_map_allocator *a = gp_map_allocator_host(c[i].nsms);
		struct gp_map def = *gp_object__map(obj, 0);
		struct gp_map_set_opts so = {.alloc = a, .ring_floor_total = c[i].floor};
		struct gp_map_set *set = NULL;
		char err[256] = "";
		CHECK_EQ(gp_map_set__create(&def, 1, &so, &set, err, sizeof(err)), 0);
		if (!set) {
			free(a);
			continue;
		}
		CHECK_EQ(gp_map_inst__desc(gp_map_set__find(set, "events"))->capacity, c[i].want);
		CHECK_EQ(gp_map_inst__desc(gp_map_set__printk(set))->capacity, GP_PRINTK_RING_DEFAULT_BYTES);
		gp_map_set__free(set);
		free(a);
	}
}

/* a file the writer cannot write: one line, and the consumer keeps consuming */
static void test_unwritable(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/no/such/dir/x.gpt", dir);
	struct gp_map_set *set = make_set(1);
	struct gp_capture *c = NULL;
	char err[700] = "";
	CHECK_EQ(gp_capture__start(path, &set, 1, NULL, &c, err, sizeof(err)), -ENOENT);
	char want[700];
	snprintf(want, sizeof(want), "capture %s: cannot create it (No such file or directory)", path);
	CHECK_STR(err, want);
	gp_map_set__free(set);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: test_capture REC.bpf.o DIR | REC.bpf.o --sample FILE\n");
		return 2;
	}
	obj_path = argv[1];
	char err[512];
	if (gp_object__open_file(obj_path, &obj, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!strcmp(argv[2], "--sample")) {
		write_sample(argv[3], 5);
		gp_object__close(obj);
		for (unsigned i = 0; i < nallocators; i++)
			free(allocators[i]);
		return check_failures ? 1 : 0;
	}
	const char *dir = argv[2];
	mkdir(dir, 0700);
	test_spans();
	run_capture(dir, 0);
	run_capture(dir, 1);
	test_types(dir);
	test_hostile(dir);
	test_stats(dir);
	test_floor();
	test_unwritable(dir);
	gp_object__close(obj);
	for (unsigned i = 0; i < nallocators; i++)
		free(allocators[i]);
	CHECK_DONE();
}
