/* Host-side element access on arrays and hashes, with the semantics the device helpers have, and
 * whole-map snapshots for printing. The hash protocol (claim EMPTY by CAS, publish FULL, keep the
 * key of a DELETED bucket) is the one maps/map_device.c emits, described in maps/map_layout.h. */
#include "maps/map_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static bool is_sharded(const struct gp_map_inst *m) { return m->d.nshards > 1; }
static bool sums_shards(const struct gp_map_inst *m) { return m->d.flags & GP_MAPF_SHARDED; }

/* Region and offset of value `slot` (array index or hash bucket) in copy `shard`. */
static const struct gp_region *value_at(const struct gp_map_inst *m, uint32_t slot, unsigned shard,
					uint64_t *off)
{
	const struct gp_map_desc *d = &m->d;
	if (d->kind == GP_MAP_KIND_ARRAY) {
		*off = shard * d->shard_stride + (uint64_t)slot * d->value_stride;
		return &m->data;
	}
	if (is_sharded(m)) {
		*off = shard * d->shard_stride + (uint64_t)slot * d->value_stride;
		return &m->vdata;
	}
	*off = (uint64_t)slot * d->bucket_stride + GP_HB_KEY + gp_round_up(d->key_size, 8);
	return &m->data;
}

/* Add the words of src into dst: 64-bit words when the value is a multiple of 8 bytes, 32-bit
 * words when a multiple of 4, bytes otherwise (the width the atomic adds had to use). */
void gp_map_add_words(uint8_t *dst, const uint8_t *src, uint32_t size)
{
	if (size % 8 == 0) {
		for (uint32_t i = 0; i < size; i += 8) {
			uint64_t a, b;
			memcpy(&a, dst + i, 8);
			memcpy(&b, src + i, 8);
			a += b;
			memcpy(dst + i, &a, 8);
		}
	} else if (size % 4 == 0) {
		for (uint32_t i = 0; i < size; i += 4) {
			uint32_t a, b;
			memcpy(&a, dst + i, 4);
			memcpy(&b, src + i, 4);
			a += b;
			memcpy(dst + i, &a, 4);
		}
	} else {
		for (uint32_t i = 0; i < size; i++)
			dst[i] += src[i];
	}
}

/* Read the value of slot into out (read_size bytes). */
static int read_slot(struct gp_map_inst *m, uint32_t slot, void *out)
{
	const struct gp_map_desc *d = &m->d;
	uint64_t off;
	const struct gp_region *r;
	if (!is_sharded(m)) {
		r = value_at(m, slot, 0, &off);
		return gp_region_read(m, r, off, out, d->value_size);
	}
	uint8_t *tmp = sums_shards(m) ? malloc(d->value_stride) : NULL;
	if (sums_shards(m) && !tmp)
		return -ENOMEM;
	if (tmp)
		memset(out, 0, d->value_size);
	int rc = 0;
	for (unsigned s = 0; s < d->nshards && !rc; s++) {
		r = value_at(m, slot, s, &off);
		if (tmp) {
			if (!(rc = gp_region_read(m, r, off, tmp, d->value_size)))
				gp_map_add_words(out, tmp, d->value_size);
		} else {
			uint8_t *dst = (uint8_t *)out + (size_t)s * d->value_stride;
			memset(dst, 0, d->value_stride);
			rc = gp_region_read(m, r, off, dst, d->value_size);
		}
	}
	free(tmp);
	return rc;
}

/* Write value (read_size bytes as lookup gives them) into slot: per-CPU copies one by one, a
 * sharded value into copy 0 with the other copies zeroed. */
static int write_slot(struct gp_map_inst *m, uint32_t slot, const void *value)
{
	const struct gp_map_desc *d = &m->d;
	uint64_t off;
	const struct gp_region *r;
	int rc = 0;
	if (!is_sharded(m)) {
		r = value_at(m, slot, 0, &off);
		return gp_region_write(m, r, off, value, d->value_size);
	}
	uint8_t *zero = sums_shards(m) ? calloc(1, d->value_stride) : NULL;
	if (sums_shards(m) && !zero)
		return -ENOMEM;
	for (unsigned s = 0; s < d->nshards && !rc; s++) {
		r = value_at(m, slot, s, &off);
		const void *src = zero ? (s ? zero : value) : (const uint8_t *)value + (size_t)s * d->value_stride;
		rc = gp_region_write(m, r, off, src, d->value_size);
	}
	free(zero);
	return rc;
}

/* ---- hash -------------------------------------------------------------------------------- */

enum { NOT_FOUND = -1 };

static uint32_t bucket_state(struct gp_map_inst *m, uint32_t b)
{
	return gp_region_load32(m, &m->data, (uint64_t)b * m->d.bucket_stride + GP_HB_STATE);
}

/* Wait out a BUSY bucket: another writer finishes it without waiting on anyone. */
static uint32_t settled_state(struct gp_map_inst *m, uint32_t b)
{
	uint32_t st = bucket_state(m, b);
	for (unsigned i = 0; st == GP_HASH_BUSY && i < GP_HASH_SPIN_LIMIT; i++) {
		sched_yield();
		st = bucket_state(m, b);
	}
	return st;
}

static bool bucket_has_key(struct gp_map_inst *m, uint32_t b, uint32_t h, const void *key)
{
	uint8_t buf[8 + 512];
	uint64_t off = (uint64_t)b * m->d.bucket_stride;
	if (gp_region_read(m, &m->data, off, buf, 8 + m->d.key_size))
		return false;
	uint32_t bh;
	memcpy(&bh, buf + GP_HB_HASH, 4);
	return bh == h && !memcmp(buf + GP_HB_KEY, key, m->d.key_size);
}

/* The bucket holding key (FULL), or NOT_FOUND. */
static int64_t hash_find(struct gp_map_inst *m, const void *key)
{
	uint32_t h = gp_map_hash(key, m->d.key_size), mask = m->d.capacity - 1;
	for (uint32_t i = 0; i <= mask; i++) {
		uint32_t b = (h + i) & mask;
		uint32_t st = settled_state(m, b);
		if (st == GP_HASH_EMPTY)
			return NOT_FOUND;
		if ((st == GP_HASH_FULL || st == GP_HASH_DELETED) && bucket_has_key(m, b, h, key))
			return st == GP_HASH_FULL ? (int64_t)b : NOT_FOUND;
	}
	return NOT_FOUND;
}

/* Take one more element of the max_entries budget. */
static bool take_slot(struct gp_map_inst *m)
{
	uint32_t old = gp_region_add32(m, &m->desc, GP_MD_COUNT, 1);
	if (old < m->d.max_entries)
		return true;
	gp_region_add32(m, &m->desc, GP_MD_COUNT, -1);
	return false;
}

/* Fill a claimed (BUSY) bucket and publish it. */
static int fill_bucket(struct gp_map_inst *m, uint32_t b, uint32_t h, const void *key,
		       const void *value)
{
	uint64_t off = (uint64_t)b * m->d.bucket_stride;
	int rc = gp_region_write(m, &m->data, off + GP_HB_HASH, &h, 4);
	if (!rc)
		rc = gp_region_write(m, &m->data, off + GP_HB_KEY, key, m->d.key_size);
	if (!rc)
		rc = write_slot(m, b, value);
	gp_region_store32(m, &m->data, off + GP_HB_STATE, GP_HASH_FULL);
	return rc;
}

static int hash_update(struct gp_map_inst *m, const void *key, const void *value, uint64_t flags)
{
	uint32_t h = gp_map_hash(key, m->d.key_size), mask = m->d.capacity - 1;
	for (uint32_t i = 0; i <= mask;) {
		uint32_t b = (h + i) & mask;
		uint64_t st_off = (uint64_t)b * m->d.bucket_stride + GP_HB_STATE;
		uint32_t st = settled_state(m, b);
		if (st == GP_HASH_BUSY)
			return -EBUSY;
		if (st == GP_HASH_FULL || st == GP_HASH_DELETED) {
			if (!bucket_has_key(m, b, h, key)) {
				i++;
				continue;
			}
			if (st == GP_HASH_FULL) {
				if (flags == BPF_NOEXIST)
					return -EEXIST;
				return write_slot(m, b, value);
			}
		} else if (st != GP_HASH_EMPTY) {
			return -EFAULT;   /* a state word no writer produces: corrupted memory */
		}
		/* EMPTY, or DELETED holding this key: insert here. */
		if (flags == BPF_EXIST)
			return -ENOENT;
		if (!take_slot(m))
			return -E2BIG;
		if (!gp_region_cas32(m, &m->data, st_off, st, GP_HASH_BUSY)) {
			gp_region_add32(m, &m->desc, GP_MD_COUNT, -1);
			continue;   /* someone else took it: look at the same bucket again */
		}
		return fill_bucket(m, b, h, key, value);
	}
	return -E2BIG;
}

static int hash_delete(struct gp_map_inst *m, const void *key)
{
	for (;;) {
		int64_t b = hash_find(m, key);
		if (b == NOT_FOUND)
			return -ENOENT;
		uint64_t st_off = (uint64_t)b * m->d.bucket_stride + GP_HB_STATE;
		if (!gp_region_cas32(m, &m->data, st_off, GP_HASH_FULL, GP_HASH_BUSY))
			continue;
		gp_region_store32(m, &m->data, st_off, GP_HASH_DELETED);
		gp_region_add32(m, &m->desc, GP_MD_COUNT, -1);
		return 0;
	}
}

/* ---- the API ----------------------------------------------------------------------------- */

static int array_index(const struct gp_map_inst *m, const void *key, uint32_t *idx)
{
	memcpy(idx, key, 4);
	return *idx < m->d.max_entries ? 0 : -ENOENT;
}

static int bad_kind(const struct gp_map_inst *m) { return m->d.kind == GP_MAP_KIND_RING; }

int gp_map_inst__lookup(struct gp_map_inst *m, const void *key, void *value)
{
	if (!m || !key || !value || bad_kind(m))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	int rc;
	uint32_t slot;
	if (m->d.kind == GP_MAP_KIND_ARRAY) {
		rc = array_index(m, key, &slot);
	} else {
		int64_t b = hash_find(m, key);
		rc = b == NOT_FOUND ? -ENOENT : 0;
		slot = (uint32_t)b;
	}
	if (!rc)
		rc = read_slot(m, slot, value);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int gp_map_inst__update(struct gp_map_inst *m, const void *key, const void *value, uint64_t flags)
{
	if (!m || !key || !value || bad_kind(m) || flags > BPF_EXIST)
		return -EINVAL;
	if (m->d.flags & GP_MAPF_RDONLY)
		return -EPERM;
	pthread_mutex_lock(&m->lock);
	int rc;
	if (m->d.kind == GP_MAP_KIND_ARRAY) {
		uint32_t idx;
		if (array_index(m, key, &idx))
			rc = -E2BIG;
		else if (flags == BPF_NOEXIST)
			rc = -EEXIST;
		else
			rc = write_slot(m, idx, value);
	} else {
		rc = hash_update(m, key, value, flags);
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int gp_map_inst__delete(struct gp_map_inst *m, const void *key)
{
	if (!m || !key || bad_kind(m))
		return -EINVAL;
	if (m->d.kind == GP_MAP_KIND_ARRAY)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	int rc = hash_delete(m, key);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int gp_map_inst__next_key(struct gp_map_inst *m, const void *key, void *next_key)
{
	if (!m || !next_key || bad_kind(m))
		return -EINVAL;
	if (m->d.kind == GP_MAP_KIND_ARRAY) {
		uint32_t idx = 0;
		if (key) {
			memcpy(&idx, key, 4);
			idx = idx >= m->d.max_entries ? 0 : idx + 1;   /* Linux: a bad key restarts */
		}
		if (idx >= m->d.max_entries)
			return -ENOENT;
		memcpy(next_key, &idx, 4);
		return 0;
	}
	pthread_mutex_lock(&m->lock);
	uint32_t start = 0;
	if (key) {
		int64_t b = hash_find(m, key);
		start = b == NOT_FOUND ? 0 : (uint32_t)b + 1;   /* Linux: a missing key restarts */
	}
	int rc = -ENOENT;
	for (uint32_t b = start; b < m->d.capacity; b++) {
		if (bucket_state(m, b) != GP_HASH_FULL)
			continue;
		rc = gp_region_read(m, &m->data, (uint64_t)b * m->d.bucket_stride + GP_HB_KEY, next_key,
				    m->d.key_size);
		break;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

void *gp_map_inst__value_ptr(struct gp_map_inst *m, const void *key, unsigned shard)
{
	if (!m || !key || bad_kind(m) || shard >= m->d.nshards)
		return NULL;
	uint32_t slot;
	if (m->d.kind == GP_MAP_KIND_ARRAY) {
		if (array_index(m, key, &slot))
			return NULL;
	} else {
		pthread_mutex_lock(&m->lock);
		int64_t b = hash_find(m, key);
		pthread_mutex_unlock(&m->lock);
		if (b == NOT_FOUND)
			return NULL;
		slot = (uint32_t)b;
	}
	uint64_t off;
	const struct gp_region *r = value_at(m, slot, shard, &off);
	return r->hptr ? r->hptr + off : NULL;
}

int gp_map_inst__host_region(const struct gp_map_inst *m, void **base, size_t *len)
{
	*base = NULL;
	*len = 0;
	if (!m || bad_kind(m))
		return -EINVAL;
	const struct gp_region *r = (m->d.kind == GP_MAP_KIND_HASH && is_sharded(m)) ? &m->vdata : &m->data;
	if (!r->hptr)
		return 0;
	*base = r->hptr;
	*len = r->size;
	return 0;
}

/* ---- snapshots ----------------------------------------------------------------------------- */

int gp_map_inst__snapshot(struct gp_map_inst *m, struct gp_map_snapshot *out)
{
	memset(out, 0, sizeof(*out));
	if (!m || bad_kind(m))
		return -EINVAL;
	const struct gp_map_desc *d = &m->d;
	out->key_size = d->key_size;
	out->value_size = (uint32_t)m->read_size;
	size_t slots = d->kind == GP_MAP_KIND_ARRAY ? d->max_entries : d->capacity;
	/* One copy of the map's memory, so every value comes from the same moment. */
	struct gp_map_inst copy = *m;
	uint8_t *data = malloc(m->data.size ? m->data.size : 1);
	uint8_t *vdata = m->vdata.size ? malloc(m->vdata.size) : NULL;
	out->keys = malloc(slots * d->key_size);
	out->values = malloc(slots * m->read_size);
	int rc = (!data || (m->vdata.size && !vdata) || !out->keys || !out->values) ? -ENOMEM : 0;
	pthread_mutex_lock(&m->lock);
	if (!rc)
		rc = gp_region_read(m, &m->data, 0, data, m->data.size);
	if (!rc && vdata)
		rc = gp_region_read(m, &m->vdata, 0, vdata, m->vdata.size);
	pthread_mutex_unlock(&m->lock);
	copy.data.hptr = data;
	copy.vdata.hptr = vdata;
	for (size_t i = 0; i < slots && !rc; i++) {
		if (d->kind == GP_MAP_KIND_HASH) {
			uint8_t *bk = data + i * d->bucket_stride;
			uint32_t st;
			memcpy(&st, bk + GP_HB_STATE, 4);
			if (st != GP_HASH_FULL)
				continue;
			memcpy(out->keys + out->count * d->key_size, bk + GP_HB_KEY, d->key_size);
		} else {
			uint32_t idx = (uint32_t)i;
			memcpy(out->keys + out->count * 4, &idx, 4);
		}
		rc = read_slot(&copy, (uint32_t)i, out->values + out->count * m->read_size);
		out->count++;
	}
	free(data);
	free(vdata);
	if (rc)
		gp_map_snapshot__free(out);
	return rc;
}

void gp_map_snapshot__free(struct gp_map_snapshot *s)
{
	free(s->keys);
	free(s->values);
	memset(s, 0, sizeof(*s));
}
