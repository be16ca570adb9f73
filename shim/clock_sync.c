/* The host clocks' offsets from the GPU's %globaltimer, measured and kept up to date
 * (clock_sync.h). A reading: the host reads its clocks, launches a one-thread kernel of ours on
 * a non-blocking stream of ours that stores %globaltimer into pinned host memory, spins until
 * the value arrives, and reads its clocks again. The GPU's read lies inside that window, so the
 * midpoint offset is right to within half of it (nvidia/clock.h); the shortest of several
 * windows wins. Polling host memory rather than synchronising keeps the window to the launch
 * latency plus one PCIe write, whatever synchronisation the application chose for the context.
 * Every driver call here runs with this thread's capture mode relaxed, so a stream capture the
 * application has in progress on another thread is never invalidated by us. */
#include "shim/clock_sync.h"
#include "common/env.h"
#include "shim/capture.h"
#include "shim/log.h"

#include "maps/output.h"
#include "ebpf/lower.h"
#include "maps/maps.h"
#include "nvidia/clock.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define START_READINGS 9
#define CHECK_READINGS 5
/* How long a reading waits for the GPU's answer: at start, before the application has launched
 * anything, 1 s; at a re-check, on the output thread, 2 ms, since the GPU may be full of the
 * application's work and the output thread must get back to draining rings. An unanswered
 * kernel is left to finish by itself (pending) and the re-check tried again later. */
#define START_WAIT_NS 1000000000ull
#define CHECK_WAIT_NS 2000000ull

/* out[0] = %globaltimer just as it ticks, out[1] = the tick (stored first). %globaltimer
 * advances in steps (about 1 us on recent GPUs, coarser on some): a value read at the step is
 * the time at that instant, where one read at a random moment lags it by up to a step. The
 * wait for the step is bounded (4M reads) in case the timer stands still. PTX 6.0 for sm_50
 * compiles on every GPU a current driver supports. */
static const char clock_ptx[] =
	".version 6.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry gpuprobe_clock_read(.param .u64 out)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .u32 %r<2>;\n"
	"\t.reg .u64 %rd<6>;\n"
	"\tld.param.u64 %rd1, [out];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, 0;\n"
	"\tmov.u64 %rd3, %globaltimer;\n"
	"$gp_tick:\n"
	"\tmov.u64 %rd4, %globaltimer;\n"
	"\tadd.u32 %r1, %r1, 1;\n"
	"\tsetp.eq.u64 %p1, %rd4, %rd3;\n"
	"\tsetp.lt.u32 %p2, %r1, 4194304;\n"
	"\tand.pred %p1, %p1, %p2;\n"
	"\t@%p1 bra $gp_tick;\n"
	"\tsub.u64 %rd5, %rd4, %rd3;\n"
	"\tst.volatile.global.u64 [%rd2+8], %rd5;\n"
	"\tmembar.sys;\n"
	"\tst.volatile.global.u64 [%rd2], %rd4;\n"
	"\tmembar.sys;\n"
	"\tret;\n"
	"}\n";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started;            /* set up and measured once */
static CUcontext ctx;
static CUmodule mod;
static CUfunction fn;
static CUstream stream;
static uint64_t *pinned;       /* where the kernel stores %globaltimer */
static CUdeviceptr pinned_dev;
static const struct gp_map_allocator *alloc;
static uint64_t word_addr;
static struct gp_clock_history hist;
static char why[200] = "not measured";
static uint64_t interval_ns = 5000000000ull, next_check_ns;
static struct gp_output_clock_check checks_out[GP_CLOCK_KEPT];   /* for the report */
static int pending;            /* our kernel has not answered: the stream is not idle */

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Our calls run in the maps' context with capture relaxed (capture.h); 0, or -1 with why set. */
static int enter(struct shim_relaxed *m)
{
	shim_relax(m);
	if (SHIM_REAL(cuCtxPushCurrent_v2)(ctx) == CUDA_SUCCESS)
		return 0;
	shim_unrelax(m);
	snprintf(why, sizeof(why), "the maps' context cannot be made current");
	return -1;
}

static void leave(const struct shim_relaxed *m)
{
	CUcontext c;
	SHIM_REAL(cuCtxPopCurrent_v2)(&c);
	shim_unrelax(m);
}

static int failed(const char *what, CUresult r)
{
	snprintf(why, sizeof(why), "%s failed: %s", what, shim_err_name(r));
	return -1;
}

/* Every entry point used below, looked up once: a driver (or a test's fake) without one costs
 * the correction, never a call through a null pointer. */
static int have_entry_points(void)
{
#define NEED(name)                                                                         \
	if (!SHIM_REAL(name)) {                                                            \
		snprintf(why, sizeof(why), "the driver has no %s", #name);                 \
		return -1;                                                                 \
	}
	NEED(cuModuleLoadData) NEED(cuModuleGetFunction) NEED(cuModuleUnload) NEED(cuStreamCreate)
	NEED(cuStreamDestroy_v2) NEED(cuStreamSynchronize) NEED(cuMemHostAlloc)
	NEED(cuMemFreeHost) NEED(cuMemHostGetDevicePointer_v2) NEED(cuLaunchKernel)
	NEED(cuCtxPushCurrent_v2) NEED(cuCtxPopCurrent_v2)
#undef NEED
	return 0;
}

/* Our module, stream and pinned word in ctx (current). */
static int setup(void)
{
	CUresult r = SHIM_REAL(cuModuleLoadData)(&mod, clock_ptx);
	if (r != CUDA_SUCCESS)
		return failed("loading our clock kernel", r);
	if ((r = SHIM_REAL(cuModuleGetFunction)(&fn, mod, "gpuprobe_clock_read")) != CUDA_SUCCESS)
		return failed("finding our clock kernel", r);
	if ((r = SHIM_REAL(cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
		return failed("creating our stream", r);
	void *p = NULL;
	r = SHIM_REAL(cuMemHostAlloc)(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
	if (r != CUDA_SUCCESS)
		return failed("pinned memory for the readings", r);
	pinned = p;
	if ((r = SHIM_REAL(cuMemHostGetDevicePointer_v2)(&pinned_dev, p, 0)) != CUDA_SUCCESS)
		return failed("mapping the readings' memory", r);
	return 0;
}

/* What setup made, given back after a failure (the application keeps its context as it was). */
static void teardown(void)
{
	if (pending)
		return;   /* the GPU may still write there: leave it rather than wait */
	if (pinned)
		SHIM_REAL(cuMemFreeHost)(pinned);
	if (stream)
		SHIM_REAL(cuStreamDestroy_v2)(stream);
	if (mod)
		SHIM_REAL(cuModuleUnload)(mod);
	pinned = NULL;
	stream = NULL;
	mod = NULL;
}

/* One reading into *s, waiting at most wait_ns for the answer. Returns 0 with s->gpu set, 1
 * when the GPU has not answered (the kernel stays pending), -1 on an error. */
static int read_once(struct gp_clock_sample *s, uint64_t wait_ns)
{
	memset(s, 0, sizeof(*s));
	__atomic_store_n(&pinned[1], 0, __ATOMIC_RELAXED);
	__atomic_store_n(pinned, 0, __ATOMIC_RELEASE);
	void *args[] = {&pinned_dev};
	s->mono0 = now_ns(CLOCK_MONOTONIC);
	s->real0 = now_ns(CLOCK_REALTIME);
	CUresult r = SHIM_REAL(cuLaunchKernel)(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL);
	if (r != CUDA_SUCCESS)
		return failed("launching our clock kernel", r);
	uint64_t g = 0;
	for (unsigned spin = 1; !(g = __atomic_load_n(pinned, __ATOMIC_ACQUIRE)); spin++)
		if (!(spin & 255) && now_ns(CLOCK_MONOTONIC) - s->mono0 > wait_ns)
			break;
	s->real1 = now_ns(CLOCK_REALTIME);
	s->mono1 = now_ns(CLOCK_MONOTONIC);
	if (!g) {
		pending = 1;
		snprintf(why, sizeof(why), "the GPU did not run our clock kernel within %.0f ms",
			 (double)wait_ns / 1e6);
		return 1;
	}
	/* The value is stored last: the kernel is finishing; the next launch must not race it. */
	if ((r = SHIM_REAL(cuStreamSynchronize)(stream)) != CUDA_SUCCESS)
		return failed("our clock kernel", r);
	s->gpu = g;
	s->step = __atomic_load_n(&pinned[1], __ATOMIC_ACQUIRE);
	return 0;
}

/* Whether a kernel left pending has finished (then the stream is ours again). Without
 * cuStreamQuery it stays pending: no more re-checks, the applied offset stays. */
static int idle(void)
{
	shim_fnty_cuStreamQuery *q = SHIM_REAL(cuStreamQuery);
	if (pending && q && q(stream) == CUDA_SUCCESS)
		pending = 0;
	return !pending;
}

static int measure(unsigned n, uint64_t wait_ns, struct gp_clock_offset *o)
{
	struct gp_clock_sample s[START_READINGS];
	if (n > START_READINGS)
		n = START_READINGS;
	struct shim_relaxed m;
	if (enter(&m))
		return -1;
	int rc = idle() ? 0 : 1;
	unsigned got = 0;
	while (!rc && got < n)
		if (!(rc = read_once(&s[got], wait_ns)))
			got++;
	leave(&m);
	if (rc < 0 || !got)
		return -1;   /* readings before a GPU that stopped answering still count */
	rc = 0;
	if (gp_clock_estimate(s, got, o)) {
		snprintf(why, sizeof(why), "the GPU did not answer our clock kernel");
		rc = -1;
	}
	return rc;
}

/* The words device probes add to %globaltimer (ebpf/lower.h). */
static int apply(const struct gp_clock_offset *o)
{
	int64_t w[GP_CLOCK_WORDS_SIZE / 8] = {0};
	w[GP_CLOCK_WORD_KTIME / 8] = o->monotonic_ns;
	w[GP_CLOCK_WORD_REALTIME / 8] = o->realtime_ns;
	struct shim_relaxed m;
	shim_relax(&m);
	int rc = alloc->copy_to_dev(alloc->user, word_addr, w, sizeof(w));
	shim_unrelax(&m);
	return rc;
}

static void read_interval(void)
{
	/* common/env.c checks the range and says the one line for a bad value */
	uint64_t v;
	if (gp_env_uint_get(GP_VAR_CLOCK_INTERVAL, &v) == 1)
		interval_ns = v * 1000000000ull;
}

int shim_clock_start(CUcontext c, const struct gp_map_allocator *a, uint64_t addr)
{
	pthread_mutex_lock(&lock);
	read_interval();
	ctx = c;
	alloc = a;
	word_addr = addr;
	struct gp_clock_offset o;
	int rc = -1;
	const char *off = gp_env_flag(GP_VAR_CLOCK) ? NULL : "0";
	if (!addr || !a || !a->copy_to_dev) {
		snprintf(why, sizeof(why), "no device probe reads a clock; context time stamps are "
			 "%%globaltimer");
	} else if (off && !strcmp(off, "0")) {
		/* To see what the correction changes, on the same build and machine. */
		snprintf(why, sizeof(why), "GPUPROBE_CLOCK=0");
	} else {
		struct shim_relaxed m;
		if (!(rc = have_entry_points()) && !(rc = enter(&m))) {
			rc = setup();
			leave(&m);
		}
		if (!rc)
			rc = measure(START_READINGS, START_WAIT_NS, &o);
		if (!rc && apply(&o)) {
			snprintf(why, sizeof(why), "the offset could not be written to the device");
			rc = -1;
		}
		if (rc && !have_entry_points() && !enter(&m)) {
			teardown();
			leave(&m);
		}
	}
	if (!rc) {
		gp_clock_history_add(&hist, &o);
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
		next_check_ns = now_ns(CLOCK_MONOTONIC) + interval_ns;
		shim_log("clock: CLOCK_REALTIME - %%globaltimer = %" PRId64 " ns +- %" PRIu64
			 ", CLOCK_MONOTONIC - %%globaltimer = %" PRId64 " ns (best of %u readings; "
			 "%%globaltimer ticks by %" PRIu64 " ns); device probes' clock helpers add them",
			 o.realtime_ns, o.uncertainty_ns, o.monotonic_ns, o.used, o.resolution_ns);
	} else if (addr) {
		/* The final report's clock line says it too; keep the application's stderr as is. */
		shim_log("clock: %s; device probes' times are the GPU's %%globaltimer, not the host's "
			 "clocks", why);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

void shim_clock_check(int force)
{
	if (pthread_mutex_trylock(&lock))
		return;   /* a measurement is under way */
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct gp_clock_offset o;
	if (started && (force || (interval_ns && now >= next_check_ns)) &&
	    !measure(CHECK_READINGS, CHECK_WAIT_NS, &o)) {
		next_check_ns = now + interval_ns;
		int moved = gp_clock_history_add(&hist, &o);
		shim_log("clock: check %u: CLOCK_REALTIME - %%globaltimer = %" PRId64 " ns +- %" PRIu64
			 " (%+" PRId64 " ns since start)", hist.checks, o.realtime_ns, o.uncertainty_ns,
			 gp_clock_drift_ns(&hist));
		if (moved) {
			if (apply(&o))
				shim_msg("clock: a re-checked offset could not be written to the device");
			else
				shim_log("clock: offset now %" PRId64 " ns +- %" PRIu64 " (was %" PRId64
					 " ns at start)", o.realtime_ns, o.uncertainty_ns,
					 hist.first.realtime_ns);
		}
	} else if (started && (force || now >= next_check_ns)) {
		next_check_ns = now + interval_ns;   /* a failed re-check: keep the applied offset */
	}
	pthread_mutex_unlock(&lock);
}

void shim_clock_tick(void *user)
{
	(void)user;
	if (__atomic_load_n(&started, __ATOMIC_RELAXED) && interval_ns)
		shim_clock_check(0);
}

int shim_clock_report(void *user, struct gp_output_clock *c)
{
	(void)user;
	if (!word_addr)
		return 1;   /* no device probe reads a clock: nothing to say */
	pthread_mutex_lock(&lock);
	memset(c, 0, sizeof(*c));
	c->corrected = started;
	c->why = why;
	if (started) {
		c->offset_ns = hist.first.realtime_ns;
		c->uncertainty_ns = hist.first.uncertainty_ns;
		c->monotonic_offset_ns = hist.first.monotonic_ns;
		c->last_offset_ns = hist.last.realtime_ns;
		c->last_uncertainty_ns = hist.last.uncertainty_ns;
		c->checks = hist.checks;
		c->updates = hist.updates;
		c->span_s = gp_clock_span_s(&hist);
		c->resolution_ns = hist.first.resolution_ns;
		c->nhistory = gp_clock_history_kept(&hist);
		for (unsigned i = 0; i < c->nhistory; i++) {
			const struct gp_clock_offset *o = gp_clock_history_at(&hist, i);
			checks_out[i] = (struct gp_output_clock_check){
				.time_s = (double)(int64_t)(o->at_mono_ns - hist.first.at_mono_ns) / 1e9,
				.offset_ns = o->realtime_ns, .uncertainty_ns = o->uncertainty_ns};
		}
		c->history = checks_out;
	}
	pthread_mutex_unlock(&lock);
	return 0;
}
