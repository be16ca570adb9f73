/* The HIP backend of gpuprobe's own driver (spirv/backend.h's interface): AMD GPUs through
 * libamdhip64, dlopened (GPUPROBE_HIP_LIB names another), with programs lowered by amdgpu/ to
 * code objects for the device's architecture. GPUPROBE_BACKEND=hip selects it. */
#ifndef GPUPROBE_AMDGPU_BACKEND_HIP_H
#define GPUPROBE_AMDGPU_BACKEND_HIP_H

#include "spirv/backend.h"

extern const struct gp_bk_ops gp_bk_hip;

#endif
