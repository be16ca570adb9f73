/* tests/jit_capture/nvrtc.sh's program: NVRTC and nvJitLink loaded by name (dlopen, as CuPy
 * and PyTorch load them), a kernel compiled to a cubin (-arch=sm_90 -lineinfo), then its PTX
 * linked by nvJitLink to a second cubin; then the kernel compiled to LTO-IR (-dlto) and linked
 * with -lto to a third. Writes DIR/nvrtc.cubin, DIR/nvrtc.ptx, DIR/jitlink.cubin, DIR/lto.cubin;
 * prints each call's result. With LIBDIR, both are loaded by absolute path
 * from there instead.
 * usage: nvrtc_app DIR [LIBDIR] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *prog_t;
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

static int put(const char *dir, const char *name, const void *data, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n)
		return -1;
	return fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	/* by name, or (DIR given) by absolute path, as a Python package's copy is loaded */
	char pn[4096] = "libnvrtc.so.13", pj[4096] = "libnvJitLink.so.13";
	if (argc > 2) {
		snprintf(pn, sizeof(pn), "%s/libnvrtc.so.13", argv[2]);
		snprintf(pj, sizeof(pj), "%s/libnvJitLink.so.13", argv[2]);
	}
	void *nv = dlopen(pn, RTLD_NOW | RTLD_LOCAL);
	void *jl = dlopen(pj, RTLD_NOW | RTLD_LOCAL);
	if (!nv || !jl) {
		printf("FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	int (*create)(prog_t *, const char *, const char *, int, const char *const *,
		      const char *const *) = sym(nv, "nvrtcCreateProgram");
	int (*compile)(prog_t, int, const char *const *) = sym(nv, "nvrtcCompileProgram");
	int (*cubin_size)(prog_t, size_t *) = sym(nv, "nvrtcGetCUBINSize");
	int (*cubin)(prog_t, char *) = sym(nv, "nvrtcGetCUBIN");
	int (*ptx_size)(prog_t, size_t *) = sym(nv, "nvrtcGetPTXSize");
	int (*ptx)(prog_t, char *) = sym(nv, "nvrtcGetPTX");
	const char *(*errstr)(int) = sym(nv, "nvrtcGetErrorString");
	int (*version)(int *, int *) = sym(nv, "nvrtcVersion");
	int major = 0, minor = 0;
	int vrc = version(&major, &minor);
	printf("nvrtcVersion %d (%d.x)\n", vrc, major);
	prog_t p;
	printf("nvrtcCreateProgram %d\n", create(&p, src, "scale.cu", 0, NULL, NULL));
	const char *opts[] = {"-arch=sm_90", "-lineinfo", "--maxrregcount=40"};
	int rc = compile(p, 3, opts);
	printf("nvrtcCompileProgram %d (%s)\n", rc, errstr(rc));
	if (rc)
		return 1;
	size_t n = 0, m = 0;
	printf("nvrtcGetCUBINSize %d\n", cubin_size(p, &n));
	char *c = malloc(n);
	printf("nvrtcGetCUBIN %d\n", cubin(p, c));
	ptx_size(p, &m);
	char *t = malloc(m);
	printf("nvrtcGetPTX %d\n", ptx(p, t));
	if (put(argv[1], "nvrtc.cubin", c, n) || put(argv[1], "nvrtc.ptx", t, strlen(t)))
		return 1;

	/* The same PTX, linked by nvJitLink (the header's inline functions call
	 * the versioned names). */
	int (*lcreate)(void **, uint32_t, const char *const *) = sym(jl, "__nvJitLinkCreate_13_0");
	int (*ladd)(void *, int, const void *, size_t, const char *) =
		sym(jl, "__nvJitLinkAddData_13_0");
	int (*lcomplete)(void *) = sym(jl, "__nvJitLinkComplete_13_0");
	int (*lsize)(void *, size_t *) = sym(jl, "__nvJitLinkGetLinkedCubinSize_13_0");
	int (*lget)(void *, void *) = sym(jl, "__nvJitLinkGetLinkedCubin_13_0");
	int (*ldestroy)(void **) = sym(jl, "nvJitLinkDestroy");
	void *h = NULL;
	const char *lopts[] = {"-arch=sm_90", "-O3", "-maxrregcount=48"};
	rc = lcreate(&h, 3, lopts);
	printf("nvJitLinkCreate %d\n", rc);
	if (rc)
		return 1;
	printf("nvJitLinkAddData %d\n", ladd(h, 2 /* PTX */, t, strlen(t) + 1, "scale.ptx"));
	printf("nvJitLinkComplete %d\n", lcomplete(h));
	size_t ln = 0;
	printf("nvJitLinkGetLinkedCubinSize %d\n", lsize(h, &ln));
	void *lc = malloc(ln);
	printf("nvJitLinkGetLinkedCubin %d\n", lget(h, lc));
	if (put(argv[1], "jitlink.cubin", lc, ln))
		return 1;
	printf("nvJitLinkDestroy %d\n", ldestroy(&h));

	/* Link-time optimisation: LTO-IR from NVRTC, linked with -lto (jitLto's way). */
	int (*lto_size)(prog_t, size_t *) = sym(nv, "nvrtcGetLTOIRSize");
	int (*lto)(prog_t, char *) = sym(nv, "nvrtcGetLTOIR");
	prog_t q;
	printf("nvrtcCreateProgram %d\n", create(&q, src, "scale.cu", 0, NULL, NULL));
	const char *dopts[] = {"-arch=sm_90", "-dlto"};
	rc = compile(q, 2, dopts);
	printf("nvrtcCompileProgram -dlto %d (%s)\n", rc, errstr(rc));
	if (rc)
		return 1;
	size_t ln2 = 0;
	printf("nvrtcGetLTOIRSize %d\n", lto_size(q, &ln2));
	char *ir = malloc(ln2);
	printf("nvrtcGetLTOIR %d\n", lto(q, ir));
	const char *topts[] = {"-arch=sm_90", "-lto"};
	h = NULL;
	printf("nvJitLinkCreate -lto %d\n", lcreate(&h, 2, topts));
	printf("nvJitLinkAddData LTOIR %d\n", ladd(h, 3 /* NVJITLINK_INPUT_LTOIR */, ir, ln2, "scale.ltoir"));
	printf("nvJitLinkComplete %d\n", lcomplete(h));
	ln = 0;
	printf("nvJitLinkGetLinkedCubinSize %d\n", lsize(h, &ln));
	void *tc = malloc(ln);
	printf("nvJitLinkGetLinkedCubin %d\n", lget(h, tc));
	if (put(argv[1], "lto.cubin", tc, ln))
		return 1;
	printf("nvJitLinkDestroy %d\n", ldestroy(&h));
	return 0;
}
