/* Creating maps: the descriptor and the memory of each map type (maps/map_layout.h), through the
 * caller's allocator. */
#include "maps/map_internal.h"
#include "gpuprobe/warp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory ---------------------------------------------------------------------------- */

int gp_region_read(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		   void *buf, size_t n)
{
	if (r->hptr) {
		memcpy(buf, r->hptr + off, n);
		return 0;
	}
	return m->a->copy_from_dev(m->a->user, buf, r->dptr + off, n);
}

int gp_region_write(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		    const void *buf, size_t n)
{
	if (r->hptr) {
		memcpy(r->hptr + off, buf, n);
		return 0;
	}
	return m->a->copy_to_dev(m->a->user, r->dptr + off, buf, n);
}

bool gp_region_cas32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		     uint32_t expected, uint32_t desired)
{
	if (r->hptr)
		return __atomic_compare_exchange_n((uint32_t *)(r->hptr + off), &expected, desired,
						   false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	uint32_t cur;
	if (gp_region_read(m, r, off, &cur, 4) || cur != expected)
		return false;
	return gp_region_write(m, r, off, &desired, 4) == 0;
}

uint32_t gp_region_load32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off)
{
	if (r->hptr)
		return __atomic_load_n((uint32_t *)(r->hptr + off), __ATOMIC_ACQUIRE);
	uint32_t v = 0;
	gp_region_read(m, r, off, &v, 4);
	return v;
}

void gp_region_store32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		       uint32_t v)
{
	if (r->hptr)
		__atomic_store_n((uint32_t *)(r->hptr + off), v, __ATOMIC_RELEASE);
	else
		gp_region_write(m, r, off, &v, 4);
}

uint32_t gp_region_add32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
			 int32_t v)
{
	if (r->hptr)
		return __atomic_fetch_add((uint32_t *)(r->hptr + off), (uint32_t)v, __ATOMIC_ACQ_REL);
	uint32_t old = 0, nv;
	gp_region_read(m, r, off, &old, 4);
	nv = old + (uint32_t)v;
	gp_region_write(m, r, off, &nv, 4);
	return old;
}

uint64_t gp_region_add64(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
			 uint64_t v)
{
	if (r->hptr)
		return __atomic_fetch_add((uint64_t *)(r->hptr + off), v, __ATOMIC_ACQ_REL);
	uint64_t old = 0, nv;
	gp_region_read(m, r, off, &old, 8);
	nv = old + v;
	gp_region_write(m, r, off, &nv, 8);
	return old;
}

static int region_alloc(const struct gp_map_allocator *a, size_t size, bool hostmapped,
			struct gp_region *r)
{
	int rc;
	memset(r, 0, sizeof(*r));
	if (!size)
		return 0;
	r->size = size;
	r->hostmapped = hostmapped;
	if (hostmapped) {
		void *h;
		if ((rc = a->host_alloc(a->user, size, &h)))
			return rc;
		r->hptr = h;
		if ((rc = a->host_dev_ptr(a->user, h, &r->dptr))) {
			a->host_free(a->user, h);
			r->hptr = NULL;
			return rc;
		}
		memset(h, 0, size);
		return 0;
	}
	if ((rc = a->dev_alloc(a->user, size, &r->dptr)))
		return rc;
	r->hptr = a->dev_host_ptr ? a->dev_host_ptr(a->user, r->dptr) : NULL;
	if (r->hptr) {
		memset(r->hptr, 0, size);
		return 0;
	}
	/* Zero device memory through copies of a zero page. */
	static const uint8_t zero[65536];
	for (size_t off = 0; off < size; off += sizeof(zero)) {
		size_t n = size - off < sizeof(zero) ? size - off : sizeof(zero);
		if ((rc = a->copy_to_dev(a->user, r->dptr + off, zero, n)))
			return rc;
	}
	return 0;
}

static void region_free(const struct gp_map_allocator *a, struct gp_region *r)
{
	if (!r->size)
		return;
	if (r->hostmapped)
		a->host_free(a->user, r->hptr);
	else
		a->dev_free(a->user, r->dptr);
	memset(r, 0, sizeof(*r));
}

/* ---- creation ---------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static const char *map_type_name(uint32_t t)
{
	static const char *const names[] = {
		[BPF_MAP_TYPE_HASH] = "hash", [BPF_MAP_TYPE_ARRAY] = "array",
		[BPF_MAP_TYPE_PROG_ARRAY] = "prog_array", [BPF_MAP_TYPE_PERF_EVENT_ARRAY] = "perf_event_array",
		[BPF_MAP_TYPE_PERCPU_HASH] = "percpu_hash", [BPF_MAP_TYPE_PERCPU_ARRAY] = "percpu_array",
		[BPF_MAP_TYPE_STACK_TRACE] = "stack_trace", [BPF_MAP_TYPE_CGROUP_ARRAY] = "cgroup_array",
		[BPF_MAP_TYPE_LRU_HASH] = "lru_hash", [BPF_MAP_TYPE_LRU_PERCPU_HASH] = "lru_percpu_hash",
		[BPF_MAP_TYPE_LPM_TRIE] = "lpm_trie", [BPF_MAP_TYPE_ARRAY_OF_MAPS] = "array_of_maps",
		[BPF_MAP_TYPE_HASH_OF_MAPS] = "hash_of_maps", [BPF_MAP_TYPE_QUEUE] = "queue",
		[BPF_MAP_TYPE_STACK] = "stack", [BPF_MAP_TYPE_RINGBUF] = "ringbuf",
	};
	switch (t) {
	case GP_BPFTIME_MAP_GPU_HASH: return "bpftime gpu hash";
	case GP_BPFTIME_MAP_PERTHREAD_ARRAY: return "bpftime per-thread array";
	case GP_BPFTIME_MAP_GPU_ARRAY: return "bpftime gpu array";
	case GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY: return "bpftime kernel-shared array";
	case GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST: return "bpftime per-thread host array";
	case GP_BPFTIME_MAP_GPU_ARRAY_HOST: return "bpftime gpu host array";
	case GP_BPFTIME_MAP_GPU_RINGBUF: return "bpftime gpu ringbuf";
	}
	if (t < sizeof(names) / sizeof(names[0]) && names[t])
		return names[t];
	return "unknown";
}

static uint32_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p > (1u << 31) ? 0 : (uint32_t)p;
}

static uint32_t pow2_floor(uint64_t v)
{
	uint64_t p = 1;
	while (p * 2 <= v && p < (1u << 31))
		p <<= 1;
	return (uint32_t)p;
}

#define GP_MAP_MAX_BYTES (1ull << 34)   /* 16 GiB: a bigger map is a mistake */

/* Fill the descriptor's shape from the definition: kind, flags, shards, strides, sizes. */
static int shape(const struct gp_map *def, const struct gp_map_create_opts *o, unsigned nsms,
		 struct gp_map_desc *d, char *err, size_t errlen)
{
	const char *nm = def->name ? def->name : "?";
	uint32_t t = def->type;
	memset(d, 0, sizeof(*d));
	d->bpf_type = t;
	d->key_size = def->key_size;
	d->value_size = def->value_size;
	d->max_entries = def->max_entries;
	d->nshards = 1;
	d->value_stride = (uint32_t)gp_round_up(def->value_size, 8);
	if (def->readonly)
		d->flags |= GP_MAPF_RDONLY;
	/* bpftime's host-memory types live in host-mapped memory whatever the configuration says. */
	if (o->placement == GP_MAP_PLACE_HOST || t == GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY ||
	    t == GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST || t == GP_BPFTIME_MAP_GPU_ARRAY_HOST)
		d->flags |= GP_MAPF_HOSTMAPPED;
	/* bpftime's single-copy types keep their one copy: never sharded per SM. */
	bool one_copy = t == GP_BPFTIME_MAP_GPU_HASH || t == GP_BPFTIME_MAP_GPU_ARRAY ||
			t == GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY || t == GP_BPFTIME_MAP_GPU_ARRAY_HOST;

	switch (t) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case GP_BPFTIME_MAP_PERTHREAD_ARRAY:
	case GP_BPFTIME_MAP_GPU_ARRAY:
	case GP_BPFTIME_MAP_KERNEL_SHARED_ARRAY:
	case GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST:
	case GP_BPFTIME_MAP_GPU_ARRAY_HOST:
		d->kind = GP_MAP_KIND_ARRAY;
		if (def->key_size != 4)
			return fail(err, errlen, -EINVAL, "map '%s': %s key size must be 4, not %u", nm,
				    map_type_name(t), def->key_size);
		break;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case GP_BPFTIME_MAP_GPU_HASH:
		d->kind = GP_MAP_KIND_HASH;
		if (!def->key_size || def->key_size > 512)
			return fail(err, errlen, -EINVAL, "map '%s': hash key size %u is not in 1..512", nm,
				    def->key_size);
		break;
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case GP_BPFTIME_MAP_GPU_RINGBUF:
		d->kind = GP_MAP_KIND_RING;
		break;
	default:
		return fail(err, errlen, -EINVAL, "map '%s': map type %u (%s) is not supported on the GPU",
			    nm, t, map_type_name(t));
	}

	/* The ring modes (gpuprobe/warp.h): map_flags GP_RINGBUF_LOSSLESS, map_extra the rate. */
	if (d->kind == GP_MAP_KIND_RING) {
		if (def->flags & GP_RINGBUF_LOSSLESS)
			d->flags |= GP_MAPF_LOSSLESS;
		if (def->map_extra > UINT32_MAX)
			return fail(err, errlen, -EINVAL,
				    "map '%s': map_extra %llu: a ring's sampling rate (1 in N) must be below 2^32",
				    nm, (unsigned long long)def->map_extra);
		if (def->map_extra > 1) {
			d->flags |= GP_MAPF_SAMPLED;
			d->sample_rate = (uint32_t)def->map_extra;
		}
	} else if (def->flags & GP_RINGBUF_LOSSLESS) {
		return fail(err, errlen, -EINVAL,
			    "map '%s': map_flags GP_RINGBUF_LOSSLESS (0x%x) is for ring buffers, not %s", nm,
			    GP_RINGBUF_LOSSLESS, map_type_name(t));
	} else if (def->map_extra) {
		return fail(err, errlen, -EINVAL,
			    "map '%s': map_extra %llu: only ring buffers take one (the sampling rate), not %s",
			    nm, (unsigned long long)def->map_extra, map_type_name(t));
	}

	if (d->kind != GP_MAP_KIND_RING) {
		if (!def->value_size || def->value_size > (1u << 20))
			return fail(err, errlen, -EINVAL, "map '%s': value size %u is not in 1..1048576",
				    nm, def->value_size);
		if (!def->max_entries)
			return fail(err, errlen, -EINVAL, "map '%s': max_entries is 0", nm);
		if (t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH ||
		    t == BPF_MAP_TYPE_LRU_PERCPU_HASH) {
			d->flags |= GP_MAPF_PERCPU;
			d->nshards = nsms;
		} else if (t == GP_BPFTIME_MAP_PERTHREAD_ARRAY || t == GP_BPFTIME_MAP_PERTHREAD_ARRAY_HOST) {
			d->flags |= GP_MAPF_PERTHREAD;
			d->nshards = o->perthread_slots ? o->perthread_slots : GP_MAP_PERTHREAD_DEFAULT_SLOTS;
			/* By default keep it under 256 MiB: fewer slots (threads past the last share
			 * slots, modulo) rather than a map that does not fit beside the application. */
			uint64_t one = (uint64_t)d->max_entries * d->value_stride;
			while (!o->perthread_slots && d->nshards > 1024 && one * d->nshards > (256ull << 20))
				d->nshards /= 2;
		} else if (o->sharded && !def->readonly && !one_copy && nsms > 1) {
			d->flags |= GP_MAPF_SHARDED;
			d->nshards = nsms;
		}
	}

	uint64_t bytes = 0;
	switch (d->kind) {
	case GP_MAP_KIND_ARRAY: {
		uint64_t one = (uint64_t)d->max_entries * d->value_stride;
		if (d->nshards > 1)
			d->shard_stride = (d->flags & GP_MAPF_PERTHREAD) ? one : gp_round_up(one, GP_SHARD_ALIGN);
		bytes = d->nshards > 1 ? d->shard_stride * d->nshards : one;
		break;
	}
	case GP_MAP_KIND_HASH: {
		d->capacity = pow2_ceil((uint64_t)d->max_entries * 2);
		if (!d->capacity)
			return fail(err, errlen, -E2BIG, "map '%s': max_entries %u is too large", nm,
				    d->max_entries);
		d->bucket_stride = (uint32_t)(GP_HB_KEY + gp_round_up(d->key_size, 8) +
					      (d->nshards > 1 ? 0 : d->value_stride));
		bytes = (uint64_t)d->capacity * d->bucket_stride;
		if (d->nshards > 1) {
			d->shard_stride = gp_round_up((uint64_t)d->capacity * d->value_stride, GP_SHARD_ALIGN);
			bytes += d->shard_stride * d->nshards;
		}
		break;
	}
	case GP_MAP_KIND_RING: {
		uint64_t per;
		if (t == BPF_MAP_TYPE_RINGBUF) {
			if (!def->max_entries || (def->max_entries & (def->max_entries - 1)))
				return fail(err, errlen, -EINVAL,
					    "map '%s': ringbuf size %u is not a power of two", nm,
					    def->max_entries);
			per = pow2_floor(def->max_entries / nsms);
		} else if (t == GP_BPFTIME_MAP_GPU_RINGBUF) {
			/* bpftime keeps max_entries records per thread: give an SM a warp's worth. */
			per = pow2_ceil((uint64_t)(def->max_entries ? def->max_entries : 1) *
					(GP_RING_HDR + gp_round_up(def->value_size, 8)) * 32);
		} else {
			per = o->ring_bytes ? pow2_ceil(o->ring_bytes) : 65536;
		}
		if (o->ring_floor_total) {
			/* a capture's floor: what the GPU makes between two drains, per SM */
			uint64_t floor = pow2_ceil((o->ring_floor_total + nsms - 1) / nsms);
			if (floor > GP_RING_FLOOR_MAX_PER_SM)
				floor = GP_RING_FLOOR_MAX_PER_SM;
			if (per < floor)
				per = floor;
		}
		if (per < GP_RING_MIN_BYTES)
			per = GP_RING_MIN_BYTES;
		if (!per || per > (1u << 30))
			return fail(err, errlen, -E2BIG, "map '%s': ring too large", nm);
		d->capacity = (uint32_t)per;
		d->nshards = nsms;
		bytes = per * nsms;
		break;
	}
	}
	if (bytes > GP_MAP_MAX_BYTES)
		return fail(err, errlen, -E2BIG, "map '%s': needs %llu bytes, more than the %llu allowed",
			    nm, (unsigned long long)bytes, (unsigned long long)GP_MAP_MAX_BYTES);
	return 0;
}

static size_t read_size_of(const struct gp_map_desc *d)
{
	if (d->kind == GP_MAP_KIND_RING)
		return 0;
	if (d->flags & (GP_MAPF_PERCPU | GP_MAPF_PERTHREAD))
		return (size_t)d->nshards * d->value_stride;
	return d->value_size;
}

static int create_shaped(const char *name, struct gp_map_desc *d, const struct gp_map *def,
			 const struct gp_map_allocator *a, struct gp_map_inst **out, char *err,
			 size_t errlen)
{
	struct gp_map_inst *m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(name))) {
		free(m);
		return fail(err, errlen, -ENOMEM, "map '%s': out of memory", name);
	}
	pthread_mutex_init(&m->lock, NULL);
	m->a = a;
	if (def) {
		m->print_as = def->print_as;
		m->print_step = def->print_step;
	}
	bool host = d->flags & GP_MAPF_HOSTMAPPED;
	int rc = 0;
	const char *what = "descriptor";
	if ((rc = region_alloc(a, GP_MAP_DESC_SIZE, host, &m->desc)))
		goto out;
	switch (d->kind) {
	case GP_MAP_KIND_ARRAY:
		what = "values";
		rc = region_alloc(a, d->nshards > 1 ? d->shard_stride * d->nshards
						    : (uint64_t)d->max_entries * d->value_stride,
				  host, &m->data);
		break;
	case GP_MAP_KIND_HASH:
		what = "buckets";
		if ((rc = region_alloc(a, (size_t)d->capacity * d->bucket_stride, host, &m->data)))
			break;
		if (d->nshards > 1) {
			what = "sharded values";
			rc = region_alloc(a, d->shard_stride * d->nshards, host, &m->vdata);
		}
		break;
	case GP_MAP_KIND_RING:
		what = "ring producers";
		if ((rc = region_alloc(a, (size_t)d->nshards * GP_RING_STATE_STRIDE, host, &m->data)))
			break;
		what = "ring data";
		if ((rc = region_alloc(a, (size_t)d->capacity * d->nshards, true, &m->rdata)))
			break;
		what = "ring consumers";
		rc = region_alloc(a, (size_t)d->nshards * GP_RING_STATE_STRIDE, true, &m->cons);
		break;
	}
	if (rc)
		goto out;
	d->data = m->data.dptr;
	d->vdata = d->kind == GP_MAP_KIND_RING ? m->rdata.dptr : m->vdata.dptr;
	d->cons = m->cons.dptr;
	m->d = *d;
	m->read_size = read_size_of(d);
	what = "descriptor";
	if ((rc = gp_region_write(m, &m->desc, 0, d, sizeof(*d))))
		goto out;
	if (def && def->initial && def->initial_size && d->kind == GP_MAP_KIND_ARRAY) {
		/* Global data: every copy starts with the section's bytes. */
		size_t n = def->initial_size < d->value_size ? def->initial_size : d->value_size;
		what = "initial data";
		for (uint32_t s = 0; s < d->nshards && !rc; s++)
			rc = gp_region_write(m, &m->data, s * d->shard_stride, def->initial, n);
		if (rc)
			goto out;
	}
	*out = m;
	return 0;
out:
	gp_map_inst__free(m);
	return fail(err, errlen, rc < 0 ? rc : -ENOMEM, "map '%s': cannot allocate its %s (error %d)",
		    name, what, rc);
}

int gp_map_inst__create(const struct gp_map *def, const struct gp_map_create_opts *opts,
			const struct gp_map_allocator *alloc, struct gp_map_inst **out,
			char *err, size_t errlen)
{
	static const struct gp_map_create_opts none;
	struct gp_map_desc d;
	if (!def || !alloc || !out)
		return fail(err, errlen, -EINVAL, "map: missing definition or allocator");
	int rc = shape(def, opts ? opts : &none, alloc->nsms ? alloc->nsms : 1, &d, err, errlen);
	if (rc)
		return rc;
	return create_shaped(def->name ? def->name : "?", &d, def, alloc, out, err, errlen);
}

int gp_map_inst__create_printk(const struct gp_map_allocator *alloc, unsigned ring_bytes,
			       struct gp_map_inst **out, char *err, size_t errlen)
{
	struct gp_map def = {.name = ".printk", .type = BPF_MAP_TYPE_PERF_EVENT_ARRAY};
	struct gp_map_create_opts o = {.ring_bytes = ring_bytes ? ring_bytes : GP_PRINTK_RING_DEFAULT_BYTES};
	struct gp_map_desc d;
	int rc = shape(&def, &o, alloc->nsms ? alloc->nsms : 1, &d, err, errlen);
	if (rc)
		return rc;
	d.bpf_type = 0;   /* internal */
	return create_shaped(def.name, &d, NULL, alloc, out, err, errlen);
}

void gp_map_inst__free(struct gp_map_inst *m)
{
	if (!m)
		return;
	if (m->a) {
		region_free(m->a, &m->desc);
		region_free(m->a, &m->data);
		region_free(m->a, &m->vdata);
		region_free(m->a, &m->rdata);
		region_free(m->a, &m->cons);
	}
	pthread_mutex_destroy(&m->lock);
	free(m->name);
	free(m);
}

const char *gp_map_inst__name(const struct gp_map_inst *m) { return m->name; }

uint32_t gp_map_inst__print_as(const struct gp_map_inst *m, uint64_t *step)
{
	*step = m->print_step;
	return m->print_as;
}
const struct gp_map_desc *gp_map_inst__desc(const struct gp_map_inst *m) { return &m->d; }
uint64_t gp_map_inst__desc_addr(const struct gp_map_inst *m) { return m->desc.dptr; }
void gp_map_inst__data_addrs(const struct gp_map_inst *m, uint64_t out[3])
{
	out[0] = m->d.data;
	out[1] = m->d.vdata;
	out[2] = m->d.cons;
}
size_t gp_map_inst__read_size(const struct gp_map_inst *m) { return m->read_size; }
unsigned gp_map_inst__nshards(const struct gp_map_inst *m) { return m->d.nshards; }

/* ---- sets -------------------------------------------------------------------------------- */

struct gp_map_set {
	struct gp_map_inst **maps;
	size_t n;
	struct gp_map_inst *printk;
};

int gp_map_set__create(const struct gp_map *defs, size_t n, const struct gp_map_set_opts *opts,
		       struct gp_map_set **out, char *err, size_t errlen)
{
	if (!opts || !opts->alloc)
		return fail(err, errlen, -EINVAL, "maps: no allocator");
	struct gp_map_set *s = calloc(1, sizeof(*s));
	if (!s || !(s->maps = calloc(n ? n : 1, sizeof(*s->maps)))) {
		free(s);
		return fail(err, errlen, -ENOMEM, "maps: out of memory");
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct gp_map_create_opts o = {
			.sharded = opts->atomic_only ? opts->atomic_only[i] : 0,
			.placement = opts->placement ? opts->placement[i] : GP_MAP_PLACE_DEVICE,
			.perthread_slots = opts->perthread_slots,
			.ring_floor_total = opts->ring_floor_total,
		};
		rc = gp_map_inst__create(&defs[i], &o, opts->alloc, &s->maps[i], err, errlen);
		s->n = i + (rc == 0);
	}
	if (!rc)
		rc = gp_map_inst__create_printk(opts->alloc, opts->printk_ring_bytes, &s->printk, err,
						errlen);
	if (rc) {
		gp_map_set__free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void gp_map_set__free(struct gp_map_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		gp_map_inst__free(s->maps[i]);
	gp_map_inst__free(s->printk);
	free(s->maps);
	free(s);
}

size_t gp_map_set__count(const struct gp_map_set *s) { return s->n; }
struct gp_map_inst *gp_map_set__map(const struct gp_map_set *s, size_t i)
{
	return i < s->n ? s->maps[i] : NULL;
}
struct gp_map_inst *gp_map_set__printk(const struct gp_map_set *s) { return s->printk; }

struct gp_map_inst *gp_map_set__find(const struct gp_map_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->maps[i]->name, name))
			return s->maps[i];
	return NULL;
}
