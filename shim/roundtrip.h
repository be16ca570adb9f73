/* The zero-probe round trip (GPUPROBE_ROUNDTRIP=1): load every module from its parsed and
 * printed PTX, with no probes. For measuring the pipeline's own cost (bench/overhead). */
#ifndef GPUPROBE_SHIM_ROUNDTRIP_H
#define GPUPROBE_SHIM_ROUNDTRIP_H

#include "shim/image.h"
#include "shim/registry.h"

/* Nonzero when GPUPROBE_ROUNDTRIP is set (and not "0"), read at load time. */
extern int shim_roundtrip_enabled;

/* Replace img with its round-tripped PTX: 1 replaced, 0 load as given (also on any failure). */
int shim_roundtrip_transform(struct shim_image *img, const struct shim_module *m);

#endif
