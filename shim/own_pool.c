/* Memory pools in the own driver: the device's default pool and created ones are names for the
 * one allocator (own_memory.c); their attributes are kept and read back, and stream-ordered
 * allocations from them are ordinary allocations (the one in-order queue orders their uses).
 * Graph memory nodes: an allocation node allocates when it is added and keeps its memory for
 * every launch of the graph; a free node does nothing (the memory lives until the process
 * ends, like a pool that never releases). */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN

#include <stdlib.h>
#include <string.h>

enum { OWN_MAGIC_POOL = 0x6f706f6c, NATTR = 16 };

struct own_pool {
	uint32_t magic;
	uint64_t attr[NATTR];
};

static struct own_pool default_pool = {OWN_MAGIC_POOL, {0}};

static struct own_pool *as_pool(CUmemoryPool p)
{
	struct own_pool *x = (struct own_pool *)p;
	return x && x->magic == OWN_MAGIC_POOL ? x : NULL;
}

CUresult own_cuDeviceGetDefaultMemPool(CUmemoryPool *p, CUdevice d)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*p = (CUmemoryPool)&default_pool;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetMemPool(CUmemoryPool *p, CUdevice d) { return own_cuDeviceGetDefaultMemPool(p, d); }

CUresult own_cuDeviceSetMemPool(CUdevice d, CUmemoryPool p)
{
	return d != 0 ? CUDA_ERROR_INVALID_DEVICE : as_pool(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult own_cuMemPoolCreate(CUmemoryPool *p, const CUmemPoolProps *props)
{
	(void)props;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_pool *x = calloc(1, sizeof(*x));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->magic = OWN_MAGIC_POOL;
	*p = (CUmemoryPool)x;
	return CUDA_SUCCESS;
}

CUresult own_cuMemPoolDestroy(CUmemoryPool p)
{
	struct own_pool *x = as_pool(p);
	if (!x || x == &default_pool)
		return CUDA_ERROR_INVALID_VALUE;
	x->magic = 0;
	free(x);
	return CUDA_SUCCESS;
}

static int attr_size(CUmemPool_attribute a)
{
	switch (a) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: return 4;
	default: return 8;
	}
}

CUresult own_cuMemPoolSetAttribute(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	struct own_pool *x = as_pool(p);
	if (!x || !v || (unsigned)a >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	x->attr[a] = attr_size(a) == 4 ? (uint64_t)*(int *)v : *(uint64_t *)v;
	return CUDA_SUCCESS;
}

CUresult own_cuMemPoolGetAttribute(CUmemoryPool p, CUmemPool_attribute a, void *v)
{
	struct own_pool *x = as_pool(p);
	if (!x || !v || (unsigned)a >= NATTR)
		return CUDA_ERROR_INVALID_VALUE;
	if (attr_size(a) == 4)
		*(int *)v = (int)x->attr[a];
	else
		*(uint64_t *)v = x->attr[a];
	return CUDA_SUCCESS;
}

CUresult own_cuMemPoolSetAccess(CUmemoryPool p, const CUmemAccessDesc *map, size_t n)
{
	(void)map, (void)n;
	return as_pool(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult own_cuMemPoolGetAccess(CUmemAccess_flags *f, CUmemoryPool p, CUmemLocation *loc)
{
	(void)loc;
	if (!f || !as_pool(p))
		return CUDA_ERROR_INVALID_VALUE;
	*f = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	return CUDA_SUCCESS;
}

CUresult own_cuMemPoolTrimTo(CUmemoryPool p, size_t keep)
{
	(void)keep;
	return as_pool(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult own_cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
	if (!as_pool(p))
		return CUDA_ERROR_INVALID_VALUE;
	return own_cuMemAllocAsync(d, n, s);
}

/* ---- graph memory ---- */

CUresult own_cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
				    CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = own_cuMemAlloc_v2(&p->dptr, p->bytesize);
	if (rc)
		return rc;
	own_alloc_mark_graph(p->dptr);
	return own_cuGraphAddEmptyNode(out, g, deps, nd);
}

CUresult own_cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, CUdeviceptr d)
{
	(void)d;
	return own_cuGraphAddEmptyNode(out, g, deps, nd);
}

CUresult own_cuDeviceGetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a, void *v)
{
	(void)a;
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*(uint64_t *)v = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceSetGraphMemAttribute(CUdevice d, CUgraphMem_attribute a, void *v)
{
	(void)a, (void)v;
	return d != 0 ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult own_cuDeviceGraphMemTrim(CUdevice d) { return d != 0 ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS; }
