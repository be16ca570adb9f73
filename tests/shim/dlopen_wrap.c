/* An LD_PRELOAD library that wraps dlopen, as tools like compute-sanitizer do: every dlopen
 * then reaches glibc from this library, not from its real caller. The shim must still load
 * its real driver under `gpuprobe run` (whose LD_AUDIT module redirects libcuda loads). */
#include <dlfcn.h>

void *dlopen(const char *file, int mode)
{
	static void *(*real_dlopen)(const char *, int);
	if (!real_dlopen)
		real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	return real_dlopen(file, mode);
}
