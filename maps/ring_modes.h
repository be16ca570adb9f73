/* The ring modes' counters (include/gpuprobe/warp.h: lossless and sampled rings), read from the
 * producers' state on the device: what the host needs to scale a sampled trace and to say how
 * long a lossless one made the kernels wait. */
#ifndef GPUPROBE_MAPS_RING_MODES_H
#define GPUPROBE_MAPS_RING_MODES_H

#include <stdint.h>

struct gp_map_inst;

struct gp_ring_modes {
	int lossless;              /* map_flags GP_RINGBUF_LOSSLESS */
	uint32_t sample_rate;      /* N of 1 in N (0: not sampled) */
	uint64_t offered;          /* sampled: records offered, kept or not (exact) */
	uint64_t batches;          /* sampled: warp batches offered; (batches + N - 1) / N per SM kept */
	uint64_t wait_ns;          /* lossless: ns warps' leaders waited for space, all rings */
	uint64_t drops;            /* records lost (full lossy ring, batch larger than the ring) */
	unsigned gave_up;          /* lossless rings that waited past the timeout and turned lossy */
};

/* Fill *out for ring map m, summing every SM's ring. 0, -EINVAL (not a ring) or the
 * allocator's copy error. */
int gp_map_inst__ring_modes(const struct gp_map_inst *m, struct gp_ring_modes *out);

#endif
