/* Where a first-launch compile's time goes: cuModuleLoadDataEx of PTX (the driver's JIT) timed
 * per call in one process, the JIT cache off: tiny PTX twice (fixed start-up cost vs per-module
 * cost), then each PTX file named on the command line. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static const char *tiny(int i) {
	static char b[512];
	snprintf(b, sizeof b, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k%d(.param .u64 p){ .reg .b64 %%rd<3>; ld.param.u64 %%rd1,[p]; cvta.to.global.u64 %%rd2,%%rd1; st.global.u32 [%%rd2], %d; ret; }\n", i, i);
	return b;
}
int main(int argc, char **argv) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CUresult (*init)(unsigned) = dlsym(h, "cuInit");
	CUresult (*dev)(CUdevice *, int) = dlsym(h, "cuDeviceGet");
	CUresult (*ctxc)(CUcontext *, CUdevice) = dlsym(h, "cuDevicePrimaryCtxRetain");
	CUresult (*setc)(CUcontext) = dlsym(h, "cuCtxSetCurrent");
	CUresult (*load)(CUmodule *, const void *, unsigned, CUjit_option *, void **) = dlsym(h, "cuModuleLoadDataEx");
	double t = now(); init(0); CUdevice d; dev(&d, 0); CUcontext c; ctxc(&c, d); setc(c);
	printf("init+context %.1f ms\n", now() - t);
	for (int i = 0; i < 3; i++) { CUmodule m; t = now(); CUresult rc = load(&m, tiny(i), 0, NULL, NULL); printf("tiny PTX #%d: %.1f ms (rc %d)\n", i, now() - t, rc); }
	for (int a = 1; a < argc; a++) {
		FILE *f = fopen(argv[a], "rb"); if (!f) continue; fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
		char *p = calloc(1, n + 1); fread(p, 1, n, f); fclose(f);
		CUmodule m; t = now(); CUresult rc = load(&m, p, 0, NULL, NULL);
		printf("%s (%ld bytes): %.1f ms (rc %d)\n", argv[a], n, now() - t, rc);
	}
	return 0;
}
