/* The copier (copier.h): rings drained into the segment's event log every poll, maps
 * snapshotted into it every SNAP_MS at most (never more than a tenth of the snapshots' thread's
 * time: large maps are read less often), the last snapshot marked final at exit.
 *
 * Two threads. The drainer touches only host memory (the rings' bytes and positions are
 * host-mapped) and the segment; the snapshots' thread reads device memory (map values, the
 * rings' drop counts) and checks the clock, either of which can wait behind a running kernel
 * (gpuprobe's own driver copies on the application's in-order queue). A kernel whose lossless
 * ring waits for the drainer must never wait on a snapshot: with one thread, a snapshot stuck
 * behind such a kernel stopped every drain until the producers gave up (2 s) and dropped the
 * rest (tests/trace_replay's patterns under gpuprobe run --json on PoCL: 9,069 records lost). */
#include "shim/copier.h"
#include "shim/clock_sync.h"
#include "shim/log.h"

#include "common/env.h"

#include "maps/capture.h"
#include "maps/config.h"
#include "maps/maps.h"
#include "maps/segment.h"
#include "maps/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 50
#define CAPTURE_RING_ADVISED (256u << 10)   /* bytes per SM ring: ~1 ms at 25 GB/s / 132 */
#define BUSY_POLL_MS 1   /* a drain found records: come back soon (lossless rings wait on us) */
#define SNAP_MS 200

static struct gp_seg_writer *seg;
static struct gp_map_set *const *sets;
static size_t nsets;
static shim_copier_names_fn names_fn;
static pthread_t thread, snap_thread;
static int running, snapping, closed;
/* The snapshots' thread's latest blob, which the drainer's next flush writes */
static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pend_blob;
static size_t pend_len;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static int stop;
static uint64_t start_ms, snap_cost_ms;
/* The segment's event queue: the copier's drains and host probes' lines (any thread). */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under `gpuprobe run --output FILE.gpt`: the ring maps' records go to the file in bulk
 * (maps/capture.h) on threads of their own; the copier keeps printk and the snapshots. */
static struct gp_capture *cap;
static int drained;   /* records the last drain moved */

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int shim_copier_open(const char *dir, int forked, char *err, size_t errlen)
{
	int rc = gp_seg_create(dir, forked, &seg, err, errlen);
	if (rc)
		seg = NULL;
	start_ms = mono_ms();
	return rc;
}

int shim_copier_active(void) { return seg != NULL; }

/* count: instead of handing records to the segment, take them out and count them */
struct drain { const char *map; enum gp_seg_record type; uint64_t *count; };

/* a drain met a full segment (gpuprobe run has not read it yet): the rest stayed in the rings */
static int seg_full;

static int on_record(void *user, unsigned ring, const void *data, size_t size)
{
	struct drain *d = user;
	if (d->count) {
		(*d->count)++;
		return 0;
	}
	if (gp_seg_event(seg, d->type, d->map, ring, data, size) == -ENOSPC) {
		seg_full = 1;
		return -1;   /* left in its ring: drops there are counted, nothing goes uncounted */
	}
	return 0;
}

static void drain_rings(uint64_t *count)
{
	for (size_t s = 0; s < nsets; s++) {
		struct gp_map_inst *pk = gp_map_set__printk(sets[s]);
		if (pk) {
			struct drain d = {gp_map_inst__name(pk), GP_SEG_PRINTK, count};
			int n = gp_map_inst__ring_drain(pk, on_record, &d);
			drained += n > 0 ? n : 0;
		}
		for (size_t i = 0; i < gp_map_set__count(sets[s]); i++) {
			struct gp_map_inst *m = gp_map_set__map(sets[s], i);
			if (gp_map_inst__desc(m)->kind != GP_MAP_KIND_RING || gp_capture__owns(cap, m))
				continue;
			struct drain d = {gp_map_inst__name(m), GP_SEG_EVENT, count};
			int n = gp_map_inst__ring_drain(m, on_record, &d);
			drained += n > 0 ? n : 0;
		}
	}
}

int shim_copier_line(const char *line)
{
	if (!seg)
		return -1;
	pthread_mutex_lock(&q_lock);
	int rc = closed ? -1 : 0;   /* after the final snapshot nobody reads the segment */
	if (!rc)
		gp_seg_event(seg, GP_SEG_LINE, "", 0, line, strlen(line));
	pthread_mutex_unlock(&q_lock);
	return rc;
}

/* At the end, what a full segment left in the rings: gpuprobe run is still reading (it waits
 * for this process), so give it up to 3 s to make room, then let the final drain count the rest
 * as the segment's own losses. */
static void drain_out(void)
{
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&q_lock);
		seg_full = 0;
		drain_rings(NULL);
		gp_seg_flush(seg, NULL, 0, 0);
		int full = seg_full;
		pthread_mutex_unlock(&q_lock);
		if (!full)
			return;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* A snapshot of every map (the final one marked so by the caller's flush). */
static void *build_snapshot(size_t *len)
{
	uint64_t t0 = mono_ms();
	struct gp_output_clock c;
	int clock = !shim_clock_report(NULL, &c);
	struct gp_snap_name *nm = NULL;
	size_t nn = names_fn ? names_fn(&nm) : 0;
	struct gp_snap_input in = {.sets = sets, .nsets = nsets, .names = nm, .nnames = nn,
				   .clock = clock ? &c : NULL, .time_ms = t0 - start_ms};
	void *blob = NULL;
	*len = 0;
	if (gp_snap_build(&in, &blob, len))
		blob = NULL;
	free(nm);
	snap_cost_ms = mono_ms() - t0;
	return blob;
}

/* Drain; with the latest snapshot (final: one made now, the threads stopped), one flush into the
 * segment. */
static void copy(int final)
{
	void *blob = NULL;
	size_t len = 0;
	if (final) {
		drain_out();
		blob = build_snapshot(&len);
	} else {
		pthread_mutex_lock(&pend_lock);
		blob = pend_blob;
		len = pend_len;
		pend_blob = NULL;
		pthread_mutex_unlock(&pend_lock);
	}
	pthread_mutex_lock(&q_lock);
	drained = 0;
	seg_full = 0;
	drain_rings(NULL);
	if (final && seg_full) {   /* gpuprobe run never made room: counted, not silently left */
		uint64_t left = 0;
		drain_rings(&left);
		gp_seg_count_dropped(seg, left);
	}
	int rc = gp_seg_flush(seg, blob, len, final);
	closed |= final;
	pthread_mutex_unlock(&q_lock);
	free(blob);
	static int said;
	if (rc && !said) {
		said = 1;
		shim_msg("probes: segment %s: cannot write it (%s); gpuprobe run shows what it got "
			 "before", gp_seg_path(seg), strerror(-rc));
	}
}

/* A snapshot for the drainer's next flush, and the clock's re-check; then the wait until the
 * next (at least SNAP_MS, ten times what a snapshot costs when that is more). */
static unsigned snap_once(void)
{
	size_t len;
	void *blob = build_snapshot(&len);
	pthread_mutex_lock(&pend_lock);
	free(pend_blob);   /* one the drainer has not flushed yet: this one is newer */
	pend_blob = blob;
	pend_len = len;
	pthread_mutex_unlock(&pend_lock);
	shim_clock_tick(NULL);   /* the GPU clock's offset re-checked off the app's threads */
	return (unsigned)(snap_cost_ms * 10 > SNAP_MS ? snap_cost_ms * 10 : SNAP_MS);
}

/* A drain and flush; then the wait until the next. Rings that had records are drained again
 * soon: a lossless ring's producer waits for the space we free. The segment takes no more than
 * gpuprobe run has read (has_room in maps/segment.c): a drain that meets a full segment leaves
 * the rest in the rings, where a lossy ring's drops are counted and a lossless producer waits. */
static unsigned drain_once(void)
{
	copy(0);
	return drained ? BUSY_POLL_MS : POLL_MS;
}

/* Each thread of the copier: its step, then the wait it asks for, until stop. */
typedef unsigned (*step_fn)(void);
static const step_fn drain_step = drain_once, snap_step = snap_once;

static void *until_stop(void *arg)
{
	step_fn step = *(const step_fn *)arg;
	pthread_mutex_lock(&stop_lock);
	while (!stop) {
		pthread_mutex_unlock(&stop_lock);
		unsigned ms = step();
		pthread_mutex_lock(&stop_lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!stop)
			pthread_cond_timedwait(&stop_cond, &stop_lock, &ts);
	}
	pthread_mutex_unlock(&stop_lock);
	return NULL;
}

/* The probe objects the shim opened (the configuration's, then GPUPROBE_PROBES), whose BTF
 * gives the records' types; a path that cannot be read only leaves records untyped. */
static size_t probe_paths(char **paths, size_t max, struct gp_config *cfg, char **list)
{
	size_t n = 0;
	char err[256];
	const char *cpath = gp_env_str(GP_VAR_CONFIG);
	if (cpath && !gp_config__load(cpath, cfg, err, sizeof(err)))
		for (size_t i = 0; i < cfg->nprobes && n < max; i++)
			paths[n++] = cfg->probes[i].path;
	*list = gp_env_str(GP_VAR_PROBES) ? strdup(gp_env_str(GP_VAR_PROBES)) : NULL;
	for (char *save = NULL, *t = *list ? strtok_r(*list, ":", &save) : NULL; t && n < max;
	     t = strtok_r(NULL, ":", &save))
		paths[n++] = t;
	return n;
}

/* FILE.gpt for the application; FILE.gpt.PID for any other process of the run (a forked or
 * exec'd child with probes), as --json names its files. */
static void capture_start(struct gp_map_set *const *s, size_t n)
{
	const char *path = gp_env_str(GP_VAR_CAPTURE);
	if (!path)
		return;
	char own[4096];
	const char *run = gp_env_str(GP_VAR_RUN_PID);
	if (!run || strtol(run, NULL, 10) != (long)getppid()) {
		snprintf(own, sizeof(own), "%s.%ld", path, (long)getpid());
		path = own;
	}
	struct gp_config cfg = {0};
	char *paths[128], *list = NULL, err[512];
	size_t np = probe_paths(paths, 128, &cfg, &list);
	struct gp_capture_opts o = {.objects = (const char *const *)paths, .nobjects = np};
	if (gp_capture__start(path, s, n, &o, &cap, err, sizeof(err))) {
		shim_msg("probes: %s; ring records go to gpuprobe as without --output", err);
		cap = NULL;
	}
	/* A ring smaller than about a millisecond of the link's rate (25 GB/s over the SMs) fills
	 * between two drains: lossy rings drop, lossless ones wait. Say so once per map. */
	for (size_t i = 0; cap && i < n; i++)
		for (size_t k = 0; k < gp_map_set__count(s[i]); k++) {
			const struct gp_map_inst *m = gp_map_set__map(s[i], k);
			const struct gp_map_desc *d = gp_map_inst__desc(m);
			if (d->kind != GP_MAP_KIND_RING || d->capacity >= CAPTURE_RING_ADVISED)
				continue;
			uint64_t want = 1;   /* RINGBUF sizes are powers of two, divided among the SMs */
			while (want < (uint64_t)CAPTURE_RING_ADVISED * d->nshards)
				want <<= 1;
			if (d->bpf_type == BPF_MAP_TYPE_RINGBUF)
				shim_msg("probes: capture: ring map '%s' has %u bytes per SM (%u SMs); "
					 "max_entries %llu gives each SM %u KiB or more, which keeps up "
					 "with the GPU's link", gp_map_inst__name(m), d->capacity, d->nshards,
					 (unsigned long long)want, CAPTURE_RING_ADVISED >> 10);
			else
				shim_msg("probes: capture: ring map '%s' has %u bytes per SM (%u SMs); "
					 "%u KiB or more keep up with the GPU's link", gp_map_inst__name(m),
					 d->capacity, d->nshards, CAPTURE_RING_ADVISED >> 10);
		}
	free(list);
	gp_config__free(&cfg);
}

int shim_copier_start(struct gp_map_set *const *s, size_t n, shim_copier_names_fn names)
{
	sets = s;
	nsets = n;
	names_fn = names;
	stop = 0;
	capture_start(s, n);
	int rc = pthread_create(&thread, NULL, until_stop, (void *)&drain_step);
	if (rc)
		return -rc;
	running = 1;
	/* without it the drainer goes on and the final snapshot still comes: maps print at exit */
	snapping = !pthread_create(&snap_thread, NULL, until_stop, (void *)&snap_step);
	return 0;
}

void shim_copier_final(void)
{
	if (!seg)
		return;
	if (running) {
		pthread_mutex_lock(&stop_lock);
		stop = 1;
		pthread_cond_broadcast(&stop_cond);
		pthread_mutex_unlock(&stop_lock);
		pthread_join(thread, NULL);
		running = 0;
	}
	if (snapping) {
		pthread_join(snap_thread, NULL);
		snapping = 0;
	}
	free(pend_blob);   /* not flushed: the final snapshot below is newer */
	pend_blob = NULL;
	if (cap) {
		/* Kernels have finished (shim_probes_final synchronised): the last records are in
		 * the rings; the capture drains them all before it closes. */
		struct gp_output_clock oc;
		struct gp_gpt_clock gc = {0}, *gcp = NULL;
		if (!shim_clock_report(NULL, &oc)) {
			gc = (struct gp_gpt_clock){oc.offset_ns, oc.uncertainty_ns, oc.monotonic_offset_ns,
						   (uint32_t)oc.corrected, 0};
			gcp = &gc;
		}
		struct gp_capture_stats st;
		const char *p = gp_capture__path(cap);
		char path[4096];
		snprintf(path, sizeof(path), "%s", p);
		int rc = gp_capture__stop(cap, gcp, &st);
		cap = NULL;
		if (rc)
			shim_msg("probes: capture %s: cannot write it (%s): %llu records consumed and not "
				 "written", path, strerror(-rc), (unsigned long long)st.host_lost);
	}
	copy(1);
}

void shim_copier_forked(void)
{
	static struct gp_seg_writer *parents;   /* kept reachable: never freed, never used */
	parents = seg;
	__asm__ volatile("" : : "m"(parents));
	seg = NULL;
	cap = NULL;   /* the parent's consumer threads do not exist here; the parent closes its file */
	sets = NULL;
	nsets = 0;
	running = 0;
	snapping = 0;
	closed = 0;
	stop = 0;
	snap_cost_ms = 0;
	pend_blob = NULL;   /* the parent's, kept reachable by nothing: a leak of one blob at most */
	pend_len = 0;
	pthread_mutex_init(&stop_lock, NULL);
	pthread_cond_init(&stop_cond, NULL);
	pthread_mutex_init(&q_lock, NULL);
	pthread_mutex_init(&pend_lock, NULL);
}
