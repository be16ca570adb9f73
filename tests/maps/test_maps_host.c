/* Maps on the plain host allocator: every map type's semantics, hash collisions and a full
 * table, sharded sums, per-CPU copies, rings (wrap, exact drops), printk formatting. */
#include "maps/maps.h"
#include "check.h"
#include "gpuprobe/warp.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static struct gp_map_allocator *alloc4;

static struct gp_map_inst *make(const char *name, uint32_t type, uint32_t ks, uint32_t vs,
				uint32_t max, int sharded)
{
	struct gp_map def = {.name = name, .type = type, .key_size = ks, .value_size = vs,
			     .max_entries = max};
	struct gp_map_create_opts o = {.sharded = sharded, .perthread_slots = 64};
	struct gp_map_inst *m = NULL;
	char err[256] = "";
	int rc = gp_map_inst__create(&def, &o, alloc4, &m, err, sizeof(err));
	if (rc)
		fprintf(stderr, "create %s: %s\n", name, err);
	CHECK_EQ(rc, 0);
	return m;
}

static void test_array(void)
{
	struct gp_map_inst *m = make("arr", BPF_MAP_TYPE_ARRAY, 4, 12, 4, 0);
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	CHECK_EQ(d->kind, GP_MAP_KIND_ARRAY);
	CHECK_EQ(d->value_stride, 16);
	CHECK_EQ(d->nshards, 1);
	uint32_t k = 2;
	uint8_t v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out[12] = {0};
	CHECK_EQ(gp_map_inst__lookup(m, &k, out), 0);
	CHECK_EQ(out[0], 0);
	CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(gp_map_inst__lookup(m, &k, out), 0);
	CHECK(!memcmp(out, v, 12));
	k = 4;
	CHECK_EQ(gp_map_inst__lookup(m, &k, out), -ENOENT);
	CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_ANY), -E2BIG);
	CHECK_EQ(gp_map_inst__delete(m, &k), -EINVAL);
	uint32_t nk;
	CHECK_EQ(gp_map_inst__next_key(m, NULL, &nk), 0);
	CHECK_EQ(nk, 0);
	k = 3;
	CHECK_EQ(gp_map_inst__next_key(m, &k, &nk), -ENOENT);
	/* the value pointer is the memory the device writes */
	k = 2;
	uint8_t *p = gp_map_inst__value_ptr(m, &k, 0);
	CHECK(p != NULL);
	if (p)
		CHECK_EQ(p[11], 12);
	void *base;
	size_t len;
	CHECK_EQ(gp_map_inst__host_region(m, &base, &len), 0);
	CHECK(base != NULL && len == 4 * 16);
	gp_map_inst__free(m);
}

static void test_sharded_array(void)
{
	struct gp_map_inst *m = make("counts", BPF_MAP_TYPE_ARRAY, 4, 8, 3, 1);
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	CHECK_EQ(d->flags & GP_MAPF_SHARDED, GP_MAPF_SHARDED);
	CHECK_EQ(d->nshards, 4);
	CHECK_EQ(d->shard_stride, 128);
	CHECK_EQ(gp_map_inst__read_size(m), 8);
	/* what four SMs would do: each adds into its own copy */
	uint32_t k = 1;
	for (unsigned s = 0; s < 4; s++) {
		uint64_t *p = gp_map_inst__value_ptr(m, &k, s);
		CHECK(p != NULL);
		if (p)
			__atomic_fetch_add(p, 10 + s, __ATOMIC_RELAXED);
	}
	uint64_t sum = 0;
	CHECK_EQ(gp_map_inst__lookup(m, &k, &sum), 0);
	CHECK_EQ(sum, 46);
	/* update: copy 0 takes the value, the others are zeroed */
	uint64_t seven = 7;
	CHECK_EQ(gp_map_inst__update(m, &k, &seven, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__lookup(m, &k, &sum), 0);
	CHECK_EQ(sum, 7);
	struct gp_map_snapshot snap;
	CHECK_EQ(gp_map_inst__snapshot(m, &snap), 0);
	CHECK_EQ(snap.count, 3);
	uint64_t v1;
	memcpy(&v1, snap.values + 8, 8);
	CHECK_EQ(v1, 7);
	gp_map_snapshot__free(&snap);
	gp_map_inst__free(m);
}

static void test_percpu_array(void)
{
	struct gp_map_inst *m = make("pc", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2, 0);
	CHECK_EQ(gp_map_inst__nshards(m), 4);
	CHECK_EQ(gp_map_inst__read_size(m), 32);   /* 4 copies of round_up(4, 8) */
	uint32_t k = 0;
	uint32_t *p2 = gp_map_inst__value_ptr(m, &k, 2);
	if (p2)
		*p2 = 5;
	uint8_t all[32];
	CHECK_EQ(gp_map_inst__lookup(m, &k, all), 0);
	uint32_t c2;
	memcpy(&c2, all + 16, 4);
	CHECK_EQ(c2, 5);
	uint8_t in[32] = {0};
	in[24] = 9;
	CHECK_EQ(gp_map_inst__update(m, &k, in, BPF_ANY), 0);
	uint32_t *p3 = gp_map_inst__value_ptr(m, &k, 3);
	CHECK(p3 && *p3 == 9);
	CHECK(p2 && *p2 == 0);
	gp_map_inst__free(m);
}

static void test_perthread_array(void)
{
	struct gp_map_inst *m = make("pt", GP_BPFTIME_MAP_PERTHREAD_ARRAY, 4, 8, 1, 0);
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	CHECK_EQ(d->flags & GP_MAPF_PERTHREAD, GP_MAPF_PERTHREAD);
	CHECK_EQ(d->nshards, 64);
	CHECK_EQ(d->shard_stride, 8);
	CHECK_EQ(gp_map_inst__read_size(m), 64 * 8);
	gp_map_inst__free(m);
	/* the default slots shrink to keep a big per-thread map under 256 MiB */
	struct gp_map big = {.name = "big", .type = GP_BPFTIME_MAP_PERTHREAD_ARRAY, .key_size = 4,
			     .value_size = 8, .max_entries = 1024};
	char err[128];
	CHECK_EQ(gp_map_inst__create(&big, NULL, alloc4, &m, err, sizeof(err)), 0);
	CHECK_EQ(gp_map_inst__nshards(m), 32768);
	gp_map_inst__free(m);
}

/* bpftime's other GPU map types (maps/map_layout.h): the single-copy ones stay one copy even when
 * the verifier says atomic-add only, the host-memory ones are host-mapped, 1512 is per-thread. */
static void test_bpftime_types(void)
{
	static const struct {
		uint32_t type, kind, flags, nshards;
	} want[] = {
		{GP_BPFTIME_MAP_GPU_HASH, GP_MAP_KIND_HASH, 0, 1},
		{GP_BPFTIME_MAP_GPU_ARRAY, GP_MAP_KIND_ARRAY, 0, 1},
		{GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY, GP_MAP_KIND_ARRAY, GP_MAPF_HOSTMAPPED, 1},
		{GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST, GP_MAP_KIND_ARRAY, GP_MAPF_HOSTMAPPED | GP_MAPF_PERTHREAD, 64},
		{GP_BPFTIME_MAP_GPU_ARRAY_HOST, GP_MAP_KIND_ARRAY, GP_MAPF_HOSTMAPPED, 1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		struct gp_map_inst *m = make("bt", want[i].type, 4, 8, 4, 1 /* atomic-add only */);
		if (!m)
			continue;
		const struct gp_map_desc *d = gp_map_inst__desc(m);
		CHECK_EQ(d->bpf_type, want[i].type);
		CHECK_EQ(d->kind, want[i].kind);
		CHECK_EQ(d->flags, want[i].flags);
		CHECK_EQ(d->nshards, want[i].nshards);
		uint32_t k = 2;
		uint64_t v[64], out[64] = {0};
		for (int j = 0; j < 64; j++)
			v[j] = 41 + j;
		CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_ANY), 0);
		if (want[i].flags & GP_MAPF_PERTHREAD) {
			/* per-thread: the host writes and reads every thread slot, like per-CPU values */
			CHECK_EQ(gp_map_inst__read_size(m), 64 * 8);
			CHECK_EQ(gp_map_inst__lookup(m, &k, out), 0);
			CHECK_EQ(out[0], 41);
			CHECK_EQ(out[63], 41 + 63);
		} else {
			CHECK_EQ(gp_map_inst__read_size(m), 8);
			CHECK_EQ(gp_map_inst__lookup(m, &k, out), 0);
			CHECK_EQ(out[0], 41);
			/* one copy: the value pointer of copy 0 is the value every thread sees */
			uint64_t *p = gp_map_inst__value_ptr(m, &k, 0);
			CHECK(p && *p == 41);
		}
		if (want[i].kind == GP_MAP_KIND_ARRAY) {
			k = 4;   /* past max_entries, as Linux */
			CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_ANY), -E2BIG);
			CHECK_EQ(gp_map_inst__delete(m, &k), -EINVAL);
		} else {
			CHECK_EQ(gp_map_inst__delete(m, &k), 0);
			CHECK_EQ(gp_map_inst__lookup(m, &k, out), -ENOENT);
		}
		gp_map_inst__free(m);
	}
	/* sizes are checked as for the Linux types they stand for */
	struct gp_map bad = {.name = "badkey", .type = GP_BPFTIME_MAP_GPU_ARRAY_HOST, .key_size = 8,
			     .value_size = 8, .max_entries = 1};
	struct gp_map_inst *m = NULL;
	char err[160] = "";
	CHECK_EQ(gp_map_inst__create(&bad, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'badkey': bpftime gpu host array key size must be 4, not 8");
	bad = (struct gp_map){.name = "nohash", .type = GP_BPFTIME_MAP_GPU_HASH, .key_size = 0,
			      .value_size = 8, .max_entries = 1};
	CHECK_EQ(gp_map_inst__create(&bad, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'nohash': hash key size 0 is not in 1..512");
}

static void test_hash(void)
{
	struct gp_map_inst *m = make("h", BPF_MAP_TYPE_HASH, 6, 8, 4, 0);
	const struct gp_map_desc *d = gp_map_inst__desc(m);
	CHECK_EQ(d->capacity, 8);
	CHECK_EQ(d->bucket_stride, 8 + 8 + 8);
	char k[5][6] = {"k0000", "k0001", "k0002", "k0003", "k0004"};
	for (uint64_t i = 0; i < 4; i++)
		CHECK_EQ(gp_map_inst__update(m, k[i], &i, BPF_NOEXIST), 0);
	uint64_t v = 99, out = 0;
	CHECK_EQ(gp_map_inst__update(m, k[4], &v, BPF_ANY), -E2BIG);   /* max_entries 4 */
	CHECK_EQ(gp_map_inst__update(m, k[1], &v, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(gp_map_inst__update(m, k[4], &v, BPF_EXIST), -ENOENT);
	CHECK_EQ(gp_map_inst__update(m, k[1], &v, BPF_EXIST), 0);
	CHECK_EQ(gp_map_inst__lookup(m, k[1], &out), 0);
	CHECK_EQ(out, 99);
	CHECK_EQ(gp_map_inst__lookup(m, k[4], &out), -ENOENT);
	CHECK_EQ(gp_map_inst__delete(m, k[2]), 0);
	CHECK_EQ(gp_map_inst__delete(m, k[2]), -ENOENT);
	CHECK_EQ(gp_map_inst__lookup(m, k[2], &out), -ENOENT);
	CHECK_EQ(gp_map_inst__update(m, k[4], &v, BPF_ANY), 0);   /* room again */
	CHECK_EQ(gp_map_inst__update(m, k[2], &v, BPF_ANY), -E2BIG);
	/* iteration visits each live key once */
	char key[6], prev[6];
	int n = 0, seen4 = 0;
	for (int rc = gp_map_inst__next_key(m, NULL, key); !rc; rc = gp_map_inst__next_key(m, prev, key)) {
		n++;
		seen4 += !memcmp(key, k[4], 6);
		memcpy(prev, key, 6);
	}
	CHECK_EQ(n, 4);
	CHECK_EQ(seen4, 1);
	gp_map_inst__free(m);
}

/* Keys that land in the same bucket: probing must keep them apart, delete must not cut a chain,
 * and a re-inserted key must revive its own tombstone rather than appear twice. */
static void test_hash_collisions(void)
{
	struct gp_map_inst *m = make("hc", BPF_MAP_TYPE_HASH, 4, 8, 8, 0);
	uint32_t cap = gp_map_inst__desc(m)->capacity;
	uint32_t keys[6], n = 0, want = gp_map_hash(&(uint32_t){0}, 4) & (cap - 1);
	for (uint32_t x = 0; n < 6; x++)
		if ((gp_map_hash(&x, 4) & (cap - 1)) == want)
			keys[n++] = x;
	for (uint64_t i = 0; i < 6; i++)
		CHECK_EQ(gp_map_inst__update(m, &keys[i], &i, BPF_ANY), 0);
	for (uint64_t i = 0; i < 6; i++) {
		uint64_t out = 77;
		CHECK_EQ(gp_map_inst__lookup(m, &keys[i], &out), 0);
		CHECK_EQ(out, i);
	}
	CHECK_EQ(gp_map_inst__delete(m, &keys[1]), 0);
	uint64_t out;
	CHECK_EQ(gp_map_inst__lookup(m, &keys[5], &out), 0);   /* found past the tombstone */
	CHECK_EQ(out, 5);
	uint64_t v = 50;
	CHECK_EQ(gp_map_inst__update(m, &keys[5], &v, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__update(m, &keys[1], &v, BPF_NOEXIST), 0);
	struct gp_map_snapshot s;
	CHECK_EQ(gp_map_inst__snapshot(m, &s), 0);
	CHECK_EQ(s.count, 6);
	gp_map_snapshot__free(&s);
	/* the table is 16 buckets: fill the rest of max_entries with other keys, then it is full */
	CHECK_EQ(gp_map_inst__update(m, &(uint32_t){1000001}, &v, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__update(m, &(uint32_t){1000002}, &v, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__update(m, &(uint32_t){1000003}, &v, BPF_ANY), -E2BIG);
	CHECK_EQ(gp_map_inst__desc(m)->count, 0);   /* the host copy; the live count is in memory */
	gp_map_inst__free(m);
}

struct race { struct gp_map_inst *m; int id; int inserted; };

static void *racer(void *p)
{
	struct race *r = p;
	for (uint32_t k = 0; k < 200; k++) {
		uint64_t v = r->id;
		if (gp_map_inst__update(r->m, &k, &v, BPF_NOEXIST) == 0)
			r->inserted++;
	}
	return NULL;
}

/* Threads racing to insert the same keys: each key ends up exactly once. */
static void test_hash_race(void)
{
	struct gp_map_inst *m = make("race", BPF_MAP_TYPE_HASH, 4, 8, 256, 0);
	pthread_t t[4];
	struct race r[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (struct race){m, i, 0};
		pthread_create(&t[i], NULL, racer, &r[i]);
	}
	int total = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		total += r[i].inserted;
	}
	CHECK_EQ(total, 200);
	struct gp_map_snapshot s;
	CHECK_EQ(gp_map_inst__snapshot(m, &s), 0);
	CHECK_EQ(s.count, 200);
	gp_map_snapshot__free(&s);
	gp_map_inst__free(m);
}

static void test_percpu_and_sharded_hash(void)
{
	struct gp_map_inst *m = make("ph", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4, 0);
	uint32_t k = 7;
	uint64_t in[4] = {1, 2, 3, 4}, out[4] = {0};
	CHECK_EQ(gp_map_inst__update(m, &k, in, BPF_ANY), 0);
	CHECK_EQ(gp_map_inst__lookup(m, &k, out), 0);
	CHECK(!memcmp(in, out, sizeof(in)));
	uint64_t *p = gp_map_inst__value_ptr(m, &k, 3);
	CHECK(p && *p == 4);
	gp_map_inst__free(m);

	m = make("sh", BPF_MAP_TYPE_HASH, 4, 16, 4, 1);
	uint64_t v[2] = {5, 6}, sum[2];
	CHECK_EQ(gp_map_inst__update(m, &k, v, BPF_ANY), 0);
	for (unsigned s = 1; s < 4; s++) {
		uint64_t *q = gp_map_inst__value_ptr(m, &k, s);
		CHECK(q != NULL);
		if (q) {
			q[0] += 1;
			q[1] += 100;
		}
	}
	CHECK_EQ(gp_map_inst__lookup(m, &k, sum), 0);
	CHECK_EQ(sum[0], 8);
	CHECK_EQ(sum[1], 306);
	gp_map_inst__free(m);
}

/* The counting idiom on a sharded HASH (the verifier's map_atomic_only with a BPF_NOEXIST
 * insert): the insert creates the key once, its value lands in one copy and the others stay 0;
 * every SM then adds into its own copy; a second NOEXIST insert (another SM losing the race) is
 * -EEXIST and changes nothing. Lookups and snapshots (what the CLI prints) give the sum. The same
 * on the GPU, 65,536 threads over 1,000 keys: tests/maps/gpu_maps_run.c's "shash". */
static void test_sharded_noexist_count(void)
{
	struct gp_map_inst *m = make("cnt", BPF_MAP_TYPE_HASH, 4, 8, 16, 1);
	uint32_t k = 42, k2 = 43;
	uint64_t one = 1, v = 0;
	CHECK_EQ(gp_map_inst__update(m, &k, &one, BPF_NOEXIST), 0);
	unsigned copies_with_one = 0;
	for (unsigned s = 0; s < 4; s++) {
		uint64_t *q = gp_map_inst__value_ptr(m, &k, s);
		CHECK(q != NULL);
		if (q)
			copies_with_one += *q == 1;
	}
	CHECK_EQ(copies_with_one, 1);   /* in one copy, not in every copy */
	for (unsigned s = 0; s < 4; s++) {   /* each SM's atomic adds: 10 per SM */
		uint64_t *q = gp_map_inst__value_ptr(m, &k, s);
		if (q)
			*q += 10;
	}
	CHECK_EQ(gp_map_inst__update(m, &k, &one, BPF_NOEXIST), -EEXIST);
	CHECK_EQ(gp_map_inst__lookup(m, &k, &v), 0);
	CHECK_EQ(v, 41);
	CHECK_EQ(gp_map_inst__update(m, &k2, &one, BPF_NOEXIST), 0);
	uint64_t *q = gp_map_inst__value_ptr(m, &k2, 3);
	if (q)
		*q += 2;
	struct gp_map_snapshot snap;
	CHECK_EQ(gp_map_inst__snapshot(m, &snap), 0);
	CHECK_EQ(snap.count, 2);
	CHECK_EQ(snap.value_size, 8);
	uint64_t total = 0;
	for (size_t i = 0; i < snap.count; i++) {
		uint32_t key;
		uint64_t val;
		memcpy(&key, snap.keys + i * 4, 4);
		memcpy(&val, snap.values + i * 8, 8);
		CHECK(key == k ? val == 41 : key == k2 && val == 3);
		total += val;
	}
	CHECK_EQ(total, 44);
	gp_map_snapshot__free(&snap);
	gp_map_inst__free(m);
}

static void test_global_data(void)
{
	const char init[] = "hello";
	struct gp_map def = {.name = ".rodata", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
			     .value_size = 6, .max_entries = 1, .initial = init, .initial_size = 6,
			     .readonly = 1};
	struct gp_map_inst *m;
	char err[128];
	CHECK_EQ(gp_map_inst__create(&def, NULL, alloc4, &m, err, sizeof(err)), 0);
	char out[6];
	CHECK_EQ(gp_map_inst__lookup(m, &(uint32_t){0}, out), 0);
	CHECK_STR(out, "hello");
	CHECK_EQ(gp_map_inst__update(m, &(uint32_t){0}, out, BPF_ANY), -EPERM);
	gp_map_inst__free(m);
}

static void test_create_errors(void)
{
	char err[256];
	struct gp_map_inst *m;
	struct gp_map bad = {.name = "lpm", .type = BPF_MAP_TYPE_LPM_TRIE, .key_size = 8, .value_size = 8, .max_entries = 4};
	CHECK_EQ(gp_map_inst__create(&bad, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'lpm': map type 11 (lpm_trie) is not supported on the GPU");
	struct gp_map k3 = {.name = "a", .type = BPF_MAP_TYPE_ARRAY, .key_size = 3, .value_size = 8, .max_entries = 4};
	CHECK_EQ(gp_map_inst__create(&k3, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'a': array key size must be 4, not 3");
	struct gp_map rb = {.name = "rb", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 3000};
	CHECK_EQ(gp_map_inst__create(&rb, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'rb': ringbuf size 3000 is not a power of two");
	struct gp_map z = {.name = "z", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8};
	CHECK_EQ(gp_map_inst__create(&z, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'z': max_entries is 0");
	/* the ring modes (gpuprobe/warp.h) only on rings; a sampling rate that fits 32 bits */
	struct gp_map ll = {.name = "ll", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
			    .max_entries = 4, .flags = GP_RINGBUF_LOSSLESS};
	CHECK_EQ(gp_map_inst__create(&ll, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'll': map_flags GP_RINGBUF_LOSSLESS (0x10000000) is for ring buffers, not array");
	struct gp_map sx = {.name = "sx", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8,
			    .max_entries = 4, .map_extra = 8};
	CHECK_EQ(gp_map_inst__create(&sx, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'sx': map_extra 8: only ring buffers take one (the sampling rate), not hash");
	struct gp_map big = {.name = "big", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 16,
			     .map_extra = 1ull << 32};
	CHECK_EQ(gp_map_inst__create(&big, NULL, alloc4, &m, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "map 'big': map_extra 4294967296: a ring's sampling rate (1 in N) must be below 2^32");
	/* and what a ring with them gets: the descriptor's flags and rate */
	struct gp_map ok = {.name = "ok", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 16,
			    .flags = GP_RINGBUF_LOSSLESS, .map_extra = 16};
	CHECK_EQ(gp_map_inst__create(&ok, NULL, alloc4, &m, err, sizeof(err)), 0);
	if (m) {
		const struct gp_map_desc *d = gp_map_inst__desc(m);
		CHECK_EQ(d->flags & (GP_MAPF_LOSSLESS | GP_MAPF_SAMPLED), GP_MAPF_LOSSLESS | GP_MAPF_SAMPLED);
		CHECK_EQ(d->sample_rate, 16);
		gp_map_inst__free(m);
	}
	struct gp_map one = {.name = "one", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 16, .map_extra = 1};
	CHECK_EQ(gp_map_inst__create(&one, NULL, alloc4, &m, err, sizeof(err)), 0);
	if (m) {
		CHECK_EQ(gp_map_inst__desc(m)->flags & (GP_MAPF_LOSSLESS | GP_MAPF_SAMPLED), 0);   /* 1 in 1: all */
		gp_map_inst__free(m);
	}
}

struct collected { int n; size_t total; uint32_t first; uint32_t last; unsigned ring_mask; };

static int collect(void *user, unsigned ring, const void *data, size_t size)
{
	struct collected *c = user;
	uint32_t v;
	memcpy(&v, data, 4);
	if (!c->n)
		c->first = v;
	c->last = v;
	c->n++;
	c->total += size;
	c->ring_mask |= 1u << ring;
	return 0;
}

static void test_ring(void)
{
	struct gp_map def = {.name = "events", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 16384};
	struct gp_map_inst *m;
	char err[128];
	CHECK_EQ(gp_map_inst__create(&def, NULL, alloc4, &m, err, sizeof(err)), 0);
	CHECK_EQ(gp_map_inst__desc(m)->capacity, 4096);   /* 16 KiB over 4 SMs */
	/* 4096-byte ring, 40-byte records (8 header + 32): 102 fit, the rest are dropped exactly */
	uint8_t rec[32] = {0};
	int ok = 0;
	for (uint32_t i = 0; i < 150; i++) {
		memcpy(rec, &i, 4);
		ok += gp_map_inst__ring_output(m, 0, rec, sizeof(rec)) == 0;
	}
	CHECK_EQ(ok, 102);
	CHECK_EQ(gp_map_inst__ring_drops(m), 48);
	struct collected c = {0};
	CHECK_EQ(gp_map_inst__ring_drain(m, collect, &c), 102);
	CHECK_EQ(c.first, 0);
	CHECK_EQ(c.last, 101);
	/* now wrap: the next records cross the end; a PAD record fills the tail */
	ok = 0;
	for (uint32_t i = 0; i < 60; i++) {
		memcpy(rec, &i, 4);
		ok += gp_map_inst__ring_output(m, 0, rec, sizeof(rec)) == 0;
	}
	CHECK_EQ(ok, 60);
	c = (struct collected){0};
	CHECK_EQ(gp_map_inst__ring_drain(m, collect, &c), 60);
	CHECK_EQ(c.first, 0);
	CHECK_EQ(c.last, 59);
	CHECK_EQ(c.total, 60 * 32);
	CHECK_EQ(gp_map_inst__ring_drops(m), 48);
	/* odd sizes round to 8 in the ring but arrive with their own length; other rings too */
	CHECK_EQ(gp_map_inst__ring_output(m, 2, "abcde", 5), 0);
	CHECK_EQ(gp_map_inst__ring_output(m, 7, "xyz", 3), 0);   /* ring 7 % 4 = 3 */
	c = (struct collected){0};
	CHECK_EQ(gp_map_inst__ring_drain(m, collect, &c), 2);
	CHECK_EQ(c.total, 8);
	CHECK_EQ(c.ring_mask, (1u << 2) | (1u << 3));
	CHECK_EQ(gp_map_inst__ring_output(m, 0, rec, 5000), -ENOSPC);
	CHECK_EQ(gp_map_inst__ring_drops(m), 49);
	gp_map_inst__free(m);
}

static void test_printk(void)
{
	uint8_t rec[GP_PRINTK_FMT + 128] = {0};
	const char *fmt = "x=%d u=%u hex=%x l=%ld %% %5d|%-4u|%08llx %p %s";
	uint32_t len = (uint32_t)strlen(fmt) + 1, nargs = 3;
	uint64_t args[3] = {(uint64_t)-5, 4000000000u, 255};
	memcpy(rec, &len, 4);
	memcpy(rec + 4, &nargs, 4);
	memcpy(rec + GP_PRINTK_ARGS, args, sizeof(args));
	memcpy(rec + GP_PRINTK_FMT, fmt, len);
	char out[256];
	int n = gp_printk_format(rec, GP_PRINTK_FMT + len, out, sizeof(out));
	CHECK_STR(out, "x=-5 u=4000000000 hex=ff l=0 %     0|0   |00000000 0x0 (%s unsupported)");
	CHECK_EQ(n, (int)strlen(out));
	const char *f2 = "%lld %llu %lx";
	len = (uint32_t)strlen(f2);
	memcpy(rec, &len, 4);
	memcpy(rec + GP_PRINTK_FMT, f2, len);
	gp_printk_format(rec, GP_PRINTK_FMT + len, out, sizeof(out));
	CHECK_STR(out, "-5 4000000000 ff");
	CHECK_EQ(gp_printk_format(rec, 8, out, sizeof(out)), -EINVAL);
	const char *f3 = "[%c%c%c]";
	uint64_t abc[3] = {'a', 'b', 'c'};
	len = (uint32_t)strlen(f3);
	memcpy(rec, &len, 4);
	memcpy(rec + GP_PRINTK_ARGS, abc, sizeof(abc));
	memcpy(rec + GP_PRINTK_FMT, f3, len);
	gp_printk_format(rec, GP_PRINTK_FMT + len, out, sizeof(out));
	CHECK_STR(out, "[abc]");
	memcpy(rec + GP_PRINTK_ARGS, args, sizeof(args));
	len = (uint32_t)strlen(f2);
	memcpy(rec, &len, 4);
	memcpy(rec + GP_PRINTK_FMT, f2, len);
	/* truncation keeps snprintf semantics */
	CHECK_EQ(gp_printk_format(rec, GP_PRINTK_FMT + len, out, 4), 16);
	CHECK_STR(out, "-5 ");
}

static void test_set(void)
{
	struct gp_map defs[2] = {
		{.name = "a", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1},
		{.name = "h", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 1},
	};
	uint8_t atomic_only[2] = {1, 0};
	struct gp_map_set_opts o = {.alloc = alloc4, .atomic_only = atomic_only};
	struct gp_map_set *s;
	char err[128];
	CHECK_EQ(gp_map_set__create(defs, 2, &o, &s, err, sizeof(err)), 0);
	CHECK_EQ(gp_map_set__count(s), 2);
	CHECK_EQ(gp_map_inst__desc(gp_map_set__find(s, "a"))->flags, GP_MAPF_SHARDED);
	CHECK_EQ(gp_map_inst__desc(gp_map_set__find(s, "h"))->flags, 0);
	CHECK(gp_map_set__printk(s) != NULL);
	CHECK_STR(gp_map_inst__name(gp_map_set__printk(s)), ".printk");
	CHECK(gp_map_set__find(s, "nope") == NULL);
	/* the descriptor in device memory matches the host copy */
	const struct gp_map_desc *dd = (const void *)(uintptr_t)gp_map_inst__desc_addr(gp_map_set__map(s, 0));
	CHECK_EQ(dd->nshards, 4);
	CHECK_EQ(dd->data, gp_map_inst__desc(gp_map_set__map(s, 0))->data);
	gp_map_set__free(s);
}

int main(void)
{
	alloc4 = gp_map_allocator_host(4);
	test_array();
	test_sharded_array();
	test_percpu_array();
	test_perthread_array();
	test_bpftime_types();
	test_hash();
	test_hash_collisions();
	test_hash_race();
	test_percpu_and_sharded_hash();
	test_sharded_noexist_count();
	test_global_data();
	test_create_errors();
	test_ring();
	test_printk();
	test_set();
	free(alloc4);
	CHECK_DONE();
}
