/* The map allocator (shim/probes_alloc.c) over an in-process fake of the driver's memory calls:
 * fixed placement of device and host-mapped memory, sub-allocation, the same addresses again
 * after a teardown, every refusal falling back to the driver's allocator with the one log line,
 * and teardown giving everything back. The fake stands in for the forwarding table: the test
 * fills shim_real_fn[] itself, so no driver and no shim library are involved. */
#include "shim/probes_internal.h"
#include "shim/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_mem.h"

/* ---- checks ----------------------------------------------------------------------------- */

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("FAIL %s:%d: ", __func__, __LINE__);                        \
			printf(__VA_ARGS__);                                               \
			printf("\n--- log:\n%s---\n", logbuf);                             \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#define EQ(a, b) CHECK((unsigned long long)(a) == (unsigned long long)(b), "%s = %#llx, want %#llx", \
		       #a, (unsigned long long)(a), (unsigned long long)(b))

static struct gp_map_allocator A;

static void start(void)
{
	unsigned sm = 0;
	int rc = probes_alloc_init(&A, (CUcontext)1, &sm);
	EQ(rc, 0);
	EQ(sm, 90);
	EQ(A.nsms, 132);
}

static uint64_t dalloc(size_t n)
{
	uint64_t d = 0;
	int rc = A.dev_alloc(A.user, n, &d);
	CHECK(rc == 0, "dev_alloc(%zu) = %d", n, rc);
	return d;
}

static void *halloc(size_t n, uint64_t *dptr)
{
	void *h = NULL;
	int rc = A.host_alloc(A.user, n, &h);
	CHECK(rc == 0 && h, "host_alloc(%zu) = %d", n, rc);
	rc = A.host_dev_ptr(A.user, h, dptr);
	CHECK(rc == 0, "host_dev_ptr = %d", rc);
	return h;
}

static int mapped(void *p)
{
	unsigned char v;
	return mincore(p, 1, &v) == 0;
}

/* The device range's address in this test (B) and the host range's (H): the defaults, unless
 * they are taken in this process (ASan's allocator lives at 0x600000000000-0x640000000000), then
 * somewhere free, through GPUPROBE_MAP_VA, as a user would. */
static uint64_t B = GP_MAP_VA_DEFAULT, H;
static char fixed_line[128];

static int range_free(uint64_t at, size_t n)
{
	void *p = mmap((void *)(uintptr_t)at, n, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	munmap(p, n);
	return p == (void *)(uintptr_t)at;
}

static void pick_base(void)
{
	static const uint64_t bases[] = {GP_MAP_VA_DEFAULT, 0x500000000000ull, 0x300000000000ull};
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		B = bases[i];
		H = B + 0x10000000000ull;
		/* the host ranges of test_env too (B + 2 TiB + 1 TiB) */
		if (range_free(H, 1u << 24) && range_free(H + 0x20000000000ull, 1u << 24))
			break;
	}
	if (B != GP_MAP_VA_DEFAULT) {
		char v[32];
		snprintf(v, sizeof(v), "%#llx", (unsigned long long)B);
		setenv("GPUPROBE_MAP_VA", v, 1);
		printf("note: the default addresses are taken here; testing at GPUPROBE_MAP_VA=%s\n", v);
	}
	snprintf(fixed_line, sizeof(fixed_line),
		 "probes: map memory at fixed addresses (device %#llx, host %#llx)\n",
		 (unsigned long long)B, (unsigned long long)H);
}

static void base_env(void)
{
	char v[32];
	snprintf(v, sizeof(v), "%#llx", (unsigned long long)B);
	if (B == GP_MAP_VA_DEFAULT)
		unsetenv("GPUPROBE_MAP_VA");
	else
		setenv("GPUPROBE_MAP_VA", v, 1);
}

static void fallback_is(const char *why)
{
	char want[512];
	snprintf(want, sizeof(want), "probes: map memory at driver-chosen addresses (%s); "
		 "instrumented modules will not hit the JIT cache\n", why);
	CHECK(!strcmp(logbuf, want), "log is not exactly:\n%s", want);
}

/* Device and host memory at the fixed addresses, small maps cut from one chunk. */
static void test_fixed_placement(void)
{
	fake_reset();
	start();
	CHECK(!strcmp(logbuf, fixed_line), "log is not the fixed-address line");
	EQ(fk.reserves, 1);
	EQ(fk.reserved_size, GP_MAP_VA_BYTES);
	EQ(fk.reserve_align, 2u << 20);
	uint64_t a = dalloc(100), b = dalloc(1), c = dalloc(3000);
	EQ(a, B);
	EQ(b, B + 0x100);
	EQ(c, B + 0x200);
	EQ(fk.memset_at, c);
	EQ(fk.memset_n, 3000);
	for (int i = 0; i < 20; i++)
		EQ(dalloc(48) % 256, 0);
	EQ(fk.creates, 1);   /* 23 small maps: one 2 MiB chunk */
	EQ(fk.mapped_bytes, 2u << 20);
	EQ(fk.accesses, 1);
	/* 3 MiB: the range grows by two granules, in one more chunk. */
	uint64_t big = dalloc(3u << 20);
	EQ(big, B + 0x2200);   /* after c (3000 bytes) and the 20 small ones */
	EQ(fk.creates, 2);
	EQ(fk.maps, 2);
	EQ(fk.mapped_bytes, 4u << 20);
	EQ(fk.allocs, 0);

	uint64_t hd = 0, hd2 = 0;
	void *h = halloc(100, &hd), *h2 = halloc(5000, &hd2);
	long pg = sysconf(_SC_PAGESIZE);
	EQ((uintptr_t)h, H);
	EQ(hd, H);
	EQ((uintptr_t)h2, H + (unsigned long long)pg);
	EQ(hd2, (uintptr_t)h2);
	EQ(fk.registers, 2);
	EQ(fk.host_allocs, 0);
	memset(h2, 0x5a, 5000);   /* really host memory */
	CHECK(((unsigned char *)h)[99] == 0, "host memory is not zero");

	/* Freed at the top and made again: the same address. */
	A.dev_free(A.user, big);
	EQ(dalloc(3u << 20), big);
	EQ(fk.creates, 2);
	A.host_free(A.user, h2);
	EQ(fk.unregisters, 1);
	CHECK(!mapped(h2), "freed host block still mapped");
	void *h3 = halloc(5000, &hd2);
	CHECK(h3 == h2, "host block not at the same address again");

	/* Teardown: every map freed gives back chunks and range; host blocks unmapped. */
	A.dev_free(A.user, a);
	EQ(fk.unmaps, 0);   /* b, c, ... still live */
	A.dev_free(A.user, big);
	A.dev_free(A.user, b);
	A.dev_free(A.user, c);
	for (int i = 0; i < 20; i++)
		A.dev_free(A.user, B + 0xe00 + 0x100ull * (unsigned)i);
	EQ(fk.unmaps, 2);
	EQ(fk.releases, 2);
	EQ(fk.mapped_bytes, 0);
	EQ(fk.reserved, 0);
	EQ(fk.frees, 0);
	A.host_free(A.user, h);
	A.host_free(A.user, h3);
	EQ(fk.unregisters, 3);
	CHECK(!mapped(h) && !mapped(h3), "host blocks still mapped after free");
	/* A map made after the teardown reserves the range again, at the same place. */
	EQ(dalloc(64), B);
	EQ(fk.reserved, 1);
	probes_alloc_fini();
	EQ(fk.reserved, 0);
	EQ(fk.releases, fk.creates);
	EQ(fk.stream_destroys, 1);
	EQ(nlog, 1);
}

/* probes_alloc_fini with maps still live gives back everything too. */
static void test_fini_frees(void)
{
	fake_reset();
	start();
	dalloc(5u << 20);
	uint64_t hd;
	void *h = halloc(10, &hd);
	EQ(fk.creates, 1);
	EQ(fk.mapped_bytes, 6u << 20);
	probes_alloc_fini();
	EQ(fk.unmaps, 1);
	EQ(fk.releases, 1);
	EQ(fk.mapped_bytes, 0);
	EQ(fk.reserved, 0);
	EQ(fk.unregisters, 1);
	CHECK(!mapped(h), "host block still mapped after fini");
}

/* The same allocations in a second run give the same addresses. */
static void test_same_addresses(void)
{
	uint64_t first[8], hfirst = 0;
	for (int run = 0; run < 2; run++) {
		fake_reset();
		start();
		static const size_t sizes[8] = {24, 4096, 1u << 20, 8, 72, 3u << 20, 256, 17};
		for (int i = 0; i < 8; i++) {
			uint64_t d = dalloc(sizes[i]);
			if (run == 0)
				first[i] = d;
			else
				EQ(d, first[i]);
		}
		uint64_t hd;
		void *h = halloc(1 << 16, &hd);
		if (run == 0)
			hfirst = hd;
		else
			EQ(hd, hfirst);
		A.host_free(A.user, h);
		probes_alloc_fini();
	}
}

/* The driver puts the range elsewhere: it is given back and cuMemAlloc serves the maps. */
static void test_hint_moved(void)
{
	fake_reset();
	fk.reserve_mode = 1;
	start();
	char why[200];
	snprintf(why, sizeof(why), "the driver reserved %#llx instead of the hint %#llx",
		 FAKE_MOVED, (unsigned long long)B);
	fallback_is(why);
	EQ(fk.reserved, 0);
	uint64_t a = dalloc(100), b = dalloc(100);
	EQ(a, FAKE_ALLOC_BASE);
	EQ(b, FAKE_ALLOC_BASE + 0x100000);
	EQ(fk.memset_at, b);
	EQ(fk.creates, 0);
	A.dev_free(A.user, a);
	EQ(fk.frees, 1);
	/* Host memory still goes to its fixed place; the line was said once. */
	uint64_t hd;
	void *h = halloc(100, &hd);
	EQ((uintptr_t)h, H);
	EQ(nlog, 1);
	A.host_free(A.user, h);
	probes_alloc_fini();
}

static void test_refusals(void)
{
	fake_reset();
	fk.reserve_mode = 2;
	start();
	char why[200];
	snprintf(why, sizeof(why), "cuMemAddressReserve at %#llx: CUDA_ERROR_OUT_OF_MEMORY",
		 (unsigned long long)B);
	fallback_is(why);
	EQ(dalloc(8), FAKE_ALLOC_BASE);
	probes_alloc_fini();

	fake_reset();
	fk.vmm = 0;
	start();
	fallback_is("the device has no virtual memory management");
	EQ(fk.reserves, 0);
	EQ(dalloc(8), FAKE_ALLOC_BASE);
	probes_alloc_fini();

	/* Registered host memory seen elsewhere by the device: rings come from cuMemHostAlloc. */
	fake_reset();
	fk.hostptr = 0;
	start();
	fallback_is("the device does not see registered host memory at its host address");
	EQ(dalloc(8), B);
	uint64_t hd;
	void *h = halloc(100, &hd);
	EQ(fk.host_allocs, 1);
	EQ(fk.registers, 0);
	A.host_free(A.user, h);
	EQ(fk.host_frees, 1);
	probes_alloc_fini();

	/* Physical memory refused for the second chunk: earlier maps stay, later ones move. */
	fake_reset();
	fk.create_fails_after = 1;
	start();
	uint64_t a = dalloc(1u << 20), b = dalloc(2u << 20);
	EQ(a, B);
	EQ(b, FAKE_ALLOC_BASE);
	EQ(dalloc(8), FAKE_ALLOC_BASE + 0x200000);   /* off for good: no mixing */
	snprintf(why, sizeof(why), "probes: map memory at driver-chosen addresses (cuMemCreate of "
		 "2097152 bytes at %#llx: CUDA_ERROR_OUT_OF_MEMORY); instrumented modules will not "
		 "hit the JIT cache\n", (unsigned long long)B + 0x200000);
	CHECK(strstr(logbuf, why) != NULL, "no cuMemCreate line");
	EQ(nlog, 2);
	A.dev_free(A.user, a);
	EQ(fk.unmaps, 1);
	EQ(fk.reserved, 0);
	A.dev_free(A.user, b);
	EQ(fk.frees, 1);
	probes_alloc_fini();
}

/* The host address is taken: the ring goes to cuMemHostAlloc, device maps stay fixed. */
static void test_host_taken(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *want = (void *)(uintptr_t)H;
	void *squat = mmap(want, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			   -1, 0);
	if (squat != want) {
		printf("SKIP %s: cannot map %p here\n", __func__, want);
		if (squat != MAP_FAILED)
			munmap(squat, (size_t)pg);
		return;
	}
	fake_reset();
	start();
	uint64_t hd;
	void *h = halloc(100, &hd);
	CHECK(h != want && h, "host block at the taken address");
	EQ(fk.host_allocs, 1);
	char line[200];
	snprintf(line, sizeof(line), "probes: map memory at driver-chosen addresses (mmap at %p: File "
		 "exists); instrumented modules will not hit the JIT cache\n", want);
	CHECK(strstr(logbuf, line) != NULL, "no mmap line");
	EQ(dalloc(8), B);
	A.host_free(A.user, h);
	EQ(fk.host_frees, 1);
	probes_alloc_fini();
	CHECK(mapped(squat), "someone else's mapping was removed");
	munmap(squat, (size_t)pg);
}

/* A forked child does not inherit the host blocks: their addresses stay free for its own probes. */
static void test_fork(void)
{
	fake_reset();
	start();
	uint64_t hd;
	void *h = halloc(100, &hd);
	EQ((uintptr_t)h, H);
	pid_t pid = fork();
	if (pid == 0)
		_exit(mapped(h) ? 1 : 0);
	int st = -1;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child inherited the host block at %p", h);
	CHECK(mapped(h), "the parent lost its host block");
	probes_alloc_fini();
}

/* Chunks are open to the devices that can reach the context's device as peers. */
static void test_peers(void)
{
	fake_reset();
	fk.ndev = 3;
	fk.peer_ok = 1;   /* device 1 can, device 2 cannot */
	start();
	dalloc(8);
	EQ(fk.access_n, 2);
	EQ(fk.access_ids, 3);
	probes_alloc_fini();

	fake_reset();
	fk.ndev = 2;
	fk.peer_ok = 1;
	fk.peer_refused = 1;
	start();
	EQ(dalloc(8), B);
	EQ(fk.access_n, 1);
	EQ(fk.access_ids, 1);
	CHECK(strstr(logbuf, "probes: map memory is not open to the application's other GPUs "
			     "(cuMemSetAccess: CUDA_ERROR_INVALID_DEVICE)\n") != NULL, "no peer line");
	EQ(dalloc(3u << 20), B + 0x100);   /* the next chunk asks for the device alone */
	EQ(fk.accesses, 3);
	probes_alloc_fini();
}

/* GPUPROBE_MAP_VA moves the ranges, or turns fixed placement off. */
static void test_env(void)
{
	fake_reset();
	uint64_t b2 = B + 0x20000000000ull;
	char v[64], line[200];
	snprintf(v, sizeof(v), "%#llx", (unsigned long long)b2);
	setenv("GPUPROBE_MAP_VA", v, 1);
	start();
	snprintf(line, sizeof(line), "probes: map memory at fixed addresses (device %#llx, host "
		 "%#llx)\n", (unsigned long long)b2, (unsigned long long)b2 + 0x10000000000ull);
	CHECK(!strcmp(logbuf, line), "not at the GPUPROBE_MAP_VA address");
	EQ(dalloc(8), b2);
	uint64_t hd;
	halloc(8, &hd);
	EQ(hd, b2 + 0x10000000000ull);
	probes_alloc_fini();

	fake_reset();
	setenv("GPUPROBE_MAP_VA", "0", 1);
	start();
	fallback_is("GPUPROBE_MAP_VA=0");
	EQ(fk.reserves, 0);
	EQ(dalloc(8), FAKE_ALLOC_BASE);
	void *h = halloc(8, &hd);
	EQ(fk.host_allocs, 1);
	A.host_free(A.user, h);
	probes_alloc_fini();

	fake_reset();
	snprintf(v, sizeof(v), "%#llx", (unsigned long long)B + 0x1000);
	setenv("GPUPROBE_MAP_VA", v, 1);
	start();
	snprintf(line, sizeof(line), "GPUPROBE_MAP_VA=%s is not a 2 MiB-aligned address", v);
	fallback_is(line);
	probes_alloc_fini();

	fake_reset();
	setenv("GPUPROBE_MAP_VA", "high", 1);
	start();
	fallback_is("GPUPROBE_MAP_VA=high is not a 2 MiB-aligned address");
	EQ(dalloc(8), FAKE_ALLOC_BASE);
	probes_alloc_fini();
	base_env();
}

int main(void)
{
	unsetenv("GPUPROBE_MAP_VA");
	pick_base();
	fake_install();
	test_fixed_placement();
	test_fini_frees();
	test_same_addresses();
	test_hint_moved();
	test_refusals();
	test_host_taken();
	test_peers();
	test_fork();
	test_env();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("ok: fixed placement, sub-allocation, same addresses, fallbacks, teardown\n");
	return 0;
}
