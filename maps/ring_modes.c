/* gp_map_inst__ring_modes: the lossless and sampled rings' counters (ring_modes.h). */
#include "maps/ring_modes.h"
#include "maps/map_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gp_map_inst__ring_modes(const struct gp_map_inst *m, struct gp_ring_modes *out)
{
	memset(out, 0, sizeof(*out));
	if (!m || m->d.kind != GP_MAP_KIND_RING)
		return -EINVAL;
	out->lossless = !!(m->d.flags & GP_MAPF_LOSSLESS);
	out->sample_rate = (m->d.flags & GP_MAPF_SAMPLED) ? m->d.sample_rate : 0;
	size_t n = (size_t)m->d.nshards * GP_RING_STATE_STRIDE;
	uint8_t *st = malloc(n);
	if (!st)
		return -ENOMEM;
	/* one copy of every producer state: the counters are monotonic, a torn read is only late */
	int rc = gp_region_read(m, &m->data, 0, st, n);
	for (unsigned r = 0; !rc && r < m->d.nshards; r++) {
		const uint8_t *p = st + (size_t)r * GP_RING_STATE_STRIDE;
		uint64_t v[8];
		memcpy(v, p, sizeof(v));
		out->drops += v[GP_RP_DROPS / 8];
		out->wait_ns += v[GP_RP_WAIT_NS / 8];
		out->batches += v[GP_RP_SAMPLE_SEQ / 8];
		out->offered += v[GP_RP_OFFERED / 8];
		out->gave_up += v[GP_RP_GAVE_UP / 8] != 0;
	}
	free(st);
	return rc;
}
