/* Kernels instrumented one at a time, at their first launch (docs/architecture.md: "first-launch work is
 * paid per kernel when it is first launched, cached across runs, never per module at load").
 *
 * With probes configured, a module whose kernels can be split out (ptx-frontend/split.h) is
 * loaded exactly as the application gave it, and its PTX is kept. The first launch of one of its
 * kernels in a context splits that kernel (with the functions it calls) into a small module,
 * instruments it, binds its references to the module's variables to the original's addresses in
 * this context (so the application's cuModuleGetGlobal/cudaMemcpyToSymbol writes are what the
 * instrumented kernel reads), and loads it: from then on launches of the application's handle run
 * the instrumented function instead. The application's handles (CUmodule, CUlibrary, CUfunction,
 * CUkernel) stay the original's. Kernels never launched cost nothing; the instrumented split PTX
 * is cached on disk (lazy_cache.h). A module the split cannot handle is instrumented whole at
 * load, as before (probes.c). GPUPROBE_LAZY=0 instruments every module whole at load.
 *
 * Limits: the instrumented function is compared with the original when loaded (registers,
 * threads per block, shared and local memory); a launch it cannot take (a block larger than it
 * allows, more dynamic shared memory than it allows) runs the original, with one line per
 * kernel; a launch the instrumented function fails (out of resources, for example) is made again
 * with the original and, when that succeeds, the kernel runs without probes from then on. */
#ifndef GPUPROBE_SHIM_LAZY_H
#define GPUPROBE_SHIM_LAZY_H

#include "shim/forward.h"
#include "shim/image.h"
#include "shim/registry.h"

/* Probes configured and GPUPROBE_LAZY not 0 (read at load time). */
extern int shim_lazy_enabled;

/* At a module load (shim_module_transform), before the driver sees img: 1 when m's kernels will
 * be instrumented at their first launch (load img as given), 0 to instrument the whole module now. */
int shim_lazy_prepare(const struct shim_image *img, struct shim_module *m);

/* The load of m ended: the driver's handle (a CUmodule, or a CUlibrary when library), or rc != 0
 * (the load failed: m's lazy state goes). */
void shim_lazy_loaded(struct shim_module *m, const void *handle, int library, CUresult rc);

/* The application unloads module or library handle: the split modules made for it go too. */
void shim_lazy_unload(const void *handle);

/* A kernel record of a lazy module is being made for handle (a CUkernel when is_kernel): give it
 * its per-context state. */
void shim_lazy_kernel_init(struct shim_kernel *k, const void *handle, int is_kernel);

/* At a launch of the application's handle f (only while launches are watched): the function to
 * launch, the instrumented one or f. block: threads per block; smem: dynamic shared bytes. May do
 * the kernel's first-launch work; after that it takes no lock and allocates nothing. */
CUfunction shim_lazy_pick(CUfunction f, unsigned block, unsigned smem);

/* The launch of used (picked for f) returned rc: nonzero when it must be made again with f (the
 * instrumented function failed where the original may not: out of resources or memory, an
 * invalid value, a cooperative grid too large for its occupancy). */
int shim_lazy_failed(CUfunction f, CUfunction used, CUresult rc);

/* ... and made again with f, which returned again: when that succeeded, the kernel runs without
 * probes from now on, after one line. */
void shim_lazy_retried(CUfunction f, CUresult first, CUresult again);

/* The application set an attribute (or cache configuration) of its function or kernel f: the
 * same for the instrumented functions made for it. */
void shim_lazy_func_attribute(const void *f, CUfunction_attribute attr, int value);
void shim_lazy_cache_config(const void *f, CUfunc_cache config);

#endif
