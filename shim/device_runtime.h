/* CUDA's device runtime (libcudadevrt.a): the library a kernel that launches kernels (dynamic
 * parallelism) is linked with. nvcc links it into the application's cubin; the PTX beside it
 * only declares its functions (__cudaCDP2*, cudaGetParameterBuffer, cudaLaunchDevice), so
 * instrumented PTX of such a kernel compiles only when the JIT linker is given the library too. */
#ifndef GPUPROBE_SHIM_DEVICE_RUNTIME_H
#define GPUPROBE_SHIM_DEVICE_RUNTIME_H

/* 1 when NUL-terminated PTX calls into the device runtime. */
int ptx_uses_device_runtime(const char *ptx);

/* The library's path, as GPUPROBE_CUDADEVRT asks: a path (only it), or "auto" (the toolkit's:
 * CUDA_HOME, CUDA_PATH, /usr/local/cuda, in lib64/ and targets/<arch>-linux/lib/); NULL where
 * unset or none is readable. Looked up once.
 * Off by default because a kernel linked with the device runtime is compiled as relocatable code,
 * where probe code that branches per thread may leave a warp split when the kernel goes on: on an
 * H100/H200 (2026-11-27) cdpSimpleQuicksort and cdpQuadtree passed with every kernel probed, but
 * cdpAdvancedQuicksort, which shuffles from the lowest active lane after a branch on lane 0 and so
 * needs a whole warp there, wrote out of bounds with a HASH-map probe (not with a probe without
 * map calls). Until probe code keeps warps whole in that mode, a user asks for it. */
const char *shim_device_runtime_library(void);

#endif
