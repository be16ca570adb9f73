/* The map allocator of the probe runtime over the real driver (maps/maps.h): device memory with
 * cuMemAlloc, rings in pinned host memory mapped into the device (cuMemHostAlloc DEVICEMAP), and
 * copies that never wait for the application: device-to-host reads go through a non-blocking
 * stream of our own. Every call makes the application's context current for its duration
 * (push/pop), so the collector thread and any application thread may call it. */
#include "shim/probes_internal.h"

#include <errno.h>
#include <stdlib.h>

static CUcontext alloc_ctx;
static CUstream alloc_stream;

static int push(void)
{
	return SHIM_REAL(cuCtxPushCurrent_v2)(alloc_ctx) == CUDA_SUCCESS ? 0 : -EIO;
}

static void pop(void)
{
	CUcontext c;
	SHIM_REAL(cuCtxPopCurrent_v2)(&c);
}

static int dev_alloc(void *u, size_t n, uint64_t *d)
{
	if (push())
		return -EIO;
	CUdeviceptr p = 0;
	CUresult r = SHIM_REAL(cuMemAlloc_v2)(&p, n);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuMemsetD8_v2)(p, 0, n);
	pop();
	*d = p;
	return r == CUDA_SUCCESS ? 0 : -ENOMEM;
}

static void dev_free(void *u, uint64_t d)
{
	if (push())
		return;
	SHIM_REAL(cuMemFree_v2)((CUdeviceptr)d);
	pop();
}

static int host_alloc(void *u, size_t n, void **h)
{
	if (push())
		return -EIO;
	CUresult r = SHIM_REAL(cuMemHostAlloc)(h, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
	pop();
	return r == CUDA_SUCCESS ? 0 : -ENOMEM;
}

static void host_free(void *u, void *h)
{
	if (push())
		return;
	SHIM_REAL(cuMemFreeHost)(h);
	pop();
}

static int host_dev_ptr(void *u, void *h, uint64_t *d)
{
	if (push())
		return -EIO;
	CUdeviceptr p = 0;
	CUresult r = SHIM_REAL(cuMemHostGetDevicePointer_v2)(&p, h, 0);
	pop();
	*d = p;
	return r == CUDA_SUCCESS ? 0 : -EINVAL;
}

static int copy_to_dev(void *u, uint64_t d, const void *s, size_t n)
{
	if (push())
		return -EIO;
	CUresult r = SHIM_REAL(cuMemcpyHtoDAsync_v2)((CUdeviceptr)d, s, n, alloc_stream);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamSynchronize)(alloc_stream);
	pop();
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

static int copy_from_dev(void *u, void *d, uint64_t s, size_t n)
{
	if (push())
		return -EIO;
	CUresult r = SHIM_REAL(cuMemcpyDtoHAsync_v2)(d, (CUdeviceptr)s, n, alloc_stream);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamSynchronize)(alloc_stream);
	pop();
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

int probes_alloc_init(struct gp_map_allocator *a, CUcontext ctx, unsigned *device_sm)
{
	alloc_ctx = ctx;
	if (push())
		return -EIO;
	CUdevice dev;
	int nsm = 0, major = 0, minor = 0;
	CUresult r = SHIM_REAL(cuCtxGetDevice)(&dev);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuDeviceGetAttribute)(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamCreate)(&alloc_stream, CU_STREAM_NON_BLOCKING);
	pop();
	if (r != CUDA_SUCCESS)
		return -EIO;
	*device_sm = (unsigned)(major * 10 + minor);
	*a = (struct gp_map_allocator){
		.nsms = (unsigned)nsm, .dev_alloc = dev_alloc, .dev_free = dev_free,
		.host_alloc = host_alloc, .host_free = host_free, .host_dev_ptr = host_dev_ptr,
		.copy_to_dev = copy_to_dev, .copy_from_dev = copy_from_dev};
	return 0;
}
