/* GPUPROBE_LLVM_CACHE=DIR (no probes): load every module from the PTX amdgpu/'s LLVM lowering
 * (nvptx64) made of it, found in DIR under its original's key (llvm_ptx.c). */
#ifndef GPUPROBE_SHIM_LLVM_PTX_H
#define GPUPROBE_SHIM_LLVM_PTX_H

#include "shim/image.h"
#include "shim/registry.h"

extern int shim_llvm_enabled;

/* Replace img with its LLVM-lowered PTX: 1 replaced, 0 load as given (said in one line). */
int shim_llvm_transform(struct shim_image *img, const struct shim_module *m);

#endif
