/* Clock offsets from timed readings (clock.h). */
#include "nvidia/clock.h"

#include <errno.h>

/* mid - gpu as a signed offset, where mid is the midpoint of [a, b]. */
static int64_t offset_at_mid(uint64_t a, uint64_t b, uint64_t gpu)
{
	uint64_t mid = a + (b - a) / 2;
	return (int64_t)(mid - gpu);   /* two's complement: right whichever is larger */
}

int gp_clock_estimate(const struct gp_clock_sample *s, size_t n, struct gp_clock_offset *out)
{
	const struct gp_clock_sample *best = NULL;
	uint64_t best_rtt = 0, res = 0;
	unsigned used = 0;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].gpu || s[i].real1 < s[i].real0 || s[i].mono1 < s[i].mono0)
			continue;   /* failed, or CLOCK_REALTIME was stepped back during it */
		uint64_t rtt = s[i].mono1 - s[i].mono0;
		if (s[i].real1 - s[i].real0 > rtt)
			rtt = s[i].real1 - s[i].real0;   /* a step forward widens the window */
		used++;
		if (s[i].step && (!res || s[i].step < res))
			res = s[i].step;
		if (!best || rtt < best_rtt) {
			best = &s[i];
			best_rtt = rtt;
		}
	}
	if (!best)
		return -EINVAL;
	out->realtime_ns = offset_at_mid(best->real0, best->real1, best->gpu);
	out->monotonic_ns = offset_at_mid(best->mono0, best->mono1, best->gpu);
	out->uncertainty_ns = (best_rtt + 1) / 2;
	out->at_mono_ns = best->mono0 + (best->mono1 - best->mono0) / 2;
	out->used = used;
	out->resolution_ns = res;
	return 0;
}

static uint64_t absdiff(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

int gp_clock_history_add(struct gp_clock_history *h, const struct gp_clock_offset *o)
{
	h->recent[h->checks % GP_CLOCK_KEPT] = *o;
	if (!h->checks++) {
		h->first = h->last = h->applied = *o;
		return 1;
	}
	h->last = *o;
	if (absdiff(o->realtime_ns, h->applied.realtime_ns) <= o->uncertainty_ns &&
	    absdiff(o->monotonic_ns, h->applied.monotonic_ns) <= o->uncertainty_ns)
		return 0;
	h->applied = *o;
	h->updates++;
	return 1;
}

unsigned gp_clock_history_kept(const struct gp_clock_history *h)
{
	return h->checks < GP_CLOCK_KEPT ? h->checks : GP_CLOCK_KEPT;
}

const struct gp_clock_offset *gp_clock_history_at(const struct gp_clock_history *h, unsigned i)
{
	unsigned oldest = h->checks <= GP_CLOCK_KEPT ? 0 : h->checks % GP_CLOCK_KEPT;
	return &h->recent[(oldest + i) % GP_CLOCK_KEPT];
}

int64_t gp_clock_drift_ns(const struct gp_clock_history *h)
{
	return h->checks ? h->last.realtime_ns - h->first.realtime_ns : 0;
}

double gp_clock_span_s(const struct gp_clock_history *h)
{
	return h->checks ? (double)(h->last.at_mono_ns - h->first.at_mono_ns) / 1e9 : 0;
}
