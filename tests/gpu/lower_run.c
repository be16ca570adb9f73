/* Runs the bpf_conformance module made by tests/lower/lower_corpus on the GPU: every program in
 * one launch (thread i runs program i), each r0 compared with the test's "-- result".
 * usage: lower_gpu_run MODULE.ptx MANIFEST
 * Prints "N passed / M failed" and each failure; exit 0 when all pass, 1 on failures, 77 when
 * there is no GPU or driver. The driver API is reached with dlopen so that this builds and
 * skips cleanly on machines without libcuda. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUres;
typedef int CUdev;
typedef void *CUctx, *CUmod, *CUfn;
typedef unsigned long long CUptr;

static struct {
	CUres (*Init)(unsigned);
	CUres (*DeviceGetCount)(int *);
	CUres (*DeviceGet)(CUdev *, int);
	CUres (*DeviceGetName)(char *, int, CUdev);
	CUres (*PrimaryCtxRetain)(CUctx *, CUdev);
	CUres (*CtxSetCurrent)(CUctx);
	CUres (*ModuleLoadDataEx)(CUmod *, const void *, unsigned, int *, void **);
	CUres (*ModuleGetFunction)(CUfn *, CUmod, const char *);
	CUres (*MemAlloc)(CUptr *, size_t);
	CUres (*MemcpyHtoD)(CUptr, const void *, size_t);
	CUres (*MemcpyDtoH)(void *, CUptr, size_t);
	CUres (*LaunchKernel)(CUfn, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **);
	CUres (*CtxSynchronize)(void);
	CUres (*GetErrorString)(CUres, const char **);
} cu;

static const char *errstr(CUres r)
{
	const char *s = NULL;
	if (cu.GetErrorString)
		cu.GetErrorString(r, &s);
	return s ? s : "unknown error";
}

#define CHECK(call)                                                                   \
	do {                                                                          \
		CUres r_ = (call);                                                    \
		if (r_) {                                                             \
			fprintf(stderr, "lower.gpu: %s failed: %s (%d)\n", #call, errstr(r_), r_); \
			return 1;                                                     \
		}                                                                     \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	if (p) {
		p[n] = 0;
		*len = (size_t)n;
	}
	return p;
}

struct test {
	char name[128];
	unsigned long long expected;
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s MODULE.ptx MANIFEST\n", argv[0]);
		return 2;
	}
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		printf("SKIP: no CUDA driver (libcuda.so.1): %s\n", dlerror());
		return 77;
	}
#define SYM(field, name) *(void **)&cu.field = dlsym(lib, name)
	SYM(Init, "cuInit"); SYM(DeviceGetCount, "cuDeviceGetCount"); SYM(DeviceGet, "cuDeviceGet");
	SYM(DeviceGetName, "cuDeviceGetName"); SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent"); SYM(ModuleLoadDataEx, "cuModuleLoadDataEx");
	SYM(ModuleGetFunction, "cuModuleGetFunction"); SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"); SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(LaunchKernel, "cuLaunchKernel"); SYM(CtxSynchronize, "cuCtxSynchronize");
	SYM(GetErrorString, "cuGetErrorString");
#undef SYM
	for (void **p = (void **)&cu; p < (void **)(&cu + 1); p++)
		if (!*p) {
			printf("SKIP: libcuda.so.1 lacks a driver API entry point\n");
			return 77;
		}
	int ndev = 0;
	if (cu.Init(0) || cu.DeviceGetCount(&ndev) || ndev == 0) {
		printf("SKIP: no GPU (cuInit/cuDeviceGetCount found none)\n");
		return 77;
	}

	/* manifest: "run INDEX NAME EXPECTED" and "skip NAME REASON" lines */
	FILE *mf = fopen(argv[2], "r");
	if (!mf) {
		perror(argv[2]);
		return 2;
	}
	struct test *tests = NULL;
	size_t n = 0, cap = 0, skipped = 0;
	char line[1024];
	while (fgets(line, sizeof(line), mf)) {
		unsigned idx;
		char name[128];
		unsigned long long exp;
		if (sscanf(line, "run %u %127s %llx", &idx, name, &exp) == 3) {
			if (idx != n) {
				fprintf(stderr, "lower.gpu: manifest out of order at %s\n", name);
				return 2;
			}
			if (n == cap && !(tests = realloc(tests, (cap = cap ? 2 * cap : 512) * sizeof(*tests))))
				return 2;
			snprintf(tests[n].name, sizeof(tests[n].name), "%s", name);
			tests[n++].expected = exp;
		} else if (!strncmp(line, "skip ", 5)) {
			skipped++;
			printf("skipped: %s", line + 5);
		}
	}
	fclose(mf);
	size_t plen;
	char *ptx = read_file(argv[1], &plen);
	if (!ptx || !n) {
		fprintf(stderr, "lower.gpu: cannot read %s or no tests in %s\n", argv[1], argv[2]);
		return 2;
	}

	CUdev dev;
	CUctx ctx;
	char devname[128] = "";
	CHECK(cu.DeviceGet(&dev, 0));
	cu.DeviceGetName(devname, sizeof(devname), dev);
	CHECK(cu.PrimaryCtxRetain(&ctx, dev));
	CHECK(cu.CtxSetCurrent(ctx));

	enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };
	static char log[8192];
	int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(uintptr_t)sizeof(log)};
	CUmod mod;
	double t0 = now_ms();
	CUres r = cu.ModuleLoadDataEx(&mod, ptx, 2, opts, vals);
	double t_jit = now_ms() - t0;
	if (r) {
		fprintf(stderr, "lower.gpu: cuModuleLoadDataEx: %s (%d)\n%s\n", errstr(r), r, log);
		return 1;
	}
	CUfn fn;
	CHECK(cu.ModuleGetFunction(&fn, mod, "gp_conformance"));
	CUptr out;
	unsigned long long *host = malloc(n * sizeof(*host));
	for (size_t i = 0; i < n; i++)
		host[i] = 0xdeadbeefcafef00dull;   /* left there by a thread that never stored */
	CHECK(cu.MemAlloc(&out, n * sizeof(*host)));
	CHECK(cu.MemcpyHtoD(out, host, n * sizeof(*host)));
	unsigned count = (unsigned)n, block = 128;
	void *args[] = {&out, &count};
	t0 = now_ms();
	CHECK(cu.LaunchKernel(fn, (count + block - 1) / block, 1, 1, block, 1, 1, 0, NULL, args, NULL));
	CHECK(cu.CtxSynchronize());
	double t_run = now_ms() - t0;
	CHECK(cu.MemcpyDtoH(host, out, n * sizeof(*host)));

	size_t pass = 0, fail = 0;
	for (size_t i = 0; i < n; i++) {
		if (host[i] == tests[i].expected) {
			pass++;
			continue;
		}
		if (fail++ < 50)
			printf("FAIL %s: r0 = 0x%llx, expected 0x%llx\n", tests[i].name, host[i],
			       tests[i].expected);
		else if (fail == 51)
			printf("(further failures not listed)\n");
	}
	printf("lower.gpu: %s: %zu programs in one launch (JIT %.1f ms, launch+sync %.3f ms)\n", devname,
	       n, t_jit, t_run);
	printf("lower.gpu: %zu passed / %zu failed (%zu skipped)\n", pass, fail, skipped);
	free(host);
	free(tests);
	free(ptx);
	return fail ? 1 : 0;
}
