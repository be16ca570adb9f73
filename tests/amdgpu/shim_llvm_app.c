/* Loads one PTX module through whatever libcuda.so.1 the loader finds (the shim, over the fake
 * driver in tests) and looks up a kernel: the application side of shim_llvm.sh.
 * With a third argument "launch": also allocates 256 bytes and launches KERNEL(buffer) over 2 blocks
 * of 32 threads, then synchronizes.
 * usage: shim_llvm_app MODULE.ptx KERNEL [launch] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn_i)(unsigned);
int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
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
	/* a context: a created one, else the primary context (the fake driver has only that), which
	 * probes need at the first module load */
	int (*retain)(void **, int) = (int (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
	int (*set_current)(void *) = (int (*)(void *))dlsym(h, "cuCtxSetCurrent");
	if ((r = init(0)))
		return printf("cuInit: CUDA error %d\n", r), 1;
	if (dev_get && !dev_get(&dev, 0) && !(ctx_create && !ctx_create(&ctx, 0, dev)) && retain && set_current &&
	    !retain(&ctx, dev))
		(void)set_current(ctx);
	if ((r = load(&mod, ptx)) || (r = get_fn(&fn, mod, argv[2]))) {
		printf("CUDA error %d\n", r);
		return 1;
	}
	printf("loaded, kernel %s found\n", argv[2]);
	if (argc == 4) {
		int (*alloc)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))dlsym(h, "cuMemAlloc_v2");
		int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			      void **) = (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
						  void *, void **, void **))dlsym(h, "cuLaunchKernel");
		int (*sync)(void) = (int (*)(void))dlsym(h, "cuCtxSynchronize");
		unsigned long long d = 0;
		void *params[1] = {&d};
		if (!alloc || !launch || !sync || (r = alloc(&d, 256)) || (r = launch(fn, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL)) ||
		    (r = sync())) {
			printf("launch: CUDA error %d\n", r);
			return 1;
		}
		printf("launched\n");
	}
	return 0;
}
