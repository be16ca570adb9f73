/* Which library answers a dlopen of an absolute libcuda.so.1 path, and one linked through
 * DT_RPATH? usage: absdlopen PATH. Prints "dlopen: <file that defines cuInit>",
 * "linked: <file that defines the cuInit this program links>" and the driver version the
 * call returns. */
#include <dlfcn.h>
#include <stdio.h>

int cuInit(unsigned flags);   /* from libcuda.so.1, linked through DT_RPATH */

static const char *owner(void *p)
{
	Dl_info di;
	return p && dladdr(p, &di) && di.dli_fname ? di.dli_fname : "?";
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	int v = -1;
	int (*get_version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
	int rc = get_version ? get_version(&v) : -1;
	printf("dlopen: %s\n", owner(dlsym(h, "cuInit")));
	printf("linked: %s\n", owner((void *)cuInit));
	printf("cuDriverGetVersion %d version %d\n", rc, v);
	printf("cuInit %d\n", cuInit(0));
	return 0;
}
