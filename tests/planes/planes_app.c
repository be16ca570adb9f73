/* The application of tests/planes: over the shim and tests/shim_lazy's fake driver, loads a
 * module and launches its kernel k_use N times (block 128), then, when HOLD is given, writes its
 * PID into HOLD and waits SECONDS (to be killed, or scraped) before it exits.
 * usage: planes_app SHIM PTX N [HOLD SECONDS] [quiet]
 * quiet: the application's own stderr goes to /dev/null first, so that whatever still reaches
 * the test's stderr was printed by another process (gpuprobe run). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
static void *shim;

static void *sym(const char *name)
{
	void *p = dlsym(shim, name);
	if (!p) {
		printf("FAIL dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static void call(const char *what, CUresult rc)
{
	if (rc) {
		printf("FAIL %s: rc=%d\n", what, rc);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: planes_app SHIM PTX N [HOLD SECONDS] [quiet]\n");
		return 2;
	}
	if (!strcmp(argv[argc - 1], "quiet")) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
		argc--;
	}
	shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	FILE *f = fopen(argv[2], "rb");
	if (!shim || !f) {
		printf("FAIL dlopen %s or open %s\n", argv[1], argv[2]);
		return 1;
	}
	static char ptx[1 << 20];
	size_t n = fread(ptx, 1, sizeof(ptx) - 1, f);
	fclose(f);
	ptx[n] = 0;
	int launches = atoi(argv[3]);
	call("cuInit", ((CUresult (*)(unsigned))sym("cuInit"))(0));
	void *mod = NULL, *fn = NULL;
	CUresult (*load)(void **, const void *) = sym("cuModuleLoadData");
	call("cuModuleLoadData", load(&mod, ptx));
	CUresult (*get)(void **, void *, const char *) = sym("cuModuleGetFunction");
	call("cuModuleGetFunction", get(&fn, mod, "k_use"));
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **) = sym("cuLaunchKernel");
	for (int i = 0; i < launches; i++)
		call("cuLaunchKernel", launch(fn, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
	if (argc > 5) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[4]);
		FILE *h = fopen(tmp, "w");
		if (!h)
			return 1;
		fprintf(h, "%ld\n", (long)getpid());
		fclose(h);
		rename(tmp, argv[4]);
		sleep((unsigned)atoi(argv[5]));
	}
	return 0;
}
