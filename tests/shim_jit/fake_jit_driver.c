/* A stand-in libcuda.so.1 for the shim's probe runtime (tests/shim/jit_cache.sh): a context, one
 * sm_90 device, map memory, module and library loads, and a JIT linker whose "cubin" names the
 * PTX it was made from. It records what the shim asked of it; the test program reads that
 * through the fake_* functions. Memory comes from fixed addresses, so that the instrumented PTX
 * (which holds map addresses) is the same in every run, as on a real driver with the shim's
 * fixed-address allocator. The VMM calls refuse (the allocator then uses cuMemAlloc).
 *
 * Knobs (environment): FAKE_LINK_FAIL=1 the linker fails with a ptxas-style log; FAKE_JIT_FAIL=1
 * cuModuleLoadDataEx fails on instrumented PTX the same way;
 * FAKE_SM=NN the device's compute capability (default 90); FAKE_DRIVER_VERSION (default 13000).
 * Types are spelled out (ABI-equal to cuda.h), as in fake_driver.c. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int CUresult;
#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define INVALID_PTX 218
#define NOT_SUPPORTED 801
#define FILE_NOT_FOUND 301

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

/* ---- what the test reads --------------------------------------------------------------- */

static int ctx_on = 1;
static unsigned links;              /* cuLinkComplete calls */
static int link_nopts;              /* options of the last cuLinkCreate */
static int link_opt[64];
static uint64_t link_val[64];
static char last_kind[16] = "none"; /* the last image loaded: ptx-instrumented, ptx, cubin */
static uint64_t last_hash;          /* FNV-1a of the last image loaded (the cubin's bytes) */
static unsigned last_nopts;         /* JIT options the last load got */
static const int *last_opts;
static void **last_vals;

void fake_set_context(int on) { ctx_on = on; }
unsigned fake_links(void) { return links; }
int fake_link_options(int *ids, uint64_t *vals, int max)
{
	for (int i = 0; i < link_nopts && i < max; i++) {
		ids[i] = link_opt[i];
		vals[i] = link_val[i];
	}
	return link_nopts;
}
const char *fake_last_kind(void) { return last_kind; }
uint64_t fake_last_hash(void) { return last_hash; }
unsigned fake_last_options(const int **opts, void ***vals)
{
	*opts = last_opts;
	*vals = last_vals;
	return last_nopts;
}

static uint64_t fnv(const void *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
	return h;
}

/* ---- the fake "cubin": an ELF header, then a line naming the PTX it came from ------------- */

#define CUBIN_HEAD 64
static const unsigned char elf_head[CUBIN_HEAD] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, [16] = 1, 0, 190,
						   0, 1, [52] = 64, 0, [58] = 64, 0};

static size_t image_size(const void *image)
{
	const unsigned char *p = image;
	if (!memcmp(p, elf_head, 4))
		return CUBIN_HEAD + strlen((const char *)p + CUBIN_HEAD) + 1;
	return strlen(image) + 1;
}

static void note_load(const void *image, unsigned n, const int *opts, void **vals)
{
	const char *p = image;
	if (!memcmp(p, elf_head, 4))
		snprintf(last_kind, sizeof(last_kind), "cubin");
	else if (strstr(p, "__gp_"))
		snprintf(last_kind, sizeof(last_kind), "ptx-instr");
	else
		snprintf(last_kind, sizeof(last_kind), "ptx");
	last_hash = fnv(image, image_size(image));
	last_nopts = n;
	last_opts = opts;
	last_vals = vals;
}

/* ---- driver entry points ------------------------------------------------------------------ */

CUresult cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }

/* The shim takes a library for a driver only when it has this; nothing here calls it. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
			     int *status)
{
	(void)version; (void)flags;
	*pfn = dlsym(RTLD_DEFAULT, symbol);
	if (status)
		*status = *pfn ? 0 : 1;
	return *pfn ? OK : 500;
}
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{ return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL); }
CUresult cuDriverGetVersion(int *v) { *v = env_int("FAKE_DRIVER_VERSION", 13000); return OK; }

CUresult cuGetErrorName(CUresult e, const char **s)
{
	switch (e) {
	case OK: *s = "CUDA_SUCCESS"; return OK;
	case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
	case NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; return OK;
	default: *s = "CUDA_ERROR_UNKNOWN"; return OK;
	}
}

#define CTX ((void *)0xc0c0)
CUresult cuCtxGetCurrent(void **c) { *c = ctx_on ? CTX : NULL; return OK; }
CUresult cuCtxGetDevice(int *d) { if (!ctx_on) return 201; *d = 0; return OK; }
CUresult cuCtxPushCurrent_v2(void *c) { (void)c; return OK; }
CUresult cuCtxPopCurrent_v2(void **c) { *c = CTX; return OK; }
CUresult cuCtxSynchronize(void) { return OK; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return i == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceCanAccessPeer(int *can, int a, int b) { (void)a; (void)b; *can = 0; return OK; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	int sm = env_int("FAKE_SM", 90);
	switch (attr) {
	case 16: *v = 4; return OK;            /* multiprocessors */
	case 75: *v = sm / 10; return OK;      /* compute capability major */
	case 76: *v = sm % 10; return OK;      /* minor */
	default: *v = 0; return OK;
	}
}

/* The VMM path of the fixed-address allocator: refused, so it falls back to cuMemAlloc. */
CUresult cuMemGetAllocationGranularity(size_t *g, const void *p, int o)
{ (void)p; (void)o; *g = 0; return NOT_SUPPORTED; }
CUresult cuMemAddressReserve(uint64_t *p, size_t n, size_t a, uint64_t at, unsigned long long f)
{ (void)p; (void)n; (void)a; (void)at; (void)f; return NOT_SUPPORTED; }
CUresult cuMemAddressFree(uint64_t p, size_t n) { (void)p; (void)n; return OK; }
CUresult cuMemCreate(void *h, size_t n, const void *prop, unsigned long long f)
{ (void)h; (void)n; (void)prop; (void)f; return NOT_SUPPORTED; }
CUresult cuMemRelease(uint64_t h) { (void)h; return OK; }
CUresult cuMemMap(uint64_t p, size_t n, size_t o, uint64_t h, unsigned long long f)
{ (void)p; (void)n; (void)o; (void)h; (void)f; return NOT_SUPPORTED; }
CUresult cuMemUnmap(uint64_t p, size_t n) { (void)p; (void)n; return OK; }
CUresult cuMemSetAccess(uint64_t p, size_t n, const void *d, size_t c)
{ (void)p; (void)n; (void)d; (void)c; return NOT_SUPPORTED; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { (void)p; (void)n; (void)f; return NOT_SUPPORTED; }
CUresult cuMemHostUnregister(void *p) { (void)p; return OK; }

/* Device and host memory: bump allocation in an arena mapped at a fixed address. */
#define ARENA_AT ((void *)0x5f0000000000ull)
#define ARENA_SIZE (64u << 20)
static char *arena;
static size_t arena_used;

static void *arena_alloc(size_t n)
{
	if (!arena) {
		arena = mmap(ARENA_AT, ARENA_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (arena == MAP_FAILED || arena != ARENA_AT) {
			fprintf(stderr, "fake_jit_driver: cannot map the arena at %p\n", ARENA_AT);
			exit(3);
		}
	}
	n = (n + 255) & ~(size_t)255;
	if (arena_used + n > ARENA_SIZE)
		return NULL;
	void *p = arena + arena_used;
	arena_used += n;
	return p;
}

CUresult cuMemAlloc_v2(uint64_t *d, size_t n)
{ void *p = arena_alloc(n); if (!p) return OUT_OF_MEMORY; *d = (uintptr_t)p; return OK; }
CUresult cuMemFree_v2(uint64_t d) { (void)d; return OK; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f)
{ (void)f; *p = arena_alloc(n); return *p ? OK : OUT_OF_MEMORY; }
CUresult cuMemFreeHost(void *p) { (void)p; return OK; }
CUresult cuMemHostGetDevicePointer_v2(uint64_t *d, void *h, unsigned f)
{ (void)f; *d = (uintptr_t)h; return OK; }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *s)
{ (void)s; memset((void *)(uintptr_t)d, v, n); return OK; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n)
{ memset((void *)(uintptr_t)d, v, n); return OK; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st)
{ (void)st; memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st)
{ (void)st; memcpy(d, (const void *)(uintptr_t)s, n); return OK; }
CUresult cuStreamCreate(void **s, unsigned f) { (void)f; *s = (void *)0x5757; return OK; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return OK; }
CUresult cuStreamSynchronize(void *s) { (void)s; return OK; }

/* Modules and libraries: handles are counters; no kernels. */
static uintptr_t next_handle = 0x1000;
/* FAKE_JIT_FAIL=1: the driver's own PTX JIT rejects instrumented PTX (text naming a __gp_
 * symbol), writing a ptxas-style log where the options ask for one; checks counts the loads of
 * instrumented PTX (the shim's compile checks and the loads that follow them). */
static unsigned checks;
unsigned fake_ptx_loads(void) { return checks; }

CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v)
{
	if (!image)
		return INVALID_VALUE;
	const char *text = image;
	if (text[0] != 0x7f && strstr(text, "__gp")) {
		checks++;
		const char *f = getenv("FAKE_JIT_FAIL");
		if (f && !strcmp(f, "1")) {
			for (unsigned i = 0; i + 1 < n; i++)
				if (o[i] == 5 && o[i + 1] == 6)   /* error log buffer, then its size */
					snprintf(v[i], (uintptr_t)v[i + 1], "ptxas fatal   : (C7600) "
						 "Register allocation failed with register count of "
						 "'7'. Compile the program with a higher register "
						 "target\nptxas fatal   : Ptx assembly aborted due to "
						 "errors\n");
			return INVALID_PTX;
		}
	}
	note_load(image, n, o, v);
	*m = (void *)++next_handle;
	return OK;
}
CUresult cuModuleLoadData(void **m, const void *image) { return cuModuleLoadDataEx(m, image, 0, NULL, NULL); }
CUresult cuModuleUnload(void *m) { (void)m; return OK; }
CUresult cuModuleGetFunctionCount(unsigned *n, void *m) { (void)m; *n = 0; return OK; }
CUresult cuModuleEnumerateFunctions(void **f, unsigned n, void *m) { (void)f; (void)n; (void)m; return OK; }
CUresult cuFuncLoad(void *f) { (void)f; return OK; }
CUresult cuLibraryLoadData(void **lib, const void *code, int *o, void **v, unsigned n, void *lo,
			   void **lv, unsigned ln)
{
	(void)lo; (void)lv; (void)ln;
	if (!code)
		return INVALID_VALUE;
	note_load(code, n, o, v);
	*lib = (void *)++next_handle;
	return OK;
}
CUresult cuLibraryUnload(void *l) { (void)l; return OK; }
CUresult cuLibraryGetKernelCount(unsigned *n, void *l) { (void)l; *n = 0; return OK; }
CUresult cuLibraryEnumerateKernels(void **k, unsigned n, void *l) { (void)k; (void)n; (void)l; return OK; }
CUresult cuKernelGetFunction(void **f, void *k) { *f = k; return OK; }

/* The JIT linker. */
struct link { char *ptx; int nopts; int libraries; char *error_log; size_t error_size; char cubin[CUBIN_HEAD + 64]; };

CUresult cuLinkCreate_v2(unsigned n, int *o, void **v, void **state)
{
	struct link *l = calloc(1, sizeof(*l));
	if (!l)
		return OUT_OF_MEMORY;
	link_nopts = (int)n;
	for (unsigned i = 0; i < n && i < 64; i++) {
		link_opt[i] = o[i];
		link_val[i] = (uintptr_t)v[i];
		if (o[i] == 5)          /* CU_JIT_ERROR_LOG_BUFFER */
			l->error_log = v[i];
		if (o[i] == 6)          /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */
			l->error_size = (uintptr_t)v[i];
	}
	*state = l;
	return OK;
}

CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
			  unsigned n, void *o, void **v)
{
	(void)name; (void)n; (void)o; (void)v;
	struct link *l = state;
	if (type != 1 || !data || !size || ((char *)data)[size - 1])   /* PTX, NUL included */
		return INVALID_VALUE;
	l->ptx = strdup(data);
	return l->ptx ? OK : OUT_OF_MEMORY;
}

/* A library input (CU_JIT_INPUT_LIBRARY = 4): the device runtime that a PTX calling into it
 * needs, as the real linker does; the file must be readable. */
CUresult cuLinkAddFile_v2(void *state, int type, const char *path, unsigned n, void *o, void **v)
{
	(void)n; (void)o; (void)v;
	struct link *l = state;
	FILE *f = type == 4 && path ? fopen(path, "rb") : NULL;
	if (!f)
		return type == 4 ? FILE_NOT_FOUND : INVALID_VALUE;
	fclose(f);
	l->libraries++;
	return OK;
}

CUresult cuLinkComplete(void *state, void **cubin, size_t *size)
{
	struct link *l = state;
	links++;
	const char *msg = NULL;
	if (l->ptx && strstr(l->ptx, "cudaGetParameterBuffer") && !l->libraries)
		msg = "ptxas fatal   : Unresolved extern function 'cudaGetParameterBuffer'\n";
	else if (getenv("FAKE_LINK_FAIL") && !strcmp(getenv("FAKE_LINK_FAIL"), "1"))
		msg = "ptxas fatal   : (C7600) Register allocation failed with register count of '7'. "
		      "Compile the program with a higher register target\n"
		      "ptxas fatal   : Ptx assembly aborted due to errors\n";
	else if (l->ptx && strstr(l->ptx, ".gpuprobe_test_fault"))
		msg = "ptxas application ptx input, line 9; fatal   : Parsing error near "
		      "'.gpuprobe_test_fault': syntax error\n"
		      "ptxas fatal   : Ptx assembly aborted due to errors\n";
	if (msg) {
		if (l->error_log && l->error_size)
			snprintf(l->error_log, l->error_size, "%s", msg);
		return INVALID_PTX;
	}
	memcpy(l->cubin, elf_head, CUBIN_HEAD);
	snprintf(l->cubin + CUBIN_HEAD, 64, "fake cubin of PTX %016llx",
		 (unsigned long long)fnv(l->ptx, strlen(l->ptx)));
	*cubin = l->cubin;
	*size = CUBIN_HEAD + strlen(l->cubin + CUBIN_HEAD) + 1;
	return OK;
}

CUresult cuLinkDestroy(void *state)
{
	struct link *l = state;
	free(l->ptx);
	free(l);
	return OK;
}
