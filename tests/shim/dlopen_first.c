/* An application whose first contact with the driver is a dlopen of its absolute path (no
 * libcuda linked). usage: dlopen_first PATH. Prints the file that answers and the driver
 * version it reports. */
#include <dlfcn.h>
#include <stdio.h>

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
	Dl_info di;
	void *init = dlsym(h, "cuInit");
	printf("dlopen: %s\n", init && dladdr(init, &di) ? di.dli_fname : "?");
	printf("cuDriverGetVersion %d version %d\n", rc, v);
	return 0;
}
