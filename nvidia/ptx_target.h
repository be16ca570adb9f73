/* The ISA version and target an instrumented module is printed with. The lowered probes use
 * PTX 7.8 and sm_70 features (ld.acquire, st.release, activemask, ld.nc); a module written for
 * an older target keeps its code and gets the newer header. */
#ifndef GPUPROBE_NVIDIA_PTX_TARGET_H
#define GPUPROBE_NVIDIA_PTX_TARGET_H

#include <stddef.h>

#include "ptx-frontend/ir.h"

/* Raises .version to 7.8 and .target below sm_70 to sm_70 (options such as texmode_* kept),
 * in the module's directives and m->target. Newer ISA versions and targets accept older code
 * with one exception each, which are refused instead (-ENOTSUP, one line in err): PTX 1.x or an
 * sm_1x target (mad.f32 without a rounding mode, map_f64_to_f32: meanings later targets
 * dropped), and shfl or vote without .sync (not allowed for sm_70 and later). */
int gp_nv_ptx_target__raise(ir_module *m, char *err, size_t errlen);

#endif
