/* GPUPROBE_LLVM_CACHE=DIR: load every module from the PTX amdgpu/'s LLVM lowering (nvptx64) made
 * of it (of its instrumented PTX, with probes), found in DIR under its key (llvm_ptx.c). */
#ifndef GPUPROBE_SHIM_LLVM_PTX_H
#define GPUPROBE_SHIM_LLVM_PTX_H

#include "shim/image.h"
#include "shim/registry.h"

extern int shim_llvm_enabled;

/* Replace img with its LLVM-lowered PTX: 1 replaced, 0 load as given (said in one line). */
int shim_llvm_transform(struct shim_image *img, const struct shim_module *m);

/* LLVM's PTX of ptx (malloc'd, *out_len its length), or NULL after one line naming module seq and
 * ending in what ("loaded unchanged", ...). */
char *shim_llvm_lower(const char *ptx, size_t len, unsigned seq, const char *what, size_t *out_len);

#endif
