/* The fake driver memory calls of fake_mem.h. */
#include "fake_mem.h"
#include "shim/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- what the shim would provide ---------------------------------------------------------- */

void *shim_real_fn[SHIM_FN_COUNT];
int shim_log_enabled = 1;
char logbuf[8192];
int nlog;

void *shim_resolve(enum shim_fn_id id) { return shim_real_fn[id]; }

void shim_msg(const char *fmt, ...)
{
	size_t used = strlen(logbuf);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(logbuf + used, sizeof(logbuf) - used, fmt, ap);
	va_end(ap);
	used = strlen(logbuf);
	snprintf(logbuf + used, sizeof(logbuf) - used, "\n");
	nlog++;
}

/* shim/log.c's, over this fake's cuGetErrorName (none: the fallback name) */
const char *shim_err_name(int rc)
{
	const char *s = NULL;
	shim_fnty_cuGetErrorName *gn = (shim_fnty_cuGetErrorName *)shim_real_fn[SHIM_FN_cuGetErrorName];
	if (!gn || gn((CUresult)rc, &s) != CUDA_SUCCESS || !s)
		s = "unknown CUDA error";
	return s;
}

/* ---- the fake driver -------------------------------------------------------------------- */


struct fake_state fk;

void fake_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	fk.vmm = fk.hostptr = 1;
	fk.ndev = 1;
	fk.gran = 2u << 20;
	fk.create_fails_after = -1;
	fk.next_alloc = FAKE_ALLOC_BASE;
	fk.moved = FAKE_MOVED;
	logbuf[0] = 0;
	nlog = 0;
}

static CUresult f_push(CUcontext c) { return CUDA_SUCCESS; }
static CUresult f_pop(CUcontext *c) { *c = (CUcontext)1; return CUDA_SUCCESS; }
static CUresult f_ctx_dev(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
static CUresult f_dev_count(int *n) { *n = fk.ndev; return CUDA_SUCCESS; }
static CUresult f_can_peer(int *can, CUdevice dev, CUdevice peer)
{
	*can = dev == 1 && peer == 0 && fk.peer_ok;
	return dev < fk.ndev && peer < fk.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *v = fk.vmm; break;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *v = fk.hostptr; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
static CUresult f_stream(CUstream *s, unsigned flags) { fk.streams++; *s = (CUstream)2; return CUDA_SUCCESS; }
static CUresult f_stream_sync(CUstream s) { return CUDA_SUCCESS; }
static CUresult f_stream_destroy(CUstream s) { fk.stream_destroys++; return CUDA_SUCCESS; }
static CUresult f_err_name(CUresult r, const char **s)
{
	*s = r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
	     : r == CUDA_ERROR_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE" : "CUDA_ERROR_INVALID_VALUE";
	return CUDA_SUCCESS;
}

static CUresult f_alloc(CUdeviceptr *p, size_t n)
{
	*p = fk.next_alloc;
	fk.next_alloc += (n + 0xfffff) & ~0xfffffull;
	fk.allocs++;
	return CUDA_SUCCESS;
}
static CUresult f_free(CUdeviceptr p) { fk.frees++; return CUDA_SUCCESS; }
static CUresult f_memset(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
	fk.memset_at = p;
	fk.memset_n = n;
	return v == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult f_host_alloc(void **h, size_t n, unsigned flags)
{
	*h = malloc(n);
	fk.host_allocs++;
	return *h ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult f_free_host(void *h) { free(h); fk.host_frees++; return CUDA_SUCCESS; }
static CUresult f_register(void *h, size_t n, unsigned flags)
{
	long pg = sysconf(_SC_PAGESIZE);
	if ((uintptr_t)h % (uintptr_t)pg || n % (size_t)pg ||
	    flags != (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP))
		return CUDA_ERROR_INVALID_VALUE;
	fk.registers++;
	return CUDA_SUCCESS;
}
static CUresult f_unregister(void *h) { fk.unregisters++; return CUDA_SUCCESS; }
static CUresult f_host_dptr(CUdeviceptr *d, void *h, unsigned flags)
{
	/* Registered memory at its host address when the device can; elsewhere otherwise. */
	*d = (CUdeviceptr)(uintptr_t)h + (fk.hostptr ? 0 : 0x100000000000ull);
	return CUDA_SUCCESS;
}
static CUresult f_copy_to(CUdeviceptr d, const void *s, size_t n, CUstream st) { return CUDA_SUCCESS; }
static CUresult f_copy_from(void *d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }

static CUresult f_reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr hint,
			  unsigned long long flags)
{
	fk.reserves++;
	if (fk.reserve_mode == 2)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fk.reserved++;
	fk.reserved_size = size;
	fk.reserve_align = align;
	*p = fk.reserve_mode == 1 ? fk.moved : hint;
	return CUDA_SUCCESS;
}
static CUresult f_addr_free(CUdeviceptr p, size_t size)
{
	fk.reserved--;
	return size == fk.reserved_size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult f_gran(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags f)
{
	*g = fk.gran;
	return prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
		       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE
		       ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult f_create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			 unsigned long long flags)
{
	if (fk.create_fails_after >= 0 && fk.creates >= fk.create_fails_after)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (size % fk.gran)
		return CUDA_ERROR_INVALID_VALUE;
	*h = (CUmemGenericAllocationHandle)++fk.creates;
	return CUDA_SUCCESS;
}
static CUresult f_release(CUmemGenericAllocationHandle h) { fk.releases++; return CUDA_SUCCESS; }
static CUresult f_map(CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
		      unsigned long long flags)
{
	if (p % fk.gran || size % fk.gran)
		return CUDA_ERROR_INVALID_VALUE;
	fk.maps++;
	fk.mapped_bytes += size;
	return CUDA_SUCCESS;
}
static CUresult f_unmap(CUdeviceptr p, size_t size)
{
	fk.unmaps++;
	fk.mapped_bytes -= size;
	return CUDA_SUCCESS;
}
static CUresult f_access(CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n)
{
	fk.accesses++;
	fk.access_n = (int)n;
	fk.access_ids = 0;
	for (size_t i = 0; i < n; i++) {
		if (d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE ||
		    d[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		fk.access_ids |= 1 << d[i].location.id;
	}
	return n > 1 && fk.peer_refused ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

#define SET(name, fn)                                                                      \
	do {                                                                               \
		shim_fnty_##name *f_ = fn;                                                 \
		shim_real_fn[SHIM_FN_##name] = (void *)f_;                                 \
	} while (0)

void fake_install(void)
{
	SET(cuCtxPushCurrent_v2, f_push);
	SET(cuCtxPopCurrent_v2, f_pop);
	SET(cuCtxGetDevice, f_ctx_dev);
	SET(cuDeviceGetCount, f_dev_count);
	SET(cuDeviceCanAccessPeer, f_can_peer);
	SET(cuDeviceGetAttribute, f_attr);
	SET(cuStreamCreate, f_stream);
	SET(cuStreamSynchronize, f_stream_sync);
	SET(cuStreamDestroy_v2, f_stream_destroy);
	SET(cuGetErrorName, f_err_name);
	SET(cuMemAlloc_v2, f_alloc);
	SET(cuMemFree_v2, f_free);
	SET(cuMemsetD8Async, f_memset);
	SET(cuMemHostAlloc, f_host_alloc);
	SET(cuMemFreeHost, f_free_host);
	SET(cuMemHostRegister_v2, f_register);
	SET(cuMemHostUnregister, f_unregister);
	SET(cuMemHostGetDevicePointer_v2, f_host_dptr);
	SET(cuMemcpyHtoDAsync_v2, f_copy_to);
	SET(cuMemcpyDtoHAsync_v2, f_copy_from);
	SET(cuMemAddressReserve, f_reserve);
	SET(cuMemAddressFree, f_addr_free);
	SET(cuMemGetAllocationGranularity, f_gran);
	SET(cuMemCreate, f_create);
	SET(cuMemRelease, f_release);
	SET(cuMemMap, f_map);
	SET(cuMemUnmap, f_unmap);
	SET(cuMemSetAccess, f_access);
}
