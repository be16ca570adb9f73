/* The application of tests/shim_lazy/lazy.sh, over the shim and fake_lazy_driver.c: loads a
 * module of several kernels, writes its variable g (42) and the first word of its constant
 * array c (7) through the driver's symbol lookups, sets a kernel attribute, and launches one
 * kernel (k_use) twice. Every call must succeed: the application never sees an error of ours.
 * usage: lazy_app SHIM PTX [module|library] [BLOCK] [DYNAMIC_SHARED] [MAX_DYNAMIC_SHARED]
 *        (library: with LAZY_APP_LOADER=LIB.so, LIB's loader_library_load makes the load call)
 *        lazy_app SHIM PTX threads: k_use and k_plain first launched at once from two threads */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static void *shim;
static int fails;

static void *sym(const char *name)
{
	void *p = dlsym(shim, name);
	if (!p) {
		printf("FAIL dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static void call(const char *what, CUresult rc)
{
	printf("app: %s rc=%d\n", what, rc);
	fflush(stdout);
	fails += rc != 0;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* threads mode: each thread launches its kernel once, both released together. */
static pthread_barrier_t together;
static CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, void *, void **, void **);
static CUresult thread_rc[2];

static void *launcher(void *f)
{
	static int next;
	int me = __atomic_fetch_add(&next, 1, __ATOMIC_SEQ_CST);
	pthread_barrier_wait(&together);
	thread_rc[me] = launch_fn(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL);
	return NULL;
}

static int two_threads(char *ptx)
{
	void *mod = NULL, *f[2] = {NULL, NULL};
	int opts[] = {0};
	void *vals[] = {(void *)(uintptr_t)64};
	CUresult (*load)(void **, const void *, unsigned, int *, void **) = sym("cuModuleLoadDataEx");
	call("cuModuleLoadDataEx", load(&mod, ptx, 1, opts, vals));
	CUresult (*func)(void **, void *, const char *) = sym("cuModuleGetFunction");
	call("cuModuleGetFunction k_use", func(&f[0], mod, "k_use"));
	call("cuModuleGetFunction k_plain", func(&f[1], mod, "k_plain"));
	launch_fn = sym("cuLaunchKernel");
	pthread_barrier_init(&together, NULL, 2);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, launcher, f[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	call("cuLaunchKernel from thread 1", thread_rc[0]);
	call("cuLaunchKernel from thread 2", thread_rc[1]);
	free(ptx);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: lazy_app SHIM PTX [module|library] [BLOCK] [DYNAMIC_SHARED] "
			"[MAX_DYNAMIC_SHARED]\n");
		return 2;
	}
	shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	char *ptx = read_text(argv[2]);
	if (!shim || !ptx) {
		printf("FAIL dlopen %s or read %s\n", argv[1], argv[2]);
		return 1;
	}
	int library = argc > 3 && !strcmp(argv[3], "library");
	if (argc > 3 && !strcmp(argv[3], "threads")) {
		call("cuInit", ((CUresult (*)(unsigned))sym("cuInit"))(0));
		return two_threads(ptx);
	}
	unsigned block = argc > 4 ? (unsigned)atoi(argv[4]) : 128;
	unsigned smem = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
	int max_dyn = argc > 6 ? atoi(argv[6]) : 0;

	call("cuInit", ((CUresult (*)(unsigned))sym("cuInit"))(0));
	void *mod = NULL, *f = NULL;
	uint64_t g = 0, c = 0;
	size_t bytes = 0;
	if (library) {
		CUresult (*load)(void **, const void *, void *, void **, unsigned, void *, void **,
				 unsigned) = sym("cuLibraryLoadData");
		const char *loader = getenv("LAZY_APP_LOADER");
		if (loader) {
			void *h = dlopen(loader, RTLD_NOW | RTLD_LOCAL);
			int (*via)(void *, void **, const void *) = h ? dlsym(h, "loader_library_load") : NULL;
			if (!via) {
				printf("FAIL loader %s: %s\n", loader, dlerror());
				return 1;
			}
			call("cuLibraryLoadData", via((void *)load, &mod, ptx));
		} else
			call("cuLibraryLoadData", load(&mod, ptx, NULL, NULL, 0, NULL, NULL, 0));
		CUresult (*get)(uint64_t *, size_t *, void *, const char *) = sym("cuLibraryGetGlobal");
		call("cuLibraryGetGlobal g", get(&g, &bytes, mod, "g"));
		call("cuLibraryGetGlobal c", get(&c, &bytes, mod, "c"));
		CUresult (*kernel)(void **, void *, const char *) = sym("cuLibraryGetKernel");
		call("cuLibraryGetKernel k_use", kernel(&f, mod, "k_use"));
	} else {
		int opts[] = {0};                     /* CU_JIT_MAX_REGISTERS */
		void *vals[] = {(void *)(uintptr_t)64};
		CUresult (*load)(void **, const void *, unsigned, int *, void **) =
			sym("cuModuleLoadDataEx");
		call("cuModuleLoadDataEx", load(&mod, ptx, 1, opts, vals));
		CUresult (*get)(uint64_t *, size_t *, void *, const char *) = sym("cuModuleGetGlobal_v2");
		call("cuModuleGetGlobal g", get(&g, &bytes, mod, "g"));
		call("cuModuleGetGlobal c", get(&c, &bytes, mod, "c"));
		CUresult (*func)(void **, void *, const char *) = sym("cuModuleGetFunction");
		call("cuModuleGetFunction k_use", func(&f, mod, "k_use"));
	}
	/* What cudaMemcpyToSymbol does. */
	CUresult (*htod)(uint64_t, const void *, size_t) = sym("cuMemcpyHtoD_v2");
	uint32_t v42 = 42, v7 = 7;
	call("cuMemcpyHtoD g", htod(g, &v42, 4));
	call("cuMemcpyHtoD c", htod(c, &v7, 4));
	if (max_dyn) {
		CUresult (*set)(void *, int, int) = sym("cuFuncSetAttribute");
		call("cuFuncSetAttribute max dynamic shared", set(f, 8, max_dyn));
	}
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **) = sym("cuLaunchKernel");
	for (int i = 0; i < 2; i++)
		call("cuLaunchKernel k_use", launch(f, 1, 1, 1, block, 1, 1, smem, NULL, NULL, NULL));
	if (max_dyn) {
		/* Set after the first launch: the instrumented function follows. */
		CUresult (*set)(void *, int, int) = sym("cuFuncSetAttribute");
		call("cuFuncSetAttribute max dynamic shared again", set(f, 8, max_dyn + 1024));
	}
	CUresult (*unload)(void *) = sym(library ? "cuLibraryUnload" : "cuModuleUnload");
	call("unload", unload(mod));
	free(ptx);
	return fails ? 1 : 0;
}
