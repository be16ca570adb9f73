/* Host-side map storage for the interpreter: arrays (plain, per-CPU with one CPU, bpftime's
 * per-thread array with one thread, global data sections), hash maps (plain, per-CPU, LRU) and
 * record queues (ring buffers, perf event arrays, bpftime's GPU ring buffer).
 *
 * Values of every map live in one contiguous block, so the interpreter can bounds-check a pointer
 * into map values against a single region per map. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/interp_internal.h"

/* Host maps are for probes and tests, not for hostile sizes. */
#define HOST_MAP_MAX_BYTES (256ull << 20)

enum host_kind { HK_ARRAY, HK_HASH, HK_QUEUE };

struct host_map {
	struct gp_map def;
	enum host_kind kind;
	uint8_t *values;          /* max_entries * value_size (array, hash) */
	/* hash */
	uint8_t *keys;            /* max_entries * key_size */
	bool *used;               /* max_entries */
	int32_t *slots;           /* open addressing: entry index, -1 empty, -2 deleted */
	uint32_t nslots;          /* power of two */
	uint32_t count;
	/* queue: records of [u32 size][data, padded to 8] in a byte buffer of max_entries bytes */
	uint8_t *ring;
	size_t ring_cap, ring_len;
	uint64_t dropped;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static enum host_kind kind_of(uint32_t type, bool *ok)
{
	*ok = true;
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case 1502: /* bpftime per-thread array: one host thread */
	case 1503: /* bpftime GPU array, 1504 kernel-shared, 1512/1513 their host-memory forms */
	case 1504:
	case 1512:
	case 1513:
		return HK_ARRAY;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case 1501: /* bpftime GPU hash */
		return HK_HASH;
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case 1527: /* bpftime GPU ring buffer */
		return HK_QUEUE;
	default:
		*ok = false;
		return HK_ARRAY;
	}
}

void *gp_host_map_create(const struct gp_map *def, char *err, size_t errlen)
{
	bool ok;
	enum host_kind kind = kind_of(def->type, &ok);
	const char *name = def->name ? def->name : "?";
	if (!ok) {
		snprintf(err, errlen, "map '%s': type %u not supported by the host interpreter", name, def->type);
		return NULL;
	}
	struct host_map *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "map '%s': out of memory", name);
		return NULL;
	}
	m->def = *def;
	m->def.initial = NULL;
	m->kind = kind;
	if (kind == HK_QUEUE) {
		size_t cap = def->max_entries ? def->max_entries : 4096;
		if (kind == HK_QUEUE && def->type != BPF_MAP_TYPE_RINGBUF)
			cap = 1u << 20;   /* perf buffers are sized by user space, not by the map */
		if (cap > HOST_MAP_MAX_BYTES) {
			snprintf(err, errlen, "map '%s': %zu bytes of ring is too large for the host", name, cap);
			free(m);
			return NULL;
		}
		m->ring = malloc(cap);
		m->ring_cap = cap;
		if (!m->ring) {
			snprintf(err, errlen, "map '%s': out of memory", name);
			free(m);
			return NULL;
		}
		return m;
	}
	if (def->value_size == 0 || def->max_entries == 0 || (kind == HK_HASH && def->key_size == 0) ||
	    (kind == HK_ARRAY && def->key_size != 4)) {
		snprintf(err, errlen, "map '%s': invalid sizes (key %u, value %u, max_entries %u)", name,
			 def->key_size, def->value_size, def->max_entries);
		free(m);
		return NULL;
	}
	uint64_t vbytes = (uint64_t)def->value_size * def->max_entries;
	uint64_t kbytes = kind == HK_HASH ? (uint64_t)def->key_size * def->max_entries : 0;
	if (vbytes + kbytes > HOST_MAP_MAX_BYTES) {
		snprintf(err, errlen, "map '%s': %llu bytes is too large for the host", name,
			 (unsigned long long)(vbytes + kbytes));
		free(m);
		return NULL;
	}
	m->values = calloc(1, vbytes);
	if (m->values && kind == HK_HASH) {
		m->keys = calloc(1, kbytes);
		m->used = calloc(def->max_entries, sizeof *m->used);
		m->nslots = 8;
		while (m->nslots < 2ull * def->max_entries)
			m->nslots *= 2;
		m->slots = malloc(m->nslots * sizeof *m->slots);
		if (m->slots)
			for (uint32_t i = 0; i < m->nslots; i++)
				m->slots[i] = -1;
	}
	if (!m->values || (kind == HK_HASH && (!m->keys || !m->used || !m->slots))) {
		snprintf(err, errlen, "map '%s': out of memory", name);
		gp_host_map_free(m);
		return NULL;
	}
	if (def->initial && def->initial_size)
		memcpy(m->values, def->initial, def->initial_size < vbytes ? def->initial_size : vbytes);
	return m;
}

void gp_host_map_free(void *state)
{
	struct host_map *m = state;
	if (!m)
		return;
	free(m->values);
	free(m->keys);
	free(m->used);
	free(m->slots);
	free(m->ring);
	free(m);
}

const struct gp_map *gp_host_map_def(void *state)
{
	return &((struct host_map *)state)->def;
}

void gp_host_map_region(void *state, uint8_t **base, size_t *size, bool *writable)
{
	struct host_map *m = state;
	*base = m->values;
	*size = m->values ? (size_t)m->def.value_size * m->def.max_entries : 0;
	*writable = !m->def.readonly;
}

/* Slot holding key, or the first free slot for it (*found tells which); -1 when full. */
static int64_t hash_find(struct host_map *m, const void *key, bool *found)
{
	uint32_t mask = m->nslots - 1;
	uint32_t i = (uint32_t)hash_bytes(key, m->def.key_size) & mask;
	int64_t first_free = -1;
	*found = false;
	for (uint32_t probe = 0; probe < m->nslots; probe++, i = (i + 1) & mask) {
		int32_t e = m->slots[i];
		if (e == -1)
			return first_free >= 0 ? first_free : i;
		if (e == -2) {
			if (first_free < 0)
				first_free = i;
			continue;
		}
		if (memcmp(m->keys + (size_t)e * m->def.key_size, key, m->def.key_size) == 0) {
			*found = true;
			return i;
		}
	}
	return first_free;
}

void *gp_host_map_lookup(void *state, const void *key)
{
	struct host_map *m = state;
	if (m->kind == HK_ARRAY) {
		uint32_t idx;
		memcpy(&idx, key, 4);
		return idx < m->def.max_entries ? m->values + (size_t)idx * m->def.value_size : NULL;
	}
	if (m->kind == HK_HASH) {
		bool found;
		int64_t s = hash_find(m, key, &found);
		return found ? m->values + (size_t)m->slots[s] * m->def.value_size : NULL;
	}
	return NULL;
}

int gp_host_map_update(void *state, const void *key, const void *value, uint64_t flags)
{
	struct host_map *m = state;
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (m->kind == HK_ARRAY) {
		uint32_t idx;
		memcpy(&idx, key, 4);
		if (idx >= m->def.max_entries)
			return -E2BIG;
		if (flags == BPF_NOEXIST)
			return -EEXIST;
		if (m->def.readonly)
			return -EPERM;
		memmove(m->values + (size_t)idx * m->def.value_size, value, m->def.value_size);
		return 0;
	}
	if (m->kind != HK_HASH)
		return -EINVAL;
	bool found;
	int64_t s = hash_find(m, key, &found);
	if (found) {
		if (flags == BPF_NOEXIST)
			return -EEXIST;
		memmove(m->values + (size_t)m->slots[s] * m->def.value_size, value, m->def.value_size);
		return 0;
	}
	if (flags == BPF_EXIST)
		return -ENOENT;
	if (s < 0 || m->count >= m->def.max_entries)
		return -E2BIG;
	uint32_t e = 0;
	while (m->used[e])
		e++;
	m->used[e] = true;
	m->count++;
	memcpy(m->keys + (size_t)e * m->def.key_size, key, m->def.key_size);
	memmove(m->values + (size_t)e * m->def.value_size, value, m->def.value_size);
	m->slots[s] = (int32_t)e;
	return 0;
}

int gp_host_map_delete(void *state, const void *key)
{
	struct host_map *m = state;
	if (m->kind != HK_HASH)
		return -EINVAL;
	bool found;
	int64_t s = hash_find(m, key, &found);
	if (!found)
		return -ENOENT;
	int32_t e = m->slots[s];
	m->used[e] = false;
	m->count--;
	memset(m->values + (size_t)e * m->def.value_size, 0, m->def.value_size);
	m->slots[s] = -2;
	return 0;
}

int gp_host_map_next_key(void *state, const void *key, void *next_key)
{
	struct host_map *m = state;
	if (m->kind == HK_ARRAY) {
		uint32_t idx = 0;
		if (key) {
			memcpy(&idx, key, 4);
			idx = idx >= m->def.max_entries ? 0 : idx + 1;
		}
		if (idx >= m->def.max_entries)
			return -ENOENT;
		memcpy(next_key, &idx, 4);
		return 0;
	}
	if (m->kind != HK_HASH)
		return -EINVAL;
	uint32_t start = 0;
	if (key) {
		bool found;
		int64_t s = hash_find(m, key, &found);
		start = found ? (uint32_t)m->slots[s] + 1 : 0;   /* a missing key restarts, as in Linux */
	}
	for (uint32_t e = start; e < m->def.max_entries; e++)
		if (m->used[e]) {
			memcpy(next_key, m->keys + (size_t)e * m->def.key_size, m->def.key_size);
			return 0;
		}
	return -ENOENT;
}

int gp_host_ringbuf_push(void *state, const void *data, size_t size)
{
	struct host_map *m = state;
	if (m->kind != HK_QUEUE)
		return -EINVAL;
	size_t need = 8 + ((size + 7) & ~(size_t)7);
	if (size > UINT32_MAX || need > m->ring_cap - m->ring_len) {
		m->dropped++;
		return -EAGAIN;
	}
	uint32_t sz = (uint32_t)size;
	memcpy(m->ring + m->ring_len, &sz, 4);
	memset(m->ring + m->ring_len + 4, 0, need - 4);
	if (size)
		memcpy(m->ring + m->ring_len + 8, data, size);
	m->ring_len += need;
	return 0;
}

int gp_host_ringbuf_consume(void *state, int (*cb)(void *user, const void *data, size_t size), void *user)
{
	struct host_map *m = state;
	if (m->kind != HK_QUEUE)
		return -EINVAL;
	size_t off = 0;
	int n = 0, rc = 0;
	while (off < m->ring_len) {
		uint32_t sz;
		memcpy(&sz, m->ring + off, 4);
		rc = cb ? cb(user, m->ring + off + 8, sz) : 0;
		off += 8 + ((sz + 7) & ~(size_t)7);
		n++;
		if (rc)
			break;
	}
	memmove(m->ring, m->ring + off, m->ring_len - off);
	m->ring_len -= off;
	return rc < 0 ? rc : n;
}
