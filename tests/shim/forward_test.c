/* The shim over a fake driver (fake_driver.c): forwarding, cuGetProcAddress mapping, the
 * missing-export error, cuGetExportTable pass-through, interception of module loads, kernel
 * lookups and launches, and 8 threads launching at once.
 * usage: forward_test SHIM FAKE_DRIVER FATBIN_WITH_PTX FATBIN_WITHOUT_PTX
 * Prints one "ok ..." line per check to stdout; the shim's log (stderr) is checked by
 * forward.sh. Exit 1 at the first failed check, naming it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
static void *shim, *fake;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("FAIL line %d: ", __LINE__);                \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
			exit(1);                                           \
		}                                                          \
	} while (0)

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	CHECK(p, "dlsym %s: %s", name, dlerror());
	return p;
}

static unsigned long fake_count(int c)
{
	return ((unsigned long (*)(int))sym(fake, "fake_calls"))(c);
}
enum { C_INIT, C_MEMCPY_V2, C_MEMCPY_PTDS, C_LAUNCH, C_LAUNCH_PTSZ, C_MODLOAD, C_GETFUNC,
       C_LIBLOAD, C_GETKERNEL, C_KERNFUNC, C_GRAPHNODE };

typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **);
#define LAUNCH_ARGS 1, 2, 3, 4, 5, 6, 7, (void *)8, (void **)9, (void **)10

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	CHECK(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *buf = malloc(n);
	CHECK(buf && fread(buf, 1, n, f) == (size_t)n, "read %s", path);
	fclose(f);
	return buf;
}

#define THREADS 8
#define PER_THREAD 200000
static launch_fn thread_launch;
static void *thread_func;

static void *launcher(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++)
		if (thread_launch(thread_func, LAUNCH_ARGS) != 0)
			return (void *)1;
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: forward_test SHIM FAKE_DRIVER FATBIN_PTX FATBIN_NOPTX\n");
		return 2;
	}
	shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	CHECK(shim, "dlopen shim: %s", dlerror());

	CUresult (*init)(unsigned) = sym(shim, "cuInit");
	CHECK(init(0) == 0, "cuInit through the shim");
	fake = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	CHECK(fake, "the shim did not load the fake driver %s", argv[2]);
	CHECK(fake_count(C_INIT) == 1, "cuInit reached the driver once");
	CHECK(init(5) == 1, "cuInit's argument and result travel unchanged");
	printf("ok forward cuInit\n");

	int ver = 0;
	CHECK(((CUresult (*)(int *))sym(shim, "cuDriverGetVersion"))(&ver) == 0 && ver == 13000,
	      "cuDriverGetVersion");
	printf("ok forward cuDriverGetVersion %d\n", ver);

	/* A name the fake driver lacks: an error, not a crash. */
	CHECK(((CUresult (*)(void *, unsigned, int))sym(shim, "cuCtxCreate_v2"))(NULL, 0, 0) == 500,
	      "missing export gives CUDA_ERROR_NOT_FOUND");
	printf("ok missing export -> CUDA_ERROR_NOT_FOUND\n");

	/* cuGetProcAddress hands out the shim's exports, honouring version and stream flags. */
	CUresult (*gpa)(const char *, void **, int, unsigned long long, int *) =
		sym(shim, "cuGetProcAddress_v2");
	struct { const char *symbol; int version; unsigned long long flags; const char *want; } m[] = {
		{"cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2"},
		{"cuMemcpyHtoD", 12000, 2, "cuMemcpyHtoD_v2_ptds"},
		{"cuLaunchKernel", 12000, 0, "cuLaunchKernel"},
		{"cuLaunchKernel", 12000, 2, "cuLaunchKernel_ptsz"},
		{"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
		{"cuInit", 2000, 0, "cuInit"},
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		void *p = NULL;
		int status = -1;
		CHECK(gpa(m[i].symbol, &p, m[i].version, m[i].flags, &status) == 0 && status == 0,
		      "cuGetProcAddress_v2(%s)", m[i].symbol);
		CHECK(p == sym(shim, m[i].want), "cuGetProcAddress_v2(%s, flags %llu) gave %p, not "
		      "the shim's %s", m[i].symbol, m[i].flags, p, m[i].want);
		printf("ok cuGetProcAddress_v2(%s, %d, %llu) -> shim %s\n", m[i].symbol, m[i].version,
		       m[i].flags, m[i].want);
	}
	void *p = NULL;
	CUresult (*gpa1)(const char *, void **, int, unsigned long long) = sym(shim, "cuGetProcAddress");
	CHECK(gpa1("cuMemcpyHtoD", &p, 12000, 2) == 0 && p == sym(shim, "cuMemcpyHtoD_v2_ptds"),
	      "cuGetProcAddress (v1) maps too");
	printf("ok cuGetProcAddress(cuMemcpyHtoD, 12000, 2) -> shim cuMemcpyHtoD_v2_ptds\n");
	CHECK(gpa("cuFakeHidden", &p, 12000, 0, NULL) == 0 &&
	      p == ((void *(*)(void))sym(fake, "fake_hidden_entry"))(),
	      "an address the shim cannot name is passed through");
	printf("ok cuGetProcAddress_v2(cuFakeHidden) -> the driver's own pointer\n");
	CHECK(gpa("cuNoSuchThing", &p, 12000, 0, NULL) == 500, "unknown symbol error passes through");
	printf("ok cuGetProcAddress_v2(cuNoSuchThing) -> CUDA_ERROR_NOT_FOUND\n");

	/* Calls through the mapped pointers reach the right driver function. */
	CUresult (*memcpy_ptds)(unsigned long long, const void *, size_t) = NULL;
	gpa("cuMemcpyHtoD", (void **)&memcpy_ptds, 12000, 2, NULL);
	CHECK(memcpy_ptds(0, "x", 1) == 0 && fake_count(C_MEMCPY_PTDS) == 1 &&
	      fake_count(C_MEMCPY_V2) == 0, "cuMemcpyHtoD_v2_ptds forwards to its own name");
	printf("ok cuMemcpyHtoD_v2_ptds forwarded\n");

	const void *table = NULL;
	CHECK(((CUresult (*)(const void **, const void *))sym(shim, "cuGetExportTable"))(&table, "u")
	      == 0 && table == ((void *(*)(void))sym(fake, "fake_export_table"))(),
	      "cuGetExportTable forwarded untouched");
	printf("ok cuGetExportTable forwarded untouched\n");

	/* Interception: a PTX module, two kernels, launches. */
	static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				  ".visible .entry k_one()\n{\n\tret;\n}\n"
				  ".visible .entry k_two()\n{\n\tret;\n}\n";
	CUresult (*load)(void **, const void *) = sym(shim, "cuModuleLoadData");
	CUresult (*getfunc)(void **, void *, const char *) = sym(shim, "cuModuleGetFunction");
	launch_fn launch = sym(shim, "cuLaunchKernel"), launch_ptsz = sym(shim, "cuLaunchKernel_ptsz");
	void *mod = NULL, *f1 = NULL, *f2 = NULL;
	CHECK(load(&mod, ptx) == 0 && mod, "cuModuleLoadData(PTX)");
	CHECK(getfunc(&f1, mod, "k_one") == 0 && getfunc(&f2, mod, "k_two") == 0,
	      "cuModuleGetFunction");
	CHECK(f1 != f2, "distinct handles");
	for (int i = 0; i < 3; i++)
		CHECK(launch(f1, LAUNCH_ARGS) == 0, "cuLaunchKernel arguments intact");
	CHECK(launch_ptsz(f1, LAUNCH_ARGS) == 0, "cuLaunchKernel_ptsz arguments intact");
	CHECK(fake_count(C_LAUNCH) == 3 && fake_count(C_LAUNCH_PTSZ) == 1, "launch counts");
	printf("ok PTX module: load, lookup, launch\n");

	/* Fatbins (with and without PTX) through cuModuleLoadDataEx and cuLibraryLoadData. */
	CUresult (*loadex)(void **, const void *, unsigned, void *, void **) =
		sym(shim, "cuModuleLoadDataEx");
	void *fb_ptx = read_file(argv[3]), *fb_noptx = read_file(argv[4]);
	void *mod2 = NULL, *mod3 = NULL, *f3 = NULL;
	CHECK(loadex(&mod2, fb_ptx, 0, NULL, NULL) == 0, "cuModuleLoadDataEx(fatbin)");
	CHECK(getfunc(&f3, mod2, "vec_add") == 0 && launch(f3, LAUNCH_ARGS) == 0, "fatbin kernel");
	CHECK(loadex(&mod3, fb_noptx, 0, NULL, NULL) == 0, "cuModuleLoadDataEx(fatbin, no PTX)");
	CUresult (*libload)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned) =
		sym(shim, "cuLibraryLoadData");
	CUresult (*getkernel)(void **, void *, const char *) = sym(shim, "cuLibraryGetKernel");
	CUresult (*kernfunc)(void **, void *) = sym(shim, "cuKernelGetFunction");
	void *lib = NULL, *kern = NULL, *kf = NULL;
	CHECK(libload(&lib, fb_noptx, NULL, NULL, 0, NULL, NULL, 0) == 0, "cuLibraryLoadData");
	CHECK(getkernel(&kern, lib, "scale") == 0 && kernfunc(&kf, kern) == 0, "library kernel");
	CHECK(launch(kern, LAUNCH_ARGS) == 0 && launch(kf, LAUNCH_ARGS) == 0, "launch by CUkernel");
	printf("ok fatbin modules and libraries\n");

	/* The same fatbins by file name: cuModuleLoad and cuLibraryLoadFromFile. */
	CUresult (*load_file)(void **, const char *) = sym(shim, "cuModuleLoad");
	CUresult (*lib_file)(void **, const char *, void *, void **, unsigned, void *, void **, unsigned) =
		sym(shim, "cuLibraryLoadFromFile");
	void *mod5 = NULL, *lib6 = NULL, *f5 = NULL;
	CHECK(load_file(&mod5, argv[3]) == 0 && getfunc(&f5, mod5, "scale") == 0 &&
	      launch(f5, LAUNCH_ARGS) == 0, "cuModuleLoad(fatbin file)");
	CHECK(lib_file(&lib6, argv[4], NULL, NULL, 0, NULL, NULL, 0) == 0, "cuLibraryLoadFromFile");
	CHECK(load_file(&mod5, "/nonexistent.cubin") == 301, "cuModuleLoad of a missing file: "
	      "the driver's own error");
	printf("ok fatbin files: cuModuleLoad, cuLibraryLoadFromFile\n");

	/* JIT linking PTX: the resulting cubin is known to come from PTX until cuLinkDestroy. */
	void *state = NULL, *cubin = NULL, *mod8 = NULL, *mod9 = NULL;
	size_t cubin_size = 0;
	CHECK(((CUresult (*)(unsigned, void *, void **, void **))sym(shim, "cuLinkCreate_v2"))(
		      0, NULL, NULL, &state) == 0, "cuLinkCreate_v2");
	CHECK(((CUresult (*)(void *, int, void *, size_t, const char *, unsigned, void *, void **))
	       sym(shim, "cuLinkAddData_v2"))(state, 1 /* CU_JIT_INPUT_PTX */, (void *)ptx,
					      sizeof(ptx), "k.ptx", 0, NULL, NULL) == 0,
	      "cuLinkAddData_v2");
	CHECK(((CUresult (*)(void *, void **, size_t *))sym(shim, "cuLinkComplete"))(
		      state, &cubin, &cubin_size) == 0 && cubin, "cuLinkComplete");
	CHECK(load(&mod8, cubin) == 0, "load the linked cubin");
	CHECK(((CUresult (*)(void *))sym(shim, "cuLinkDestroy"))(state) == 0, "cuLinkDestroy");
	CHECK(load(&mod9, cubin) == 0, "load the same bytes after cuLinkDestroy");
	printf("ok JIT link: cubin from PTX known until cuLinkDestroy\n");

	/* A graph kernel node names its kernel; an unknown handle is named by the driver. */
	struct { void *func; unsigned g[3], b[3], shmem; void **params, **extra; void *kern, *ctx; }
		np = {.func = f2};
	void *node = NULL;
	CHECK(((CUresult (*)(void **, void *, const void *, size_t, const void *))
	       sym(shim, "cuGraphAddKernelNode_v2"))(&node, NULL, NULL, 0, &np) == 0 && node == f2,
	      "cuGraphAddKernelNode_v2");
	CHECK(launch((void *)0x7777, LAUNCH_ARGS) == 0, "launch of a handle never looked up");
	printf("ok graph node and unknown handle\n");

	/* The other launch entry points, and cuModuleLoadFatBinary. */
	void *f_ex = NULL, *f_coop = NULL, *mod10 = NULL;
	struct { unsigned g[3], b[3], shmem; void *stream; void *attrs; unsigned nattrs; } cfg =
		{{1, 1, 1}, {32, 1, 1}, 0, NULL, NULL, 0};
	CHECK(getfunc(&f_ex, mod, "k_ex") == 0 && getfunc(&f_coop, mod, "k_coop") == 0, "lookups");
	CHECK(((CUresult (*)(const void *, void *, void **, void **))sym(shim, "cuLaunchKernelEx"))(
		      &cfg, f_ex, NULL, NULL) == 0, "cuLaunchKernelEx");
	CHECK(((CUresult (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, void *, void **))sym(shim, "cuLaunchCooperativeKernel_ptsz"))(
		      f_coop, 1, 2, 3, 4, 5, 6, 7, (void *)8, (void **)9) == 0,
	      "cuLaunchCooperativeKernel_ptsz arguments intact");
	CHECK(((CUresult (*)(void **, const void *))sym(shim, "cuModuleLoadFatBinary"))(&mod10, fb_ptx)
	      == 0, "cuModuleLoadFatBinary");
	printf("ok cuLaunchKernelEx, cuLaunchCooperativeKernel_ptsz, cuModuleLoadFatBinary\n");
	free(fb_ptx);
	free(fb_noptx);

	/* 8 threads launching at once: every call arrives, none is lost or doubled. */
	unsigned long before = fake_count(C_LAUNCH);
	thread_launch = launch;
	thread_func = f1;
	pthread_t t[THREADS];
	double t0 = now_ns();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, launcher, NULL);
	int bad = 0;
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	double t1 = now_ns();
	CHECK(!bad && fake_count(C_LAUNCH) - before == (unsigned long)THREADS * PER_THREAD,
	      "concurrent launches: %lu arrived", fake_count(C_LAUNCH) - before);
	printf("ok %d threads x %d launches arrived\n", THREADS, PER_THREAD);
	fprintf(stderr, "forward_test: %.1f ns per forwarded launch (8 threads)\n",
		(t1 - t0) / PER_THREAD);
	return 0;
}
