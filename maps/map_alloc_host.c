/* The plain host-memory allocator: "device" memory is host memory and device addresses are host
 * addresses. Tests use it, and so do host probes when no GPU is present. */
#include "maps/maps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int host_mem_alloc(size_t size, void **p)
{
	size_t rounded = gp_round_up(size ? size : 1, GP_SHARD_ALIGN);
	void *mem = aligned_alloc(GP_SHARD_ALIGN, rounded);
	if (!mem)
		return -ENOMEM;
	memset(mem, 0, rounded);
	*p = mem;
	return 0;
}

static int ha_dev_alloc(void *user, size_t size, uint64_t *dptr)
{
	void *p;
	int rc = host_mem_alloc(size, &p);
	if (!rc)
		*dptr = (uint64_t)(uintptr_t)p;
	return rc;
}

static void ha_dev_free(void *user, uint64_t dptr) { free((void *)(uintptr_t)dptr); }
static int ha_host_alloc(void *user, size_t size, void **hptr) { return host_mem_alloc(size, hptr); }
static void ha_host_free(void *user, void *hptr) { free(hptr); }

static int ha_host_dev_ptr(void *user, void *hptr, uint64_t *dptr)
{
	*dptr = (uint64_t)(uintptr_t)hptr;
	return 0;
}

static int ha_copy_to_dev(void *user, uint64_t dst, const void *src, size_t n)
{
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

static int ha_copy_from_dev(void *user, void *dst, uint64_t src, size_t n)
{
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}

static void *ha_dev_host_ptr(void *user, uint64_t dptr) { return (void *)(uintptr_t)dptr; }

struct gp_map_allocator *gp_map_allocator_host(unsigned nsms)
{
	struct gp_map_allocator *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	*a = (struct gp_map_allocator){
		.nsms = nsms ? nsms : 1,
		.dev_alloc = ha_dev_alloc,
		.dev_free = ha_dev_free,
		.host_alloc = ha_host_alloc,
		.host_free = ha_host_free,
		.host_dev_ptr = ha_host_dev_ptr,
		.copy_to_dev = ha_copy_to_dev,
		.copy_from_dev = ha_copy_from_dev,
		.dev_host_ptr = ha_dev_host_ptr,
	};
	return a;
}
