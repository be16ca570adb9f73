/* libgpuprobe-audit.so: an LD_AUDIT module that sends every load of libcuda.so.1 / libcuda.so to
 * the gpuprobe shim (and loads of libnvrtc.so.13 / libnvJitLink.so.13 by path to the stand-ins
 * beside it), so applications that bypass LD_LIBRARY_PATH (RUNPATH, dlopen of an absolute
 * path) still get the shim. `gpuprobe run` sets LD_AUDIT to it and GPUPROBE_SHIM to the shim.
 *
 * Loads the shim itself starts (its real driver) and loads the real driver starts are left
 * alone: the shim names its driver "DIR/./libcuda.so.1", which no application writes; and
 * la_objopen learns which objects the shim and the driver are, and la_objsearch's cookie names
 * the object that asked (when no dlopen wrapper hides it).
 */
#include "common/env.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char shim_path[PATH_MAX];
static struct stat shim_stat;
static int have_shim;
static uintptr_t *shim_cookie;
static uintptr_t *driver_cookies[8];

static void find_shim(void)
{
	const char *env = gp_env_str(GP_VAR_SHIM);
	if (env) {
		snprintf(shim_path, sizeof(shim_path), "%s", env);
	} else {
		/* Beside this module: build/lib/libgpuprobe-audit.so -> build/lib/libcuda.so.1 */
		Dl_info di;
		if (!dladdr((void *)find_shim, &di) || !di.dli_fname)
			return;
		snprintf(shim_path, sizeof(shim_path), "%s", di.dli_fname);
		char *slash = strrchr(shim_path, '/');
		if (!slash)
			return;
		snprintf(slash + 1, sizeof(shim_path) - (slash + 1 - shim_path), "libcuda.so.1");
	}
	have_shim = stat(shim_path, &shim_stat) == 0;
	if (!have_shim)
		fprintf(stderr, "gpuprobe: audit: shim %s not found: libcuda loads are not redirected\n",
			shim_path);
}

unsigned int la_version(unsigned int version)
{
	find_shim();
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static int is_cuda_name(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return !strcmp(base, "libcuda.so.1") || !strcmp(base, "libcuda.so");
}

static int is_same(const char *path, const struct stat *st)
{
	struct stat o;
	return path && stat(path, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

static int is_shim_file(const char *path)
{
	struct stat st;
	return have_shim && path && stat(path, &st) == 0 && st.st_dev == shim_stat.st_dev &&
	       st.st_ino == shim_stat.st_ino;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	if (!map->l_name || !is_cuda_name(map->l_name))
		return 0;
	if (is_shim_file(map->l_name)) {
		shim_cookie = cookie;
	} else {
		for (size_t i = 0; i < sizeof(driver_cookies) / sizeof(driver_cookies[0]); i++)
			if (!driver_cookies[i]) {
				driver_cookies[i] = cookie;
				break;
			}
	}
	return 0;   /* no symbol binding audit: binding stays as fast as without us */
}

/* NVIDIA's JIT libraries loaded by path (a Python package's copy, a RUNPATH) go to the stand-ins
 * beside the shim (tools/jit_nvrtc.c, jit_nvjitlink.c), which record the PTX of the cubins they
 * make; loads by name find them through LD_LIBRARY_PATH already. A stand-in loads its real
 * library as DIR/./NAME, which stays what it is. */
static const char *const jit_names[] = {"libnvrtc.so.13", "libnvJitLink.so.13"};
static char jit_paths[2][PATH_MAX];

static const char *jit_redirect(const char *name)
{
	const char *base = strrchr(name, '/');
	if (!have_shim || !base || strstr(name, "/./"))
		return NULL;
	for (int i = 0; i < 2; i++) {
		if (strcmp(base + 1, jit_names[i]))
			continue;
		if (!jit_paths[i][0]) {
			snprintf(jit_paths[i], sizeof(jit_paths[i]), "%s", shim_path);
			char *slash = strrchr(jit_paths[i], '/');
			if (slash)
				snprintf(slash + 1, sizeof(jit_paths[i]) - (size_t)(slash + 1 - jit_paths[i]),
					 "%s", jit_names[i]);
		}
		struct stat st;
		if (stat(jit_paths[i], &st) || is_same(name, &st))
			return NULL;   /* not built, or the stand-in itself */
		return jit_paths[i];
	}
	return NULL;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	(void)flag;
	const char *jit = jit_redirect(name);
	if (jit)
		return (char *)jit;
	if (!have_shim || !is_cuda_name(name))
		return (char *)name;
	if (strstr(name, "/./libcuda.so"))
		return (char *)name;    /* how the shim spells its real driver (shim/driver.c) */
	if (cookie && cookie == shim_cookie)
		return (char *)name;    /* the shim loading the real driver */
	for (size_t i = 0; i < sizeof(driver_cookies) / sizeof(driver_cookies[0]); i++)
		if (cookie && cookie == driver_cookies[i])
			return (char *)name;
	return shim_path;
}
