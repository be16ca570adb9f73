/* End to end without NVIDIA: a CUDA program compiled by nvcc here (e2e/kernels.cu) -> the PTX
 * in its fatbin (ptx-frontend/fatbin) -> IR -> an entry probe (eBPF, lowered into the IR by
 * ebpf/lower and spliced in by the instrumentation pass) -> SPIR-V -> PoCL. The kernels' results
 * and the probe's thread count must be exact.
 *
 * The probe is eBPF that adds 1 to a counter with an atomic (lock add) at every thread's kernel
 * entry. Maps are the maps/ engineer's: until maps/ backs OpenCL memory, the counter is a device
 * buffer whose address the probe holds as a constant (lddw). HOOK: that lddw is where a map
 * reference (gp_lower_opts.emit_map_ref) goes once maps/ allocates map memory on this target.
 * usage: spirv_e2e EXECUTABLE */
#include "ebpf/asm.h"
#include "ebpf/lower.h"
#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/instrument.h"
#include "ptx-frontend/ir.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		printf("%s ", (cond) ? "PASS" : "FAIL");                                           \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		failures += !(cond);                                                               \
	} while (0)

/* The PTX of the executable's fatbin, for an sm_75 device (the PTX nvcc embeds by default). */
static char *ptx_from_fatbin(const char *path)
{
	struct fatbin *fb;
	char err[256];
	if (fatbin__open_file(path, &fb, err, sizeof(err)) < 0) {
		printf("FAIL fatbin: %s\n", err);
		return NULL;
	}
	const struct fatbin_entry *e = fatbin__best_ptx(fb, 75);
	void *data = NULL;
	size_t len;
	if (!e || fatbin__entry_data(e, &data, &len, err, sizeof(err)) < 0) {
		printf("FAIL fatbin: no PTX for sm_75 in %s%s%s\n", path, e ? ": " : "", e ? err : "");
		data = NULL;
	}
	fatbin__close(fb);
	return data;
}

/* Lower the counting probe (counter at addr) and splice it in at every kernel's entry. */
static int add_entry_probe(ir_module *m, uint64_t addr)
{
	char text[256], err[256];
	snprintf(text, sizeof(text),
		 "lddw %%r1, 0x%" PRIx64 "\nmov %%r2, 1\nlock add [%%r1+0], %%r2\nmov %%r0, 0\nexit\n", addr);
	struct bpf_insn *insns;
	size_t n;
	if (bpf_asm(text, &insns, &n, err, sizeof(err)) < 0) {
		printf("FAIL probe assembly: %s\n", err);
		return -1;
	}
	struct gp_lower_opts lo = {.prefix = "__gp0_"};
	int r = gp_lower_program(m, insns, n, "gp_count_threads", &lo, err, sizeof(err));
	free(insns);
	if (r < 0) {
		printf("FAIL probe lowering: %s\n", err);
		return -1;
	}
	gp_instrument_hoist(m, NULL);
	struct gp_inst_probe p = {.attach = GP_ATTACH_KERNEL_ENTRY, .func = "gp_count_threads"};
	struct gp_inst_stats st = {0};
	if (gp_instrument_module(m, &p, 1, &st, err, sizeof(err)) < 0) {
		printf("FAIL instrumentation: %s\n", err);
		return -1;
	}
	CHECK(st.sites == 3, "the instrumentation pass splices the entry probe into the 3 kernels (%u sites)", st.sites);
	return 0;
}

static uint64_t alloc_fill(spirv_cl *cl, const void *host, size_t size)
{
	uint64_t a = 0;
	char err[256];
	if (spirv_cl__alloc(cl, size, &a, err, sizeof(err)) < 0 || spirv_cl__write(cl, a, host, size, err, sizeof(err)) < 0)
		printf("FAIL memory: %s\n", err);
	return a;
}

#define ARG(x) ((struct spirv_arg){&(x), sizeof(x)})

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: spirv_e2e EXECUTABLE\n");
		return 2;
	}
	char err[1024];
	spirv_cl *cl;
	if (spirv_cl__open(&cl, err, sizeof(err)) < 0) {
		printf("SKIP: %s\n", err);
		return 77;
	}
	char *ptx = ptx_from_fatbin(argv[1]);
	if (!ptx)
		return 1;
	ir_module *m = ptx_parse(ptx, strlen(ptx), err, sizeof(err));
	free(ptx);
	if (!m) {
		printf("FAIL parse: %s\n", err);
		return 1;
	}
	enum { N = 1000, BLOCKS = 4, THREADS = 256 };
	uint64_t zero64 = 0;
	uint64_t counter = alloc_fill(cl, &zero64, 8);
	if (add_entry_probe(m, counter) < 0)
		return 1;
	uint32_t *words;
	size_t nwords;
	int r = spirv_lower_module(m, NULL, &words, &nwords, err, sizeof(err));
	ir_module_free(m);
	CHECK(r == 0, "the instrumented module lowers to valid SPIR-V%s%s", r ? ": " : "", r ? err : "");
	if (r)
		return 1;
	r = spirv_cl__load(cl, words, nwords, err, sizeof(err));
	free(words);
	CHECK(r == 0, "PoCL builds it (%s)%s%s", spirv_cl__route(cl), r ? ": " : "", r ? err : "");
	if (r)
		return 1;

	static float a[N], b[N], c[N];
	static int in[BLOCKS * THREADS];
	for (int i = 0; i < N; i++)
		a[i] = i * 0.5f, b[i] = i * 0.25f, in[i] = i;
	uint64_t da = alloc_fill(cl, a, sizeof(a)), db = alloc_fill(cl, b, sizeof(b)), dc = alloc_fill(cl, c, sizeof(c));
	uint64_t din = alloc_fill(cl, in, sizeof(in));
	int part[BLOCKS] = {0}, total = 0;
	uint64_t dpart = alloc_fill(cl, part, sizeof(part)), dtot = alloc_fill(cl, &total, sizeof(total));
	int n = N;
	const unsigned grid[3] = {BLOCKS, 1, 1}, block[3] = {THREADS, 1, 1};
	struct {
		const char *name;
		struct spirv_arg args[4];
		unsigned nargs;
	} k[] = {
		{"_Z4vaddPKfS0_Pfi", {ARG(da), ARG(db), ARG(dc), ARG(n)}, 4},
		{"_Z13reduce_sharedPKiPii", {ARG(din), ARG(dpart), ARG(n)}, 3},
		{"_Z11reduce_warpPKiPii", {ARG(din), ARG(dtot), ARG(n)}, 3},
	};
	for (size_t i = 0; i < 3; i++) {
		r = spirv_cl__launch(cl, k[i].name, grid, block, k[i].args, k[i].nargs, err, sizeof(err));
		CHECK(r == 0, "launch %s%s%s", k[i].name, r ? ": " : "", r ? err : "");
	}
	spirv_cl__read(cl, dc, c, sizeof(c), err, sizeof(err));
	spirv_cl__read(cl, dpart, part, sizeof(part), err, sizeof(err));
	spirv_cl__read(cl, dtot, &total, sizeof(total), err, sizeof(err));
	uint64_t threads = 0;
	spirv_cl__read(cl, counter, &threads, sizeof(threads), err, sizeof(err));

	int bad = -1;
	for (int i = 0; i < N && bad < 0; i++)
		if (c[i] != a[i] + b[i])
			bad = i;
	CHECK(bad < 0, "vadd: all %d sums exact%s", N, bad < 0 ? "" : " (first difference below)");
	if (bad >= 0)
		printf("  c[%d] = %.9g, expected %.9g\n", bad, c[bad], a[bad] + b[bad]);
	int want[BLOCKS] = {0};
	for (int i = 0; i < N; i++)
		want[i / THREADS] += i;
	CHECK(!memcmp(part, want, sizeof(want)), "reduce_shared: block sums %d %d %d %d (expected %d %d %d %d)", part[0],
	      part[1], part[2], part[3], want[0], want[1], want[2], want[3]);
	CHECK(total == N * (N - 1) / 2, "reduce_warp: total %d (expected %d)", total, N * (N - 1) / 2);
	CHECK(threads == 3ull * BLOCKS * THREADS, "entry probe: %" PRIu64 " thread entries counted (expected %u)", threads,
	      3 * BLOCKS * THREADS);
	spirv_cl__close(cl);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
