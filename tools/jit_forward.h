/* Shared by build/lib's stand-ins for NVIDIA's JIT libraries (jit_nvrtc.c, jit_nvjitlink.c):
 * finding the real library by absolute path and forwarding every export to it.
 *
 * A stand-in has the real library's file name and soname and exports every name the real one
 * does, under its symbol version. The names it does not intercept are assembly trampolines (one
 * indirect jump through a pointer filled when the library loads), so no prototype is needed and
 * every argument reaches the real function untouched; the compile entry points are C functions
 * that call the real ones and record the PTX (shim/jit_capture.h). x86-64 only. */
#ifndef GPUPROBE_TOOLS_JIT_FORWARD_H
#define GPUPROBE_TOOLS_JIT_FORWARD_H

#include "common/env.h"

#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A trampoline NAME jumping through jit_real_NAME (set when the library loads: the real
 * function, or a fallback returning the library's "internal error" code when there is none). */
#define JIT_TRAMPOLINE(name)                                                                \
	__attribute__((visibility("hidden"))) void *jit_real_##name;                        \
	__asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n"          \
		"\tjmp *jit_real_" #name "(%rip)\n.size " #name ",.-" #name "\n");

/* dl_iterate_phdr: the directories of the objects loaded so far, ':'-joined into *dirs. */
struct jit_dirs {
	char *s;
	size_t len, cap;
};

static inline int jit_dir_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct jit_dirs *d = arg;
	const char *n = info->dlpi_name, *slash = n ? strrchr(n, '/') : NULL;
	if (!slash || n[0] != '/')
		return 0;
	size_t l = (size_t)(slash - n);
	if (d->len + l + 2 > d->cap) {
		size_t cap = (d->cap + l + 2) * 2;
		char *s = realloc(d->s, cap);
		if (!s)
			return 1;
		d->s = s;
		d->cap = cap;
	}
	d->s[d->len++] = ':';
	memcpy(d->s + d->len, n, l);
	d->len += l;
	d->s[d->len] = 0;
	return 0;
}

/* The real library: GPUPROBE_REAL_*, else the directories of the objects already loaded (a
 * Python package's CUDA libraries: the same release as the copy the program asked for, which
 * the LD_AUDIT module of gpuprobe run sent here), else LD_LIBRARY_PATH's directories, else the
 * usual CUDA directories; never this file (same device and inode). Opened as DIR/./NAME, a
 * spelling no application writes (so a redirection never sends it back here). NULL when none;
 * where gets the path. */
static inline void *jit_open_real(const char *soname, enum gp_var var, void *self_sym,
				  char *where, size_t wlen)
{
	struct stat self = {0};
	Dl_info di;
	if (dladdr(self_sym, &di) && di.dli_fname)
		stat(di.dli_fname, &self);
	const char *env = gp_env_str(var);
	const char *ldp = getenv("LD_LIBRARY_PATH");
	static const char *const usual[] = {"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
		"/usr/local/lib", NULL};
	struct jit_dirs loaded = {0};
	dl_iterate_phdr(jit_dir_of, &loaded);
	size_t n = (ldp ? strlen(ldp) : 0) + loaded.len + 2;
	char *dirs = malloc(n + 512);
	if (!dirs) {
		free(loaded.s);
		return NULL;
	}
	snprintf(dirs, n + 512, "%s:%s", loaded.s ? loaded.s : "", ldp ? ldp : "");
	free(loaded.s);
	for (int i = 0; usual[i]; i++) {
		strcat(dirs, ":");
		strcat(dirs, usual[i]);
	}
	void *h = NULL;
	char path[PATH_MAX + 64];
	struct stat st;
	if (env) {
		if (!stat(env, &st) && !(st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (h)
			snprintf(where, wlen, "%s", env);
		else
			fprintf(stderr, "gpuprobe: %s=%s: %s\n", gp_env_name(var), env,
				dlerror() ? dlerror() : "not a library other than gpuprobe's");
		free(dirs);
		return h;
	}
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && !h;
	     d = strtok_r(NULL, ":", &save)) {
		if (*d != '/')
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, soname);
		if (stat(path, &st) || (st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			continue;
		snprintf(path, sizeof(path), "%s/./%s", d, soname);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			snprintf(where, wlen, "%s/%s", d, soname);
	}
	free(dirs);
	if (!h)
		fprintf(stderr, "gpuprobe: %s: the real library was not found (%s, "
			"LD_LIBRARY_PATH, /usr/local/cuda/lib64, ...); its calls fail\n", soname,
			gp_env_name(var));
	return h;
}

#endif
