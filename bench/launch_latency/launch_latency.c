/* launch_latency: what the shim adds to the driver's hottest calls, measured side by side in
 * one process. The real driver and the shim are both loaded (the shim forwards to that same
 * driver instance), and every measurement alternates between calling the driver's entry point
 * directly and calling the shim's, so both see the same GPU, clocks and queue state.
 *
 * usage: launch_latency REAL_LIBCUDA SHIM [ROUNDS]
 * Prints one table row per call: median ns direct, median ns through the shim, ratio. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                           \
	do {                                                                            \
		CUresult r_ = (x);                                                      \
		if (r_ != CUDA_SUCCESS) {                                               \
			fprintf(stderr, "launch_latency: %s failed: %d\n", #x, (int)r_); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

static const char empty_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry empty()\n{\n\tret;\n}\n";

struct api {
	__typeof__(cuLaunchKernel) *launch;
	__typeof__(cuMemcpyHtoD_v2) *htod;
	__typeof__(cuCtxGetCurrent) *get_current;
	__typeof__(cuCtxSynchronize) *sync;
};

static void *must_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "launch_latency: %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static struct api api_of(void *h)
{
	struct api a = {
		.launch = must_sym(h, "cuLaunchKernel"),
		.htod = must_sym(h, "cuMemcpyHtoD_v2"),
		.get_current = must_sym(h, "cuCtxGetCurrent"),
		.sync = must_sym(h, "cuCtxSynchronize"),
	};
	return a;
}

static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static CUfunction empty_fn;
static CUdeviceptr dbuf;

/* Mean ns per call over one block of calls of one kind, through api a. */
enum which { LAUNCH, HTOD, GET_CURRENT };
static double block(const struct api *a, enum which w, int calls)
{
	static unsigned host_word = 42;
	CUcontext c;
	double t0 = now_ns();
	switch (w) {
	case LAUNCH:
		for (int i = 0; i < calls; i++)
			a->launch(empty_fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		break;
	case HTOD:
		for (int i = 0; i < calls; i++)
			a->htod(dbuf, &host_word, 4);
		break;
	case GET_CURRENT:
		for (int i = 0; i < calls; i++)
			a->get_current(&c);
		break;
	}
	double t = (now_ns() - t0) / calls;
	if (w == LAUNCH)
		a->sync();   /* drain the queue outside the timed region */
	return t;
}

static void row(const char *name, enum which w, int calls, int rounds, const struct api *direct,
		const struct api *shim)
{
	double *d = malloc(rounds * sizeof(double)), *s = malloc(rounds * sizeof(double));
	for (int r = 0; r < rounds / 10; r++) {   /* warm-up */
		block(direct, w, calls);
		block(shim, w, calls);
	}
	for (int r = 0; r < rounds; r++) {
		/* alternate the order too, so neither side always runs second */
		if (r & 1) {
			s[r] = block(shim, w, calls);
			d[r] = block(direct, w, calls);
		} else {
			d[r] = block(direct, w, calls);
			s[r] = block(shim, w, calls);
		}
	}
	double md = median(d, rounds), ms = median(s, rounds);
	printf("| %-28s | %10.1f | %10.1f | %6.3f | %+8.1f |\n", name, md, ms, ms / md, ms - md);
	free(d);
	free(s);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: launch_latency REAL_LIBCUDA SHIM [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 400;
	if (rounds < 10)
		rounds = 10;
	void *real = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!real) {
		fprintf(stderr, "launch_latency: %s\n", dlerror());
		return 77;
	}
	setenv("GPUPROBE_REAL_LIBCUDA", argv[1], 1);
	unsetenv("GPUPROBE_LOG");
	void *shim = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!shim) {
		fprintf(stderr, "launch_latency: %s\n", dlerror());
		return 1;
	}
	struct api direct = api_of(real), via = api_of(shim);
	if (direct.launch == via.launch) {
		fprintf(stderr, "launch_latency: %s is not a shim over %s\n", argv[2], argv[1]);
		return 1;
	}

	__typeof__(cuInit) *init = must_sym(shim, "cuInit");   /* through the shim: loads its table */
	CK(init(0));
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	char name[256];
	int version;
	CK(((__typeof__(cuDeviceGet) *)must_sym(real, "cuDeviceGet"))(&dev, 0));
	CK(((__typeof__(cuDeviceGetName) *)must_sym(real, "cuDeviceGetName"))(name, sizeof(name), dev));
	CK(((__typeof__(cuDriverGetVersion) *)must_sym(real, "cuDriverGetVersion"))(&version));
	CK(((__typeof__(cuDevicePrimaryCtxRetain) *)must_sym(real, "cuDevicePrimaryCtxRetain"))(&ctx, dev));
	CK(((__typeof__(cuCtxSetCurrent) *)must_sym(real, "cuCtxSetCurrent"))(ctx));
	CK(((__typeof__(cuModuleLoadData) *)must_sym(real, "cuModuleLoadData"))(&mod, empty_ptx));
	CK(((__typeof__(cuModuleGetFunction) *)must_sym(real, "cuModuleGetFunction"))(&empty_fn, mod, "empty"));
	CK(((__typeof__(cuMemAlloc_v2) *)must_sym(real, "cuMemAlloc_v2"))(&dbuf, 64));

	time_t t = time(NULL);
	char date[32];
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	printf("launch_latency: %s, driver API %d, %s, %d alternating rounds per row\n\n", name,
	       version, date, rounds);
	printf("| %-28s | %10s | %10s | %6s | %8s |\n", "call (median ns per call)", "direct",
	       "shim", "ratio", "added");
	printf("|------------------------------|------------|------------|--------|----------|\n");
	row("cuLaunchKernel, empty kernel", LAUNCH, 100, rounds, &direct, &via);
	row("cuMemcpyHtoD, 4 bytes", HTOD, 20, rounds, &direct, &via);
	row("cuCtxGetCurrent", GET_CURRENT, 1000, rounds, &direct, &via);
	return 0;
}
