/* Loading the real driver once and filling the forwarding table (see forward.h). */
#include "shim/forward.h"
#include "shim/driver_find.h"
#include "shim/log.h"

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

/* The path the shim opens the driver by: "DIR/./NAME". It names the same file, but no
 * application spells it that way, which matters under `gpuprobe run`: once an application has
 * dlopened "DIR/NAME" and the LD_AUDIT module sent it to the shim, the loader knows the shim by
 * that name and would hand the shim back for it; and the audit module leaves "/./libcuda"
 * names alone, however the dlopen reaches it (tools that wrap dlopen hide the caller). */
static void alias_path(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash || (slash - path >= 2 && !strncmp(slash - 2, "/.", 2)))
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%.*s/.%s", (int)(slash - path), path, slash);
}

static int try_dlopen(const char *path, void *ctx)
{
	char alias[4096 + 4];
	alias_path(path, alias, sizeof(alias));
	/* RTLD_LOCAL: the driver's symbols must not satisfy anyone else's lookups of cu* names;
	 * RTLD_NOW: a broken candidate fails here, not at some later call. */
	void *h = dlopen(alias, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		shim_log("cannot load driver candidate %s: %s", path, dlerror());
		return -1;
	}
	void *init = dlsym(h, "cuInit");
	if (!init || !dlsym(h, "cuGetProcAddress")) {
		shim_log("%s is not a CUDA driver (no cuInit/cuGetProcAddress)", path);
		dlclose(h);
		return -1;
	}
	/* Some loader redirection (an LD_AUDIT module, a symlink) may hand us ourselves back. */
	Dl_info di;
	if (init == (void *)cuInit || (dladdr(init, &di) && di.dli_fname &&
				       driver_same_file(di.dli_fname, ctx_self))) {
		shim_log("%s resolves back to the gpuprobe shim: skipped", path);
		dlclose(h);
		return -1;
	}
	*(void **)ctx = h;
	return 0;
}

static void driver_load(void)
{
	Dl_info self;
	const char *self_path = NULL;
	if (dladdr((void *)shim_resolve, &self) && self.dli_fname)
		self_path = self.dli_fname;
	ctx_self = self_path;

	char path[4096], looked[2048];
	void *h = NULL;
	if (driver_find(self_path, try_dlopen, &h, path, sizeof(path), looked, sizeof(looked))) {
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

void *shim_resolve(enum shim_fn_id id)
{
	pthread_once(&driver_once, driver_load);
	return __atomic_load_n(&shim_real_fn[id], __ATOMIC_ACQUIRE);
}

void *shim_driver_handle(void)
{
	pthread_once(&driver_once, driver_load);
	return driver_handle;
}

CUresult shim_unavailable(enum shim_fn_id id)
{
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
