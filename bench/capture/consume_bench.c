/* The capture's consumer side alone (maps/capture.h): how many records a second its threads move
 * from the rings into a file, with the GPU played by producer threads that write records into the
 * ring memory as the device does (a batch of records, payloads first, then each header's state
 * with a release store; the head advanced by the one producer of the ring), lossless: a producer
 * whose batch does not fit waits for the consumer. Every record is checked in the file at the end
 * (count and per-ring sequence), so the rate is of records delivered whole.
 * -f: fill the rings first (-n at most what they hold), then time the consumers alone.
 * usage: consume_bench [-f] [-n RECORDS] [-p PRODUCERS] [-c CONSUMERS] [-s SMS] [-o FILE] */
#include "maps/capture.h"
#include "maps/gpt.h"
#include "maps/map_internal.h"
#include "maps/maps.h"

#include <linux/bpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REC 16      /* payload: u64 seq, u32 ring, u32 0 (a memory trace's 16 bytes) */
#define BATCH 32    /* records a "warp" writes at once */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct producer {
	struct gp_map_inst *m;
	unsigned r0, r1;
	uint64_t per_ring;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct gp_map_inst *m = p->m;
	const uint64_t cap = m->d.capacity, total = 8 + REC;
	uint64_t done = 0, want = (uint64_t)(p->r1 - p->r0) * p->per_ring;
	uint64_t *seq = calloc(p->r1 - p->r0, 8);
	while (done < want) {
		for (unsigned r = p->r0; r < p->r1; r++) {
			uint64_t *headp = (uint64_t *)(m->data.hptr + (size_t)r * GP_RING_STATE_STRIDE);
			uint64_t *consp = (uint64_t *)(m->cons.hptr + (size_t)r * GP_RING_STATE_STRIDE);
			uint8_t *ring = m->rdata.hptr + (size_t)r * cap;
			uint64_t left = p->per_ring - seq[r - p->r0];
			uint64_t k = left < BATCH ? left : BATCH;
			if (!k)
				continue;
			uint64_t head = *headp, cons = __atomic_load_n(consp, __ATOMIC_ACQUIRE);
			uint64_t off = head & (cap - 1), need = k * total;
			if (off + need > cap)
				need += cap - off;   /* a PAD to the end, the batch from 0 */
			if (head + need - cons > cap)
				continue;        /* lossless: come back when the consumer freed space */
			if (off + k * total > cap) {
				__atomic_store_n((uint64_t *)(ring + off),
						 (uint64_t)GP_REC_PAD << 32 | (cap - off - 8), __ATOMIC_RELEASE);
				off = 0;
			}
			for (uint64_t i = 0; i < k; i++) {
				uint8_t *rec = ring + off + i * total;
				uint64_t s = seq[r - p->r0]++;
				uint32_t rr[2] = {r, 0};
				memcpy(rec + 8, &s, 8);
				memcpy(rec + 16, rr, 8);
				__atomic_store_n((uint64_t *)rec, (uint64_t)GP_REC_COMMITTED << 32 | REC,
						 __ATOMIC_RELEASE);
			}
			*headp = head + need;
			done += k;
		}
	}
	free(seq);
	return NULL;
}

struct check { uint64_t *next; uint64_t n, bad; };

static int check_rec(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct check *c = user;
	uint64_t s;
	memcpy(&s, data, 8);
	if (map || size != REC || s != c->next[ring])
		c->bad++;
	c->next[ring] = s + 1;
	c->n++;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 20000000;
	unsigned np = 1, nc = 1, sms = 132;
	int fill = 0;
	const char *path = NULL;
	int o;
	while ((o = getopt(argc, argv, "fn:p:c:s:o:")) != -1) {
		if (o == 'f') fill = 1;
		else if (o == 'n') n = strtoull(optarg, NULL, 10);
		else if (o == 'p') np = (unsigned)atoi(optarg);
		else if (o == 'c') nc = (unsigned)atoi(optarg);
		else if (o == 's') sms = (unsigned)atoi(optarg);
		else if (o == 'o') path = optarg;
		else {
			fprintf(stderr, "usage: consume_bench [-f] [-n RECORDS] [-p PRODUCERS] [-c CONSUMERS] "
				"[-s SMS] [-o FILE]\n");
			return 2;
		}
	}
	char def[256];
	if (!path) {
		snprintf(def, sizeof(def), "%s/consume_bench.%ld.gpt",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (long)getpid());
		path = def;
	}
	struct gp_map_allocator *a = gp_map_allocator_host(sms);
	/* 1 MiB per SM, as tests/gpu/capture's probes */
	struct gp_map def_map = {.name = "trace", .type = BPF_MAP_TYPE_RINGBUF,
				 .max_entries = (1u << 20) * (sms > 1 ? 1u << (32 - __builtin_clz(sms - 1)) : 1)};
	struct gp_map_set_opts so = {.alloc = a};
	struct gp_map_set *set;
	char err[512];
	if (gp_map_set__create(&def_map, 1, &so, &set, err, sizeof(err))) {
		fprintf(stderr, "consume_bench: %s\n", err);
		return 1;
	}
	struct gp_map_inst *m = gp_map_set__find(set, "trace");
	uint64_t per_ring = n / sms;
	n = per_ring * sms;
	struct gp_capture *c;
	struct gp_capture_opts co = {.threads = nc};
	pthread_t *t = calloc(np, sizeof(*t));
	struct producer *p = calloc(np, sizeof(*p));
	if (fill && per_ring * (8 + REC) + 64 * (8 + REC) > m->d.capacity) {
		fprintf(stderr, "consume_bench: -f: %llu records a ring do not fit its %u bytes\n",
			(unsigned long long)per_ring, m->d.capacity);
		return 2;
	}
	double t0 = now_s();
	for (int round = 0; round < 2; round++) {
		if (round == fill) {   /* with -f the consumers start after the producers */
			t0 = now_s();
			if (gp_capture__start(path, &set, 1, &co, &c, err, sizeof(err))) {
				fprintf(stderr, "consume_bench: %s\n", err);
				return 1;
			}
		}
		if (round == 0) {
			for (unsigned i = 0; i < np; i++) {
				p[i] = (struct producer){m, sms * i / np, sms * (i + 1) / np, per_ring};
				pthread_create(&t[i], NULL, produce, &p[i]);
			}
			for (unsigned i = 0; i < np; i++)
				pthread_join(t[i], NULL);
		}
	}
	struct gp_capture_stats st;
	int rc = gp_capture__stop(c, NULL, &st);
	double el = now_s() - t0;
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *data = malloc((size_t)len);
	if (fread(data, 1, (size_t)len, f) != (size_t)len)
		return 1;
	fclose(f);
	unlink(path);
	struct gp_gpt *g;
	if (rc || gp_gpt__open_mem(data, (size_t)len, &g, err, sizeof(err))) {
		fprintf(stderr, "consume_bench: %s\n", rc ? "the capture failed" : err);
		return 1;
	}
	struct check ck = {calloc(sms, 8), 0, 0};
	gp_gpt__for_each(g, check_rec, &ck);
	int whole = !gp_gpt__truncated(g);   /* the end chunk, and nothing after it */
	if (!whole)
		fprintf(stderr, "consume_bench: the file has no end chunk\n");
	printf("consume_bench%s: %llu records (%u rings of %u KiB, %u producers, %u consumers): "
	       "%llu in the file, %llu out of order, %.3f s: %.3g records/s, %.2f GB/s of ring bytes\n",
	       fill ? " -f (consumers alone)" : "", (unsigned long long)n, sms, m->d.capacity >> 10,
	       np, st.threads,
	       (unsigned long long)ck.n, (unsigned long long)ck.bad, el, ck.n / el,
	       st.bytes / el / 1e9);
	gp_gpt__close(g);
	free(data);
	free(ck.next);
	free(p);
	free(t);
	gp_map_set__free(set);
	free(a);
	return whole && ck.n == n && !ck.bad ? 0 : 1;
}
