/* A stand-in libcuda.so.1 for per-kernel instrumentation (tests/shim_lazy/lazy.sh): what the
 * shim's probe runtime needs to start (a context, one sm_90 device, memory at fixed addresses,
 * module loads), plus modules that know their kernels and module-scope variables, functions with
 * attributes, and launches that "run" a function: they print which module's code ran
 * (instrumented or original, and the kernels that module holds) and, for every variable address
 * the code names (the shim binds a split kernel's variables to the original module's addresses),
 * the variable and the 32-bit value there. The application writes variables with cuMemcpyHtoD.
 *
 * Knobs (environment): FAKE_JIT_FAIL=1 loads of instrumented PTX fail with a ptxas-style log;
 * FAKE_INST_MAX_THREADS (default 1024) and FAKE_INST_MAX_DYN (default: what was set) the
 * instrumented functions' limits; FAKE_INST_LAUNCH_FAIL=1 launches of instrumented functions
 * fail with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; FAKE_JIT_MS=N loads of instrumented PTX take N ms
 * outside the driver's lock and say how many ran at once; FAKE_DUMP=FILE the last instrumented
 * module loaded
 * is written there. Every load prints one line ("fake: load ...", with a hash of the text).
 * Types are spelled out (ABI-equal to cuda.h), as in tests/shim_jit/fake_jit_driver.c. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define INVALID_PTX 218
#define NOT_FOUND 500
#define LAUNCH_OUT_OF_RESOURCES 701
#define NOT_SUPPORTED 801

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

/* ---- memory: bump allocation in an arena at a fixed address ---------------------------------- */

#define ARENA_AT ((void *)0x5e0000000000ull)
#define ARENA_SIZE (64u << 20)
static char *arena;
static size_t arena_used;

static void *arena_alloc(size_t n)
{
	if (!arena) {
		arena = mmap(ARENA_AT, ARENA_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (arena == MAP_FAILED || arena != ARENA_AT) {
			fprintf(stderr, "fake_lazy_driver: cannot map the arena at %p\n", ARENA_AT);
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

/* ---- modules, variables, functions ----------------------------------------------------------- */

#define MAX_NAMES 2048   /* kernels and variables a module may have (tests load up to 1,002) */
struct var { char name[128]; uint64_t addr; };
struct module {
	int instrumented;                 /* the text names a __gp_ symbol */
	char *text;
	unsigned nkernels;
	char kernels[MAX_NAMES][128];
	unsigned nvars;
	struct var vars[MAX_NAMES];
};
struct function {
	struct module *mod;
	char name[128];
	int max_dyn;                      /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
};
static struct function functions[256];
static unsigned nfunctions;
static struct module *modules[256];
static unsigned nmodules;

/* The identifier after a directive word ("NAME(" or "NAME;" or "NAME[" or "NAME ="). */
static void ident_after(const char *p, char *out, size_t n)
{
	while (*p == ' ' || *p == '\t')
		p++;
	size_t i = 0;
	while (p[i] && !strchr(" \t(;[=\n", p[i]) && i + 1 < n) {
		out[i] = p[i];
		i++;
	}
	out[i] = 0;
}

/* Kernels (".entry NAME") and module-scope .global/.const variables (lines that start with
 * them, after an optional .visible; the last word before ';', '[' or '=' names them). */
static struct module *module_new(const char *text)
{
	struct module *m = calloc(1, sizeof(*m));
	m->text = strdup(text);
	m->instrumented = strstr(text, "__gp") != NULL;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, ".visible ", 9))
			p += 9;
		if (!strncmp(p, ".entry ", 7) && m->nkernels < MAX_NAMES)
			ident_after(p + 7, m->kernels[m->nkernels++], 128);
		if ((strncmp(p, ".global ", 8) && strncmp(p, ".const ", 7)) || m->nvars >= MAX_NAMES)
			continue;
		const char *end = p + strcspn(p, ";[=\n");
		const char *s = end;
		while (s > p && (s[-1] == ' ' || s[-1] == '\t'))
			s--;
		const char *b = s;
		while (b > p && b[-1] != ' ' && b[-1] != '\t')
			b--;
		struct var *v = &m->vars[m->nvars++];
		snprintf(v->name, sizeof(v->name), "%.*s", (int)(s - b), b);
		v->addr = (uintptr_t)arena_alloc(256);
	}
	modules[nmodules++] = m;
	return m;
}

/* Which variable of which original module an address falls in. */
static const char *var_at(uint64_t a)
{
	for (unsigned i = 0; i < nmodules; i++)
		for (unsigned j = 0; j < modules[i]->nvars; j++)
			if (a >= modules[i]->vars[j].addr && a < modules[i]->vars[j].addr + 256)
				return modules[i]->vars[j].name;
	return NULL;
}

static struct function *function_of(struct module *m, const char *name)
{
	for (unsigned i = 0; i < nfunctions; i++)
		if (functions[i].mod == m && !strcmp(functions[i].name, name))
			return &functions[i];
	for (unsigned i = 0; i < m->nkernels && nfunctions < 256; i++)
		if (!strcmp(m->kernels[i], name)) {
			struct function *f = &functions[nfunctions++];
			f->mod = m;
			snprintf(f->name, sizeof(f->name), "%s", name);
			f->max_dyn = 48 * 1024;
			return f;
		}
	return NULL;
}

/* ---- driver entry points --------------------------------------------------------------------- */

CUresult cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
			     int *status)
{
	(void)version; (void)flags;
	*pfn = dlsym(RTLD_DEFAULT, symbol);
	if (status)
		*status = *pfn ? 0 : 1;
	return *pfn ? OK : NOT_FOUND;
}
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{ return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL); }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuGetErrorName(CUresult e, const char **s)
{
	switch (e) {
	case OK: *s = "CUDA_SUCCESS"; return OK;
	case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
	case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
	case LAUNCH_OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; return OK;
	case NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; return OK;
	default: *s = "CUDA_ERROR_UNKNOWN"; return OK;
	}
}

#define CTX ((void *)0xc0c0)
static __thread int capture_mode;   /* cuThreadExchangeStreamCaptureMode's (0 global, 2 relaxed) */
/* The fake's tables: one lock, as a driver has; the JIT's time is spent outside it. */
static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;
static int jitting, jitting_max;
CUresult cuCtxGetCurrent(void **c) { *c = CTX; return OK; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return OK; }
CUresult cuCtxPushCurrent_v2(void *c) { (void)c; return OK; }
CUresult cuCtxPopCurrent_v2(void **c) { *c = CTX; return OK; }
CUresult cuCtxSynchronize(void) { return OK; }
CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{ int old = capture_mode; capture_mode = *mode; *mode = old; return OK; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return i == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceCanAccessPeer(int *can, int a, int b) { (void)a; (void)b; *can = 0; return OK; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 16: *v = 4; return OK;    /* multiprocessors */
	case 75: *v = 9; return OK;    /* compute capability 9.0 */
	case 76: *v = 0; return OK;
	default: *v = 0; return OK;
	}
}

/* The VMM path of the shim's fixed-address allocator: refused (it then uses cuMemAlloc). */
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
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n)
{ memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st)
{ (void)st; memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *d, uint64_t s, size_t n, void *st)
{ (void)st; memcpy(d, (const void *)(uintptr_t)s, n); return OK; }
CUresult cuStreamCreate(void **s, unsigned f) { (void)f; *s = (void *)0x5757; return OK; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return OK; }
CUresult cuStreamSynchronize(void *s) { (void)s; return OK; }
CUresult cuStreamQuery(void *s) { (void)s; return OK; }

/* Loads. */
static CUresult load(void **m, const void *image, unsigned n, int *o, void **v, const char *api)
{
	const char *text = image;
	/* FAKE_CUBIN_PTX=FILE (tests/jit_capture, tests/shim_lazy/rdc.sh): a cubin (ELF) or fatbin
	 * image is taken for the module FILE's PTX describes (its kernels and variables), and loads
	 * print their JIT options. */
	const char *cubin_ptx = getenv("FAKE_CUBIN_PTX");
	static char cubin_text[1 << 16];
	bool binary = text && (text[0] == 0x7f || !memcmp(text, "\x50\xed\x55\xba", 4));
	if (binary && cubin_ptx) {
		FILE *cf = fopen(cubin_ptx, "r");
		size_t got = cf ? fread(cubin_text, 1, sizeof(cubin_text) - 1, cf) : 0;
		if (cf)
			fclose(cf);
		cubin_text[got] = 0;
		printf("fake: a %s, taken for %s\n", text[0] == 0x7f ? "cubin" : "fatbin", cubin_ptx);
		text = cubin_text;
	} else if (cubin_ptx && text && !binary) {
		printf("fake: %s PTX with %u JIT options:", strstr(text, "__gp") ? "instrumented" : "plain", n);
		for (unsigned i = 0; i < n; i++)
			if (o[i] == 0 || o[i] == 7 || o[i] == 13)   /* max registers, -O, line info */
				printf(" %d=%lu", o[i], (unsigned long)(uintptr_t)v[i]);
		printf("\n");
	}
	if (!text || text[0] == 0x7f || !memcmp(text, "\x50\xed\x55\xba", 4))
		return INVALID_VALUE;
	if (strstr(text, "__gp") && getenv("FAKE_JIT_FAIL") && !strcmp(getenv("FAKE_JIT_FAIL"), "1")) {
		for (unsigned i = 0; i + 1 < n; i++)
			if (o[i] == 5 && o[i + 1] == 6)   /* error log buffer, then its size */
				snprintf(v[i], (uintptr_t)v[i + 1], "ptxas fatal   : (C7600) Register "
					 "allocation failed with register count of '7'. Compile "
					 "the program with a higher register target\n");
		printf("fake: load %s refused (instrumented PTX)\n", api);
		return INVALID_PTX;
	}
	int jit_ms = getenv("FAKE_JIT_MS") ? atoi(getenv("FAKE_JIT_MS")) : 0;
	if (jit_ms && strstr(text, "__gp")) {
		int now = __atomic_add_fetch(&jitting, 1, __ATOMIC_SEQ_CST), max;
		while ((max = __atomic_load_n(&jitting_max, __ATOMIC_SEQ_CST)) < now &&
		       !__atomic_compare_exchange_n(&jitting_max, &max, now, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
			;
		usleep((useconds_t)jit_ms * 1000);
		__atomic_sub_fetch(&jitting, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_lock(&big);
	struct module *mod = module_new(text);
	uint64_t h = 1469598103934665603ull;
	for (const char *p = text; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	printf("fake: load %s %s:", api, mod->instrumented ? "instrumented" : "original");
	for (unsigned i = 0; i < mod->nkernels; i++)
		printf(" %s", mod->kernels[i]);
	printf(" (%u variables; capture mode %d; text %016llx)\n", mod->nvars, capture_mode,
	       (unsigned long long)h);
	if (jit_ms && mod->instrumented)
		printf("fake: compiles of instrumented PTX so far: at most %d at once\n",
		       __atomic_load_n(&jitting_max, __ATOMIC_SEQ_CST));
	fflush(stdout);
	const char *dump = getenv("FAKE_DUMP");
	FILE *f = mod->instrumented && dump ? fopen(dump, "w") : NULL;
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	*m = mod;
	pthread_mutex_unlock(&big);
	return OK;
}
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v)
{ return load(m, image, n, o, v, "module"); }
CUresult cuModuleLoadData(void **m, const void *image) { return load(m, image, 0, NULL, NULL, "module"); }
CUresult cuModuleUnload(void *m)
{
	struct module *mod = m;
	printf("fake: unload %s module of %s\n", mod->instrumented ? "an instrumented" : "an original",
	       mod->nkernels ? mod->kernels[0] : "nothing");
	return OK;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
	pthread_mutex_lock(&big);
	struct function *fn = function_of(m, name);
	pthread_mutex_unlock(&big);
	*f = fn;
	return fn ? OK : NOT_FOUND;
}
CUresult cuModuleGetGlobal_v2(uint64_t *d, size_t *bytes, void *m, const char *name)
{
	struct module *mod = m;
	for (unsigned i = 0; i < mod->nvars; i++)
		if (!strcmp(mod->vars[i].name, name)) {
			if (d)
				*d = mod->vars[i].addr;
			if (bytes)
				*bytes = 256;
			return OK;
		}
	return NOT_FOUND;
}
CUresult cuModuleGetFunctionCount(unsigned *n, void *m) { *n = ((struct module *)m)->nkernels; return OK; }
CUresult cuModuleEnumerateFunctions(void **f, unsigned n, void *m)
{
	struct module *mod = m;
	for (unsigned i = 0; i < n && i < mod->nkernels; i++)
		f[i] = function_of(mod, mod->kernels[i]);
	return OK;
}
CUresult cuFuncLoad(void *f) { (void)f; return OK; }
CUresult cuFuncGetName(const char **name, void *f) { *name = ((struct function *)f)->name; return OK; }

/* Libraries: one module each (one context); a kernel handle is the function. */
CUresult cuLibraryLoadData(void **lib, const void *code, int *o, void **v, unsigned n, void *lo,
			   void **lv, unsigned ln)
{ (void)lo; (void)lv; (void)ln; return load(lib, code, n, o, v, "library"); }
CUresult cuLibraryUnload(void *l) { return cuModuleUnload(l); }
CUresult cuLibraryGetKernel(void **k, void *l, const char *name) { return cuModuleGetFunction(k, l, name); }
CUresult cuLibraryGetGlobal(uint64_t *d, size_t *bytes, void *l, const char *name)
{ return cuModuleGetGlobal_v2(d, bytes, l, name); }
CUresult cuLibraryGetKernelCount(unsigned *n, void *l) { return cuModuleGetFunctionCount(n, l); }
CUresult cuLibraryEnumerateKernels(void **k, unsigned n, void *l) { return cuModuleEnumerateFunctions(k, n, l); }
CUresult cuKernelGetFunction(void **f, void *k) { *f = k; return OK; }
CUresult cuKernelGetName(const char **name, void *k) { return cuFuncGetName(name, k); }

/* Attributes: the original's registers and threads are fixed; the instrumented one's follow the
 * knobs. */
CUresult cuFuncGetAttribute(int *v, int attr, void *f)
{
	struct function *fn = f;
	int inst = fn->mod->instrumented;
	switch (attr) {
	case 0: *v = inst ? env_int("FAKE_INST_MAX_THREADS", 1024) : 1024; return OK;
	case 1: *v = 0; return OK;
	case 3: *v = inst ? 512 : 0; return OK;
	case 4: *v = inst ? 64 : 32; return OK;
	case 8: *v = fn->max_dyn; return OK;
	default: *v = 0; return OK;
	}
}
CUresult cuFuncSetAttribute(void *f, int attr, int v)
{
	struct function *fn = f;
	if (attr == 8) {
		int cap = fn->mod->instrumented ? env_int("FAKE_INST_MAX_DYN", 1 << 30) : 1 << 30;
		fn->max_dyn = v < cap ? v : cap;
	}
	printf("fake: set attribute %d of %s %s to %d\n", attr,
	       fn->mod->instrumented ? "instrumented" : "original", fn->name, v);
	return OK;
}
CUresult cuFuncSetCacheConfig(void *f, int c) { (void)f; (void)c; return OK; }

/* A launch "runs" the function: which code ran, and what it reads of the shared variables (the
 * addresses a split module was bound to, %gp_bind registers set from immediates or loaded from
 * the module's __gp_bind table). */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned smem, void *stream, void **params, void **extra)
{
	(void)gx; (void)gy; (void)gz; (void)stream; (void)params; (void)extra;
	struct function *fn = f;
	struct module *m = fn->mod;
	if (m->instrumented && getenv("FAKE_INST_LAUNCH_FAIL") &&
	    !strcmp(getenv("FAKE_INST_LAUNCH_FAIL"), "1")) {
		printf("fake: launch %s instrumented refused (out of resources)\n", fn->name);
		return LAUNCH_OUT_OF_RESOURCES;
	}
	/* One line per launch, whole (launches may come from several threads). */
	char line[4096];
	size_t o = (size_t)snprintf(line, sizeof(line), "fake: launch %s %s, block %u, %u bytes "
				    "dynamic shared;", fn->name,
				    m->instrumented ? "instrumented" : "original", bx * by * bz, smem);
	pthread_mutex_lock(&big);
	for (const char *p = m->text; (p = strstr(p, "mov.u64")) && o < sizeof(line) - 64; p += 7) {
		const char *q = strchr(p, ',');
		if (!q)
			break;
		uint64_t a = strtoull(q + 1, NULL, 0);
		const char *var = var_at(a);
		if (var)
			o += (size_t)snprintf(line + o, sizeof(line) - o, " reads %s = %u", var,
					      *(const uint32_t *)(uintptr_t)a);
	}
	/* ptx_split_bind_table: addresses loaded from the module's table (the shim filled it) */
	uint64_t table = 0;
	for (unsigned i = 0; i < m->nvars; i++)
		if (!strcmp(m->vars[i].name, "__gp_bind"))
			table = m->vars[i].addr;
	for (const char *p = m->text; table && (p = strstr(p, "[__gp_bind")) && o < sizeof(line) - 64;
	     p += 10) {
		if (p[10] != ']' && p[10] != '+')
			continue;   /* the declaration */
		uint64_t off = p[10] == '+' ? strtoull(p + 11, NULL, 0) : 0;
		uint64_t a = *(const uint64_t *)(uintptr_t)(table + off);
		const char *var = var_at(a);
		if (var)
			o += (size_t)snprintf(line + o, sizeof(line) - o, " reads %s = %u", var,
					      *(const uint32_t *)(uintptr_t)a);
	}
	printf("%s\n", line);
	fflush(stdout);
	pthread_mutex_unlock(&big);
	return OK;
}
