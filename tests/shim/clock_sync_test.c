/* One clock (shim/clock_sync.c, docs/architecture.md "One clock") over an in-process fake of the driver
 * calls it makes, whose "GPU" reads a %globaltimer that differs from the host's CLOCK_REALTIME by
 * FAKE_GLOBALTIMER_OFFSET_NS (signed ns; the H100 test machine's GPU clock is not the host's).
 * Checked: the offset measured within its uncertainty, the words device probes add written, a
 * launch-latency probe's comparison (launchlate: host stamp at the launch, device stamp at the
 * block's start) never seeing a block start before its launch once corrected, re-checks that
 * follow drift and leave a still-right offset alone, every driver call made with the thread's
 * stream capture relaxed and the application's mode given back, failures that cost only the
 * correction, and the final report's clock line (text and JSON). Each case runs in a child: the
 * clock state is once per process, as in the shim. */
#include "shim/clock_sync.h"
#include "shim/log.h"

#include "maps/output.h"
#include "ebpf/lower.h"
#include "maps/maps.h"
#include "nvidia/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_mem.h"

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

/* ---- the fake GPU's clock kernel ----------------------------------------------------------- */

#define CLOCK_MOD ((CUmodule)0x5100)
#define CLOCK_FN ((CUfunction)0x5200)
#define WORD_ADDR 0x600000002000ull

static __thread CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static int unrelaxed_calls;    /* driver calls made without relaxed capture */
static int launches, unloads, host_frees, fail_load, silent;
static void *pinned_mem;
static int64_t words[2];
static int word_writes;

static void relaxed(void) { unrelaxed_calls += mode != CU_STREAM_CAPTURE_MODE_RELAXED; }

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The fake GPU's %globaltimer. */
static uint64_t globaltimer(void)
{
	const char *o = getenv("FAKE_GLOBALTIMER_OFFSET_NS");
	return realtime_ns() + (uint64_t)(o ? strtoll(o, NULL, 10) : 0);
}

static CUresult f_mode(CUstreamCaptureMode *m)
{
	CUstreamCaptureMode old = mode;
	mode = *m;
	*m = old;
	return CUDA_SUCCESS;
}
static CUresult f_load(CUmodule *m, const void *image)
{
	relaxed();
	if (fail_load)
		return CUDA_ERROR_INVALID_PTX;
	const char *t = image;
	if (!strstr(t, ".entry gpuprobe_clock_read") || !strstr(t, "%globaltimer") ||
	    !strstr(t, "st.volatile.global.u64 [%rd2+8]"))
		return CUDA_ERROR_INVALID_IMAGE;
	*m = CLOCK_MOD;
	return CUDA_SUCCESS;
}
static CUresult f_getfn(CUfunction *f, CUmodule m, const char *name)
{
	relaxed();
	*f = m == CLOCK_MOD && !strcmp(name, "gpuprobe_clock_read") ? CLOCK_FN : NULL;
	return *f ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
static CUresult f_unload(CUmodule m) { relaxed(); unloads++; return CUDA_SUCCESS; }
static CUresult f_host_alloc(void **p, size_t n, unsigned flags)
{
	relaxed();
	if (!(flags & CU_MEMHOSTALLOC_DEVICEMAP))
		return CUDA_ERROR_INVALID_VALUE;
	return (*p = pinned_mem = calloc(1, n)) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult f_free_host(void *p) { relaxed(); host_frees++; free(p); return CUDA_SUCCESS; }
static CUresult f_dptr(CUdeviceptr *d, void *p, unsigned flags)
{
	relaxed();
	*d = (CUdeviceptr)(uintptr_t)p;   /* the device sees pinned memory at its host address */
	return CUDA_SUCCESS;
}
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			 unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
			 void **extra)
{
	relaxed();
	launches++;
	if (f != CLOCK_FN || gx * gy * gz * bx * by * bz != 1 || !params || extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (!silent) {   /* the step first, as the kernel stores it */
		uint64_t *out = (uint64_t *)(uintptr_t)*(CUdeviceptr *)params[0];
		__atomic_store_n(&out[1], 32, __ATOMIC_RELAXED);
		__atomic_store_n(out, globaltimer(), __ATOMIC_RELEASE);
	}
	return CUDA_SUCCESS;
}
static CUresult f_query(CUstream s) { relaxed(); return silent ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS; }
static CUresult f_sync(CUstream s) { relaxed(); return CUDA_SUCCESS; }

#define SET(name, fn)                                                                      \
	do {                                                                               \
		shim_fnty_##name *f_ = fn;                                                 \
		shim_real_fn[SHIM_FN_##name] = (void *)f_;                                 \
	} while (0)

static int copy_to(void *u, uint64_t d, const void *s, size_t n)
{
	relaxed();
	if (d != WORD_ADDR || n != sizeof(words))
		return -22;
	memcpy(words, s, n);
	word_writes++;
	return 0;
}
static struct gp_map_allocator A = {.copy_to_dev = copy_to};

static void install(void)
{
	fake_reset();
	fake_install();
	SET(cuThreadExchangeStreamCaptureMode, f_mode);
	SET(cuModuleLoadData, f_load);
	SET(cuModuleGetFunction, f_getfn);
	SET(cuModuleUnload, f_unload);
	SET(cuMemHostAlloc, f_host_alloc);
	SET(cuMemFreeHost, f_free_host);
	SET(cuMemHostGetDevicePointer_v2, f_dptr);
	SET(cuLaunchKernel, f_launch);
	SET(cuStreamQuery, f_query);
	SET(cuStreamSynchronize, f_sync);
}

static int64_t env_offset(void)
{
	const char *o = getenv("FAKE_GLOBALTIMER_OFFSET_NS");
	return o ? strtoll(o, NULL, 10) : 0;
}

/* Within +- tolerance of want (ns). */
static int near(int64_t got, int64_t want, uint64_t tol)
{
	return got - want <= (int64_t)tol && want - got <= (int64_t)tol;
}

/* ---- the estimate (nvidia/clock.c) ---------------------------------------------------------- */

/* The shortest window wins; failed readings and a CLOCK_REALTIME stepped back are skipped. */
static void estimator(void)
{
	const struct gp_clock_sample s[] = {
		{.real0 = 1000, .mono0 = 100, .gpu = 700, .real1 = 1400, .mono1 = 500, .step = 64},
		{.real0 = 2000, .mono0 = 1100, .gpu = 1940, .real1 = 2100, .mono1 = 1200, .step = 32},
		{.real0 = 3000, .mono0 = 2100, .gpu = 0, .real1 = 3010, .mono1 = 2110},
		{.real0 = 4000, .mono0 = 3100, .gpu = 3990, .real1 = 3990, .mono1 = 3105},
	};
	struct gp_clock_offset o;
	CHECK(gp_clock_estimate(s, 4, &o) == 0 && o.realtime_ns == 110 && o.monotonic_ns == -790 &&
	      o.uncertainty_ns == 50 && o.used == 2 && o.resolution_ns == 32 && o.at_mono_ns == 1150,
	      "estimate: %lld %lld +- %llu from %u, res %llu", (long long)o.realtime_ns,
	      (long long)o.monotonic_ns, (unsigned long long)o.uncertainty_ns, o.used,
	      (unsigned long long)o.resolution_ns);
	CHECK(gp_clock_estimate(s + 2, 2, &o) != 0, "no usable reading must give no estimate");
	struct gp_clock_history h = {0};
	struct gp_clock_offset a = {.realtime_ns = 1000, .monotonic_ns = 10, .uncertainty_ns = 50};
	struct gp_clock_offset b = a, c = a;
	b.realtime_ns += 40;    /* within its uncertainty: not applied */
	c.realtime_ns += 400;   /* drift: applied */
	CHECK(gp_clock_history_add(&h, &a) == 1 && gp_clock_history_add(&h, &b) == 0 &&
	      gp_clock_history_add(&h, &c) == 1 && h.checks == 3 && h.updates == 1 &&
	      h.applied.realtime_ns == 1400 && gp_clock_drift_ns(&h) == 400, "history");
	struct gp_clock_history r = {0};
	for (int i = 0; i < GP_CLOCK_KEPT + 6; i++) {
		struct gp_clock_offset x = {.realtime_ns = i, .at_mono_ns = (uint64_t)i};
		gp_clock_history_add(&r, &x);
	}
	CHECK(gp_clock_history_kept(&r) == GP_CLOCK_KEPT && gp_clock_history_at(&r, 0)->realtime_ns == 6 &&
	      gp_clock_history_at(&r, GP_CLOCK_KEPT - 1)->realtime_ns == GP_CLOCK_KEPT + 5 &&
	      r.first.realtime_ns == 0, "kept %u, oldest %lld", gp_clock_history_kept(&r),
	      (long long)gp_clock_history_at(&r, 0)->realtime_ns);
	printf("ok  estimate: the shortest window's midpoint, +- half of it; re-checks apply drift "
	       "only; the latest %d checks kept\n", GP_CLOCK_KEPT);
}

/* ---- cases (each in its own process) ------------------------------------------------------- */

/* The GPU's clock is FAKE_GLOBALTIMER_OFFSET_NS from CLOCK_REALTIME: measured, written, used. */
static void measured(void)
{
	int64_t off = env_offset();
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) == 0, "start failed");
	struct gp_output_clock c;
	CHECK(shim_clock_report(NULL, &c) == 0 && c.corrected && c.checks == 1, "report: corrected %d checks %u",
	      c.corrected, c.checks);
	CHECK(c.uncertainty_ns < 1000000, "uncertainty %llu ns: the readings take no time here",
	      (unsigned long long)c.uncertainty_ns);
	CHECK(c.resolution_ns == 32, "resolution %llu, the fake ticks by 32", (unsigned long long)c.resolution_ns);
	CHECK(near(c.offset_ns, -off, c.uncertainty_ns + 1000), "offset %lld ns, expected %lld +- %llu",
	      (long long)c.offset_ns, (long long)-off, (unsigned long long)c.uncertainty_ns);
	CHECK(word_writes == 1 && words[GP_CLOCK_WORD_REALTIME / 8] == c.offset_ns &&
	      words[GP_CLOCK_WORD_KTIME / 8] == c.monotonic_offset_ns,
	      "words %lld %lld after %d writes, report %lld %lld", (long long)words[0],
	      (long long)words[1], word_writes, (long long)c.monotonic_offset_ns, (long long)c.offset_ns);
	/* CLOCK_MONOTONIC's word: a device ktime_get_ns lands on the host's bpf_ktime_get_ns. */
	struct timespec m;
	clock_gettime(CLOCK_MONOTONIC, &m);
	int64_t host_mono = (int64_t)((uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec);
	int64_t dev_mono = (int64_t)(globaltimer() + (uint64_t)words[GP_CLOCK_WORD_KTIME / 8]);
	CHECK(near(dev_mono, host_mono, c.uncertainty_ns + 1000000), "device ktime %lld vs host %lld",
	      (long long)dev_mono, (long long)host_mono);
	/* launchlate: the host probe stamps bpf_get_globaltimer (CLOCK_REALTIME) at the launch, the
	 * device probe its own at the block's start, later; the block must not seem to start first. */
	uint64_t launch = realtime_ns();
	uint64_t raw = globaltimer();
	uint64_t corrected = raw + (uint64_t)words[GP_CLOCK_WORD_REALTIME / 8];
	CHECK(corrected + c.uncertainty_ns >= launch, "corrected block start %llu before its launch %llu",
	      (unsigned long long)corrected, (unsigned long long)launch);
	printf("ok  offset %+lld ns: measured %+lld ns +- %llu; raw block start %s its launch, "
	       "corrected after it\n", (long long)off, (long long)c.offset_ns,
	       (unsigned long long)c.uncertainty_ns, raw < launch ? "BEFORE" : "after");
	CHECK(unrelaxed_calls == 0, "%d driver calls without relaxed capture", unrelaxed_calls);
	CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "the thread's capture mode was not given back");
	CHECK(launches == 9 && fk.streams == 1, "%d launches, %d streams", launches, fk.streams);
}

/* Re-checks: the same offset is left alone; drift beyond the uncertainty is written; the
 * interval holds back the output thread's ticks. */
static void rechecks(void)
{
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) == 0, "start failed");
	shim_clock_tick(NULL);   /* default interval 5 s: not yet */
	struct gp_output_clock c;
	shim_clock_report(NULL, &c);
	CHECK(c.checks == 1, "a tick re-checked before the interval: %u checks", c.checks);
	shim_clock_check(1);
	shim_clock_report(NULL, &c);
	CHECK(c.checks == 2 && c.updates == 0 && word_writes == 1,
	      "same clock: %u checks, %u updates, %d writes (a right offset is left alone)", c.checks,
	      c.updates, word_writes);
	setenv("FAKE_GLOBALTIMER_OFFSET_NS", "-3000000", 1);   /* the GPU falls 3 ms behind */
	shim_clock_check(1);
	shim_clock_report(NULL, &c);
	CHECK(c.checks == 3 && c.updates == 1 && word_writes == 2 &&
	      near(c.last_offset_ns - c.offset_ns, 3000000, c.uncertainty_ns + c.last_uncertainty_ns + 2000) &&
	      words[GP_CLOCK_WORD_REALTIME / 8] == c.last_offset_ns,
	      "drift: %u checks, %u updates, %d writes, offset %lld -> %lld", c.checks, c.updates,
	      word_writes, (long long)c.offset_ns, (long long)c.last_offset_ns);
	/* A GPU busy with the application's work: the re-check gives up within milliseconds (the
	 * output thread must drain rings), the kernel stays pending, the offset stays applied. */
	silent = 1;
	int before = launches;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	shim_clock_check(1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	shim_clock_check(1);   /* still pending: no new launch */
	shim_clock_report(NULL, &c);
	CHECK(c.checks == 3 && launches == before + 1 && ms < 100 && word_writes == 2,
	      "busy GPU: %u checks, %d launches, %.1f ms", c.checks, launches - before, ms);
	silent = 0;            /* it ran: the next re-check goes ahead */
	shim_clock_check(1);
	shim_clock_report(NULL, &c);
	CHECK(c.checks == 4 && c.updates == 1, "after the pending kernel: %u checks", c.checks);
	CHECK(c.nhistory == 4 && c.history[0].offset_ns == c.offset_ns && c.history[0].time_s == 0 &&
	      c.history[3].offset_ns == c.last_offset_ns && c.history[3].time_s > 0 &&
	      near(c.history[2].offset_ns - c.history[1].offset_ns, 3000000, 2000),
	      "history of %u checks", c.nhistory);
	CHECK(unrelaxed_calls == 0 && mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "capture mode");
	printf("ok  re-checks: unchanged offset kept, 3 ms of drift written (%+lld ns), a busy GPU "
	       "skipped in %.1f ms\n", (long long)(c.last_offset_ns - c.offset_ns), ms);
}

/* The final report: a clock line / object with the numbers. */
static void report_line(void)
{
	setenv("FAKE_GLOBALTIMER_OFFSET_NS", "-7000000", 1);
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) == 0, "start failed");
	for (int json = 0; json <= 1; json++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct gp_output_opts o = {.out = f, .json = json, .clock = shim_clock_report};
		struct gp_output *out;
		gp_output__open(&o, &out);
		gp_output__print_final(out);
		gp_output__close(out);
		fclose(f);
		const char *key = json ? "\"offset_ns\":" : "CLOCK_REALTIME - %globaltimer = ";
		const char *at = strstr(buf, key);
		long long v = at ? strtoll(at + strlen(key), NULL, 10) : 0;
		const char *want = json
			? "{\"type\":\"clock\",\"ktime_get_ns\":\"CLOCK_MONOTONIC\",\"get_globaltimer\":"
			  "\"CLOCK_REALTIME\",\"device\":\"%globaltimer + offset\",\"corrected\":true,"
			  "\"context_timestamp\":\"%globaltimer\",\"offset_ns\":"
			: "clock: probe times are on the host's clocks (bpf_ktime_get_ns: CLOCK_MONOTONIC, "
			  "bpf_get_globaltimer: CLOCK_REALTIME; on the GPU %globaltimer + offset; device "
			  "contexts' timestamp stays %globaltimer); CLOCK_REALTIME - %globaltimer = ";
		CHECK(!strncmp(buf, want, strlen(want)), "clock %s: %s", json ? "object" : "line", buf);
		CHECK(json ? strstr(buf, "\"uncertainty_ns\":") && strstr(buf, "\"checks\":1,") &&
			     strstr(buf, "\"resolution_ns\":32,\"history\":[{\"time_s\":0.0,\"offset_ns\":")
			   : strstr(buf, " ns +- ") && strstr(buf, " at start; %globaltimer ticks by 32 ns\n") &&
			     !strchr(buf, '\n')[1],
		      "clock %s: %s", json ? "object" : "line", buf);
		CHECK(near(v, 7000000, 100000), "offset printed %lld, expected about 7000000", v);
		printf("ok  report: %s", buf);
		free(buf);
	}
}

/* Failures cost only the correction: the words stay zero, what we made is given back, and the
 * report says why. No device probe reading a clock: nothing measured, nothing reported. */
static void load_fails(void)
{
	fail_load = 1;
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) != 0, "start must fail");
	struct gp_output_clock c;
	CHECK(shim_clock_report(NULL, &c) == 0 && !c.corrected && c.why &&
	      strstr(c.why, "loading our clock kernel failed"), "why: %s", c.why ? c.why : "(null)");
	CHECK(word_writes == 0 && launches == 0 && fk.stream_destroys == fk.streams,
	      "writes %d launches %d streams %d/%d", word_writes, launches, fk.streams, fk.stream_destroys);
	CHECK(unrelaxed_calls == 0 && mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "capture mode");
	printf("ok  a failed load: not corrected (%s)\n", c.why);
}

static void gpu_silent(void)
{
	silent = 1;
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) != 0, "start must fail");
	struct gp_output_clock c;
	shim_clock_report(NULL, &c);
	CHECK(!c.corrected && strstr(c.why, "did not run our clock kernel"), "why: %s", c.why);
	CHECK(launches == 1 && host_frees == 0 && unloads == 0,
	      "one reading, and the memory the GPU may still write is kept (%d launches, %d frees)",
	      launches, host_frees);
	printf("ok  a GPU that does not answer: not corrected (%s)\n", c.why);
}

static void entry_point_missing(void)
{
	shim_real_fn[SHIM_FN_cuMemHostGetDevicePointer_v2] = NULL;
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) != 0 && launches == 0 && fk.streams == 0,
	      "started without cuMemHostGetDevicePointer_v2");
	struct gp_output_clock c;
	shim_clock_report(NULL, &c);
	CHECK(!c.corrected && !strcmp(c.why, "the driver has no cuMemHostGetDevicePointer_v2"), "why: %s", c.why);
	printf("ok  a driver without an entry point we need: not corrected (%s)\n", c.why);
}

static void switched_off(void)
{
	setenv("GPUPROBE_CLOCK", "0", 1);
	CHECK(shim_clock_start((CUcontext)1, &A, WORD_ADDR) != 0 && launches == 0 && word_writes == 0,
	      "GPUPROBE_CLOCK=0 measured or wrote");
	struct gp_output_clock c;
	CHECK(shim_clock_report(NULL, &c) == 0 && !c.corrected && !strcmp(c.why, "GPUPROBE_CLOCK=0"),
	      "why: %s", c.why);
	printf("ok  GPUPROBE_CLOCK=0: not corrected, said so\n");
}

static void no_clock_probe(void)
{
	CHECK(shim_clock_start((CUcontext)1, &A, 0) != 0 && launches == 0 && fk.streams == 0,
	      "measured without a clock word");
	struct gp_output_clock c;
	CHECK(shim_clock_report(NULL, &c) != 0, "a report without a device clock reader");
	printf("ok  no device probe reads a clock: nothing measured or reported\n");
}

static int run(void (*fn)(void), const char *offset)
{
	pid_t p = fork();
	if (!p) {
		if (offset)
			setenv("FAKE_GLOBALTIMER_OFFSET_NS", offset, 1);
		install();
		fn();
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	int bad = 0;
	bad += run(estimator, NULL);
	bad += run(measured, NULL);
	bad += run(measured, "-5000000");          /* GPU 5 ms behind: blocks "before" launches */
	bad += run(measured, "2500000000");        /* GPU 2.5 s ahead */
	bad += run(rechecks, NULL);
	bad += run(report_line, NULL);
	bad += run(load_fails, NULL);
	bad += run(gpu_silent, NULL);
	bad += run(entry_point_missing, NULL);
	bad += run(switched_off, "-5000000");
	bad += run(no_clock_probe, NULL);
	printf(bad ? "clock_sync: %d cases failed\n" : "clock_sync: all cases passed\n", bad);
	return bad ? 1 : 0;
}
