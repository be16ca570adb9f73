/* ptx_launch: load a PTX module through the driver API (whichever libcuda.so.1 the loader finds:
 * under `gpuprobe run`, gpuprobe's) and launch one kernel once on a buffer of WORDS u32 holding
 * 0, 1, 2, ...; print the sum of the buffer after it (tests/e2e/aggregate_test.sh).
 * usage: ptx_launch PTX KERNEL GRID BLOCK WORDS */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

static void *lib;

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "ptx_launch: no %s in libcuda.so.1\n", name);
		exit(2);
	}
	return p;
}

#define CALL(name, ...)                                                                \
	do {                                                                           \
		CUresult r_ = name##_fn(__VA_ARGS__);                                  \
		if (r_) {                                                              \
			fprintf(stderr, "ptx_launch: %s failed: %d\n", #name, r_);     \
			return 1;                                                      \
		}                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: ptx_launch PTX KERNEL GRID BLOCK WORDS\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	static char ptx[1 << 20];
	size_t n = fread(ptx, 1, sizeof(ptx) - 1, f);
	fclose(f);
	ptx[n] = 0;
	unsigned grid = (unsigned)atoi(argv[3]), block = (unsigned)atoi(argv[4]);
	size_t words = (size_t)atol(argv[5]);
	if (!(lib = dlopen("libcuda.so.1", RTLD_NOW))) {
		fprintf(stderr, "ptx_launch: %s\n", dlerror());
		return 2;
	}
	CUresult (*cuInit_fn)(unsigned) = sym("cuInit");
	CUresult (*cuDeviceGet_fn)(int *, int) = sym("cuDeviceGet");
	CUresult (*cuCtxCreate_fn)(void **, unsigned, int) = sym("cuCtxCreate_v2");
	CUresult (*cuModuleLoadData_fn)(void **, const void *) = sym("cuModuleLoadData");
	CUresult (*cuModuleGetFunction_fn)(void **, void *, const char *) = sym("cuModuleGetFunction");
	CUresult (*cuMemAlloc_fn)(CUdeviceptr *, size_t) = sym("cuMemAlloc_v2");
	CUresult (*cuMemcpyHtoD_fn)(CUdeviceptr, const void *, size_t) = sym("cuMemcpyHtoD_v2");
	CUresult (*cuMemcpyDtoH_fn)(void *, CUdeviceptr, size_t) = sym("cuMemcpyDtoH_v2");
	CUresult (*cuLaunchKernel_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
				      unsigned, unsigned, void *, void **, void **) = sym("cuLaunchKernel");
	CUresult (*cuCtxSynchronize_fn)(void) = sym("cuCtxSynchronize");
	int dev;
	void *ctx, *mod, *fn;
	CUdeviceptr buf;
	uint32_t *host = malloc(words * sizeof(*host));
	if (!host)
		return 2;
	for (size_t i = 0; i < words; i++)
		host[i] = (uint32_t)i;
	CALL(cuInit, 0);
	CALL(cuDeviceGet, &dev, 0);
	CALL(cuCtxCreate, &ctx, 0, dev);
	CALL(cuModuleLoadData, &mod, ptx);
	CALL(cuModuleGetFunction, &fn, mod, argv[2]);
	CALL(cuMemAlloc, &buf, words * sizeof(*host));
	CALL(cuMemcpyHtoD, buf, host, words * sizeof(*host));
	void *params[] = {&buf};
	CALL(cuLaunchKernel, fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
	CALL(cuCtxSynchronize);
	CALL(cuMemcpyDtoH, host, buf, words * sizeof(*host));
	uint64_t sum = 0;
	for (size_t i = 0; i < words; i++)
		sum += host[i];
	printf("ptx_launch: %s sum=%llu\n", argv[2], (unsigned long long)sum);
	free(host);
	return 0;
}
