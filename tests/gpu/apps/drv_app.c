/* Driver-API app for the shim's GPU tests: loads PTX with cuModuleLoadDataEx (with JIT
 * options), cuLibraryLoadData and cuLinkCreate/AddData/Complete, and launches with
 * cuLaunchKernel (parameter array and "extra" buffer forms, CUfunction and CUkernel) and
 * cuLaunchKernelEx. Prints checksums; output must be identical with and without the shim.
 * usage: drv_app KERNELS.ptx */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                        \
	do {                                                                         \
		CUresult r_ = (x);                                                   \
		if (r_ != CUDA_SUCCESS) {                                            \
			const char *s_ = "?";                                        \
			cuGetErrorName(r_, &s_);                                     \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#define N 65536

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = calloc(1, n + 1);
	if (fread(s, 1, n, f) != (size_t)n)
		exit(1);
	fclose(f);
	return s;
}

static CUdeviceptr d_x, d_y;
static float h_x[N], h_y[N];

static void run_poly(CUfunction f, const char *how, int use_extra)
{
	float a = 0.5f, b = -1.25f, c = 3.0f;
	int n = N;
	CK(cuMemsetD32(d_y, 0, N));
	if (!use_extra) {
		void *args[] = {&d_x, &d_y, &a, &b, &c, &n};
		CK(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	} else {
		struct { CUdeviceptr x, y; float a, b, c; int n; } buf = {d_x, d_y, a, b, c, n};
		size_t size = sizeof(buf);
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
				 &size, CU_LAUNCH_PARAM_END};
		CK(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h_y, d_y, sizeof(h_y)));
	printf("%-34s poly %016llx\n", how, (unsigned long long)fnv(h_y, sizeof(h_y)));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: drv_app KERNELS.ptx\n");
		return 2;
	}
	char *ptx = read_text(argv[1]);
	CUdevice dev;
	CUcontext ctx;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	for (int i = 0; i < N; i++)
		h_x[i] = (float)(i % 977) / 977.0f;
	CK(cuMemAlloc(&d_x, sizeof(h_x)));
	CK(cuMemAlloc(&d_y, sizeof(h_y)));
	CK(cuMemcpyHtoD(d_x, h_x, sizeof(h_x)));

	/* 1. cuModuleLoadDataEx with JIT options */
	char info[4096] = "", errlog[4096] = "";
	CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
			       CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
			       CU_JIT_OPTIMIZATION_LEVEL};
	void *vals[] = {info, (void *)(uintptr_t)sizeof(info), errlog,
			(void *)(uintptr_t)sizeof(errlog), (void *)(uintptr_t)3};
	CUmodule mod;
	CUfunction poly, iota;
	CK(cuModuleLoadDataEx(&mod, ptx, 5, opts, vals));
	CK(cuModuleGetFunction(&poly, mod, "poly"));
	CK(cuModuleGetFunction(&iota, mod, "iota_mix"));
	run_poly(poly, "cuModuleLoadDataEx+params", 0);
	run_poly(poly, "cuModuleLoadDataEx+extra", 1);

	unsigned seed = 0xC0FFEE;
	int n = N;
	void *iargs[] = {&d_y, &seed, &n};
	CUlaunchConfig cfg = {.gridDimX = N / 256, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256,
			      .blockDimY = 1, .blockDimZ = 1};
	CK(cuLaunchKernelEx(&cfg, iota, iargs, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h_y, d_y, sizeof(h_y)));
	printf("%-34s iota %016llx\n", "cuLaunchKernelEx", (unsigned long long)fnv(h_y, sizeof(h_y)));

	/* 2. cuLibraryLoadData, launched by CUkernel and by its CUfunction */
	CUlibrary lib;
	CUkernel kern;
	CUfunction kf;
	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&kern, lib, "poly"));
	CK(cuKernelGetFunction(&kf, kern));
	run_poly((CUfunction)kern, "cuLibraryLoadData+CUkernel", 0);
	run_poly(kf, "cuLibraryLoadData+CUfunction", 0);

	/* 3. JIT link of the PTX, then the cubin loaded as a module */
	CUlinkState link;
	void *cubin;
	size_t cubin_size;
	CUmodule linked;
	CUfunction lf;
	CK(cuLinkCreate(0, NULL, NULL, &link));
	CK(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1, "drv_kernels.ptx", 0, NULL, NULL));
	CK(cuLinkComplete(link, &cubin, &cubin_size));
	CK(cuModuleLoadData(&linked, cubin));
	CK(cuLinkDestroy(link));
	CK(cuModuleGetFunction(&lf, linked, "poly"));
	run_poly(lf, "cuLink+cuModuleLoadData", 0);

	CK(cuModuleUnload(mod));
	CK(cuModuleUnload(linked));
	CK(cuLibraryUnload(lib));
	CK(cuMemFree(d_x));
	CK(cuMemFree(d_y));
	CK(cuDevicePrimaryCtxRelease(dev));
	printf("done\n");
	return 0;
}
