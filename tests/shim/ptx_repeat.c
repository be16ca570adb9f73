/* Instruments one PTX file with probe objects the way the shim does (nvidia/probes.h), with map
 * memory from shim/probes_alloc.c over the in-process fake driver (fake_mem.h), and writes the
 * instrumented PTX. Run twice, it shows whether the PTX repeats from process to process
 * (tests/shim/ptx_repeat.sh). The fake's cuMemAlloc, like a real driver's, gives each process
 * different addresses; host memory is malloc's (ASLR). The shim's log goes to stderr.
 * usage: shim_ptx_repeat OUT.ptx IN.ptx PROBE.bpf.o... */
#include "shim/probes_internal.h"
#include "nvidia/probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_mem.h"

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (n + 65536 > cap && !(buf = realloc(buf, cap = cap * 2 + 65536)))
			break;
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

static void warn(void *user, const char *line)
{
	fprintf(stderr, "%s\n", line);
}

/* ASan's heap lives at 0x600000000000-0x640000000000: there, use a free place instead, as a
 * user would through GPUPROBE_MAP_VA. */
static void avoid_taken_default(void)
{
	if (getenv("GPUPROBE_MAP_VA"))
		return;
	void *want = (void *)(uintptr_t)(GP_MAP_VA_DEFAULT + 0x10000000000ull);
	void *p = mmap(want, 1u << 24, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED)
		munmap(p, 1u << 24);
	if (p != want)
		setenv("GPUPROBE_MAP_VA", "0x500000000000", 1);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s OUT.ptx IN.ptx PROBE.bpf.o...\n", argv[0]);
		return 2;
	}
	avoid_taken_default();
	fake_reset();
	fk.next_alloc = FAKE_ALLOC_BASE + ((unsigned long long)getpid() << 21);
	fake_install();
	struct gp_map_allocator a;
	unsigned sm = 0;
	char err[1024];
	if (probes_alloc_init(&a, (CUcontext)1, &sm)) {
		fprintf(stderr, "probes_alloc_init failed\n");
		return 1;
	}
	size_t len = 0;
	char *ptx = read_file(argv[2], &len);
	if (!ptx) {
		fprintf(stderr, "%s: cannot read\n", argv[2]);
		return 1;
	}
	size_t n = (size_t)argc - 3;
	int *idx = calloc(n, sizeof(*idx));
	for (size_t i = 0; i < n; i++)
		idx[i] = -1;
	struct gp_nv_probes_opts o = {.alloc = &a, .warn = warn};
	struct gp_nv_probes *ps = NULL;
	int rc = gp_nv_probes__open((const char *const *)argv + 3, idx, n, &o, &ps, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s%s\n", logbuf, err);
		return 1;
	}
	char *out = NULL;
	size_t out_len = 0;
	rc = gp_nv_probes__instrument(ps, ptx, len, &out, &out_len, NULL, err, sizeof(err));
	fputs(logbuf, stderr);
	if (rc || !out) {
		fprintf(stderr, "not instrumented: %s\n", rc ? err : "no probe site");
		return 1;
	}
	FILE *f = fopen(argv[1], "w");
	if (!f || fwrite(out, 1, out_len, f) != out_len || fclose(f)) {
		fprintf(stderr, "%s: cannot write\n", argv[1]);
		return 1;
	}
	gp_nv_probes__close(ps);
	probes_alloc_fini();
	free(out);
	free(ptx);
	free(idx);
	return 0;
}
