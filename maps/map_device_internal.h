/* Private to maps/: the pieces of map_device.c that the device helpers in other files of this
 * folder (map_device_warp.c) are written with. */
#ifndef GPUPROBE_MAPS_MAP_DEVICE_INTERNAL_H
#define GPUPROBE_MAPS_MAP_DEVICE_INTERNAL_H

#include "maps/map_emit.h"

#define GP_MD_F_COMMIT GP_EMIT_PREFIX "ring_commit"

/* %rd1..%rd<n> from the .func's parameters; st.param of the result and ret. */
void gp_md_load_args(struct gp_emit *e, unsigned n);
void gp_md_ret_reg(struct gp_emit *e, const char *reg);
void gp_md_ret_imm(struct gp_emit *e, long long v);
void gp_md_call(struct gp_emit *e, const char *fn, const char *ret, unsigned n, const char *const *args);
/* Whether the module has the warp-synchronous instructions (sm_70+, PTX ISA 6.2+). */
int gp_md_ring_warp_target(const struct gp_emit *e);
/* The one-lane reservation of the variant being defined (plain, or with the ring modes). */
const char *gp_md_reserve1_name(void);

/* Helper 517, bpf_gpu_warp_output (map_device_warp.c). */
void gp_md_def_warp_output(struct gp_emit *e);

#endif
