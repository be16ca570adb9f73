/* shim_module_transform: with probes configured (GPUPROBE_PROBES / GPUPROBE_CONFIG), the probe
 * runtime (probes.c) replaces a module with its instrumented PTX; otherwise every module is
 * loaded exactly as the application gave it. */
#include "shim/transform.h"
#include "shim/probes.h"

int shim_module_transform(struct shim_image *img, const struct shim_module *m)
{
	if (__builtin_expect(!shim_probes_enabled, 1))
		return 0;
	return shim_probes_transform(img, m);
}
