/* The copier (copier.h): rings drained into the segment's event log every poll, maps
 * snapshotted into it every SNAP_MS at most (never more than a tenth of the copier's time:
 * large maps are read less often), the last snapshot marked final at exit. */
#include "shim/copier.h"
#include "shim/clock_sync.h"
#include "shim/log.h"

#include "maps/maps.h"
#include "maps/segment.h"
#include "maps/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS 50
#define SNAP_MS 200

static struct gp_seg_writer *seg;
static struct gp_map_set *const *sets;
static size_t nsets;
static shim_copier_names_fn names_fn;
static pthread_t thread;
static int running, closed;
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static int stop;
static uint64_t start_ms, last_snap_ms, snap_cost_ms;
/* The segment's event queue: the copier's drains and host probes' lines (any thread). */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;

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

struct drain { const char *map; enum gp_seg_record type; };

static int on_record(void *user, unsigned ring, const void *data, size_t size)
{
	struct drain *d = user;
	gp_seg_event(seg, d->type, d->map, ring, data, size);
	return 0;
}

static void drain_rings(void)
{
	for (size_t s = 0; s < nsets; s++) {
		struct gp_map_inst *pk = gp_map_set__printk(sets[s]);
		if (pk) {
			struct drain d = {gp_map_inst__name(pk), GP_SEG_PRINTK};
			gp_map_inst__ring_drain(pk, on_record, &d);
		}
		for (size_t i = 0; i < gp_map_set__count(sets[s]); i++) {
			struct gp_map_inst *m = gp_map_set__map(sets[s], i);
			if (gp_map_inst__desc(m)->kind != GP_MAP_KIND_RING)
				continue;
			struct drain d = {gp_map_inst__name(m), GP_SEG_EVENT};
			gp_map_inst__ring_drain(m, on_record, &d);
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

/* Snapshot when due (or final), drain; one flush into the segment. */
static void copy(int final)
{
	uint64_t t0 = mono_ms();
	uint64_t every = snap_cost_ms * 10 > SNAP_MS ? snap_cost_ms * 10 : SNAP_MS;
	void *blob = NULL;
	size_t len = 0;
	if (final || !last_snap_ms || t0 - last_snap_ms >= every) {
		struct gp_output_clock c;
		int clock = !shim_clock_report(NULL, &c);
		struct gp_snap_name *nm = NULL;
		size_t nn = names_fn ? names_fn(&nm) : 0;
		struct gp_snap_input in = {.sets = sets, .nsets = nsets, .names = nm, .nnames = nn,
					   .clock = clock ? &c : NULL, .time_ms = t0 - start_ms};
		if (gp_snap_build(&in, &blob, &len))
			blob = NULL;
		free(nm);
		last_snap_ms = mono_ms();
		snap_cost_ms = last_snap_ms - t0;
	}
	pthread_mutex_lock(&q_lock);
	drain_rings();
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

static void *copier(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&stop_lock);
	while (!stop) {
		pthread_mutex_unlock(&stop_lock);
		copy(0);
		shim_clock_tick(NULL);   /* the GPU clock's offset re-checked off the app's threads */
		pthread_mutex_lock(&stop_lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += POLL_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!stop)
			pthread_cond_timedwait(&stop_cond, &stop_lock, &ts);
	}
	pthread_mutex_unlock(&stop_lock);
	return NULL;
}

int shim_copier_start(struct gp_map_set *const *s, size_t n, shim_copier_names_fn names)
{
	sets = s;
	nsets = n;
	names_fn = names;
	stop = 0;
	int rc = pthread_create(&thread, NULL, copier, NULL);
	if (rc)
		return -rc;
	running = 1;
	return 0;
}

void shim_copier_final(void)
{
	if (!seg)
		return;
	if (running) {
		pthread_mutex_lock(&stop_lock);
		stop = 1;
		pthread_cond_signal(&stop_cond);
		pthread_mutex_unlock(&stop_lock);
		pthread_join(thread, NULL);
		running = 0;
	}
	copy(1);
}

void shim_copier_forked(void)
{
	static struct gp_seg_writer *parents;   /* kept reachable: never freed, never used */
	parents = seg;
	__asm__ volatile("" : : "m"(parents));
	seg = NULL;
	sets = NULL;
	nsets = 0;
	running = 0;
	closed = 0;
	stop = 0;
	last_snap_ms = snap_cost_ms = 0;
	pthread_mutex_init(&stop_lock, NULL);
	pthread_cond_init(&stop_cond, NULL);
	pthread_mutex_init(&q_lock, NULL);
}
