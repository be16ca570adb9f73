/* What runtime_opencl.c shares with backend_opencl.c. */
#ifndef GPUPROBE_SPIRV_RUNTIME_INTERNAL_H
#define GPUPROBE_SPIRV_RUNTIME_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* SPIR-V turned back into LLVM bitcode by llvm-spirv -r ($GPUPROBE_LLVM_SPIRV, else
 * llvm-spirv-15), for OpenCL devices that take no SPIR-V (PoCL 3.1). *bc is malloc'd. */
int spirv_cl_to_bitcode(const uint32_t *words, size_t nwords, unsigned char **bc, size_t *bclen, char *err,
			size_t errlen);

/* On PoCL, before its first build: POCL_WORK_GROUP_METHOD=loops unless the user set it (why:
 * runtime_opencl.c). platform is a cl_platform_id. */
void spirv_cl_pocl_method(void *platform);

#endif
