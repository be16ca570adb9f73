/* The offset between the host's clocks and the GPU's %globaltimer (docs/architecture.md "One clock"), from
 * timed readings: the host reads its clocks, has the GPU read %globaltimer, and reads its clocks
 * again once it sees the GPU's value. The GPU read happened inside that window, so the offset at
 * the window's midpoint is right to within half the window (the round trip). The shortest of
 * several round trips gives the tightest bound. Pure arithmetic: the driver calls that take the
 * readings are the shim's (shim/clock_sync.c). */
#ifndef GPUPROBE_NVIDIA_CLOCK_H
#define GPUPROBE_NVIDIA_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* One reading: the host clocks before the GPU was asked, the GPU's %globaltimer, the host clocks
 * after its value arrived (ns). gpu == 0: the reading failed. */
struct gp_clock_sample {
	uint64_t real0, mono0;     /* CLOCK_REALTIME, CLOCK_MONOTONIC before */
	uint64_t gpu;              /* %globaltimer, read just as it ticked */
	uint64_t step;             /* by how much it ticked (0: unknown) */
	uint64_t real1, mono1;     /* after */
};

/* Host clock minus %globaltimer: add it to a GPU time stamp to put it on that host clock. */
struct gp_clock_offset {
	int64_t realtime_ns;       /* CLOCK_REALTIME - %globaltimer (bpf_get_globaltimer's clock) */
	int64_t monotonic_ns;      /* CLOCK_MONOTONIC - %globaltimer (bpf_ktime_get_ns's clock) */
	uint64_t uncertainty_ns;   /* the true offsets lie within +- this (half the round trip) */
	uint64_t at_mono_ns;       /* when it was measured (CLOCK_MONOTONIC) */
	unsigned used;             /* readings that counted */
	uint64_t resolution_ns;    /* the smallest tick of %globaltimer seen (0: unknown) */
};

/* The best estimate from n readings (the one with the shortest round trip). Returns 0, or
 * -EINVAL when no reading is usable (all failed, or a host clock went backwards). */
int gp_clock_estimate(const struct gp_clock_sample *s, size_t n, struct gp_clock_offset *out);

/* Measurements over a run: the first (when probes started), the latest, the one the device
 * helpers apply now, and the latest GP_CLOCK_KEPT of all (oldest first from recent[0] when
 * checks <= GP_CLOCK_KEPT; a ring otherwise, see gp_clock_history_at). */
#define GP_CLOCK_KEPT 64
struct gp_clock_history {
	struct gp_clock_offset first, last, applied;
	unsigned checks;           /* measurements, the first included */
	unsigned updates;          /* times the applied offset changed after the first */
	struct gp_clock_offset recent[GP_CLOCK_KEPT];
};

/* How many measurements are kept, and the i-th of them, oldest first. */
unsigned gp_clock_history_kept(const struct gp_clock_history *h);
const struct gp_clock_offset *gp_clock_history_at(const struct gp_clock_history *h, unsigned i);

/* Record measurement o. Returns 1 when the device should apply it (the first measurement, or one
 * that disagrees with the applied offset by more than its own uncertainty: drift or a step of
 * CLOCK_REALTIME), else 0: re-writing an offset that is still right would only add jitter. */
int gp_clock_history_add(struct gp_clock_history *h, const struct gp_clock_offset *o);

/* The CLOCK_REALTIME offset's change from the first measurement to the latest (ns), and the
 * seconds between them. */
int64_t gp_clock_drift_ns(const struct gp_clock_history *h);
double gp_clock_span_s(const struct gp_clock_history *h);

#endif
