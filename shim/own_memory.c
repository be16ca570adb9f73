/* The own driver's memory: device, pinned host and managed allocations (all backend memory at
 * addresses the host and the kernels share), their records (address ranges, pointer
 * attributes), copies and memsets, sync and async, 1D and 2D/3D between linear memories. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/log.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct own_alloc *allocs;
static size_t nallocs, cap;

static CUresult record(uint64_t addr, size_t size, int host, int managed, int registered, unsigned flags)
{
	pthread_mutex_lock(&lock);
	if (nallocs == cap) {
		size_t n = cap ? cap * 2 : 256;
		struct own_alloc *a = realloc(allocs, n * sizeof(*a));
		if (!a) {
			pthread_mutex_unlock(&lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		allocs = a, cap = n;
	}
	allocs[nallocs++] = (struct own_alloc){.addr = addr, .size = size, .host = host, .managed = managed,
					     .registered = registered, .flags = flags};
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* Remove the record starting at addr; 0 when there was none. */
static int forget(uint64_t addr, struct own_alloc *out)
{
	int found = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nallocs; i++)
		if (allocs[i].addr == addr) {
			*out = allocs[i];
			allocs[i] = allocs[--nallocs];
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

int own_alloc_find(uint64_t addr, struct own_alloc *out)
{
	int found = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nallocs; i++)
		if (addr >= allocs[i].addr && addr - allocs[i].addr < (allocs[i].size ? allocs[i].size : 1)) {
			if (out)
				*out = allocs[i];
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

void own_alloc_mark_graph(uint64_t addr)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nallocs; i++)
		if (allocs[i].addr == addr)
			allocs[i].graph = 1;
	pthread_mutex_unlock(&lock);
}

/* Backend memory with its record; on failure err says the backend's reason. */
static CUresult alloc_quiet(uint64_t *addr, size_t size, int host, int managed, unsigned flags, char *err,
			    size_t errlen)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!addr)
		return CUDA_ERROR_INVALID_VALUE;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	if (own.ops->mem_alloc(own.bk, size, host ? GP_BK_MEM_HOST : GP_BK_MEM_DEVICE, addr, err, errlen) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = record(*addr, size, host, managed, 0, flags);
	if (rc)
		own.ops->mem_free(own.bk, *addr);
	return rc;
}

/* An allocation the application asked for: a failure is said once (programs that probe for the
 * largest allocation fail many on purpose), then only under GPUPROBE_LOG. */
static CUresult alloc(uint64_t *addr, size_t size, int host, int managed, unsigned flags)
{
	char err[256] = "";
	CUresult rc = alloc_quiet(addr, size, host, managed, flags, err, sizeof(err));
	if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			shim_msg("own driver: an allocation of %zu bytes failed (%s): CUDA_ERROR_OUT_OF_MEMORY; further "
				 "failed allocations are not reported", size, *err ? err : "backend");
		else
			shim_log("own driver: an allocation of %zu bytes failed (%s)", size, err);
	}
	return rc;
}

static CUresult release(uint64_t addr)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!addr)
		return CUDA_SUCCESS;
	struct own_alloc a;
	if (own_alloc_find(addr, &a) && a.graph && a.addr == addr)
		return CUDA_SUCCESS;   /* a graph's memory: its next launch has it again */
	if (!forget(addr, &a))
		return CUDA_ERROR_INVALID_VALUE;
	/* CUDA's free waits for the device to be done with the memory. */
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);
	if (!a.registered)
		own.ops->mem_free(own.bk, addr);
	return CUDA_SUCCESS;
}

CUresult own_cuMemAlloc_v2(CUdeviceptr *p, size_t size) { return alloc((uint64_t *)p, size, 0, 0, 0); }
CUresult own_cuMemFree_v2(CUdeviceptr p) { return release(p); }
CUresult own_cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned flags)
{
	return alloc((uint64_t *)p, size, 0, 1, flags);
}
CUresult own_cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned elem)
{
	(void)elem;
	if (!pitch)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = (width + 255) & ~(size_t)255;
	return alloc((uint64_t *)p, *pitch * (height ? height : 1), 0, 0, 0);
}
CUresult own_cuMemAllocHost_v2(void **p, size_t size)
{
	uint64_t a = 0;
	CUresult rc = alloc(&a, size, 1, 0, 0);
	if (!rc)
		*p = (void *)(uintptr_t)a;
	return rc;
}
CUresult own_cuMemHostAlloc(void **p, size_t size, unsigned flags)
{
	uint64_t a = 0;
	CUresult rc = alloc(&a, size, 1, 0, flags);
	if (!rc)
		*p = (void *)(uintptr_t)a;
	return rc;
}
CUresult own_cuMemFreeHost(void *p) { return release((uint64_t)(uintptr_t)p); }

CUresult own_cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
	(void)flags;
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!own_alloc_find((uint64_t)(uintptr_t)p, NULL))
		return CUDA_ERROR_INVALID_VALUE;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult own_cuMemHostGetFlags(unsigned *flags, void *p)
{
	struct own_alloc a;
	if (!flags || !own_alloc_find((uint64_t)(uintptr_t)p, &a) || !a.host)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = a.flags;
	return CUDA_SUCCESS;
}

/* The application's memory made "pinned": on a device sharing the host's memory (a CPU) the
 * kernels reach it as it is; it is recorded so that pointer queries and copies know it. */
CUresult own_cuMemHostRegister_v2(void *p, size_t size, unsigned flags)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!p || !size)
		return CUDA_ERROR_INVALID_VALUE;
	return record((uint64_t)(uintptr_t)p, size, 1, 0, 1, flags);
}

CUresult own_cuMemHostUnregister(void *p)
{
	struct own_alloc a;
	if (!forget((uint64_t)(uintptr_t)p, &a))
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	return CUDA_SUCCESS;
}

CUresult own_cuMemGetInfo_v2(size_t *free_, size_t *total)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	size_t used = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nallocs; i++)
		if (!allocs[i].host)
			used += allocs[i].size;
	pthread_mutex_unlock(&lock);
	if (total)
		*total = own.info.global_mem;
	if (free_)
		*free_ = used < own.info.global_mem ? own.info.global_mem - used : 0;
	return CUDA_SUCCESS;
}

CUresult own_cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	struct own_alloc a;
	if (!own_alloc_find(p, &a))
		return CUDA_ERROR_NOT_FOUND;
	if (base)
		*base = a.addr;
	if (size)
		*size = a.size;
	return CUDA_SUCCESS;
}

static CUresult pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	struct own_alloc a;
	int known = own_alloc_find(p, &a);
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(CUcontext *)data = (CUcontext)&own.primary;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(unsigned *)data = a.host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!known)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)p;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(int *)data = known && a.managed;
		return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = known ? a.addr : 0;
		return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = known ? a.size : 0;
		return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = known ? a.addr : 0;
		return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = known;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(void **)data = NULL;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult own_cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	return pointer_attr(data, attr, p);
}

/* Like the driver: attributes of memory it does not know are zeros (unregistered host memory). */
CUresult own_cuPointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
	for (unsigned i = 0; i < n; i++) {
		if (!data[i])
			continue;
		if (pointer_attr(data[i], attrs[i], p) != CUDA_SUCCESS) {
			switch (attrs[i]) {
			case CU_POINTER_ATTRIBUTE_CONTEXT:
			case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
			case CU_POINTER_ATTRIBUTE_HOST_POINTER:
				*(void **)data[i] = NULL;
				break;
			case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
				*(unsigned *)data[i] = 0;
				break;
			case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
				*(int *)data[i] = -2;
				break;
			case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			case CU_POINTER_ATTRIBUTE_BUFFER_ID:
				*(uint64_t *)data[i] = 0;
				break;
			default:
				*(int *)data[i] = 0;
			}
		}
	}
	return CUDA_SUCCESS;
}

CUresult own_cuPointerSetAttribute(const void *v, CUpointer_attribute a, CUdeviceptr p)
{
	(void)v, (void)a, (void)p;
	return CUDA_SUCCESS;
}

/* ---- copies ---- */

CUresult own_copy(uint64_t dst, uint64_t src, size_t n, int async, CUstream stream)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!n)
		return CUDA_SUCCESS;
	struct own_graph *g = async ? own_capturing(stream) : NULL;
	if (g)
		return own_graph_add_copy(g, dst, src, n);
	/* An async copy may return at once only when both ends are the driver's own memory (the
	 * application may reuse pageable memory as soon as the call returns). */
	int blocking = !async || !own_alloc_find(dst, NULL) || !own_alloc_find(src, NULL);
	rc = own_err(own.ops->copy(own.bk, own.queue, dst, src, n, blocking, NULL, 0));
	return blocking ? own_trapped(rc) : rc;
}

CUresult own_copy_after_trap(uint64_t dst, uint64_t src, size_t n)
{
	if (!own_active() || !own.initialized || !own.bk)
		return CUDA_ERROR_NOT_SUPPORTED;   /* NVIDIA's driver serves the process */
	return n ? own_err(own.ops->copy(own.bk, own.queue, dst, src, n, 1, NULL, 0)) : CUDA_SUCCESS;
}

#define P(x) ((uint64_t)(uintptr_t)(x))
CUresult own_cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return own_copy(d, s, n, 0, NULL); }
CUresult own_cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return own_copy(d, s, n, 1, st); }
CUresult own_cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return own_copy(d, P(s), n, 0, NULL); }
CUresult own_cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return own_copy(P(d), s, n, 0, NULL); }
CUresult own_cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return own_copy(d, s, n, 0, NULL); }
CUresult own_cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { return own_copy(d, P(s), n, 1, st); }
CUresult own_cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { return own_copy(P(d), s, n, 1, st); }
CUresult own_cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return own_copy(d, s, n, 1, st); }
CUresult own_cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
	(void)dc, (void)sc;
	return own_copy(d, s, n, 0, NULL);
}
CUresult own_cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
	(void)dc, (void)sc;
	return own_copy(d, s, n, 1, st);
}

static int linear(CUmemorytype t) { return t == CU_MEMORYTYPE_HOST || t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED; }

/* One end of a 2D/3D copy as linear memory: base, pitch and rows per slice (CUDA arrays are
 * packed rows, own_array.c). */
static int end_of(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t pitch, size_t height,
		  uint64_t *base, size_t *p, size_t *h)
{
	if (t == CU_MEMORYTYPE_ARRAY)
		return own_array_linear(arr, base, p, h);
	if (!linear(t))
		return -1;
	*base = t == CU_MEMORYTYPE_HOST ? P(host) : dev;
	*p = pitch, *h = height;
	return 0;
}

CUresult own_copy3d(const CUDA_MEMCPY3D *c, int async, CUstream stream)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t s, d;
	size_t sp, dp, sh, dh;
	if (end_of(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, c->srcHeight, &s, &sp, &sh) < 0 ||
	    end_of(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, c->dstHeight, &d, &dp, &dh) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	sp = sp ? sp : c->WidthInBytes, dp = dp ? dp : c->WidthInBytes;
	sh = sh ? sh : c->Height, dh = dh ? dh : c->Height;
	size_t depth = c->Depth ? c->Depth : 1, height = c->Height ? c->Height : 1;
	s += c->srcXInBytes + c->srcY * sp + c->srcZ * sp * sh;
	d += c->dstXInBytes + c->dstY * dp + c->dstZ * dp * dh;
	/* rows back to back at both ends (whole slices, packed arrays): one copy */
	if (sp == c->WidthInBytes && dp == c->WidthInBytes && (depth == 1 || (sh == height && dh == height)))
		return own_copy(d, s, c->WidthInBytes * height * depth, async, stream);
	for (size_t z = 0; z < depth; z++)
		for (size_t y = 0; y < height; y++) {
			CUresult rc = own_copy(d + y * dp + z * dp * dh, s + y * sp + z * sp * sh, c->WidthInBytes, async,
					       stream);
			if (rc)
				return rc;
		}
	return CUDA_SUCCESS;
}

static CUresult copy2d(const CUDA_MEMCPY2D *c, int async, CUstream stream)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_MEMCPY3D t = {0};
	t.srcXInBytes = c->srcXInBytes, t.srcY = c->srcY, t.srcMemoryType = c->srcMemoryType;
	t.srcHost = c->srcHost, t.srcDevice = c->srcDevice, t.srcArray = c->srcArray, t.srcPitch = c->srcPitch;
	t.dstXInBytes = c->dstXInBytes, t.dstY = c->dstY, t.dstMemoryType = c->dstMemoryType;
	t.dstHost = c->dstHost, t.dstDevice = c->dstDevice, t.dstArray = c->dstArray, t.dstPitch = c->dstPitch;
	t.WidthInBytes = c->WidthInBytes, t.Height = c->Height, t.Depth = 1;
	return own_copy3d(&t, async, stream);
}

CUresult own_cuMemcpy2D_v2(const CUDA_MEMCPY2D *c) { return copy2d(c, 0, NULL); }
CUresult own_cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *c) { return copy2d(c, 0, NULL); }
CUresult own_cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s) { return copy2d(c, 1, s); }
CUresult own_cuMemcpy3D_v2(const CUDA_MEMCPY3D *c) { return own_copy3d(c, 0, NULL); }
CUresult own_cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream s) { return own_copy3d(c, 1, s); }

/* ---- memsets ---- */

CUresult own_set(uint64_t d, const void *pat, size_t psize, size_t count, size_t pitch, size_t height,
		 CUstream stream)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	struct own_graph *g = own_capturing(stream);
	if (g)
		return own_graph_add_set(g, d, pat, psize, count, pitch, height);
	for (size_t y = 0; y < (height ? height : 1); y++) {
		int r = own.ops->fill(own.bk, own.queue, d + y * pitch, pat, psize, count * psize, NULL, 0);
		if (r < 0)
			return own_err(r);
	}
	return CUDA_SUCCESS;
}

CUresult own_cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return own_set(d, &v, 1, n, 0, 1, NULL); }
CUresult own_cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return own_set(d, &v, 2, n, 0, 1, NULL); }
CUresult own_cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { return own_set(d, &v, 4, n, 0, 1, NULL); }
CUresult own_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return own_set(d, &v, 1, n, 0, 1, s); }
CUresult own_cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return own_set(d, &v, 2, n, 0, 1, s); }
CUresult own_cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { return own_set(d, &v, 4, n, 0, 1, s); }
CUresult own_cuMemsetD2D8_v2(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) { return own_set(d, &v, 1, w, p, h, NULL); }
CUresult own_cuMemsetD2D16_v2(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) { return own_set(d, &v, 2, w, p, h, NULL); }
CUresult own_cuMemsetD2D32_v2(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h) { return own_set(d, &v, 4, w, p, h, NULL); }
CUresult own_cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) { return own_set(d, &v, 1, w, p, h, s); }
CUresult own_cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s) { return own_set(d, &v, 2, w, p, h, s); }
CUresult own_cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) { return own_set(d, &v, 4, w, p, h, s); }

/* Hints: every byte is already where both sides reach it. */
CUresult own_cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice d, CUstream s) { (void)p, (void)n, (void)d, (void)s; return own_ready(); }
CUresult own_cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation l, unsigned f, CUstream s) { (void)p, (void)n, (void)l, (void)f, (void)s; return own_ready(); }
CUresult own_cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice d) { (void)p, (void)n, (void)a, (void)d; return own_ready(); }
CUresult own_cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise a, CUmemLocation l) { (void)p, (void)n, (void)a, (void)l; return own_ready(); }

/* Stream-ordered allocation, ordered by the one queue: allocate now, free after the queue drains. */
CUresult own_cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	CUresult rc = alloc((uint64_t *)p, n, 0, 0, 0);
	if (!rc && own_capturing(s))
		own_alloc_mark_graph(*p);   /* a captured allocation node */
	return rc;
}
/* Freed by a captured graph: kept (graph memory lives as long as the process, own_pool.c). */
CUresult own_cuMemFreeAsync(CUdeviceptr p, CUstream s) { return own_capturing(s) ? CUDA_SUCCESS : release(p); }

/* ---- virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap, ...) ----
 * A backend cannot map memory at an address of our choosing, so a reservation is backed at
 * once by one allocation of its size, and cuMemCreate's handle is a size with no memory of its
 * own: mapping it at an address of a reservation makes those bytes its memory. What this cannot
 * do is alias: one handle mapped at two addresses (refused, one line), or a handle's contents
 * kept across an unmap and a map elsewhere. */

#define OWN_MAGIC_VMM 0x6f766d6du
struct own_vmm_handle {
	uint32_t magic;
	size_t size;
	CUmemAllocationProp prop;
	uint64_t mapped_at;   /* 0: not mapped */
	int released;         /* cuMemRelease called: freed when unmapped */
};
#define VMM_GRANULARITY (2u << 20)

static struct own_vmm_handle *vmm_of(CUmemGenericAllocationHandle h)
{
	struct own_vmm_handle *v = (struct own_vmm_handle *)(uintptr_t)h;
	return v && v->magic == OWN_MAGIC_VMM ? v : NULL;
}

CUresult own_cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
					   CUmemAllocationGranularity_flags option)
{
	(void)option;
	if (!g || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*g = VMM_GRANULARITY;
	return CUDA_SUCCESS;
}

CUresult own_cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
				 unsigned long long flags)
{
	(void)align, (void)addr, (void)flags;   /* the address is the backend's: a hint need not be met */
	if (!ptr || !size || size % VMM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	/* Backed at once: a reservation larger than the device's memory fails here, which callers
	 * that reserve address space generously (gpuprobe's own map allocator: 64 GiB) expect and
	 * fall back from; not reported as an application's failed allocation. */
	char err[256] = "";
	CUresult rc = alloc_quiet((uint64_t *)ptr, size, 0, 0, 0, err, sizeof(err));
	if (rc == CUDA_ERROR_OUT_OF_MEMORY)
		shim_log("own driver: cuMemAddressReserve of %zu bytes: no memory to back it (%s)", size, err);
	return rc;
}

CUresult own_cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct own_alloc a;
	if (!own_alloc_find(ptr, &a) || a.addr != ptr || a.size != size)
		return CUDA_ERROR_INVALID_VALUE;
	return release(ptr);
}

CUresult own_cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			 unsigned long long flags)
{
	(void)flags;
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!h || !prop || !size || size % VMM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    prop->location.id != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return own_unsupported(-1, "cuMemCreate with shareable handles");
	struct own_vmm_handle *v = calloc(1, sizeof(*v));
	if (!v)
		return CUDA_ERROR_OUT_OF_MEMORY;
	v->magic = OWN_MAGIC_VMM, v->size = size, v->prop = *prop;
	*h = (CUmemGenericAllocationHandle)(uintptr_t)v;
	return CUDA_SUCCESS;
}

static void vmm_free(struct own_vmm_handle *v)
{
	v->magic = 0;
	free(v);
}

CUresult own_cuMemRelease(CUmemGenericAllocationHandle h)
{
	struct own_vmm_handle *v = vmm_of(h);
	if (!v || v->released)
		return CUDA_ERROR_INVALID_VALUE;
	if (v->mapped_at)
		v->released = 1;   /* the mapping keeps it */
	else
		vmm_free(v);
	return CUDA_SUCCESS;
}

/* The handles mapped in [ptr, ptr + size): a short list, walked by address. */
static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own_vmm_handle **maps;
static size_t nmaps, maps_cap;

CUresult own_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
		      unsigned long long flags)
{
	(void)flags;
	struct own_vmm_handle *v = vmm_of(h);
	struct own_alloc a;
	if (!v || v->released || offset || size != v->size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!own_alloc_find(ptr, &a) || ptr + size > a.addr + a.size)
		return CUDA_ERROR_INVALID_VALUE;   /* not inside one reservation */
	if (v->mapped_at)
		return own_unsupported(-1, "cuMemMap of an allocation already mapped (aliases)");
	pthread_mutex_lock(&vmm_lock);
	for (size_t i = 0; i < nmaps; i++)
		if (ptr < maps[i]->mapped_at + maps[i]->size && maps[i]->mapped_at < ptr + size) {
			pthread_mutex_unlock(&vmm_lock);
			return CUDA_ERROR_INVALID_VALUE;   /* overlaps a mapping */
		}
	if (nmaps == maps_cap) {
		size_t n = maps_cap ? maps_cap * 2 : 16;
		struct own_vmm_handle **m = realloc(maps, n * sizeof(*m));
		if (!m) {
			pthread_mutex_unlock(&vmm_lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		maps = m, maps_cap = n;
	}
	maps[nmaps++] = v;
	v->mapped_at = ptr;
	pthread_mutex_unlock(&vmm_lock);
	return CUDA_SUCCESS;
}

CUresult own_cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);   /* kernels may still use it */
	pthread_mutex_lock(&vmm_lock);
	for (size_t i = 0; i < nmaps;) {
		struct own_vmm_handle *v = maps[i];
		if (v->mapped_at >= ptr && v->mapped_at + v->size <= ptr + size) {
			maps[i] = maps[--nmaps];
			v->mapped_at = 0;
			if (v->released)
				vmm_free(v);
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&vmm_lock);
	return CUDA_SUCCESS;
}

CUresult own_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	struct own_alloc a;
	if (!desc || !count || !own_alloc_find(ptr, &a) || ptr + size > a.addr + a.size)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;   /* every byte is readable and writable by the one device */
}

CUresult own_cuMemGetAccess(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr)
{
	if (!flags || !loc || !own_alloc_find(ptr, NULL))
		return CUDA_ERROR_INVALID_VALUE;
	*flags = loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id == 0 ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
									   : CU_MEM_ACCESS_FLAGS_PROT_NONE;
	return CUDA_SUCCESS;
}

CUresult own_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h)
{
	struct own_vmm_handle *v = vmm_of(h);
	if (!v || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	*prop = v->prop;
	return CUDA_SUCCESS;
}

CUresult own_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t p = (uint64_t)(uintptr_t)addr;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&vmm_lock);
	for (size_t i = 0; i < nmaps; i++)
		if (p >= maps[i]->mapped_at && p < maps[i]->mapped_at + maps[i]->size) {
			*h = (CUmemGenericAllocationHandle)(uintptr_t)maps[i];
			rc = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&vmm_lock);
	return rc;
}
