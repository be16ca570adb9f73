/* The segment between the planes (maps/segment.h) and the snapshots in it (maps/snapshot.h):
 *   - a snapshot of host-allocator maps decodes to the same maps, keys, summed values, per-SM
 *     copies, lost counts, kernel names and clock, and prints as the in-process output prints;
 *   - events and snapshots written by the writer reach the reader in order, whole; a reader
 *     that falls more than the log behind counts the gap; the final flag comes with the last
 *     snapshot; a file of another mode is refused;
 *   - hostile input: every truncation of a blob and thousands of random corruptions of blobs
 *     and of segment files give one error (or a valid decode), never a crash or a read out of
 *     bounds (this test runs under ASan in scripts/test.sh; fuzz/snapshot_fuzz.c goes on from its
 *     seed, tests/planes/fuzz-seeds/snapshot/, which `planes_segment_test FILE` writes). */
#include "maps/maps.h"
#include "maps/output.h"
#include "maps/segment.h"
#include "maps/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); fails++; } } while (0)

static struct gp_map_set *make_set(struct gp_map_allocator *a)
{
	struct gp_map defs[] = {
		{.name = "counts", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 16},
		{.name = "lat_hist", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 65},
		{.name = "per_sm", .type = BPF_MAP_TYPE_PERCPU_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 2},
		{.name = "events", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 14},
	};
	uint8_t atomic_only[4] = {[0] = 1};
	struct gp_map_set_opts so = {.alloc = a, .atomic_only = atomic_only};
	struct gp_map_set *set = NULL;
	char err[256];
	if (gp_map_set__create(defs, 4, &so, &set, err, sizeof(err))) {
		printf("FAIL map set: %s\n", err);
		exit(1);
	}
	uint64_t v = 5;
	gp_map_inst__update(gp_map_set__find(set, "counts"), &(uint32_t){1}, &v, 0);
	v = 100;
	gp_map_inst__update(gp_map_set__find(set, "counts"), &(uint32_t){2}, &v, 0);
	uint64_t *p = gp_map_inst__value_ptr(gp_map_set__find(set, "counts"), &(uint32_t){1}, 2);
	if (p)
		*p += 3;   /* SM 2's copy: the sum is 8 */
	v = 6;
	gp_map_inst__update(gp_map_set__find(set, "lat_hist"), &(uint32_t){3}, &v, 0);
	struct gp_map_inst *pc = gp_map_set__find(set, "per_sm");
	uint32_t *c1 = gp_map_inst__value_ptr(pc, &(uint32_t){1}, 1);
	uint32_t *c3 = gp_map_inst__value_ptr(pc, &(uint32_t){1}, 3);
	if (c1 && c3)
		*c1 = 2, *c3 = 5;
	struct gp_map_inst *ev = gp_map_set__find(set, "events");
	uint64_t rec[2] = {1, 2};
	for (int i = 0; i < 300; i++)   /* more than ring 0 holds: some are lost */
		gp_map_inst__ring_output(ev, 0, rec, 16);
	return set;
}

static const struct gp_output_clock_check hist[2] = {{0, -500, 20}, {1.5, -480, 25}};

static void *blob_of(struct gp_map_set *set, size_t *len)
{
	struct gp_snap_name names[] = {{7, "_Z6vecAddPKfS0_Pfi"}};
	struct gp_output_clock c = {.corrected = 1, .offset_ns = -500, .uncertainty_ns = 20,
				    .last_offset_ns = -480, .checks = 2, .span_s = 1.5,
				    .history = hist, .nhistory = 2};
	struct gp_map_set *sets[] = {set};
	struct gp_snap_input in = {.sets = sets, .nsets = 1, .names = names, .nnames = 1,
				   .clock = &c, .time_ms = 1234};
	void *blob = NULL;
	if (gp_snap_build(&in, &blob, len)) {
		printf("FAIL gp_snap_build\n");
		exit(1);
	}
	return blob;
}

static void check_decode(struct gp_map_set *set)
{
	size_t len;
	void *blob = blob_of(set, &len);
	struct gp_snap s;
	char err[256];
	CHECK(!gp_snap_parse(blob, len, &s, err, sizeof(err)), "parse: %s", err);
	CHECK(s.time_ms == 1234 && s.has_clock && s.clock.offset_ns == -500 && s.clock.nhistory == 2 &&
	      s.clock.history[1].offset_ns == -480, "clock and time");
	CHECK(s.nnames == 1 && !strcmp(gp_snap_kernel_name(&s, 7), "_Z6vecAddPKfS0_Pfi"), "names");
	CHECK(s.nmaps == 5, "4 maps and the printk ring: %zu", s.nmaps);
	for (size_t i = 0; i < s.nmaps; i++) {
		const struct gp_snap_map *m = &s.maps[i];
		if (!strcmp(m->name, "counts")) {
			uint64_t sum = 0;
			for (size_t k = 0; k < m->count; k++) {
				uint64_t v;
				memcpy(&v, m->values + 8 * k, 8);
				sum += v;
			}
			CHECK(m->count == 2 && sum == 108 && m->copies == 1, "counts: %zu %llu", m->count,
			      (unsigned long long)sum);
		} else if (!strcmp(m->name, "lat_hist")) {
			CHECK(m->count == 1, "lat_hist: zero elements left out (%zu)", m->count);
		} else if (!strcmp(m->name, "per_sm")) {
			uint32_t v1 = 0, v3 = 0;
			if (m->count == 1 && m->copies == 4) {
				memcpy(&v1, m->values + 4, 4);
				memcpy(&v3, m->values + 12, 4);
			}
			CHECK(m->count == 1 && m->copies == 4 && v1 == 2 && v3 == 5,
			      "per_sm: %zu elements of %u copies", m->count, m->copies);
		} else if (!strcmp(m->name, "events")) {
			CHECK(m->count == 0 && m->lost > 0, "events: lost %llu", (unsigned long long)m->lost);
		}
	}
	gp_snap_free(&s);

	/* the output from the blob prints what the output from the set prints */
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);
	struct gp_output *oa, *ob;
	struct gp_output_opts o1 = {.out = fa}, o2 = {.out = fb};
	gp_output__open(&o1, &oa);
	gp_output__open(&o2, &ob);
	gp_output__add_set(oa, set);
	gp_output__print_maps(oa);
	CHECK(!gp_output__use_snapshot(ob, blob, len, err, sizeof(err)), "use_snapshot: %s", err);
	gp_output__print_maps(ob);
	gp_output__close(oa);
	gp_output__close(ob);
	fclose(fa);
	fclose(fb);
	CHECK(al > 0 && !strcmp(a, b), "the same text:\n%s---\n%s", a, b);
	CHECK(strstr(a, "@per_sm[1]: 7\n") != NULL, "per-SM copies summed in text:\n%s", a);
	free(a);
	free(b);

	/* hostile blobs: every truncation, then random corruptions */
	for (size_t n = 0; n < len; n++) {
		int rc = gp_snap_parse(blob, n, &s, err, sizeof(err));
		CHECK(rc == -EBADMSG && err[0], "truncated at %zu: %d", n, rc);
		if (!rc)
			gp_snap_free(&s);
	}
	uint8_t *c = malloc(len);
	srand(17);
	for (int t = 0; t < 20000; t++) {
		memcpy(c, blob, len);
		int flips = 1 + rand() % 4;
		for (int f = 0; f < flips; f++) {
			size_t at = (size_t)rand() % len;
			if (rand() % 2)
				c[at] ^= (uint8_t)(1u << (rand() % 8));
			else
				c[at] = (uint8_t)(rand() % 3 == 0 ? 0xff : rand());
		}
		if (!gp_snap_parse(c, len, &s, err, sizeof(err))) {
			/* whatever decodes must print without trouble */
			char *x = NULL;
			size_t xl = 0;
			FILE *fx = open_memstream(&x, &xl);
			struct gp_output *ox;
			struct gp_output_opts ot = {.out = fx, .json = t % 2};
			gp_output__open(&ot, &ox);
			gp_output__use_snapshot(ox, c, len, err, sizeof(err));
			gp_output__print_final(ox);
			gp_output__close(ox);
			fclose(fx);
			free(x);
			gp_snap_free(&s);
		}
	}
	free(c);
	free(blob);
}

struct got { char text[8192]; size_t n; };

static void on_event(void *user, enum gp_seg_record type, const char *map, unsigned ring,
		     const void *data, size_t size)
{
	struct got *g = user;
	g->n++;
	size_t l = strlen(g->text);
	if (l + 128 < sizeof(g->text))
		snprintf(g->text + l, sizeof(g->text) - l, "%d %s %u %zu %.*s;", (int)type, map, ring,
			 size, (int)size, (const char *)data);
}

static void check_segment(struct gp_map_set *set, const char *dir)
{
	char err[512];
	struct gp_seg_writer *w;
	CHECK(!gp_seg_create(dir, 0, &w, err, sizeof(err)), "create: %s", err);
	if (fails)
		return;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char name[64];
	snprintf(name, sizeof(name), "%s", strrchr(gp_seg_path(w), '/') + 1);
	struct stat st;
	CHECK(!fstatat(dfd, name, &st, 0) && (st.st_mode & 0777) == 0600, "mode 0600");
	struct gp_seg_reader *r;
	CHECK(!gp_seg_open(dfd, name, &r, err, sizeof(err)), "open: %s", err);
	struct gp_seg_state s;
	struct got g = {0};
	CHECK(!gp_seg_ident(r, &s, err, sizeof(err)) && s.pid == getpid(), "ident");
	CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)) && !s.blob && !g.n, "empty");
	gp_seg_event(w, GP_SEG_PRINTK, ".printk", 0, "hello", 5);
	gp_seg_event(w, GP_SEG_EVENT, "events", 3, "abcdefgh", 8);
	size_t len;
	void *blob = blob_of(set, &len);
	CHECK(!gp_seg_flush(w, blob, len, 0), "flush");
	CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)), "read: %s", err);
	CHECK(!strcmp(g.text, "1 .printk 0 5 hello;2 events 3 8 abcdefgh;"), "events: %s", g.text);
	CHECK(s.new_snapshot && s.blob_len == len && !memcmp(s.blob, blob, len) &&
	      !(s.flags & GP_SEG_FINAL), "snapshot");
	/* many records, around the log's end several times */
	static char big[4000];
	memset(big, 'x', sizeof(big));
	size_t n = 0;
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 400; i++)
			gp_seg_event(w, GP_SEG_EVENT, "events", 1, big, sizeof(big));
		CHECK(!gp_seg_flush(w, NULL, 0, 0), "flush events");
		g.text[0] = 0;
		g.n = 0;
		CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)), "read round %d: %s", round, err);
		n += g.n;
		CHECK(g.n == 400 && !s.events_lost, "round %d: %zu records", round, g.n);
	}
	/* a reader that falls behind: the writer takes no more than the log holds unread (the
	 * caller leaves the rest in its ring, where drops are counted); nothing goes round unseen */
	size_t taken = 0, refused = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 400; i++) {
			int rc = gp_seg_event(w, GP_SEG_EVENT, "events", 1, big, sizeof(big));
			rc == -ENOSPC ? refused++ : taken++;
		}
		gp_seg_flush(w, NULL, 0, 0);
	}
	g.n = 0;
	CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)) && !s.events_lost && g.n == taken &&
	      refused > 0 && taken + refused == 1200,
	      "behind: %llu gaps, %zu records read, %zu taken, %zu refused",
	      (unsigned long long)s.events_lost, g.n, taken, refused);
	CHECK(!gp_seg_event(w, GP_SEG_EVENT, "events", 1, big, sizeof(big)) && !gp_seg_flush(w, NULL, 0, 0),
	      "room again once read");
	g.n = 0;
	CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)) && g.n == 1, "the next one: %zu", g.n);
	CHECK(gp_seg_event(w, GP_SEG_LINE, "", 0, "x", 1) == 0 && !s.events_dropped, "a line");
	CHECK(!gp_seg_flush(w, blob, len, 1), "final flush");
	CHECK(!gp_seg_read(r, on_event, &g, &s, err, sizeof(err)) && (s.flags & GP_SEG_FINAL) &&
	      s.new_snapshot, "final");
	gp_seg_reader_close(r);
	gp_seg_close(w);

	/* hostile files: random bytes written over the header and the log */
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR);
	struct gp_seg_header h0;
	CHECK(pread(fd, &h0, sizeof(h0), 0) == sizeof(h0), "header");
	srand(5);
	int corrupt = 0;
	for (int t = 0; t < 3000; t++) {
		struct gp_seg_header h = h0;
		uint8_t *hb = (uint8_t *)&h;
		for (int f = 0; f < 1 + rand() % 3; f++) {
			size_t at = (size_t)rand() % sizeof(h);
			hb[at] = (uint8_t)(rand() % 4 ? rand() : 0xff);
		}
		h.seq &= ~1ull;   /* else the reader only waits */
		(void)!pwrite(fd, &h, sizeof(h), 0);
		if (t % 7 == 0) {   /* and a record's header in the log */
			uint8_t junk[16];
			for (int i = 0; i < 16; i++)
				junk[i] = (uint8_t)rand();
			(void)!pwrite(fd, junk, 16, GP_SEG_HEADER_SIZE + (rand() % 64) * 8);
		}
		CHECK(!gp_seg_open(dfd, name, &r, err, sizeof(err)), "reopen");
		int rc = gp_seg_read(r, on_event, &g, &s, err, sizeof(err));
		corrupt += rc == -EBADMSG;
		CHECK(rc == 0 || rc == -EBADMSG || rc == -EAGAIN, "rc %d", rc);
		CHECK(rc != -EBADMSG || strstr(err, "is corrupt"), "one line: %s", err);
		if (!rc && s.blob) {
			struct gp_snap sn;
			if (!gp_snap_parse(s.blob, s.blob_len, &sn, err, sizeof(err)))
				gp_snap_free(&sn);
		}
		gp_seg_reader_close(r);
		g.text[0] = 0;
	}
	CHECK(corrupt > 100, "corruptions found: %d", corrupt);
	close(fd);
	/* another mode: refused */
	chmod(path, 0644);
	CHECK(gp_seg_open(dfd, name, &r, err, sizeof(err)) == -EPERM && strstr(err, "open to others"),
	      "mode 0644: %s", err);
	unlink(path);
	close(dfd);
	free(blob);
}

int main(int argc, char **argv)
{
	struct gp_map_allocator *a = gp_map_allocator_host(4);
	struct gp_map_set *set = make_set(a);
	if (argc > 1) {   /* planes_segment_test FILE: write the snapshot (the fuzzer's seed) */
		size_t len;
		void *blob = blob_of(set, &len);
		FILE *f = fopen(argv[1], "wb");
		int ok = f && fwrite(blob, 1, len, f) == len;
		if (f)
			fclose(f);
		free(blob);
		return !ok;
	}
	check_decode(set);
	char dir[] = "/tmp/gpuprobe-segtest.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	check_segment(set, dir);
	rmdir(dir);
	gp_map_set__free(set);
	free(a);
	if (fails)
		printf("%d failed\n", fails);
	else
		printf("PASS: snapshots and segments\n");
	return fails ? 1 : 0;
}
