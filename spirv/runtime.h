/* Running SPIR-V kernels: OpenCL (any ICD; PoCL in CI) and Level Zero.
 *
 * Buffers are device addresses (u64), exactly what the lowered kernels take for PTX pointers:
 * OpenCL shared virtual memory, or Level Zero device memory. Errors are negative errno with one
 * line in err. */
#ifndef GPUPROBE_SPIRV_RUNTIME_H
#define GPUPROBE_SPIRV_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

struct spirv_arg {
	const void *data;  /* the argument's bytes (a u64 device address for a pointer) */
	size_t size;
};

/* ---- OpenCL ---- */
typedef struct spirv_cl spirv_cl;

/* The first OpenCL device (GPUPROBE_CL_DEVICE=N picks another). */
int spirv_cl__open(spirv_cl **out, char *err, size_t errlen);
void spirv_cl__close(spirv_cl *cl);
const char *spirv_cl__device_name(const spirv_cl *cl);
/* "IL": the device takes SPIR-V (clCreateProgramWithIL); "llvm-spirv": SPIR-V is turned back
 * into LLVM bitcode (llvm-spirv-15 -r, or $GPUPROBE_LLVM_SPIRV) and built as SPIR 1.2. */
const char *spirv_cl__route(const spirv_cl *cl);
/* The device's sub-group support, e.g. "no cl_khr_subgroups, 0 sub-groups per work-group". Warp
 * collectives do not use sub-groups (they are emulated: spirv.h), so this is information only. */
const char *spirv_cl__subgroups(const spirv_cl *cl);

/* Build a module; replaces any earlier one. */
int spirv_cl__load(spirv_cl *cl, const uint32_t *words, size_t nwords, char *err, size_t errlen);

int spirv_cl__alloc(spirv_cl *cl, size_t size, uint64_t *addr, char *err, size_t errlen);
int spirv_cl__write(spirv_cl *cl, uint64_t addr, const void *src, size_t size, char *err, size_t errlen);
int spirv_cl__read(spirv_cl *cl, uint64_t addr, void *dst, size_t size, char *err, size_t errlen);

/* Run kernel `name` over grid x block (CUDA's meaning) and wait for it. */
int spirv_cl__launch(spirv_cl *cl, const char *name, const unsigned grid[3], const unsigned block[3],
		     const struct spirv_arg *args, unsigned nargs, char *err, size_t errlen);

/* ---- Level Zero ---- */
/* Create a module from SPIR-V on the first Level Zero device (zeModuleCreate) and look up
 * kernel `name`. Returns -ENODEV with "no Level Zero driver ..." where none is installed. */
int spirv_ze__check_module(const uint32_t *words, size_t nwords, const char *name, char *err, size_t errlen);

#endif
