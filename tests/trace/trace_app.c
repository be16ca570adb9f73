/* An application of the driver API for tests/trace (over fake_driver.c, through the shim):
 * two threads, each allocating, copying, launching a kernel of its own twice and
 * synchronising; prints "trace_app: ok" when every call succeeded.
 * usage: trace_app (libcuda.so.1 found by dlopen: LD_LIBRARY_PATH picks the shim) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
static void *drv;
static int failed;

#define CALL(name, type, ...)                                                            \
	do {                                                                             \
		CUresult (*f_) type = (CUresult(*) type)dlsym(drv, #name);               \
		CUresult rc_ = f_ ? f_(__VA_ARGS__) : -1;                                \
		if (rc_) {                                                               \
			printf("trace_app: %s failed: %d\n", #name, rc_);                \
			__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);                  \
		}                                                                        \
	} while (0)

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry _Z6scaleAPf(.param .u64 p) { ret; }\n"
	".visible .entry _Z6scaleBPf(.param .u64 p) { ret; }\n";

static void *worker(void *arg)
{
	const char *kernel = arg;
	void *mod, *fn;
	unsigned long long d;
	float host[64] = {0};
	CALL(cuModuleLoadData, (void **, const void *), &mod, ptx);
	CALL(cuModuleGetFunction, (void **, void *, const char *), &fn, mod, kernel);
	CALL(cuMemAlloc_v2, (unsigned long long *, size_t), &d, sizeof(host));
	CALL(cuMemcpyHtoD_v2, (unsigned long long, const void *, size_t), d, host, sizeof(host));
	void *params[] = {&d};
	for (int i = 0; i < 2; i++)
		CALL(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				      unsigned, void *, void **, void **),
		     fn, 4, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	CALL(cuCtxSynchronize, (void));
	CALL(cuMemcpyDtoH_v2, (void *, unsigned long long, size_t), host, d, sizeof(host));
	CALL(cuMemFree_v2, (unsigned long long), d);
	return NULL;
}

int main(void)
{
	drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!drv) {
		printf("trace_app: no libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	int dev;
	void *ctx;
	CALL(cuInit, (unsigned), 0);
	CALL(cuDeviceGet, (int *, int), &dev, 0);
	CALL(cuDevicePrimaryCtxRetain, (void **, int), &ctx, dev);
	CALL(cuCtxSetCurrent, (void *), ctx);
	pthread_t a, b;
	pthread_create(&a, NULL, worker, "_Z6scaleAPf");
	pthread_join(a, NULL);   /* one after the other: the kernels' order is known */
	pthread_create(&b, NULL, worker, "_Z6scaleBPf");
	pthread_join(b, NULL);
	printf("trace_app: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
