/* Level Zero: zeModuleCreate with SPIR-V. Debian ships the loader API headers nowhere and no
 * driver, so the loader is opened at run time with the few declarations below (the types and
 * values of the Level Zero specification's ze_api.h). Without a loader or a driver, one clear
 * error says so. */
#include "spirv/runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef int ze_result_t;
typedef void *ze_handle;
enum {
	ZE_STRUCTURE_TYPE_CONTEXT_DESC = 0xd,
	ZE_STRUCTURE_TYPE_MODULE_DESC = 0x1b,
	ZE_STRUCTURE_TYPE_KERNEL_DESC = 0x1d,
	ZE_MODULE_FORMAT_IL_SPIRV = 0,
};
typedef struct { uint32_t stype; const void *pNext; uint32_t flags; } ze_context_desc_t;
typedef struct {
	uint32_t stype;
	const void *pNext;
	uint32_t format;
	size_t inputSize;
	const uint8_t *pInputModule;
	const char *pBuildFlags;
	const void *pConstants;
} ze_module_desc_t;
typedef struct { uint32_t stype; const void *pNext; uint32_t flags; const char *pKernelName; } ze_kernel_desc_t;

struct ze_api {
	ze_result_t (*init)(uint32_t);
	ze_result_t (*driver_get)(uint32_t *, ze_handle *);
	ze_result_t (*device_get)(ze_handle, uint32_t *, ze_handle *);
	ze_result_t (*context_create)(ze_handle, const ze_context_desc_t *, ze_handle *);
	ze_result_t (*context_destroy)(ze_handle);
	ze_result_t (*module_create)(ze_handle, ze_handle, const ze_module_desc_t *, ze_handle *, ze_handle *);
	ze_result_t (*module_destroy)(ze_handle);
	ze_result_t (*build_log_get)(ze_handle, size_t *, char *);
	ze_result_t (*build_log_destroy)(ze_handle);
	ze_result_t (*kernel_create)(ze_handle, const ze_kernel_desc_t *, ze_handle *);
	ze_result_t (*kernel_destroy)(ze_handle);
};

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

int spirv_ze__check_module(const uint32_t *words, size_t nwords, const char *name, char *err, size_t errlen)
{
	void *lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return FAIL(-ENODEV, "no Level Zero driver: libze_loader.so.1 is not installed");
	struct ze_api z;
	struct { void **slot; const char *sym; } syms[] = {
		{(void **)&z.init, "zeInit"}, {(void **)&z.driver_get, "zeDriverGet"},
		{(void **)&z.device_get, "zeDeviceGet"}, {(void **)&z.context_create, "zeContextCreate"},
		{(void **)&z.context_destroy, "zeContextDestroy"}, {(void **)&z.module_create, "zeModuleCreate"},
		{(void **)&z.module_destroy, "zeModuleDestroy"}, {(void **)&z.build_log_get, "zeModuleBuildLogGetString"},
		{(void **)&z.build_log_destroy, "zeModuleBuildLogDestroy"}, {(void **)&z.kernel_create, "zeKernelCreate"},
		{(void **)&z.kernel_destroy, "zeKernelDestroy"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].slot = dlsym(lib, syms[i].sym))) {
			dlclose(lib);
			return FAIL(-ENODEV, "Level Zero loader lacks %s", syms[i].sym);
		}
	int ret = 0;
	uint32_t n = 1;
	ze_handle drv = NULL, dev = NULL, ctx = NULL, mod = NULL, log = NULL, k = NULL;
	if (z.init(0) != 0 || z.driver_get(&n, &drv) != 0 || !n || !drv) {
		ret = FAIL(-ENODEV, "no Level Zero driver: the loader found no GPU driver");
		goto out;
	}
	n = 1;
	if (z.device_get(drv, &n, &dev) != 0 || !n) {
		ret = FAIL(-ENODEV, "no Level Zero device");
		goto out;
	}
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	if (z.context_create(drv, &cd, &ctx) != 0) {
		ret = FAIL(-EIO, "zeContextCreate failed");
		goto out;
	}
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, nwords * 4,
			       (const uint8_t *)words, "", NULL};
	ze_result_t r = z.module_create(ctx, dev, &md, &mod, &log);
	if (r != 0) {
		char text[512] = "";
		size_t len = sizeof(text) - 1;
		if (log)
			z.build_log_get(log, &len, text);
		ret = FAIL(-EINVAL, "zeModuleCreate failed (0x%x): %s", (unsigned)r, text);
		goto out;
	}
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
	if (name && z.kernel_create(mod, &kd, &k) != 0)
		ret = FAIL(-ENOENT, "no kernel %s in the Level Zero module", name);
out:
	if (k)
		z.kernel_destroy(k);
	if (log)
		z.build_log_destroy(log);
	if (mod)
		z.module_destroy(mod);
	if (ctx)
		z.context_destroy(ctx);
	dlclose(lib);
	return ret;
}
