/* An application of CUDA graphs, as graphExecution (HeCBench) is under CUDA's lazy loading:
 * the stream is captured in global mode and its module is loaded inside the capture, at the
 * first launch (the CUDA runtime's lazy cuLibraryLoadData); the graph is then replayed. Also a
 * graph built by hand (cuGraphAddKernelNode_v2 with a function of cuKernelGetFunction, then
 * changed with cuGraphExecKernelNodeSetParams_v2) and plain launches. It prints its results on stdout; tests/shim/capture.sh compares them with the
 * same run without the shim. Driver API through dlopen("libcuda.so.1"): LD_LIBRARY_PATH picks
 * the shim or the driver behind it.
 * usage: capture_app FATBIN (with kernels scale and vec_add, tests/shim/kernels.cu); environment
 * CAPTURE_APP_WAIT_MS=N keeps the capture open N ms
 * Exits 1 at the first call that fails, naming it (the real application crashes there). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static void *drv;

static void *sym(const char *name)
{
	void *p = dlsym(drv, name);
	if (!p) {
		printf("FAIL dlsym %s\n", name);
		exit(1);
	}
	return p;
}

#define CALL(name, type, ...)                                                                \
	do {                                                                                 \
		CUresult rc_ = ((CUresult(*) type)sym(#name))(__VA_ARGS__);                 \
		if (rc_) {                                                                   \
			const char *s_ = "?";                                                \
			((CUresult(*)(CUresult, const char **))sym("cuGetErrorName"))(rc_, &s_); \
			printf("FAIL %s: %s\n", #name, s_);                                  \
			fflush(stdout);                                                      \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

#define N 1000
static float hx[N], hy[N];

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("FAIL open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL read %s\n", path);
		exit(1);
	}
	fclose(f);
	return buf;
}

static void result(const char *what, float factor)
{
	double sum = 0;
	int bad = 0;
	for (int i = 0; i < N; i++) {
		sum += hy[i];
		bad += hy[i] != hx[i] * factor;
	}
	printf("%s: sum %.1f, %s\n", what, sum, bad ? "FAIL" : "PASS");
}

/* struct CUDA_KERNEL_NODE_PARAMS (v2), spelled out */
struct node_params {
	void *func;
	unsigned g[3], b[3], shmem;
	void **params, **extra;
	void *kern, *ctx;
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: capture_app FATBIN\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!drv) {
		printf("FAIL dlopen libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	void *image = read_file(argv[1]);
	int dev = 0, n = N;
	void *ctx, *stream, *graph, *exec, *lib, *kscale, *kadd, *fscale, *graph2, *exec2, *node;
	CUdeviceptr dx, dy, dz;
	for (int i = 0; i < N; i++)
		hx[i] = (float)(i % 97) * 0.5f;

	CALL(cuInit, (unsigned), 0);
	CALL(cuDeviceGet, (int *, int), &dev, 0);
	CALL(cuDevicePrimaryCtxRetain, (void **, int), &ctx, dev);
	CALL(cuCtxSetCurrent, (void *), ctx);
	CALL(cuMemAlloc_v2, (CUdeviceptr *, size_t), &dx, sizeof(hx));
	CALL(cuMemAlloc_v2, (CUdeviceptr *, size_t), &dy, sizeof(hx));
	CALL(cuMemAlloc_v2, (CUdeviceptr *, size_t), &dz, sizeof(hx));
	CALL(cuStreamCreate, (void **, unsigned), &stream, 0);   /* blocking, as cudaStreamCreate */

	/* 1. Capture in global mode; the module loads at its first launch, inside the capture. */
	CALL(cuStreamBeginCapture_v2, (void *, int), stream, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */);
	CALL(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, void *), dx, hx, sizeof(hx),
	     stream);
	CALL(cuLibraryLoadData, (void **, const void *, void *, void **, unsigned, void *, void **,
				 unsigned), &lib, image, NULL, NULL, 0, NULL, NULL, 0);
	CALL(cuLibraryGetKernel, (void **, void *, const char *), &kscale, lib, "scale");
	CALL(cuLibraryGetKernel, (void **, void *, const char *), &kadd, lib, "vec_add");
	float two = 2.0f;
	void *scale_args[] = {&dx, &two, &n}, *add_args[] = {&dx, &dx, &dy, &n};
	CALL(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **),
	     kscale, 4, 1, 1, 256, 1, 1, 0, stream, scale_args, NULL);
	CALL(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **),
	     kadd, 4, 1, 1, 256, 1, 1, 0, stream, add_args, NULL);
	CALL(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, void *), hy, dy, sizeof(hy),
	     stream);
	/* CAPTURE_APP_WAIT_MS=N: the capture stays open N ms (other threads' calls meet it) */
	const char *wait = getenv("CAPTURE_APP_WAIT_MS");
	if (wait && atoi(wait) > 0)
		usleep((useconds_t)atoi(wait) * 1000);
	CALL(cuStreamEndCapture, (void *, void **), stream, &graph);
	printf("capture: ok\n");
	CALL(cuGraphInstantiateWithFlags, (void **, void *, unsigned long long), &exec, graph, 0);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < N; i++)
			hy[i] = -1;
		CALL(cuGraphLaunch, (void *, void *), exec, stream);
		CALL(cuStreamSynchronize, (void *), stream);
		char what[64];
		snprintf(what, sizeof(what), "captured graph, replay %d", r);
		result(what, 4.0f);
	}

	/* 2. A graph built node by node, with the function of the kernel. */
	CALL(cuKernelGetFunction, (void **, void *), &fscale, kscale);
	float three = 3.0f;
	void *scale_z[] = {&dz, &three, &n}, *scale_args_z2[] = {&dz, &two, &n};
	struct node_params np = {.func = fscale, .g = {4, 1, 1}, .b = {256, 1, 1},
				 .params = scale_z};
	CALL(cuGraphCreate, (void **, unsigned), &graph2, 0);
	CALL(cuGraphAddKernelNode_v2, (void **, void *, const void *, size_t, const void *), &node,
	     graph2, NULL, 0, &np);
	CALL(cuGraphInstantiateWithFlags, (void **, void *, unsigned long long), &exec2, graph2, 0);
	CALL(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, void *), dz, hx, sizeof(hx),
	     stream);
	CALL(cuGraphLaunch, (void *, void *), exec2, stream);
	CALL(cuGraphLaunch, (void *, void *), exec2, stream);
	CALL(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, void *), hy, dz, sizeof(hy),
	     stream);
	CALL(cuStreamSynchronize, (void *), stream);
	result("built graph, two launches", 9.0f);
	/* the node changed in the executable graph: scale by 2 instead, twice more */
	np.params = scale_args_z2;
	CALL(cuGraphExecKernelNodeSetParams_v2, (void *, void *, const void *), exec2, node, &np);
	CALL(cuGraphLaunch, (void *, void *), exec2, stream);
	CALL(cuGraphLaunch, (void *, void *), exec2, stream);
	CALL(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, void *), hy, dz, sizeof(hy),
	     stream);
	CALL(cuStreamSynchronize, (void *), stream);
	result("built graph, node changed, two more launches", 36.0f);

	/* 3. The same work launched into the stream. */
	CALL(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, void *), dx, hx, sizeof(hx),
	     stream);
	CALL(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **),
	     kscale, 4, 1, 1, 256, 1, 1, 0, stream, scale_args, NULL);
	CALL(cuLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **),
	     fscale, 4, 1, 1, 256, 1, 1, 0, stream, scale_args, NULL);
	CALL(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, void *), hy, dx, sizeof(hy),
	     stream);
	CALL(cuStreamSynchronize, (void *), stream);
	result("stream", 4.0f);

	CALL(cuGraphExecDestroy, (void *), exec2);
	CALL(cuGraphDestroy, (void *), graph2);
	CALL(cuGraphExecDestroy, (void *), exec);
	CALL(cuGraphDestroy, (void *), graph);
	CALL(cuLibraryUnload, (void *), lib);
	CALL(cuStreamDestroy_v2, (void *), stream);
	CALL(cuMemFree_v2, (CUdeviceptr), dx);
	CALL(cuMemFree_v2, (CUdeviceptr), dy);
	CALL(cuMemFree_v2, (CUdeviceptr), dz);
	CALL(cuDevicePrimaryCtxRelease_v2, (int), dev);
	printf("done\n");
	return 0;
}
