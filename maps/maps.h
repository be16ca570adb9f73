/* Maps on the host side: creation from the gp_map definitions of a BPF object (ebpf/object.h)
 * through an allocator the caller provides (the shim: cuMemAlloc / cuMemHostAlloc(DEVICEMAP) /
 * cuMemcpy; tests and the host interpreter: gp_map_allocator_host), host-side access with the
 * same semantics the device helpers have, and reading while the application runs.
 * Layout: maps/map_layout.h. libbpf style: opaque objects, gp_map_inst__verb, negative errno. */
#ifndef GPUPROBE_MAPS_MAPS_H
#define GPUPROBE_MAPS_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include "ebpf/object.h"
#include "maps/map_layout.h"

/* Where the memory of a map comes from. Device addresses are uint64_t. Every function returns 0
 * or a negative errno. */
struct gp_map_allocator {
	void *user;
	unsigned nsms;  /* shards of per-SM maps and rings: the device's SM count (or %nsmid) */
	int (*dev_alloc)(void *user, size_t size, uint64_t *dptr);        /* device memory */
	void (*dev_free)(void *user, uint64_t dptr);
	int (*host_alloc)(void *user, size_t size, void **hptr);          /* pinned, device-mapped */
	void (*host_free)(void *user, void *hptr);
	int (*host_dev_ptr)(void *user, void *hptr, uint64_t *dptr);      /* its device address */
	int (*copy_to_dev)(void *user, uint64_t dst, const void *src, size_t n);
	int (*copy_from_dev)(void *user, void *dst, uint64_t src, size_t n);
	/* Optional: a host pointer to device memory the host can touch directly (the plain host
	 * implementation returns the address itself); NULL or returning NULL: copies are used. */
	void *(*dev_host_ptr)(void *user, uint64_t dptr);
};

/* A plain host-memory allocator: "device" memory is host memory, for tests and for host probes
 * that run without a GPU. nsms: how many shards per-SM maps get. Static storage per nsms value is
 * not needed: the returned object is malloc'd; free it with free(). */
struct gp_map_allocator *gp_map_allocator_host(unsigned nsms);

enum gp_map_placement {
	GP_MAP_PLACE_DEVICE = 0,   /* device memory: fastest for the probes (default) */
	GP_MAP_PLACE_HOST = 1,     /* host-mapped memory: the host reads it without copies */
};

struct gp_map_create_opts {
	int sharded;               /* the verifier's map_atomic_only: shard ARRAY/HASH per SM */
	enum gp_map_placement placement;
	unsigned perthread_slots;  /* 1502 maps: thread slots (0: GP_MAP_PERTHREAD_DEFAULT_SLOTS) */
	unsigned ring_bytes;       /* printk ring: bytes per SM (0: default) */
	/* Ring maps (not printk): at least this many bytes over all SMs, each SM's ring the next
	 * power of two of its share (at most GP_RING_FLOOR_MAX_PER_SM), whatever the definition
	 * asks; 0: as defined. A capture sets it from the link's rate (maps/capture.h). */
	uint64_t ring_floor_total;
};
#define GP_MAP_PERTHREAD_DEFAULT_SLOTS 65536u
#define GP_RING_FLOOR_MAX_PER_SM (16u << 20)
#define GP_PRINTK_RING_DEFAULT_BYTES 65536u

struct gp_map_inst;

/* Create one map. Errors: -EINVAL (unsupported type or sizes), -ENOMEM, allocator errors; one
 * line naming the map in err. Global data maps start with def->initial. */
int gp_map_inst__create(const struct gp_map *def, const struct gp_map_create_opts *opts,
			const struct gp_map_allocator *alloc, struct gp_map_inst **out,
			char *err, size_t errlen);
/* The printk ring (an internal ring map named ".printk"). */
int gp_map_inst__create_printk(const struct gp_map_allocator *alloc, unsigned ring_bytes,
			       struct gp_map_inst **out, char *err, size_t errlen);
void gp_map_inst__free(struct gp_map_inst *m);

const char *gp_map_inst__name(const struct gp_map_inst *m);
/* How the definition's BTF says it prints (enum gp_map_print; *step for GP_PRINT_LINEAR). */
uint32_t gp_map_inst__print_as(const struct gp_map_inst *m, uint64_t *step);
const struct gp_map_desc *gp_map_inst__desc(const struct gp_map_inst *m);
uint64_t gp_map_inst__desc_addr(const struct gp_map_inst *m);   /* device address */
/* The device addresses of its data, value and consumer areas (0 where it has none): with the
 * descriptor's, every address of the map that instrumented PTX may hold as an immediate. */
void gp_map_inst__data_addrs(const struct gp_map_inst *m, uint64_t out[3]);
/* Bytes that lookup fills: value_size, or nshards * value_stride for per-CPU and per-thread. */
size_t gp_map_inst__read_size(const struct gp_map_inst *m);
unsigned gp_map_inst__nshards(const struct gp_map_inst *m);

/* Host-side element access, thread-safe among host callers (a per-map lock). The device may run
 * at the same time: reads may see a value half-updated at 8-byte granularity, never a torn key.
 * Arrays take a u32 index as key. lookup: sharded maps give the sum of the copies, per-CPU and
 * per-thread maps every copy (read_size bytes); -ENOENT when absent. update flags: BPF_ANY,
 * BPF_NOEXIST (-EEXIST), BPF_EXIST (-ENOENT); -E2BIG when a hash is full; per-CPU values take
 * every copy, a sharded map's value goes into copy 0 and zeroes the others. delete: -EINVAL on
 * arrays (as Linux). next_key: key NULL gives the first; -ENOENT after the last. */
int gp_map_inst__lookup(struct gp_map_inst *m, const void *key, void *value);
int gp_map_inst__update(struct gp_map_inst *m, const void *key, const void *value, uint64_t flags);
int gp_map_inst__delete(struct gp_map_inst *m, const void *key);
int gp_map_inst__next_key(struct gp_map_inst *m, const void *key, void *next_key);
/* A host pointer to the value of key in copy `shard` when the map's memory is host-reachable
 * (host-mapped placement or the host allocator), for the host interpreter; NULL otherwise or when
 * absent. The pointer stays valid while the element is not deleted. */
void *gp_map_inst__value_ptr(struct gp_map_inst *m, const void *key, unsigned shard);

/* The host-reachable memory that holds every value of the map (all copies), for the host
 * interpreter's bounds checks: 0 and *base NULL when the host cannot touch it directly (device
 * placement with a real GPU allocator) or for rings. */
int gp_map_inst__host_region(const struct gp_map_inst *m, void **base, size_t *len);

/* Every element at one moment (one copy of the whole map): keys and values (read_size each,
 * summed where sharded), in index order for arrays (every index) and bucket order for hashes. */
struct gp_map_snapshot {
	size_t count;
	uint32_t key_size, value_size;  /* value_size: read_size of the map */
	uint8_t *keys, *values;
};
int gp_map_inst__snapshot(struct gp_map_inst *m, struct gp_map_snapshot *out);
void gp_map_snapshot__free(struct gp_map_snapshot *s);

/* Add the words of src into dst, as the host sums shards or per-CPU copies: 64-bit words when
 * size is a multiple of 8, 32-bit words when a multiple of 4, bytes otherwise. */
void gp_map_add_words(uint8_t *dst, const uint8_t *src, uint32_t size);

/* Rings. A host producer (host probes) writes records the same way the device does, into ring
 * `shard`; returns 0 or -ENOSPC (and counts the drop). */
int gp_map_inst__ring_output(struct gp_map_inst *m, unsigned shard, const void *data, size_t size);
/* Consume every committed record of every ring, calling cb for each (ring index, payload);
 * cb returns nonzero to stop early: positive after this record, negative before it (the record
 * stays in its ring, as does every later one: the consumer had no room for it). Returns the number consumed. Safe while the device writes;
 * one consumer at a time (the per-map lock). */
typedef int (*gp_ring_cb)(void *user, unsigned ring, const void *data, size_t size);
int gp_map_inst__ring_drain(struct gp_map_inst *m, gp_ring_cb cb, void *user);
/* Records lost because a ring was full, all rings together (exact). */
uint64_t gp_map_inst__ring_drops(struct gp_map_inst *m);
/* The same for each ring: drops[0..nshards) (exact). 0 or -EINVAL. */
int gp_map_inst__ring_drops_each(struct gp_map_inst *m, uint64_t *drops);
/* Bulk consumption (capture files, maps/gpt.h): hand ring r's ready span (the committed and
 * discarded records from the consumer position up to the first record not yet committed, or to
 * the end of the ring) to cb in one piece: pos is its ring position, bytes the records as the
 * device wrote them (8-byte headers, payloads padded to 8), committed how many are committed.
 * Then the span is zeroed and the position advanced once; a PAD record at the end of the ring is
 * skipped the same way. At most max_bytes per call (0: no limit). Returns the bytes consumed (0:
 * nothing ready), or cb's negative return (nothing consumed then). No lock: the caller is the
 * one consumer of ring r (gp_map_inst__ring_drain must not run on the same map). */
typedef int (*gp_ring_span_cb)(void *user, unsigned ring, uint64_t pos, const void *bytes,
			       size_t len, unsigned committed);
int64_t gp_map_inst__ring_drain_span(struct gp_map_inst *m, unsigned ring, size_t max_bytes,
				     gp_ring_span_cb cb, void *user);
/* The same in two steps, for a consumer that writes spans straight from the ring (no copy):
 * peek fills *span (len 0 when only a PAD is ready) and returns the bytes to release (the span,
 * and a PAD after it), 0 when nothing is ready; release zeroes them and advances the position.
 * Until then the span stays the consumer's, and a producer cannot reuse it. release refuses
 * (-EINVAL) anything but the span peek gave last. */
struct gp_ring_span {
	uint64_t pos;
	const void *bytes;
	size_t len;
	unsigned committed;
};
int64_t gp_map_inst__ring_peek_span(struct gp_map_inst *m, unsigned ring, size_t max_bytes,
				    struct gp_ring_span *span);
int gp_map_inst__ring_release(struct gp_map_inst *m, unsigned ring, uint64_t pos, uint64_t adv);

/* Format one printk record as bpf_trace_printk would (%d %i %u %x %X %ld %lu %lx %lld %llu %llx
 * %p %c %%, widths, '-' and '0' flags; %s prints "(%s unsupported)"). Returns the length
 * (snprintf semantics) or -EINVAL for a malformed record. */
int gp_printk_format(const void *rec, size_t size, char *out, size_t outlen);

/* All maps of one BPF object plus the printk ring, created together. */
struct gp_map_set;
struct gp_map_set_opts {
	const struct gp_map_allocator *alloc;
	const uint8_t *atomic_only;            /* nmaps entries from the verifier, or NULL */
	const enum gp_map_placement *placement;/* nmaps entries, or NULL (device) */
	unsigned perthread_slots;              /* 0: default */
	unsigned printk_ring_bytes;            /* 0: default */
	uint64_t ring_floor_total;             /* gp_map_create_opts' (0: rings as defined) */
};
int gp_map_set__create(const struct gp_map *defs, size_t n, const struct gp_map_set_opts *opts,
		       struct gp_map_set **out, char *err, size_t errlen);
void gp_map_set__free(struct gp_map_set *s);
size_t gp_map_set__count(const struct gp_map_set *s);
struct gp_map_inst *gp_map_set__map(const struct gp_map_set *s, size_t i);
struct gp_map_inst *gp_map_set__find(const struct gp_map_set *s, const char *name);
struct gp_map_inst *gp_map_set__printk(const struct gp_map_set *s);

#endif
