/* The own driver's device (one: the backend's) and its attributes, and contexts (the primary
 * one and created ones; they share the device's memory and queue). Attributes a backend cannot
 * tell get the values of a CUDA device of compute capability OWN_CC_MAJOR.OWN_CC_MINOR with the
 * backend's limits (docs: shim/README.md, "The own driver"). */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEED_INIT()                                                                                \
	do {                                                                                       \
		if (!own.initialized)                                                              \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
	} while (0)
#define NEED_DEV(d)                                                                                \
	do {                                                                                       \
		NEED_INIT();                                                                       \
		if ((d) != 0)                                                                      \
			return CUDA_ERROR_INVALID_DEVICE;                                          \
	} while (0)

CUresult own_cuDeviceGetCount(int *n)
{
	NEED_INIT();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGet(CUdevice *d, int ordinal)
{
	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetName(char *name, int len, CUdevice d)
{
	NEED_DEV(d);
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", own.info.name);
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
	NEED_DEV(d);
	if (!u)
		return CUDA_ERROR_INVALID_VALUE;
	/* A stable UUID from the device's name ("GPU-" + hash), version-4 style bits. */
	memset(u, 0, sizeof(*u));
	uint64_t h = 1469598103934665603ull;
	for (const char *p = own.info.name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	memcpy(u->bytes, &h, 8);
	h = h * 31 + 0x67707072;
	memcpy(u->bytes + 8, &h, 8);
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetLuid(char *luid, unsigned int *mask, CUdevice d)
{
	(void)luid, (void)mask, (void)d;
	return CUDA_ERROR_NOT_SUPPORTED;   /* Windows only */
}

CUresult own_cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	NEED_DEV(d);
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = own.info.global_mem;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceComputeCapability(int *major, int *minor, CUdevice d)
{
	NEED_DEV(d);
	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	*major = OWN_CC_MAJOR, *minor = OWN_CC_MINOR;
	return CUDA_SUCCESS;
}

static int max_threads(void)
{
	size_t m = own.info.max_wg_size ? own.info.max_wg_size : 1024;
	return m > 1024 ? 1024 : (int)m;
}

/* Shared memory as a compute capability 9.0 device has it (the one we report): 48 KiB per block
 * without opting in, up to 227 KiB with cuFuncSetAttribute's opt-in, 228 KiB per multiprocessor;
 * each no more than the device's local memory (PoCL: 1.25 MiB). Programs choose their fast paths
 * by these (a tensor-core GEMM needs 64 KiB opted in). */
static int shared_limit(size_t cc90)
{
	size_t local = own.info.local_mem;
	return (int)(local && local < cc90 ? local : cc90);
}

int own_shared_optin(void) { return shared_limit(232448); }

static int attribute(CUdevice_attribute a)
{
	const struct gp_bk_info *in = &own.info;
	int shared = shared_limit(49152);
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return max_threads();
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return max_threads();
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return shared;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return own_shared_optin();
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return shared_limit(233472);
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 0;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return (int)in->clock_mhz * 1000;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return (int)in->clock_mhz * 1000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 64;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 1 << 20;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 1;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return (int)in->compute_units;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return OWN_CC_MAJOR;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return OWN_CC_MINOR;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return in->fine_grain;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return in->fine_grain;
	case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return in->fine_grain;
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;   /* own_pool.c */
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
	case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 0;
	case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 0;
	/* Textures and surfaces are sampled in software (own_array.c, spirv/lower_tex.c): the
	 * limits are an H100's, which the runtime checks requests against. */
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH: return 32768;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS: return 2046;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: return 1 << 28;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: return 65000;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: return 2097120;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH: return 32768;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: return 16384;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH: return 32768;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS:
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: return 2046;
	case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
	/* Cooperative launches: every block of the grid resident at once, which own_launch.c's
	 * occupancy answers and its cooperative check promise (resident_per_sm). */
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
	/* Virtual memory management without aliasing (own_memory.c says what that leaves out). */
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	default: return 0;
	}
}

CUresult own_cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d)
{
	NEED_DEV(d);
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = attribute(a);
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetProperties(CUdevprop *p, CUdevice d)
{
	NEED_DEV(d);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->maxThreadsPerBlock = max_threads();
	p->maxThreadsDim[0] = p->maxThreadsDim[1] = max_threads();
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = p->maxGridSize[2] = 65535;
	p->sharedMemPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	p->totalConstantMemory = 65536;
	p->SIMDWidth = 32;
	p->memPitch = 2147483647;
	p->regsPerBlock = 65536;
	p->clockRate = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	p->textureAlign = 512;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	NEED_DEV(d);
	if (!id || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(id, (size_t)len, "0000:00:00.0");
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetByPCIBusId(CUdevice *d, const char *id)
{
	NEED_INIT();
	if (!d || !id)
		return CUDA_ERROR_INVALID_VALUE;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer)
{
	NEED_DEV(d);
	(void)peer;
	if (!can)
		return CUDA_ERROR_INVALID_VALUE;
	*can = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetP2PAttribute(int *v, CUdevice_P2PAttribute a, CUdevice s, CUdevice d)
{
	(void)a, (void)s, (void)d;
	NEED_INIT();
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDeviceGetTexture1DLinearMaxWidth(size_t *w, CUarray_format f, unsigned n, CUdevice d)
{
	(void)f, (void)n;
	NEED_DEV(d);
	*w = 0;
	return CUDA_SUCCESS;
}

/* ---- contexts ---- */

static __thread struct own_ctx *stack[16];
static __thread int depth;   /* stack[depth-1] is current; 0: none */

struct own_ctx *own_ctx_current(void) { return depth ? stack[depth - 1] : NULL; }

static struct own_ctx *as_ctx(CUcontext c)
{
	struct own_ctx *x = (struct own_ctx *)c;
	return x && x->magic == OWN_MAGIC_CTX ? x : NULL;
}

CUresult own_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
	NEED_DEV(d);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	__atomic_add_fetch(&own.primary.refs, 1, __ATOMIC_RELAXED);
	own.primary_active = 1;
	*pctx = (CUcontext)&own.primary;
	return CUDA_SUCCESS;
}

CUresult own_cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	NEED_DEV(d);
	if (__atomic_sub_fetch(&own.primary.refs, 1, __ATOMIC_RELAXED) <= 0)
		own.primary.refs = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
	NEED_DEV(d);
	if (flags)
		*flags = own.primary_flags;
	if (active)
		*active = own.primary_active;
	return CUDA_SUCCESS;
}

CUresult own_cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned flags)
{
	NEED_DEV(d);
	own.primary_flags = flags;
	return CUDA_SUCCESS;
}

CUresult own_cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	NEED_DEV(d);
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);
	own.primary_active = 0;
	own.primary.refs = 0;
	return CUDA_SUCCESS;
}

static unsigned long long ctx_ids = 1;

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice d)
{
	NEED_DEV(d);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->magic = OWN_MAGIC_CTX;
	c->flags = flags;
	c->refs = 1;
	c->id = __atomic_add_fetch(&ctx_ids, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&c->lock, NULL);
	if (depth < 16)
		stack[depth++] = c;
	else
		stack[depth - 1] = c;
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxCreate_v2(CUcontext *pctx, unsigned flags, CUdevice d) { return ctx_create(pctx, flags, d); }
CUresult own_cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *p, int n, unsigned flags, CUdevice d)
{
	(void)p, (void)n;
	return ctx_create(pctx, flags, d);
}
CUresult own_cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	(void)p;
	return ctx_create(pctx, flags, d);
}

CUresult own_cuCtxDestroy_v2(CUcontext ctx)
{
	struct own_ctx *c = as_ctx(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);
	for (int i = 0; i < depth; i++)
		if (stack[i] == c) {
			memmove(stack + i, stack + i + 1, (size_t)(depth - i - 1) * sizeof(stack[0]));
			depth--, i--;
		}
	for (unsigned i = 0; i < c->ncls; i++)
		if (c->cls[i].dtor)
			c->cls[i].dtor(ctx, c->cls[i].key, c->cls[i].value);
	c->ncls = 0;
	if (c != &own.primary) {
		c->magic = 0;
		free(c);
	}
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetCurrent(CUcontext *pctx)
{
	NEED_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)own_ctx_current();
	return CUDA_SUCCESS;
}

CUresult own_cuCtxSetCurrent(CUcontext ctx)
{
	NEED_INIT();
	if (!ctx) {
		if (depth)
			depth--;
		return CUDA_SUCCESS;
	}
	struct own_ctx *c = as_ctx(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth)
		stack[depth - 1] = c;
	else
		stack[depth++] = c;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxPushCurrent_v2(CUcontext ctx)
{
	NEED_INIT();
	struct own_ctx *c = as_ctx(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth >= 16)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stack[depth++] = c;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxPopCurrent_v2(CUcontext *pctx)
{
	NEED_INIT();
	if (!depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct own_ctx *c = stack[--depth];
	if (pctx)
		*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetDevice(CUdevice *d)
{
	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!own_ctx_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetDevice_v2(CUdevice *d, CUcontext ctx)
{
	NEED_INIT();
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx && !own_ctx_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetFlags(unsigned *flags)
{
	NEED_INIT();
	struct own_ctx *c = own_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*flags = c->primary ? own.primary_flags : c->flags;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxSetFlags(unsigned flags)
{
	NEED_INIT();
	struct own_ctx *c = own_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c->primary)
		own.primary_flags = flags;
	else
		c->flags = flags;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
	NEED_INIT();
	struct own_ctx *c = ctx ? as_ctx(ctx) : own_ctx_current();
	if (!c || !id)
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = c->id;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxSynchronize(void)
{
	NEED_INIT();
	return own_trapped(own_err(own.ops->queue_finish(own.bk, own.queue, NULL, 0)));
}

CUresult own_cuCtxSynchronize_v2(CUcontext ctx)
{
	(void)ctx;
	return own_cuCtxSynchronize();
}

CUresult own_cuCtxGetApiVersion(CUcontext ctx, unsigned *v)
{
	(void)ctx;
	NEED_INIT();
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 3020;
	return CUDA_SUCCESS;
}

static size_t limits[CU_LIMIT_MAX];

CUresult own_cuCtxSetLimit(CUlimit l, size_t v)
{
	NEED_INIT();
	if ((unsigned)l >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	limits[l] = v;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetLimit(size_t *v, CUlimit l)
{
	NEED_INIT();
	if (!v || (unsigned)l >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	static const size_t dflt[CU_LIMIT_MAX] = {[CU_LIMIT_STACK_SIZE] = 1024,
						  [CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
						  [CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20,
						  [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
						  [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64};
	*v = limits[l] ? limits[l] : dflt[l];
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetCacheConfig(CUfunc_cache *c)
{
	NEED_INIT();
	*c = CU_FUNC_CACHE_PREFER_NONE;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxSetCacheConfig(CUfunc_cache c)
{
	(void)c;
	NEED_INIT();
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetSharedMemConfig(CUsharedconfig *c)
{
	NEED_INIT();
	*c = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxSetSharedMemConfig(CUsharedconfig c)
{
	(void)c;
	NEED_INIT();
	return CUDA_SUCCESS;
}

CUresult own_cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	NEED_INIT();
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}

CUresult own_cuCtxResetPersistingL2Cache(void) { return own_ready(); }


/* The legacy names of the primary-context calls: same arguments. */
CUresult own_cuDevicePrimaryCtxRelease(CUdevice d) { return own_cuDevicePrimaryCtxRelease_v2(d); }
CUresult own_cuDevicePrimaryCtxReset(CUdevice d) { return own_cuDevicePrimaryCtxReset_v2(d); }
CUresult own_cuDevicePrimaryCtxSetFlags(CUdevice d, unsigned flags) { return own_cuDevicePrimaryCtxSetFlags_v2(d, flags); }

/* One device: no peers. */
CUresult own_cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
	(void)peer, (void)flags;
	return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
}

CUresult own_cuCtxDisablePeerAccess(CUcontext peer)
{
	(void)peer;
	return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

/* The profiler's start and stop: nothing to collect. */
CUresult own_cuProfilerStart(void) { return CUDA_SUCCESS; }
CUresult own_cuProfilerStop(void) { return CUDA_SUCCESS; }
CUresult own_cuProfilerInitialize(const char *config, const char *out, CUoutput_mode mode)
{
	(void)config, (void)out, (void)mode;
	return CUDA_SUCCESS;
}
