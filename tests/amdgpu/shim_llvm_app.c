/* Loads one PTX module through whatever libcuda.so.1 the loader finds (the shim, over the fake
 * driver in tests) and looks up a kernel: the application side of shim_llvm.sh.
 * usage: shim_llvm_app MODULE.ptx KERNEL */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn_i)(unsigned);
int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	static char ptx[1 << 20];
	size_t n = fread(ptx, 1, sizeof(ptx) - 1, f);
	fclose(f);
	ptx[n] = 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "no libcuda.so.1: %s\n", dlerror());
		return 2;
	}
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*dev_get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
	int (*ctx_create)(void **, unsigned, int) = (int (*)(void **, unsigned, int))dlsym(h, "cuCtxCreate_v2");
	int (*load)(void **, const void *) = (int (*)(void **, const void *))dlsym(h, "cuModuleLoadData");
	int (*get_fn)(void **, void *, const char *) = (int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction");
	int dev, r;
	void *ctx, *mod, *fn;
	if (!init || !load || !get_fn)
		return 2;
	/* a context where the driver has them (the fake driver has none) */
	if ((r = init(0)))
		return printf("cuInit: CUDA error %d\n", r), 1;
	if (dev_get && ctx_create && !dev_get(&dev, 0))
		(void)ctx_create(&ctx, 0, dev);
	if ((r = load(&mod, ptx)) || (r = get_fn(&fn, mod, argv[2]))) {
		printf("CUDA error %d\n", r);
		return 1;
	}
	printf("loaded, kernel %s found\n", argv[2]);
	return 0;
}
