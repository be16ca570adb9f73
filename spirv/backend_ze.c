/* The Level Zero backend of the own driver (backend.h): for now only its opening, so that
 * GPUPROBE_BACKEND=levelzero says in one line why no device is there (no loader, no driver) and
 * the application gets an error code. Memory, queues and launches over zeMemAllocShared and
 * command lists come with a machine that has a Level Zero driver to test them on. */
#include "spirv/backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

static int ze_open(gp_bk **out, char *err, size_t errlen)
{
	*out = NULL;
	void *lib = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return FAIL(-ENODEV, "no Level Zero driver: libze_loader.so.1 is not installed");
	int (*init)(uint32_t) = (int (*)(uint32_t))dlsym(lib, "zeInit");
	int (*driver_get)(uint32_t *, void **) = (int (*)(uint32_t *, void **))dlsym(lib, "zeDriverGet");
	uint32_t n = 0;
	int r;
	if (!init || !driver_get || init(0) != 0 || driver_get(&n, NULL) != 0 || !n)
		r = FAIL(-ENODEV, "no Level Zero driver: the loader found no GPU driver");
	else
		r = FAIL(-ENOTSUP, "the Level Zero backend of the own driver runs no programs yet (%u driver%s found)",
			 n, n == 1 ? "" : "s");
	dlclose(lib);
	return r;
}

const struct gp_bk_ops gp_bk_levelzero = {
	.name = "levelzero",
	.open = ze_open,
};
