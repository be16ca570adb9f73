/* The final report's clock line: which clocks probe times are on and the measured offset of
 * the GPU's %globaltimer (maps/snapshot.h, docs/architecture.md "One clock"). Without it a reader cannot
 * tell whether a device time and a host time may be subtracted. */
#include "maps/output_internal.h"

#include <inttypes.h>

/* last - first, wrapping (a snapshot's values are not to be trusted: no signed overflow) */
static int64_t drift(const struct gp_output_clock *c)
{
	return (int64_t)((uint64_t)c->last_offset_ns - (uint64_t)c->offset_ns);
}

static void print_json(struct gp_output *o, const struct gp_output_clock *c)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "type", json_object_new_string("clock"));
	json_object_object_add(j, "ktime_get_ns", json_object_new_string("CLOCK_MONOTONIC"));
	json_object_object_add(j, "get_globaltimer", json_object_new_string("CLOCK_REALTIME"));
	json_object_object_add(j, "device", json_object_new_string(c->corrected ? "%globaltimer + offset"
										: "%globaltimer"));
	json_object_object_add(j, "corrected", json_object_new_boolean(c->corrected));
	json_object_object_add(j, "context_timestamp", json_object_new_string("%globaltimer"));
	if (!c->corrected) {
		json_object_object_add(j, "why", json_object_new_string(c->why ? c->why : "not measured"));
	} else {
		json_object_object_add(j, "offset_ns", json_object_new_int64(c->offset_ns));
		json_object_object_add(j, "uncertainty_ns", json_object_new_uint64(c->uncertainty_ns));
		json_object_object_add(j, "monotonic_offset_ns", json_object_new_int64(c->monotonic_offset_ns));
		json_object_object_add(j, "last_offset_ns", json_object_new_int64(c->last_offset_ns));
		json_object_object_add(j, "last_uncertainty_ns", json_object_new_uint64(c->last_uncertainty_ns));
		json_object_object_add(j, "drift_ns", json_object_new_int64(drift(c)));
		json_object_object_add(j, "checks", json_object_new_int((int)c->checks));
		json_object_object_add(j, "updates", json_object_new_int((int)c->updates));
		json_object_object_add(j, "span_s", json_object_new_double(c->span_s));
		if (c->resolution_ns)
			json_object_object_add(j, "resolution_ns", json_object_new_uint64(c->resolution_ns));
		json_object *h = json_object_new_array();
		for (unsigned i = 0; i < c->nhistory; i++) {
			json_object *e = json_object_new_object();
			json_object_object_add(e, "time_s", json_object_new_double(c->history[i].time_s));
			json_object_object_add(e, "offset_ns", json_object_new_int64(c->history[i].offset_ns));
			json_object_object_add(e, "uncertainty_ns",
					       json_object_new_uint64(c->history[i].uncertainty_ns));
			json_object_array_add(h, e);
		}
		json_object_object_add(j, "history", h);
	}
	gp_output_json(o, j);
}

void gp_output_print_clock(struct gp_output *o, const struct gp_output_clock *cp)
{
	struct gp_output_clock c = *cp;
	if (o->o.json) {
		print_json(o, &c);
		return;
	}
	if (!c.corrected) {
		fprintf(o->o.out, "clock: host probe times are on the host's clocks (bpf_ktime_get_ns: "
			"CLOCK_MONOTONIC, bpf_get_globaltimer: CLOCK_REALTIME), device probe times on "
			"the GPU's %%globaltimer, not corrected (%s)\n", c.why ? c.why : "not measured");
		return;
	}
	fprintf(o->o.out, "clock: probe times are on the host's clocks (bpf_ktime_get_ns: "
		"CLOCK_MONOTONIC, bpf_get_globaltimer: CLOCK_REALTIME; on the GPU %%globaltimer + "
		"offset; device contexts' timestamp stays %%globaltimer); CLOCK_REALTIME - "
		"%%globaltimer = %" PRId64 " ns +- %" PRIu64 " at start",
		c.offset_ns, c.uncertainty_ns);
	if (c.checks > 1)
		fprintf(o->o.out, ", %" PRId64 " ns +- %" PRIu64 " at the last of %u checks %.1f s "
			"later (drift %+" PRId64 " ns; offset updated %u times)", c.last_offset_ns,
			c.last_uncertainty_ns, c.checks, c.span_s, drift(&c),
			c.updates);
	if (c.resolution_ns)
		fprintf(o->o.out, "; %%globaltimer ticks by %" PRIu64 " ns", c.resolution_ns);
	fputc('\n', o->o.out);
}
