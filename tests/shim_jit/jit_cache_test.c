/* The shim's own compile of instrumented modules, over fake_jit_driver.c (tests/shim/jit_cache.sh
 * runs it with probes configured). Loads one PTX module through several load paths and prints,
 * per load, what reached the driver: the kind of image (cubin, instrumented PTX, original PTX),
 * the hash of its bytes, how many JIT-linker runs so far, the options the linker and the load
 * got. The script compares these lines across runs (cache hits, misses, failures).
 * usage: jit_cache_test SHIM FAKE_DRIVER PTX [MAX_REGISTERS]
 * Exit 1 when a load itself fails (the application must never see an error from the shim). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static void *shim, *fake;
/* The options array of the call being made, to tell whether the driver got it unchanged. */
static const int *app_opts;
static void **app_vals;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		printf("FAIL dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("FAIL open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL read %s\n", path);
		exit(1);
	}
	fclose(f);
	return buf;
}

/* What the last load handed the driver, as one line. */
static void report(const char *what, CUresult rc)
{
	const char *(*kind)(void) = sym(fake, "fake_last_kind");
	uint64_t (*hash)(void) = sym(fake, "fake_last_hash");
	unsigned (*links)(void) = sym(fake, "fake_links");
	int (*link_opts)(int *, uint64_t *, int) = sym(fake, "fake_link_options");
	int ids[64];
	uint64_t vals[64];
	/* the linker's options only when this load ran it */
	static unsigned links_before;
	unsigned nlinks = links();
	int n = nlinks != links_before ? link_opts(ids, vals, 64) : 0;
	links_before = nlinks;
	char lo[512] = "";
	size_t used = 0;
	for (int i = 0; i < n && i < 64 && used < sizeof(lo); i++) {
		/* log buffers (3, 5) and symbol tables (17, 18) are addresses: only that they
		 * are set */
		if (ids[i] == 3 || ids[i] == 5 || ids[i] == 17 || ids[i] == 18)
			used += snprintf(lo + used, sizeof(lo) - used, "%s%d:set", i ? "," : "", ids[i]);
		else
			used += snprintf(lo + used, sizeof(lo) - used, "%s%d:%llu", i ? "," : "", ids[i],
					 (unsigned long long)vals[i]);
	}
	const int *lo_opts;
	void **lo_vals;
	unsigned nl = ((unsigned (*)(const int **, void ***))sym(fake, "fake_last_options"))(
		&lo_opts, &lo_vals);
	printf("%s: rc=%d image=%s hash=%016llx links=%u link_options=%s load_options=%u%s",
	       what, rc, kind(), (unsigned long long)hash(), nlinks, n ? lo : "-", nl,
	       !nl ? "" : lo_opts == app_opts && lo_vals == app_vals ? " (the application's)"
								     : " (not the application's)");
	printf("\n");
	if (rc) {
		printf("FAIL %s returned %d\n", what, rc);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: jit_cache_test SHIM FAKE_DRIVER PTX [MAX_REGISTERS]\n");
		return 2;
	}
	shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!shim) {
		printf("FAIL dlopen shim: %s\n", dlerror());
		return 1;
	}
	CUresult (*init)(unsigned) = sym(shim, "cuInit");
	if (init(0)) {
		printf("FAIL cuInit\n");
		return 1;
	}
	fake = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	if (!fake) {
		printf("FAIL the shim did not load the fake driver %s\n", argv[2]);
		return 1;
	}
	char *ptx = read_text(argv[3]);
	uintptr_t maxreg = argc > 4 ? strtoul(argv[4], NULL, 0) : 40;
	void *mod, *lib;
	char log[256];

	/* cuModuleLoadDataEx with options the JIT uses (max registers, line info) and options
	 * that are the application's own outputs (an error log buffer). */
	CUresult (*load_ex)(void **, const void *, unsigned, int *, void **) =
		sym(shim, "cuModuleLoadDataEx");
	int o1[] = {0, 5, 6, 13};
	void *v1[] = {(void *)maxreg, log, (void *)(uintptr_t)sizeof(log), (void *)1};
	app_opts = o1;
	app_vals = v1;
	report("cuModuleLoadDataEx", load_ex(&mod, ptx, 4, o1, v1));

	/* cuLibraryLoadData (the CUDA runtime's path) with an optimization level. */
	CUresult (*lib_load)(void **, const void *, int *, void **, unsigned, void *, void **,
			     unsigned) = sym(shim, "cuLibraryLoadData");
	int o2[] = {7};
	void *v2[] = {(void *)3};
	app_opts = o2;
	app_vals = v2;
	report("cuLibraryLoadData", lib_load(&lib, ptx, o2, v2, 1, NULL, NULL, 0));

	/* No current context: the instrumented PTX goes to the driver as before. */
	void (*set_ctx)(int) = sym(fake, "fake_set_context");
	CUresult (*load)(void **, const void *) = sym(shim, "cuModuleLoadData");
	set_ctx(0);
	report("cuModuleLoadData without a context", load(&mod, ptx));
	set_ctx(1);

	/* Options that pass a symbol table: compiled, never cached. */
	const char *names[] = {"x"};
	void *addrs[] = {NULL};
	int o3[] = {17, 18, 19};
	void *v3[] = {names, addrs, (void *)1};
	app_opts = o3;
	app_vals = (void **)v3;
	report("cuModuleLoadDataEx with symbol tables", load_ex(&mod, ptx, 3, o3, v3));
	free(ptx);
	return 0;
}
