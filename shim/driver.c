/* Loading the real driver once and filling the forwarding table (see forward.h). */
#include "shim/forward.h"
#include "shim/driver_find.h"
#include "shim/log.h"
#include "shim/own.h"
#include "shim/api_trace.h"
#include "common/env.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *shim_real_fn[SHIM_FN_COUNT];

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static void *driver_handle;
static const char *ctx_self;   /* our own file, set before the search */

static int try_dlopen(const char *path, void *ctx)
{
	char why[4096 + 128];
	if (driver_check(path, ctx_self, (const void *)cuInit, (void **)ctx, why, sizeof(why))) {
		shim_log("%s", why);
		return -1;
	}
	return 0;
}

static void driver_load(void)
{
	Dl_info self;
	const char *self_path = NULL;
	if (dladdr((void *)shim_resolve, &self) && self.dli_fname)
		self_path = self.dli_fname;
	ctx_self = self_path;

	/* GPUPROBE_BACKEND=opencl|levelzero: the shim is the driver (own.h). */
	if (gp_env_choice(GP_VAR_BACKEND) >= 2 && own_install(0))
		return;
	char path[4096], looked[2048];
	void *h = NULL;
	if (driver_find(self_path, try_dlopen, &h, path, sizeof(path), looked, sizeof(looked))) {
		/* No NVIDIA driver, but an OpenCL device: the own driver (not when the user named a
		 * driver that failed: that stays an error). */
		if (!gp_env_str(GP_VAR_REAL_LIBCUDA) && own_install(0))
			return;
		shim_msg("no real CUDA driver found: looked for %s; every CUDA call fails "
			 "(cuInit returns CUDA_ERROR_NO_DEVICE)", looked);
		return;
	}
	driver_handle = h;
	int missing = 0;
	char names[256] = "";   /* the first few missing, for the log line */
	size_t used = 0;
	for (int i = 0; i < SHIM_FN_COUNT; i++) {
		void *p = dlsym(h, shim_fn_names[i]);
		if (!p && ++missing <= 3 && used < sizeof(names))
			used += snprintf(names + used, sizeof(names) - used, "%s%s",
					 missing > 1 ? ", " : "; missing: ", shim_fn_names[i]);
		__atomic_store_n(&shim_real_fn[i], p, __ATOMIC_RELEASE);
	}
	shim_log("real driver %s (%d of %d exports present%s%s)", path, SHIM_FN_COUNT - missing,
		 SHIM_FN_COUNT, names, missing > 3 ? ", ..." : "");
}

/* The table filled; then gpuprobe run --trace's wrappers go in (api_trace.c: nothing when not
 * tracing). */
static void driver_load_all(void)
{
	driver_load();
	shim_api_trace_install();
}

void *shim_resolve(enum shim_fn_id id)
{
	pthread_once(&driver_once, driver_load_all);
	return __atomic_load_n(&shim_real_fn[id], __ATOMIC_ACQUIRE);
}

void *shim_driver_handle(void)
{
	pthread_once(&driver_once, driver_load_all);
	return driver_handle;
}

CUresult shim_unavailable(enum shim_fn_id id)
{
	if (own_active())
		return own_unsupported((int)id, shim_fn_names[id]);
	if (shim_driver_handle()) {
		shim_log("%s: the real driver does not export it", shim_fn_names[id]);
		return CUDA_ERROR_NOT_FOUND;
	}
	return id == SHIM_FN_cuInit ? CUDA_ERROR_NO_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
}

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int shim_fn_lookup(const char *name)
{
	const char *const *p = bsearch(name, shim_fn_names, SHIM_FN_COUNT, sizeof(shim_fn_names[0]),
				       cmp_name);
	return p ? (int)(p - shim_fn_names) : -1;
}
