/* Finding the real libcuda.so.1 (see driver_find.h). No dlopen here: the caller decides. */
#include "shim/driver_find.h"
#include "common/env.h"
#include "common/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const usual_dirs[] = {
	"/usr/local/nvidia/lib64",              /* NVIDIA container toolkit */
	"/usr/local/nvidia/lib",
	"/usr/lib/x86_64-linux-gnu",            /* Debian/Ubuntu */
	"/usr/lib/x86_64-linux-gnu/nvidia/current",
	"/usr/lib64",                           /* Fedora/RHEL */
	"/usr/lib/wsl/lib",                     /* WSL */
	"/lib/x86_64-linux-gnu",
	"/usr/lib",
	"/usr/local/cuda/compat",               /* forward-compatibility package, last */
};

#define LOADER_CACHE "/etc/ld.so.cache"
#define SONAME "libcuda.so.1"

int driver_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!a || !b || stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

struct search {
	const char *self;
	driver_try_fn try_fn;
	void *ctx;
	char *out;
	size_t outlen;
};

/* 1 when path was taken. */
static int consider(struct search *s, const char *path)
{
	if (access(path, R_OK) != 0)
		return 0;
	if (s->self && driver_same_file(path, s->self))
		return 0;
	if (s->try_fn(path, s->ctx) != 0)
		return 0;
	snprintf(s->out, s->outlen, "%s", path);
	return 1;
}

/* The cache's string table holds the full path of every library it knows; scanning its strings
 * for ".../libcuda.so.1" finds them without depending on the cache format version. */
static int search_loader_cache(struct search *s)
{
	/* root's file, writable by nobody else: a cache someone else could write would choose
	 * the library this process loads */
	int fd = gp_open_read(LOADER_CACHE, GP_OPEN_TRUSTED, NULL, 0);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (64 << 20)) {
		close(fd);
		return 0;
	}
	size_t size = st.st_size;
	const char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	int taken = 0;
	const size_t suffix = strlen("/" SONAME);
	for (size_t i = 0; i < size && !taken;) {
		const char *str = map + i;
		size_t n = strnlen(str, size - i);
		if (n < size - i && n > suffix && str[0] == '/' &&
		    !memcmp(str + n - suffix, "/" SONAME, suffix) && n < 4096)
			taken = consider(s, str);
		i += n + 1;
	}
	munmap((void *)map, size);
	return taken;
}

int driver_find(const char *self, driver_try_fn try_fn, void *ctx, char *out, size_t outlen,
		char *looked, size_t lookedlen)
{
	struct search s = {self, try_fn, ctx, out, outlen};
	/* NULL in a setuid or setgid process: its constructors would run with raised privileges */
	const char *env = gp_env_str(GP_VAR_REAL_LIBCUDA);
	if (env) {
		if (consider(&s, env))
			return 0;
		snprintf(looked, lookedlen, "GPUPROBE_REAL_LIBCUDA=%s (%s)", env,
			 access(env, R_OK) ? "not readable" :
			 (self && driver_same_file(env, self)) ? "that is the gpuprobe shim itself" :
			 "not a usable driver");
		return -ENOENT;
	}
	if (search_loader_cache(&s))
		return 0;
	char path[4096];
	size_t used = snprintf(looked, lookedlen, "%s in the loader cache (" LOADER_CACHE ") and in",
			       SONAME);
	for (size_t i = 0; i < sizeof(usual_dirs) / sizeof(usual_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/" SONAME, usual_dirs[i]);
		if (consider(&s, path))
			return 0;
		if (used < lookedlen)
			used += snprintf(looked + used, lookedlen - used, "%s%s", i ? ", " : " ",
					 usual_dirs[i]);
	}
	if (used < lookedlen)
		snprintf(looked + used, lookedlen - used, " (set GPUPROBE_REAL_LIBCUDA to its path)");
	return -ENOENT;
}
