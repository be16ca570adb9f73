/* Private to maps/: the host-side map object and the helpers that reach its memory, directly
 * where the host can touch it, through the allocator's copies where it cannot. */
#ifndef GPUPROBE_MAPS_MAP_INTERNAL_H
#define GPUPROBE_MAPS_MAP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "maps/maps.h"

/* One allocation: its device address, and a host pointer when the host can touch it. */
struct gp_region {
	uint64_t dptr;
	uint8_t *hptr;
	size_t size;
	bool hostmapped;   /* from host_alloc (freed with host_free) */
};

struct gp_map_inst {
	char *name;
	struct gp_map_desc d;            /* host copy of the descriptor (constant fields) */
	const struct gp_map_allocator *a;
	struct gp_region desc;           /* the descriptor itself (count is updated in place) */
	struct gp_region data, vdata;    /* values / buckets; sharded hash values; ring producers */
	struct gp_region rdata, cons;    /* rings: data bytes and consumer positions (host-mapped) */
	size_t read_size;
	uint32_t print_as;               /* the definition's, for the output (ebpf/object.h) */
	uint64_t print_step;
	unsigned drain_first;            /* rings: the shard the next drain starts at (fairness) */
	pthread_mutex_t lock;
};

int gp_region_read(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		   void *buf, size_t n);
int gp_region_write(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		    const void *buf, size_t n);
/* 32-bit compare-and-swap on a word of a region: atomic where the host reaches the memory,
 * read-compare-write through copies otherwise. Returns true when it swapped. */
bool gp_region_cas32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		     uint32_t expected, uint32_t desired);
uint32_t gp_region_load32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off);
void gp_region_store32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
		       uint32_t v);
/* Atomic add on a 32/64-bit word, returning the old value. */
uint32_t gp_region_add32(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
			 int32_t v);
uint64_t gp_region_add64(const struct gp_map_inst *m, const struct gp_region *r, uint64_t off,
			 uint64_t v);

#endif
