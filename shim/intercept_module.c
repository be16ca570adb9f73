/* Interception of every module load path, link step and kernel lookup. Each load goes through
 * load_begin() (inspect, then shim_module_transform) and load_end() (record, log). */
#include "shim/intercept.h"
#include "shim/image.h"
#include "shim/jit_capture_load.h"
#include "shim/lazy.h"
#include "shim/log.h"
#include "shim/probes.h"
#include "shim/transform.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned module_seq;

struct link_info {
	int has_ptx;
	unsigned inputs;
	void *cubin;           /* what cuLinkComplete produced (freed by cuLinkDestroy) */
};

struct load {
	struct shim_image img;
	struct shim_module *m;
	int transformed;       /* load img.data instead of what the application named */
	int compiled;          /* ... and img.data is a cubin the shim compiled: no JIT at load */
	/* A cubin without PTX whose PTX a JIT recorded (jit_capture_load.h): instrumented from
	 * that PTX; jit.extra: img's JIT options are the application's plus the recorded ones,
	 * which a transformed load passes (the load calls below: l.jit_opts). */
	struct jit_subst jit;
	char desc[512];
};

/* caller: the code address the application's call returns to (its library names who loaded a
 * module when the image itself is on the heap). */
static void load_begin(struct load *l, const void *caller, const char *api, const char *path, const void *data,
		       size_t size, unsigned jit_n, const CUjit_option *jit_opts,
		       void *const *jit_vals)
{
	memset(l, 0, sizeof(*l));
	l->img.api = api;
	l->img.path = path;
	l->img.data = data;
	l->img.size = size;
	l->img.jit_n = jit_n;
	l->img.jit_opts = (const int *)jit_opts;
	l->img.jit_vals = jit_vals;
	l->m = calloc(1, sizeof(*l->m));
	if (!l->m)
		return;
	l->m->seq = __atomic_add_fetch(&module_seq, 1, __ATOMIC_RELAXED);
	l->m->api = api;
	l->m->caller = caller;
	l->m->origin = path ? strdup(path) : NULL;
	if (shim_image_open(&l->img)) {
		snprintf(l->desc, sizeof(l->desc), "unreadable image");
		return;
	}
	shim_image_inspect(&l->img, l->m, l->desc, sizeof(l->desc), 0);
	if (l->img.kind == MODULE_IMAGE_CUBIN) {
		/* A cubin that cuLinkComplete produced: PTX exists among its link inputs. */
		const struct link_info *li = registry_get(REGISTRY_LINKS, l->img.data);
		if (li && li->has_ptx) {
			l->m->has_ptx = 1;
			size_t n = strlen(l->desc);
			snprintf(l->desc + n, sizeof(l->desc) - n, " linked from %u inputs", li->inputs);
		}
	}
	shim_jit_subst(&l->img, l->m, &l->jit);
	const void *before = l->img.data;
	l->transformed = shim_module_transform(&l->img, l->m) && l->img.data != before;
	shim_jit_restore(&l->img, &l->jit, l->transformed);
	l->compiled = l->transformed && l->img.kind == MODULE_IMAGE_CUBIN;
}

/* A transformed image from recorded PTX carries the recorded options too (cuModuleLoadData has
 * none of its own: it becomes cuModuleLoadDataEx). */
#define JIT_N(l, n) ((l)->transformed && (l)->jit.extra ? (l)->img.jit_n : (n))
#define JIT_OPTS(l, o) ((l)->transformed && (l)->jit.extra ? (CUjit_option *)(l)->img.jit_opts : (o))
#define JIT_VALS(l, v) ((l)->transformed && (l)->jit.extra ? (void **)(l)->img.jit_vals : (v))

/* Instrumented PTX left to the driver's JIT: under lazy loading a compile error would surface
 * at the application's first use, so every kernel is loaded now (a cubin we compiled needs
 * no such check). */
static CUresult load_check_module(const struct load *l, CUmodule *mod, CUresult rc)
{
	return l->transformed && !l->compiled && rc == CUDA_SUCCESS ? shim_probes_check_module(*mod)
								    : rc;
}

static CUresult load_check_library(const struct load *l, CUlibrary *lib, CUresult rc)
{
	return l->transformed && !l->compiled && rc == CUDA_SUCCESS
		? shim_probes_check_library(*lib) : rc;
}

/* An instrumented image the driver refused: say so; the caller loads the original. */
static int load_retry(struct load *l, CUresult rc)
{
	if (!l->transformed || rc == CUDA_SUCCESS)
		return 0;
	shim_probes_load_failed(l->m, (int)rc, l->compiled);
	l->transformed = 0;
	return 1;
}

static CUresult load_end(struct load *l, const void *handle, CUresult rc)
{
	struct shim_module *m = l->m;
	if (m)
		shim_lazy_loaded(m, handle, !strncmp(m->api, "cuLibrary", 9), rc);
	if (m && rc == CUDA_SUCCESS) {
		registry_put(REGISTRY_MODULES, handle, m);
		shim_log("module %u via %s%s%s: %s; %u kernels; PTX %s", m->seq, m->api,
			 m->origin ? " " : "", m->origin ? m->origin : "", l->desc, m->kernels,
			 m->jit_ptx ? "recorded by the JIT compiler that made the cubin" :
			 m->has_ptx ? "present" :
			 l->img.kind == MODULE_IMAGE_CUBIN ?
			 "absent (a cubin: if Triton, XLA, NVRTC or nvJitLink made it, run the "
			 "program under 'gpuprobe run', which sets TRITON_PTXAS_PATH to "
			 "gpuprobe-ptxas and records the PTX of such compiles; nvcc builds: "
			 "-gencode arch=compute_XX,code=compute_XX embeds PTX)" :
			 "absent (cannot be instrumented: rebuild with -arch=sm_XX or "
			 "-gencode arch=compute_XX,code=compute_XX to embed PTX)");
	} else {
		if (m) {
			shim_log("module %u via %s%s%s failed (CUDA error %d)", m->seq, m->api,
				 m->origin ? " " : "", m->origin ? m->origin : "", (int)rc);
			free((void *)m->origin);
			free(m);
		}
	}
	shim_image_close(&l->img);
	shim_jit_subst_free(&l->jit);
	return rc;
}

#define REAL_OR_FAIL(name, var)                                  \
	shim_fnty_##name *var = SHIM_REAL(name);                 \
	if (!var)                                                \
		return shim_unavailable(SHIM_FN_##name)

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	REAL_OR_FAIL(cuModuleLoad, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuModuleLoad", fname, NULL, SIZE_MAX, 0, NULL, NULL);
	CUresult rc = l.transformed && l.jit.extra
		? SHIM_REAL(cuModuleLoadDataEx)(module, l.img.data, JIT_N(&l, 0), JIT_OPTS(&l, NULL),
						JIT_VALS(&l, NULL))
		: l.transformed ? SHIM_REAL(cuModuleLoadData)(module, l.img.data)
		: real(module, fname);
	rc = load_check_module(&l, module, rc);
	if (load_retry(&l, rc))
		rc = real(module, fname);
	return load_end(&l, rc == CUDA_SUCCESS ? *module : NULL, rc);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	REAL_OR_FAIL(cuModuleLoadData, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuModuleLoadData", NULL, image, SIZE_MAX, 0, NULL, NULL);
	CUresult rc = l.transformed && l.jit.extra
		? SHIM_REAL(cuModuleLoadDataEx)(module, l.img.data, JIT_N(&l, 0), JIT_OPTS(&l, NULL),
						JIT_VALS(&l, NULL))
		: real(module, l.img.data ? l.img.data : image);
	rc = load_check_module(&l, module, rc);
	if (load_retry(&l, rc))
		rc = real(module, image);
	return load_end(&l, rc == CUDA_SUCCESS ? *module : NULL, rc);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
			    CUjit_option *options, void **optionValues)
{
	REAL_OR_FAIL(cuModuleLoadDataEx, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuModuleLoadDataEx", NULL, image, SIZE_MAX, numOptions, options,
		   optionValues);
	CUresult rc = real(module, l.img.data ? l.img.data : image, JIT_N(&l, numOptions),
			   JIT_OPTS(&l, options), JIT_VALS(&l, optionValues));
	rc = load_check_module(&l, module, rc);
	if (load_retry(&l, rc))
		rc = real(module, image, numOptions, options, optionValues);
	return load_end(&l, rc == CUDA_SUCCESS ? *module : NULL, rc);
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	REAL_OR_FAIL(cuModuleLoadFatBinary, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuModuleLoadFatBinary", NULL, fatCubin, SIZE_MAX, 0, NULL, NULL);
	CUresult rc = l.transformed && l.jit.extra
		? SHIM_REAL(cuModuleLoadDataEx)(module, l.img.data, JIT_N(&l, 0), JIT_OPTS(&l, NULL),
						JIT_VALS(&l, NULL))
		: l.transformed ? SHIM_REAL(cuModuleLoadData)(module, l.img.data)
		: real(module, fatCubin);
	rc = load_check_module(&l, module, rc);
	if (load_retry(&l, rc))
		rc = real(module, fatCubin);
	return load_end(&l, rc == CUDA_SUCCESS ? *module : NULL, rc);
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
			   void **jitOptionsValues, unsigned int numJitOptions,
			   CUlibraryOption *libraryOptions, void **libraryOptionValues,
			   unsigned int numLibraryOptions)
{
	REAL_OR_FAIL(cuLibraryLoadData, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuLibraryLoadData", NULL, code, SIZE_MAX, numJitOptions, jitOptions,
		   jitOptionsValues);
	CUresult rc = real(library, l.img.data ? l.img.data : code, JIT_OPTS(&l, jitOptions),
			   JIT_VALS(&l, jitOptionsValues), JIT_N(&l, numJitOptions), libraryOptions,
			   libraryOptionValues, numLibraryOptions);
	rc = load_check_library(&l, library, rc);
	if (load_retry(&l, rc))
		rc = real(library, code, jitOptions, jitOptionsValues, numJitOptions,
			  libraryOptions, libraryOptionValues, numLibraryOptions);
	return load_end(&l, rc == CUDA_SUCCESS ? *library : NULL, rc);
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
			       void **jitOptionsValues, unsigned int numJitOptions,
			       CUlibraryOption *libraryOptions, void **libraryOptionValues,
			       unsigned int numLibraryOptions)
{
	REAL_OR_FAIL(cuLibraryLoadFromFile, real);
	struct load l;
	load_begin(&l, __builtin_return_address(0), "cuLibraryLoadFromFile", fileName, NULL, SIZE_MAX, numJitOptions, jitOptions,
		   jitOptionsValues);
	CUresult rc = l.transformed
		? SHIM_REAL(cuLibraryLoadData)(library, l.img.data, JIT_OPTS(&l, jitOptions),
					       JIT_VALS(&l, jitOptionsValues),
					       JIT_N(&l, numJitOptions), libraryOptions,
					       libraryOptionValues, numLibraryOptions)
		: real(library, fileName, jitOptions, jitOptionsValues, numJitOptions,
		       libraryOptions, libraryOptionValues, numLibraryOptions);
	rc = load_check_library(&l, library, rc);
	if (load_retry(&l, rc))
		rc = real(library, fileName, jitOptions, jitOptionsValues, numJitOptions,
			  libraryOptions, libraryOptionValues, numLibraryOptions);
	return load_end(&l, rc == CUDA_SUCCESS ? *library : NULL, rc);
}

/* --- linking: remember whether PTX went in, so the cubin that comes out is known to have it */

static void link_note(CUlinkState state, CUjitInputType type, const void *data, size_t size,
		      const char *path)
{
	struct link_info *li = registry_get(REGISTRY_LINKS, state);
	if (!li) {
		li = calloc(1, sizeof(*li));
		if (!li || registry_put(REGISTRY_LINKS, state, li))
			return;
	}
	li->inputs++;
	int has_ptx = type == CU_JIT_INPUT_PTX;
	if (type == CU_JIT_INPUT_FATBINARY) {
		struct shim_image img = {.api = "cuLinkAdd", .path = path, .data = data, .size = size};
		struct shim_module probe = {0};
		char desc[256];
		if (shim_image_open(&img) == 0) {
			shim_image_inspect(&img, &probe, desc, sizeof(desc), 1);
			has_ptx = probe.has_ptx;
		}
		shim_image_close(&img);
	}
	li->has_ptx |= has_ptx;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
			  const char *name, unsigned int numOptions, CUjit_option *options,
			  void **optionValues)
{
	REAL_OR_FAIL(cuLinkAddData_v2, real);
	CUresult rc = real(state, type, data, size, name, numOptions, options, optionValues);
	if (rc == CUDA_SUCCESS)
		link_note(state, type, data, size, NULL);
	return rc;
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
		       const char *name, unsigned int numOptions, CUjit_option *options,
		       void **optionValues)
{
	REAL_OR_FAIL(cuLinkAddData, real);
	CUresult rc = real(state, type, data, size, name, numOptions, options, optionValues);
	if (rc == CUDA_SUCCESS)
		link_note(state, type, data, size, NULL);
	return rc;
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
			  unsigned int numOptions, CUjit_option *options, void **optionValues)
{
	REAL_OR_FAIL(cuLinkAddFile_v2, real);
	CUresult rc = real(state, type, path, numOptions, options, optionValues);
	if (rc == CUDA_SUCCESS)
		link_note(state, type, NULL, SIZE_MAX, path);
	return rc;
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
		       unsigned int numOptions, CUjit_option *options, void **optionValues)
{
	REAL_OR_FAIL(cuLinkAddFile, real);
	CUresult rc = real(state, type, path, numOptions, options, optionValues);
	if (rc == CUDA_SUCCESS)
		link_note(state, type, NULL, SIZE_MAX, path);
	return rc;
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
	REAL_OR_FAIL(cuLinkComplete, real);
	CUresult rc = real(state, cubinOut, sizeOut);
	struct link_info *li = registry_get(REGISTRY_LINKS, state);
	if (rc == CUDA_SUCCESS && li && cubinOut && *cubinOut) {
		li->cubin = *cubinOut;
		registry_put(REGISTRY_LINKS, *cubinOut, li);
	}
	return rc;
}

CUresult cuLinkDestroy(CUlinkState state)
{
	/* The cubin dies with the state: its address must not vouch for a later image. Loading
	 * that cubin while destroying its state is already a use after free in the application,
	 * so no lookup can be reading the record as it goes. */
	struct link_info *li = registry_get(REGISTRY_LINKS, state);
	if (li) {
		if (li->cubin)
			registry_put(REGISTRY_LINKS, li->cubin, NULL);
		registry_put(REGISTRY_LINKS, state, NULL);
		free(li);
	}
	REAL_OR_FAIL(cuLinkDestroy, real);
	return real(state);
}

/* --- kernel lookups ------------------------------------------------------------------------ */

void shim_kernel_record(const void *handle, const struct shim_module *m, const char *name,
			int is_kernel)
{
	const struct shim_kernel *old = registry_get(REGISTRY_KERNELS, handle);
	if (old && old->module == m && old->name && name && !strcmp(old->name, name))
		return;   /* looked up again: nothing new */
	struct shim_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return;
	k->module = m;
	k->name = name ? strdup(name) : NULL;
	k->has_ptx = m && m->has_ptx;
	shim_lazy_kernel_init(k, handle, is_kernel);
	registry_put(REGISTRY_KERNELS, handle, k);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	REAL_OR_FAIL(cuModuleGetFunction, real);
	CUresult rc = real(hfunc, hmod, name);
	if (rc == CUDA_SUCCESS)
		shim_kernel_record(*hfunc, registry_get(REGISTRY_MODULES, hmod), name, 0);
	return rc;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	REAL_OR_FAIL(cuLibraryGetKernel, real);
	CUresult rc = real(pKernel, library, name);
	if (rc == CUDA_SUCCESS)
		shim_kernel_record(*pKernel, registry_get(REGISTRY_MODULES, library), name, 1);
	return rc;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	REAL_OR_FAIL(cuKernelGetFunction, real);
	CUresult rc = real(pFunc, kernel);
	if (rc == CUDA_SUCCESS) {
		const struct shim_kernel *k = registry_get(REGISTRY_KERNELS, kernel);
		if (k && registry_get(REGISTRY_KERNELS, *pFunc) != k)
			registry_put(REGISTRY_KERNELS, *pFunc, (void *)k);
	}
	return rc;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	REAL_OR_FAIL(cuLibraryGetModule, real);
	CUresult rc = real(pMod, library);
	if (rc == CUDA_SUCCESS) {
		void *m = registry_get(REGISTRY_MODULES, library);
		if (m)
			registry_put(REGISTRY_MODULES, *pMod, m);
	}
	return rc;
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions,
				    CUmodule mod)
{
	REAL_OR_FAIL(cuModuleEnumerateFunctions, real);
	CUresult rc = real(functions, numFunctions, mod);
	shim_fnty_cuFuncGetName *get_name = SHIM_REAL(cuFuncGetName);
	const struct shim_module *m = registry_get(REGISTRY_MODULES, mod);
	for (unsigned i = 0; rc == CUDA_SUCCESS && functions && i < numFunctions; i++) {
		const char *name = NULL;
		if (get_name && get_name(&name, functions[i]) != CUDA_SUCCESS)
			name = NULL;
		shim_kernel_record(functions[i], m, name, 0);
	}
	return rc;
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
	REAL_OR_FAIL(cuLibraryEnumerateKernels, real);
	CUresult rc = real(kernels, numKernels, lib);
	shim_fnty_cuKernelGetName *get_name = SHIM_REAL(cuKernelGetName);
	const struct shim_module *m = registry_get(REGISTRY_MODULES, lib);
	for (unsigned i = 0; rc == CUDA_SUCCESS && kernels && i < numKernels; i++) {
		const char *name = NULL;
		if (get_name && get_name(&name, kernels[i]) != CUDA_SUCCESS)
			name = NULL;
		shim_kernel_record(kernels[i], m, name, 1);
	}
	return rc;
}

/* --- unloads and attributes: the per-kernel instrumented functions follow the original ------ */

CUresult cuModuleUnload(CUmodule hmod)
{
	if (__builtin_expect(shim_lazy_enabled, 0))
		shim_lazy_unload(hmod);
	REAL_OR_FAIL(cuModuleUnload, real);
	return real(hmod);
}

CUresult cuLibraryUnload(CUlibrary library)
{
	if (__builtin_expect(shim_lazy_enabled, 0))
		shim_lazy_unload(library);
	REAL_OR_FAIL(cuLibraryUnload, real);
	return real(library);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	REAL_OR_FAIL(cuFuncSetAttribute, real);
	CUresult rc = real(hfunc, attrib, value);
	if (rc == CUDA_SUCCESS && shim_lazy_enabled)
		shim_lazy_func_attribute(hfunc, attrib, value);
	return rc;
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
	REAL_OR_FAIL(cuKernelSetAttribute, real);
	CUresult rc = real(attrib, val, kernel, dev);
	if (rc == CUDA_SUCCESS && shim_lazy_enabled)
		shim_lazy_func_attribute(kernel, attrib, val);
	return rc;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	REAL_OR_FAIL(cuFuncSetCacheConfig, real);
	CUresult rc = real(hfunc, config);
	if (rc == CUDA_SUCCESS && shim_lazy_enabled)
		shim_lazy_cache_config(hfunc, config);
	return rc;
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
	REAL_OR_FAIL(cuKernelSetCacheConfig, real);
	CUresult rc = real(kernel, config, dev);
	if (rc == CUDA_SUCCESS && shim_lazy_enabled)
		shim_lazy_cache_config(kernel, config);
	return rc;
}
