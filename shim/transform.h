/* The one hook where a module image may be rewritten before the driver loads it. */
#ifndef GPUPROBE_SHIM_TRANSFORM_H
#define GPUPROBE_SHIM_TRANSFORM_H

#include "shim/image.h"
#include "shim/registry.h"

/* Called for every module image on every load path, after inspection, before the driver sees
 * it. To load something else, set img->data/size/kind (and img->owned, freed after the load)
 * and return 1; return 0 to load the image exactly as given. On any failure it must return 0
 * (never break the application). Instrumentation (issue 5) plugs in here; a module whose
 * kernels are instrumented one at a time at their first launch (lazy.h) loads as given. */
int shim_module_transform(struct shim_image *img, struct shim_module *m);

#endif
