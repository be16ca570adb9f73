/* The one test of a driver candidate (driver_find.h), used by the shim to take the real driver
 * and by `gpuprobe run` before it pins one for the shim: had run a weaker test of its own (any
 * readable ELF), it could pin a file the shim then refuses, and the application would run with
 * no driver at all. */
#include "shim/driver_find.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

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

int driver_check(const char *path, const char *self, const void *self_sym, void **handle,
		 char *why, size_t whylen)
{
	char alias[4096 + 4];
	alias_path(path, alias, sizeof(alias));
	/* RTLD_LOCAL: the driver's symbols must not satisfy anyone else's lookups of cu* names;
	 * RTLD_NOW: a broken candidate fails here, not at some later call. */
	void *h = dlopen(alias, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, whylen, "cannot load driver candidate %s: %s", path, e ? e : "dlopen failed");
		return -1;
	}
	void *init = dlsym(h, "cuInit");
	if (!init || !dlsym(h, "cuGetProcAddress")) {
		snprintf(why, whylen, "%s is not a CUDA driver (no cuInit/cuGetProcAddress)", path);
		dlclose(h);
		return -1;
	}
	/* Some loader redirection (an LD_AUDIT module, a symlink) may hand us ourselves back. */
	Dl_info di;
	if ((self_sym && init == self_sym) ||
	    (dladdr(init, &di) && di.dli_fname && driver_same_file(di.dli_fname, self))) {
		snprintf(why, whylen, "%s resolves back to the gpuprobe shim: skipped", path);
		dlclose(h);
		return -1;
	}
	*handle = h;
	return 0;
}
