/* Private to shim/probes*.c. */
#ifndef GPUPROBE_SHIM_PROBES_INTERNAL_H
#define GPUPROBE_SHIM_PROBES_INTERNAL_H

#include "shim/forward.h"
#include "maps/maps.h"

/* Fill a with the driver-backed allocator for ctx; *device_sm = compute capability (e.g. 90). */
int probes_alloc_init(struct gp_map_allocator *a, CUcontext ctx, unsigned *device_sm);

#endif
