/* Private to shim/probes*.c. */
#ifndef GPUPROBE_SHIM_PROBES_INTERNAL_H
#define GPUPROBE_SHIM_PROBES_INTERNAL_H

#include "shim/forward.h"
#include "maps/maps.h"

/* Where map memory goes (probes_alloc.c): a device range reserved at this address (environment
 * GPUPROBE_MAP_VA overrides it; 0 turns fixed placement off), host-mapped memory 1 TiB above. */
#define GP_MAP_VA_DEFAULT 0x600000000000ull
#define GP_MAP_VA_BYTES (64ull << 30)

/* Fill a with the driver-backed allocator for ctx; *device_sm = compute capability (e.g. 90).
 * Map memory is placed at the same addresses in every run where the driver allows it, so the
 * instrumented PTX (which holds map addresses) repeats and hits the driver's JIT cache. */
int probes_alloc_init(struct gp_map_allocator *a, CUcontext ctx, unsigned *device_sm);

/* Why probes_alloc_init failed, in a few words ("cuStreamCreate: CUDA_ERROR_..."). It gave back
 * whatever it had made before failing. */
const char *probes_alloc_why(void);

/* Give back every piece of map memory, the address ranges and the copy stream. The maps made
 * through the allocator must not be used after. (Freeing the last device map gives the device
 * range back by itself.) */
void probes_alloc_fini(void);

#endif
