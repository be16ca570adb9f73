/* The probe runtime inside the application (issue 5): reads GPUPROBE_PROBES / GPUPROBE_CONFIG,
 * instruments each module through nvidia/probes.h, keeps the maps in the application's context,
 * and hands what the probes collect on: under `gpuprobe run` the copier snapshots the maps into
 * a segment that gpuprobe prints (copier.h), else an output thread prints them here
 * (maps/output.h); the final snapshot or report comes before the context goes away or at exit.
 * Without probes it does nothing. */
#ifndef GPUPROBE_SHIM_PROBES_H
#define GPUPROBE_SHIM_PROBES_H

#include "shim/image.h"
#include "shim/registry.h"

/* Nonzero when probes are configured (set at load time). */
extern int shim_probes_enabled;

/* From shim_module_transform: replace img with the instrumented module, 1 replaced, 0 load as
 * given. With a current context the instrumented PTX is compiled here (the application's JIT
 * options, the driver's JIT linker) and img becomes a cubin, from the per-user cubin cache when
 * it holds one; a compile error gives one line and 0 (the original loads). Without a context,
 * img becomes the instrumented PTX for the driver to compile. */
int shim_probes_transform(struct shim_image *img, const struct shim_module *m);

/* The instrumented image (a cubin we compiled, or PTX for the driver's JIT) of module m failed
 * to load with CUDA error rc: say so in one line (the caller then loads the original). */
void shim_probes_load_failed(const struct shim_module *m, int rc, int cubin);

/* After an instrumented image loaded: load (JIT) every kernel now, as lazy loading would defer
 * a compile failure to the application's launch. On failure the library/module is unloaded and
 * the error returned (then the caller loads the original). */
#include "shim/forward.h"
CUresult shim_probes_check_library(CUlibrary lib);
CUresult shim_probes_check_module(CUmodule mod);

/* For kernels instrumented one at a time at their first launch (lazy.c): the probe runtime set
 * up (once), its pipeline and the device's compute capability in *sm; NULL when probes are off or
 * disabled. */
struct gp_nv_probes;
struct gp_nv_probes *shim_probes_pipeline(unsigned *sm);

/* Remember the kernel names of a module's PTX for the output's per-kernel tables. */
void shim_probes_note_kernels(const char *ptx, size_t len);

/* Final snapshot and report, once (context teardown or exit). */
void shim_probes_final(void);

#endif
