/* A stand-in for NVIDIA's libcuda.so.1, so that the shim's forwarding, cuGetProcAddress mapping
 * and interception can be tested without a GPU. It exports a handful of driver entry points
 * (with made-up but recognisable results) and counts every call; the tests read the counts
 * through fake_calls(). Types are spelled out here (ABI-equal to cuda.h) because cuda.h's
 * macros would rename the very names this file must define. */
#include "fake_gpu.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OK 0
#define NOT_FOUND 500
#define INVALID_VALUE 1

enum { C_INIT, C_MEMCPY_V2, C_MEMCPY_PTDS, C_LAUNCH, C_LAUNCH_PTSZ, C_MODLOAD, C_GETFUNC,
       C_LIBLOAD, C_GETKERNEL, C_KERNFUNC, C_GRAPHNODE, C_MAX };
static unsigned long calls[C_MAX];

static void count(int c) { __atomic_add_fetch(&calls[c], 1, __ATOMIC_RELAXED); }

unsigned long fake_calls(int c) { return c >= 0 && c < C_MAX ? calls[c] : 0; }

/* An entry point the driver hands out through cuGetProcAddress without exporting it. */
static CUresult hidden_entry(void) { return 42; }
void *fake_hidden_entry(void) { return (void *)hidden_entry; }

static const void *export_table[4] = {(void *)1, (void *)2, (void *)3, (void *)4};
void *fake_export_table(void) { return export_table; }

CUresult cuInit(unsigned flags) { count(C_INIT); return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }

/* Counted, not done (the test passes made-up pointers); still a legacy-stream operation. */
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n)
{ (void)dst; (void)src; (void)n; count(C_MEMCPY_V2); return fake_gpu_legacy("cuMemcpyHtoD"); }
CUresult cuMemcpyHtoD_v2_ptds(unsigned long long dst, const void *src, size_t n)
{ (void)dst; (void)src; (void)n; count(C_MEMCPY_PTDS); return OK; }

/* A launch with 11 arguments (5 on the stack): checks they all arrive intact. */
static CUresult check_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shmem, void *stream, void **params,
			     void **extra)
{
	if (!f || gx != 1 || gy != 2 || gz != 3 || bx != 4 || by != 5 || bz != 6 || shmem != 7 ||
	    stream != (void *)8 || params != (void **)9 || extra != (void **)10)
		return INVALID_VALUE;
	return OK;
}
/* A kernel that fake_gpu.c runs, or the made-up arguments above. */
static CUresult launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
	int rc = fake_gpu_launch((uintptr_t)f, g, b, stream, params);
	return rc >= 0 ? rc : check_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{ count(C_LAUNCH); return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra); }
CUresult cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shmem, void *stream, void **params,
			     void **extra)
{ count(C_LAUNCH_PTSZ); return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra); }

struct launch_config { unsigned g[3], b[3], shmem; void *stream; void *attrs; unsigned nattrs; };
CUresult cuLaunchKernelEx(const struct launch_config *c, void *f, void **params, void **extra)
{ count(C_LAUNCH); return c && f && !params && !extra ? OK : INVALID_VALUE; }
CUresult cuLaunchCooperativeKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					unsigned by, unsigned bz, unsigned shmem, void *stream,
					void **params)
{ count(C_LAUNCH_PTSZ); return check_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, (void **)10); }

/* Handles are made-up pointers: module 0x1000+n, library 0x3000+n, function 0x200000+...,
 * kernel 0x400000+..., function of a kernel 0x500000+... (from the module and the name). */
static uintptr_t next_module, next_library;
static uintptr_t name_hash(const char *name);

CUresult cuModuleLoadData(void **mod, const void *image)
{
	count(C_MODLOAD);
	if (!image)
		return INVALID_VALUE;
	int u = fake_gpu_unsafe("cuModuleLoadData");
	if (u)
		return u;
	/* PTX the shim spoilt on purpose (GPUPROBE_TEST_FAULT=compile): what ptxas says of it */
	const unsigned char *b = image;
	if (b[0] != 0x7f && b[0] != 0x50 && b[0] != 0xb1 && strstr(image, ".gpuprobe_test_fault"))
		return 218;   /* CUDA_ERROR_INVALID_PTX */
	*mod = (void *)(0x1000 + ++next_module);
	fake_gpu_image((uintptr_t)*mod, image);
	return OK;
}
CUresult cuModuleLoadFatBinary(void **mod, const void *image)
{ return cuModuleLoadData(mod, image); }
CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, void *o, void **v)
{ (void)n; (void)o; (void)v; return cuModuleLoadData(mod, image); }
static uintptr_t name_hash(const char *name)
{
	uintptr_t h = 0;
	while (*name)
		h = h * 31 + (unsigned char)*name++;
	return h & 0xfff;
}
static int readable(const char *path)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	if (f)
		fclose(f);
	return f != NULL;
}
CUresult cuModuleLoad(void **mod, const char *path)
{ count(C_MODLOAD); if (!readable(path)) return 301; *mod = (void *)(0x1000 + ++next_module); return OK; }
CUresult cuLibraryLoadFromFile(void **lib, const char *path, void *a, void **b, unsigned c, void *d,
			       void **e, unsigned f)
{
	(void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
	count(C_LIBLOAD);
	if (!readable(path)) return 301;
	*lib = (void *)(0x3000 + ++next_library);
	return OK;
}
CUresult cuModuleGetFunction(void **f, void *mod, const char *name)
{
	count(C_GETFUNC);
	*f = (void *)(0x200000 + ((uintptr_t)mod & 0xff) * 0x1000 + name_hash(name));
	fake_gpu_name((uintptr_t)*f, (uintptr_t)mod, name);
	return OK;
}
CUresult cuLibraryLoadData(void **lib, const void *code, void *a, void **b, unsigned c, void *d,
			   void **e, unsigned f)
{
	(void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
	count(C_LIBLOAD);
	if (!code) return INVALID_VALUE;
	*lib = (void *)(0x3000 + ++next_library);
	fake_gpu_image((uintptr_t)*lib, code);
	return OK;
}
CUresult cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	count(C_GETKERNEL);
	*k = (void *)(0x400000 + ((uintptr_t)lib & 0xff) * 0x1000 + name_hash(name));
	fake_gpu_name((uintptr_t)*k, (uintptr_t)lib, name);
	return OK;
}
CUresult cuKernelGetFunction(void **f, void *k)
{ count(C_KERNFUNC); *f = (void *)((uintptr_t)k + 0x100000); return OK; }
CUresult cuFuncGetName(const char **name, void *f)
{ (void)f; *name = "unnamed_by_shim"; return OK; }

struct kernel_node_params_v2 { void *func; unsigned g[3], b[3], shmem; void **params, **extra;
			       void *kern, *ctx; };
CUresult cuGraphAddKernelNode_v2(void **node, void *graph, const void *deps, size_t n,
				 const struct kernel_node_params_v2 *p)
{
	(void)deps; (void)n;
	count(C_GRAPHNODE);
	int rc = fake_gpu_graph_kernel(node, graph, (uintptr_t)(p->func ? p->func : p->kern), p->g,
				       p->b, p->params);
	if (rc >= 0)
		return rc;
	*node = p->func;
	return OK;
}

CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node,
					   const struct kernel_node_params_v2 *p)
{
	return fake_gpu_exec_kernel_set(exec, node, (uintptr_t)(p->func ? p->func : p->kern), p->g,
					p->b, p->params);
}

/* JIT linking: the "cubin" is a bare ELF header (no sections, so no kernels). */
static unsigned char linked_cubin[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, [16] = 1, 0, 190, 0, 1,
					 [52] = 64, 0, [58] = 64, 0};
CUresult cuLinkCreate_v2(unsigned n, void *o, void **v, void **state)
{ (void)n; (void)o; (void)v; *state = (void *)0x9000; return OK; }
CUresult cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
			  unsigned n, void *o, void **v)
{ (void)state; (void)type; (void)size; (void)name; (void)n; (void)o; (void)v; return data ? OK : INVALID_VALUE; }
CUresult cuLinkComplete(void *state, void **cubin, size_t *size)
{ (void)state; *cubin = linked_cubin; *size = sizeof(linked_cubin); return OK; }
CUresult cuLinkDestroy(void *state) { (void)state; return OK; }

CUresult cuGetExportTable(const void **table, const void *uuid)
{ (void)uuid; *table = export_table; return OK; }

/* cuGetProcAddress: the real driver's rules, reduced to what the tests use. */
#define PER_THREAD 2ull
static void *self_symbol(const char *name)
{
	Dl_info di;
	if (!dladdr((void *)cuInit, &di))
		return NULL;
	void *h = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;
	if (h)
		dlclose(h);
	return p;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
			     int *status)
{
	char name[128];
	if (!strcmp(symbol, "cuFakeHidden")) {
		*pfn = (void *)hidden_entry;
		return OK;
	}
	if (!strcmp(symbol, "cuGetProcAddress"))
		snprintf(name, sizeof(name), "cuGetProcAddress_v2");
	else if (!strcmp(symbol, "cuMemcpyHtoD"))
		snprintf(name, sizeof(name), "cuMemcpyHtoD%s%s", version >= 3020 ? "_v2" : "",
			 flags & PER_THREAD ? "_ptds" : "");
	else if (!strcmp(symbol, "cuLaunchKernel"))
		snprintf(name, sizeof(name), "cuLaunchKernel%s", flags & PER_THREAD ? "_ptsz" : "");
	else
		snprintf(name, sizeof(name), "%s", symbol);
	*pfn = self_symbol(name);
	if (status)
		*status = *pfn ? 0 : 1;
	return *pfn ? OK : NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{ return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL); }
