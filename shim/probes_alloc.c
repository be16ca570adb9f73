/* The map allocator of the probe runtime over the real driver (maps/maps.h), and copies that
 * never wait for the application: device-to-host reads go through a non-blocking stream of our
 * own. Every call makes the application's context current for its duration (push/pop), so the
 * collector thread and any application thread may call it.
 *
 * Map memory sits at the same addresses in every run. The lowering writes each map's device
 * address into the instrumented PTX as an immediate, so driver-chosen addresses made the PTX
 * differ from run to run and the driver's JIT cache never hit (bench/RESULTS.md: the
 * memory-counter probe's first launch took 1645 ms instead of about 230 ms). So:
 * - device memory is one virtual range reserved at a fixed address (GPUPROBE_MAP_VA, default
 *   0x600000000000), backed chunk by chunk (cuMemCreate/cuMemMap, the allocation granularity,
 *   usually 2 MiB) as maps are created; maps are cut from it with a bump pointer, 256 bytes
 *   apart at least, so twenty small maps share one chunk;
 * - host-mapped memory (rings, host-placed maps) is mmap'd at fixed addresses 1 TiB above it,
 *   page by page, and registered with the driver; the device sees it at the same address when
 *   the device can use host pointers for registered memory.
 * The probe objects make the same allocations in the same order every run, so the addresses, and
 * the PTX, repeat. The driver treats the address as a hint: whenever a step is refused, the
 * allocator falls back to cuMemAlloc / cuMemHostAlloc and says why once (GPUPROBE_LOG=1).
 * Correctness never depends on the hint: the maps work wherever they are. */
#include "common/env.h"
#include "shim/probes_internal.h"
#include "shim/capture.h"
#include "shim/fault.h"
#include "shim/log.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define SUB_ALIGN 256u                       /* every map starts 256-byte aligned */
#define HOST_VA_ABOVE 0x10000000000ull       /* host arena: 1 TiB above the device range */
#define HOST_ARENA_BYTES (64ull << 30)

/* One allocation cut from an arena, in address order (the bump pointer appends). */
struct block {
	uint64_t off, size;
	bool live;
};

/* A piece of physical memory mapped into the device range. */
struct chunk {
	uint64_t off, size;
	CUmemGenericAllocationHandle h;
};

struct arena {
	bool on;                 /* fixed placement still in use for this kind */
	uint64_t base;           /* reserved address (device) or hint (host); 0: not reserved */
	uint64_t size;           /* bytes of address space */
	uint64_t top;            /* bump offset */
	struct block *blocks;
	size_t nblocks, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext alloc_ctx;
static CUstream alloc_stream;
static CUdevice alloc_dev;
static size_t gran;            /* device allocation granularity */
static size_t page;            /* host page size */
static uint64_t va_hint;       /* where the device range goes */
static struct arena dev_arena, host_arena;
static struct chunk *chunks;
static size_t nchunks, chunks_cap;
static uint64_t dev_mapped;    /* bytes of dev_arena backed by chunks */
static bool fallback_said;
/* Who may touch the device range: the context's device, and every device that can reach its
 * memory as a peer (an instrumented kernel on another GPU of the application finds the maps
 * there; cuCtxEnablePeerAccess does not open memory made by cuMemCreate). */
#define MAX_ACCESS 16
static CUmemAccessDesc dev_access[MAX_ACCESS];
static size_t naccess;

static void dev_free(void *u, uint64_t d);

/* Every call of ours runs in the maps' context with the thread's stream-capture mode relaxed
 * (capture.h): set-up at a launch inside an application's global-mode capture, the copier
 * thread and host probes during one, must neither fail nor invalidate it. Nested push/pop
 * pairs keep their modes on a short per-thread stack (deeper ones find the mode relaxed). */
#define RELAX_DEPTH 8
static __thread struct shim_relaxed relaxed[RELAX_DEPTH];
static __thread unsigned relax_depth;

static int push(void)
{
	struct shim_relaxed r;
	shim_relax(&r);
	if (SHIM_REAL(cuCtxPushCurrent_v2)(alloc_ctx) != CUDA_SUCCESS) {
		shim_unrelax(&r);
		return -EIO;
	}
	if (relax_depth < RELAX_DEPTH)
		relaxed[relax_depth] = r;
	relax_depth++;
	return 0;
}

static void pop(void)
{
	CUcontext c;
	SHIM_REAL(cuCtxPopCurrent_v2)(&c);
	if (relax_depth && --relax_depth < RELAX_DEPTH)
		shim_unrelax(&relaxed[relax_depth]);
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Fixed placement is off for one kind of memory from now on; the first time, say why. */
static void fall_back(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fall_back(struct arena *a, const char *fmt, ...)
{
	a->on = false;
	if (fallback_said)
		return;
	fallback_said = true;
	char why[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	shim_log("probes: map memory at driver-chosen addresses (%s); instrumented modules will "
		 "not hit the JIT cache", why);
}

/* ---- arenas: the bump pointer and its blocks ------------------------------------------------ */

static int arena_push_block(struct arena *a, uint64_t off, uint64_t size)
{
	if (a->nblocks == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		struct block *b = realloc(a->blocks, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		a->blocks = b;
		a->cap = cap;
	}
	a->blocks[a->nblocks++] = (struct block){.off = off, .size = size, .live = true};
	a->top = off + size;
	return 0;
}

/* Mark the block at off free; the bump pointer comes back over free blocks at the top, so a map
 * freed and made again gets its address back. Returns the block's size, 0 when unknown. */
static uint64_t arena_free_block(struct arena *a, uint64_t off)
{
	uint64_t size = 0;
	for (size_t i = a->nblocks; i-- > 0;)
		if (a->blocks[i].live && a->blocks[i].off == off) {
			a->blocks[i].live = false;
			size = a->blocks[i].size;
			break;
		}
	while (a->nblocks && !a->blocks[a->nblocks - 1].live)
		a->top = a->blocks[--a->nblocks].off;
	if (!a->nblocks)
		a->top = 0;
	return size;
}

static bool in_arena(const struct arena *a, uint64_t addr)
{
	return a->base && addr >= a->base && addr < a->base + a->size;
}

/* ---- the device range ------------------------------------------------------------------- */

static CUmemAllocationProp dev_prop(void)
{
	return (CUmemAllocationProp){
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = alloc_dev}};
}

/* Reserve the device range at the hint. Called with the context pushed. */
static int dev_reserve(void)
{
	CUdeviceptr p = 0;
	CUresult r = SHIM_REAL(cuMemAddressReserve)(&p, dev_arena.size, gran, (CUdeviceptr)va_hint, 0);
	if (r != CUDA_SUCCESS) {
		fall_back(&dev_arena, "cuMemAddressReserve at %#" PRIx64 ": %s", va_hint, shim_err_name(r));
		return -1;
	}
	if ((uint64_t)p != va_hint) {
		SHIM_REAL(cuMemAddressFree)(p, dev_arena.size);
		fall_back(&dev_arena, "the driver reserved %#llx instead of the hint %#" PRIx64,
			  (unsigned long long)p, va_hint);
		return -1;
	}
	dev_arena.base = va_hint;
	return 0;
}

/* Unmap and release every chunk and give the range back. Called with the context pushed. */
static void dev_release(void)
{
	for (size_t i = nchunks; i-- > 0;) {
		SHIM_REAL(cuMemUnmap)((CUdeviceptr)(dev_arena.base + chunks[i].off), chunks[i].size);
		SHIM_REAL(cuMemRelease)(chunks[i].h);
	}
	nchunks = 0;
	dev_mapped = 0;
	if (dev_arena.base)
		SHIM_REAL(cuMemAddressFree)((CUdeviceptr)dev_arena.base, dev_arena.size);
	dev_arena.base = 0;
	dev_arena.top = 0;
	dev_arena.nblocks = 0;
}

/* Back the range up to `end` bytes with one more chunk. Called with the context pushed. */
static int dev_grow(uint64_t end)
{
	if (end <= dev_mapped)
		return 0;
	if (nchunks == chunks_cap) {
		size_t cap = chunks_cap ? chunks_cap * 2 : 16;
		struct chunk *c = realloc(chunks, cap * sizeof(*c));
		if (!c) {
			fall_back(&dev_arena, "out of memory");
			return -1;
		}
		chunks = c;
		chunks_cap = cap;
	}
	uint64_t size = round_up(end - dev_mapped, gran);
	CUdeviceptr at = (CUdeviceptr)(dev_arena.base + dev_mapped);
	CUmemAllocationProp prop = dev_prop();
	CUmemGenericAllocationHandle h = 0;
	const char *step = "cuMemCreate";
	CUresult r = SHIM_REAL(cuMemCreate)(&h, size, &prop, 0);
	if (r == CUDA_SUCCESS) {
		step = "cuMemMap";
		r = SHIM_REAL(cuMemMap)(at, size, 0, h, 0);
		if (r != CUDA_SUCCESS)
			SHIM_REAL(cuMemRelease)(h);
	}
	if (r == CUDA_SUCCESS) {
		step = "cuMemSetAccess";
		r = SHIM_REAL(cuMemSetAccess)(at, size, dev_access, naccess);
		if (r != CUDA_SUCCESS && naccess > 1) {
			/* A peer refused: the context's own device is what the maps need. */
			shim_log("probes: map memory is not open to the application's other GPUs "
				 "(cuMemSetAccess: %s)", shim_err_name(r));
			naccess = 1;
			r = SHIM_REAL(cuMemSetAccess)(at, size, dev_access, naccess);
		}
		if (r != CUDA_SUCCESS) {
			SHIM_REAL(cuMemUnmap)(at, size);
			SHIM_REAL(cuMemRelease)(h);
		}
	}
	if (r != CUDA_SUCCESS) {
		fall_back(&dev_arena, "%s of %" PRIu64 " bytes at %#llx: %s", step, size,
			  (unsigned long long)at, shim_err_name(r));
		return -1;
	}
	chunks[nchunks++] = (struct chunk){.off = dev_mapped, .size = size, .h = h};
	dev_mapped += size;
	return 0;
}

/* n bytes of the fixed range, or 0 (fixed placement is off: use the driver's allocator).
 * Called with the lock held and the context pushed. */
static uint64_t dev_fixed(size_t n)
{
	if (!dev_arena.on || (!dev_arena.base && dev_reserve()))
		return 0;
	uint64_t off = round_up(dev_arena.top, SUB_ALIGN);
	if (n > dev_arena.size || off > dev_arena.size - n) {
		fall_back(&dev_arena, "the fixed range of %" PRIu64 " MiB is full",
			  dev_arena.size >> 20);
		return 0;
	}
	if (dev_grow(off + n))
		return 0;
	if (arena_push_block(&dev_arena, off, n)) {
		fall_back(&dev_arena, "out of memory");
		return 0;
	}
	return dev_arena.base + off;
}

static int dev_alloc(void *u, size_t n, uint64_t *d)
{
	(void)u;
	*d = 0;
	if (shim_fault(SHIM_FAULT_DESCRIPTOR))
		return -ENOMEM;   /* the first allocation of a map set is a map's descriptor */
	if (push())
		return -EIO;
	pthread_mutex_lock(&lock);
	CUdeviceptr p = (CUdeviceptr)dev_fixed(n);
	pthread_mutex_unlock(&lock);
	CUresult r = CUDA_SUCCESS;
	bool fixed = p != 0;
	if (!fixed)
		r = SHIM_REAL(cuMemAlloc_v2)(&p, n);
	/* Zero it on our stream: memory given back and cut again holds the old map's bytes. */
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuMemsetD8Async)(p, 0, n, alloc_stream);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamSynchronize)(alloc_stream);
	pop();
	if (r != CUDA_SUCCESS && p) {
		dev_free(NULL, p);
		p = 0;
	}
	*d = p;
	return r == CUDA_SUCCESS ? 0 : -ENOMEM;
}

static void dev_free(void *u, uint64_t d)
{
	(void)u;
	if (push())
		return;
	pthread_mutex_lock(&lock);
	if (in_arena(&dev_arena, d)) {
		arena_free_block(&dev_arena, d - dev_arena.base);
		/* The last map is gone (teardown): physical memory and the range go back too. */
		if (!dev_arena.nblocks)
			dev_release();
	} else {
		SHIM_REAL(cuMemFree_v2)((CUdeviceptr)d);
	}
	pthread_mutex_unlock(&lock);
	pop();
}

/* ---- host-mapped memory ----------------------------------------------------------------- */

/* n bytes of pinned host memory at the next fixed address, registered for the device, or NULL.
 * Called with the lock held and the context pushed. */
static void *host_fixed(size_t n)
{
	if (!host_arena.on)
		return NULL;
	uint64_t off = host_arena.top, size = round_up(n, page);
	if (size > host_arena.size || off > host_arena.size - size) {
		fall_back(&host_arena, "the fixed host range of %" PRIu64 " MiB is full",
			  host_arena.size >> 20);
		return NULL;
	}
	void *want = (void *)(uintptr_t)(host_arena.base + off);
	void *p = mmap(want, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		fall_back(&host_arena, "mmap at %p: %s", want, strerror(errno));
		return NULL;
	}
	if (p != want) {   /* a kernel before 4.17 takes MAP_FIXED_NOREPLACE as a hint */
		munmap(p, size);
		fall_back(&host_arena, "mmap gave %p instead of %p", p, want);
		return NULL;
	}
	/* A forked child has no use for it (CUDA does not cross fork) and would find the
	 * address taken when it sets up probes of its own. */
	madvise(p, size, MADV_DONTFORK);
	CUresult r = SHIM_REAL(cuMemHostRegister_v2)(
		p, size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
	if (r != CUDA_SUCCESS) {
		munmap(p, size);
		fall_back(&host_arena, "cuMemHostRegister at %p: %s", p, shim_err_name(r));
		return NULL;
	}
	if (arena_push_block(&host_arena, off, size)) {
		SHIM_REAL(cuMemHostUnregister)(p);
		munmap(p, size);
		fall_back(&host_arena, "out of memory");
		return NULL;
	}
	return p;
}

static int host_alloc(void *u, size_t n, void **h)
{
	(void)u;
	if (push())
		return -EIO;
	pthread_mutex_lock(&lock);
	*h = host_fixed(n);
	pthread_mutex_unlock(&lock);
	CUresult r = CUDA_SUCCESS;
	if (!*h)
		r = SHIM_REAL(cuMemHostAlloc)(h, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
	pop();
	return r == CUDA_SUCCESS ? 0 : -ENOMEM;
}

/* Unregister and unmap one fixed host block. Called with the context pushed. */
static void host_unmap(void *h, uint64_t size)
{
	SHIM_REAL(cuMemHostUnregister)(h);
	munmap(h, size);
}

static void host_free(void *u, void *h)
{
	(void)u;
	if (push())
		return;
	pthread_mutex_lock(&lock);
	uint64_t a = (uint64_t)(uintptr_t)h;
	if (in_arena(&host_arena, a)) {
		uint64_t size = arena_free_block(&host_arena, a - host_arena.base);
		if (size)
			host_unmap(h, size);
	} else {
		SHIM_REAL(cuMemFreeHost)(h);
	}
	pthread_mutex_unlock(&lock);
	pop();
}

static int host_dev_ptr(void *u, void *h, uint64_t *d)
{
	(void)u;
	if (push())
		return -EIO;
	CUdeviceptr p = 0;
	CUresult r = SHIM_REAL(cuMemHostGetDevicePointer_v2)(&p, h, 0);
	pop();
	*d = p;
	return r == CUDA_SUCCESS ? 0 : -EINVAL;
}

/* ---- copies ----------------------------------------------------------------------------- */

static int copy_to_dev(void *u, uint64_t d, const void *s, size_t n)
{
	(void)u;
	if (push())
		return -EIO;
	CUresult r = SHIM_REAL(cuMemcpyHtoDAsync_v2)((CUdeviceptr)d, s, n, alloc_stream);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamSynchronize)(alloc_stream);
	pop();
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

/* shim/own_memory.c's, where the own driver is linked in (tests link this file without it) */
extern CUresult own_copy_after_trap(uint64_t dst, uint64_t src, size_t n) __attribute__((weak));

static int copy_from_dev(void *u, void *d, uint64_t s, size_t n)
{
	(void)u;
	if (push())
		return -EIO;
	CUresult r = SHIM_REAL(cuMemcpyDtoHAsync_v2)(d, (CUdeviceptr)s, n, alloc_stream);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuStreamSynchronize)(alloc_stream);
	/* On gpuprobe's own driver a kernel's failed assert or trap makes the context unusable as
	 * CUDA does, but its memory is still there: the maps are read all the same (on a GPU the
	 * driver has let go of it) */
	if ((r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_ILLEGAL_INSTRUCTION) && own_copy_after_trap)
		r = own_copy_after_trap((uint64_t)(uintptr_t)d, s, n);
	pop();
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

/* ---- set-up and teardown ---------------------------------------------------------------- */

static int attr(CUdevice_attribute a, int *v)
{
	*v = 0;
	return SHIM_REAL(cuDeviceGetAttribute)(v, a, alloc_dev) == CUDA_SUCCESS ? 0 : -1;
}

/* The context's device first, then its peers. */
static void access_init(void)
{
	naccess = 0;
	dev_access[naccess++] = (CUmemAccessDesc){
		.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = alloc_dev},
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	int n = 0;
	if (SHIM_REAL(cuDeviceGetCount)(&n) != CUDA_SUCCESS)
		return;
	for (int d = 0; d < n && naccess < MAX_ACCESS; d++) {
		int can = 0;
		if (d != alloc_dev &&
		    SHIM_REAL(cuDeviceCanAccessPeer)(&can, (CUdevice)d, alloc_dev) == CUDA_SUCCESS && can)
			dev_access[naccess++] = (CUmemAccessDesc){
				.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = d},
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	}
}

/* Decide where map memory goes. Called with the context pushed. */
static void placement_init(void)
{
	dev_arena = (struct arena){.on = true, .size = GP_MAP_VA_BYTES};
	host_arena = (struct arena){.on = true, .size = HOST_ARENA_BYTES};
	nchunks = dev_mapped = 0;
	fallback_said = false;
	long pg = sysconf(_SC_PAGESIZE);
	page = pg > 0 ? (size_t)pg : 4096;
	CUmemAllocationProp prop = dev_prop();
	int vmm = 0, hostptr = 0;
	gran = 0;
	if (attr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &vmm) || vmm != 1) {
		fall_back(&dev_arena, "the device has no virtual memory management");
	} else if (SHIM_REAL(cuMemGetAllocationGranularity)(&gran, &prop,
							     CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
			   CUDA_SUCCESS || !gran || (gran & (gran - 1))) {
		fall_back(&dev_arena, "no allocation granularity");
	}
	/* Checked by the environment table (common/env.c): 2 MiB-aligned, both ranges inside user
	 * space (no wrap); a bad value has had its one line there. */
	const char *env = gp_env_str(GP_VAR_MAP_VA);
	va_hint = GP_MAP_VA_DEFAULT;
	if (env) {
		uint64_t v = 0;
		if (gp_env_uint_get(GP_VAR_MAP_VA, &v) < 0) {
			v = 0;
			fall_back(&dev_arena, "GPUPROBE_MAP_VA=%s is not a 2 MiB-aligned address", env);
			host_arena.on = false;
		} else if (!v) {
			fall_back(&dev_arena, "GPUPROBE_MAP_VA=0");
			host_arena.on = false;
		}
		va_hint = v;
	}
	if (dev_arena.on && va_hint % gran)
		fall_back(&dev_arena, "GPUPROBE_MAP_VA=%#" PRIx64 " is not a multiple of the "
			  "granularity %zu", va_hint, gran);
	if (dev_arena.on) {
		access_init();
		dev_reserve();
	}
	if (host_arena.on && (attr(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
				   &hostptr) || hostptr != 1))
		fall_back(&host_arena, "the device does not see registered host memory at its host "
			  "address");
	host_arena.base = host_arena.on ? va_hint + HOST_VA_ABOVE : 0;
	if (dev_arena.on && host_arena.on)
		shim_log("probes: map memory at fixed addresses (device %#" PRIx64 ", host %#" PRIx64
			 ")", dev_arena.base, host_arena.base);
}

static char init_why[200];

const char *probes_alloc_why(void)
{
	return init_why;
}

int probes_alloc_init(struct gp_map_allocator *a, CUcontext ctx, unsigned *device_sm)
{
	alloc_ctx = ctx;
	init_why[0] = 0;
	if (push()) {
		snprintf(init_why, sizeof(init_why), "the application's context cannot be made current");
		alloc_ctx = NULL;
		return -EIO;
	}
	int nsm = 0, major = 0, minor = 0;
	const char *step = "cuCtxGetDevice";
	CUresult r = SHIM_REAL(cuCtxGetDevice)(&alloc_dev);
	if (r == CUDA_SUCCESS) {
		step = "cuDeviceGetAttribute";
		r = SHIM_REAL(cuDeviceGetAttribute)(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, alloc_dev);
	}
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, alloc_dev);
	if (r == CUDA_SUCCESS)
		r = SHIM_REAL(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, alloc_dev);
	if (r == CUDA_SUCCESS) {
		/* GPUPROBE_TEST_FAULT=capture: refused as inside a capture, without the call. */
		step = "cuStreamCreate";
		r = shim_fault(SHIM_FAULT_CAPTURE)
			? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
			: SHIM_REAL(cuStreamCreate)(&alloc_stream, CU_STREAM_NON_BLOCKING);
	}
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&lock);
		placement_init();
		pthread_mutex_unlock(&lock);
	}
	pop();
	if (r != CUDA_SUCCESS)
		snprintf(init_why, sizeof(init_why), "%s: %s%s", step, shim_err_name(r),
			 shim_fault(SHIM_FAULT_CAPTURE) ? " (GPUPROBE_TEST_FAULT=capture)" : "");
	else if (shim_fault(SHIM_FAULT_MEMORY))
		snprintf(init_why, sizeof(init_why), "GPUPROBE_TEST_FAULT=memory");
	if (init_why[0]) {
		/* Nothing stays half made: the stream and the address range go back. */
		probes_alloc_fini();
		return -EIO;
	}
	*device_sm = (unsigned)(major * 10 + minor);
	*a = (struct gp_map_allocator){
		.nsms = (unsigned)nsm, .dev_alloc = dev_alloc, .dev_free = dev_free,
		.host_alloc = host_alloc, .host_free = host_free, .host_dev_ptr = host_dev_ptr,
		.copy_to_dev = copy_to_dev, .copy_from_dev = copy_from_dev};
	return 0;
}

void probes_alloc_fini(void)
{
	if (!alloc_ctx || push())
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < host_arena.nblocks; i++)
		if (host_arena.blocks[i].live)
			host_unmap((void *)(uintptr_t)(host_arena.base + host_arena.blocks[i].off),
				   host_arena.blocks[i].size);
	host_arena.nblocks = 0;
	host_arena.top = 0;
	dev_release();
	free(dev_arena.blocks);
	free(host_arena.blocks);
	free(chunks);
	dev_arena.blocks = host_arena.blocks = NULL;
	dev_arena.cap = host_arena.cap = 0;
	chunks = NULL;
	chunks_cap = 0;
	if (alloc_stream)
		SHIM_REAL(cuStreamDestroy_v2)(alloc_stream);
	alloc_stream = NULL;
	pthread_mutex_unlock(&lock);
	pop();
	alloc_ctx = NULL;
}
