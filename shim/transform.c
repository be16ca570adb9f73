/* shim_module_transform: with probes configured (GPUPROBE_PROBES / GPUPROBE_CONFIG), the probe
 * runtime (probes.c) replaces a module with its instrumented PTX; otherwise every module is
 * loaded exactly as the application gave it, or (GPUPROBE_ROUNDTRIP=1) from its parsed and printed
 * PTX with no probes (roundtrip.c). With probes, a module whose kernels can be split out is
 * loaded as given and each kernel instrumented at its first launch (lazy.c). */
#include "shim/transform.h"
#include "shim/lazy.h"
#include "shim/probes.h"
#include "shim/roundtrip.h"
#include "shim/llvm_ptx.h"

int shim_module_transform(struct shim_image *img, struct shim_module *m)
{
	if (__builtin_expect(!shim_probes_enabled, 1)) {
		if (__builtin_expect(shim_llvm_enabled, 0))   /* GPUPROBE_LLVM_CACHE: amdgpu/'s lowering */
			return shim_llvm_transform(img, m);
		return __builtin_expect(shim_roundtrip_enabled, 0) ? shim_roundtrip_transform(img, m) : 0;
	}
	if (shim_lazy_enabled && shim_lazy_prepare(img, m))
		return 0;   /* loaded as given; each kernel instrumented at its first launch */
	return shim_probes_transform(img, m);
}
