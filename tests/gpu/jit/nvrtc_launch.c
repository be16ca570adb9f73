/* tests/gpu/jit.sh: an NVRTC program that loads a cubin. NVRTC (loaded by name, as CuPy and
 * PyTorch load it) compiles scale() for the device's sm_XX, the program loads the cubin with
 * cuModuleLoadData and launches it over N = 2^20 floats in blocks of 256 (4096 blocks), then
 * checks every element. Prints the launch's shape and "ok"; exits 1 on any failure.
 * usage: nvrtc_launch */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static const char src[] =
	"extern \"C\" __global__ void scale(float *x, float a, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tx[i] *= a;\n"
	"}\n";

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		printf("FAIL dlsym %s\n", name);
		exit(1);
	}
	return p;
}

#define CK(call)                                                        \
	do {                                                            \
		int rc_ = (call);                                       \
		if (rc_) {                                              \
			printf("FAIL %s: %d\n", #call, rc_);            \
			return 1;                                       \
		}                                                       \
	} while (0)

int main(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *nv = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!cu || !nv) {
		printf("FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	CUresult (*init)(unsigned) = sym(cu, "cuInit");
	CUresult (*dev_get)(int *, int) = sym(cu, "cuDeviceGet");
	CUresult (*attr)(int *, int, int) = sym(cu, "cuDeviceGetAttribute");
	CUresult (*retain)(void **, int) = sym(cu, "cuDevicePrimaryCtxRetain");
	CUresult (*set)(void *) = sym(cu, "cuCtxSetCurrent");
	CUresult (*load)(void **, const void *) = sym(cu, "cuModuleLoadData");
	CUresult (*getf)(void **, void *, const char *) = sym(cu, "cuModuleGetFunction");
	CUresult (*alloc)(uint64_t *, size_t) = sym(cu, "cuMemAlloc_v2");
	CUresult (*htod)(uint64_t, const void *, size_t) = sym(cu, "cuMemcpyHtoD_v2");
	CUresult (*dtoh)(void *, uint64_t, size_t) = sym(cu, "cuMemcpyDtoH_v2");
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **) = sym(cu, "cuLaunchKernel");
	CUresult (*sync)(void) = sym(cu, "cuCtxSynchronize");
	int (*create)(void **, const char *, const char *, int, const char *const *,
		      const char *const *) = sym(nv, "nvrtcCreateProgram");
	int (*compile)(void *, int, const char *const *) = sym(nv, "nvrtcCompileProgram");
	int (*cubin_size)(void *, size_t *) = sym(nv, "nvrtcGetCUBINSize");
	int (*cubin)(void *, char *) = sym(nv, "nvrtcGetCUBIN");

	int dev, major, minor;
	void *ctx, *mod, *fn, *prog;
	CK(init(0));
	CK(dev_get(&dev, 0));
	CK(attr(&major, 75, dev));
	CK(attr(&minor, 76, dev));
	CK(retain(&ctx, dev));
	CK(set(ctx));
	char arch[32];
	snprintf(arch, sizeof(arch), "-arch=sm_%d%d", major, minor);
	const char *opts[] = {arch, "-lineinfo"};
	CK(create(&prog, src, "scale.cu", 0, NULL, NULL));
	CK(compile(prog, 2, opts));
	size_t n = 0;
	CK(cubin_size(prog, &n));
	char *bin = malloc(n);
	CK(cubin(prog, bin));
	CK(load(&mod, bin));   /* a cubin: no PTX in the image */
	CK(getf(&fn, mod, "scale"));
	enum { N = 1 << 20, BLOCK = 256 };
	float *h = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++)
		h[i] = (float)i;
	uint64_t d;
	CK(alloc(&d, N * sizeof(float)));
	CK(htod(d, h, N * sizeof(float)));
	float a = 2.0f;
	int nn = N;
	void *args[] = {&d, &a, &nn};
	CK(launch(fn, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL, args, NULL));
	CK(sync());
	CK(dtoh(h, d, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		if (h[i] != 2.0f * (float)i) {
			printf("FAIL element %d: %g\n", i, h[i]);
			return 1;
		}
	printf("kernel scale programs %d threads %d (%s)\nresult ok\n", N / BLOCK, BLOCK, arch);
	return 0;
}
