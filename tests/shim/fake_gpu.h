/* Shared by fake_driver.c and fake_gpu.c (one fake libcuda.so.1): the "GPU" behind the fake
 * driver's module, launch and graph entry points. Device memory is host memory at the same
 * address; streams execute at once unless they are being captured; captures follow the driver's
 * rules on prohibited calls (fake_gpu.c says which). */
#ifndef GPUPROBE_TESTS_SHIM_FAKE_GPU_H
#define GPUPROBE_TESTS_SHIM_FAKE_GPU_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
#define FAKE_ERR_CAPTURE_UNSUPPORTED 900
#define FAKE_ERR_CAPTURE_INVALIDATED 901
#define FAKE_ERR_CAPTURE_IMPLICIT 906

/* What a module or library handle holds: its image as the driver got it. */
void fake_gpu_image(uintptr_t handle, const void *image);
void fake_gpu_unload(uintptr_t handle);
/* Function/kernel handle fn, of module or library owner, is kernel name. */
void fake_gpu_name(uintptr_t fn, uintptr_t owner, const char *name);
/* A launch of fn: -1 when fn is no handle of a known kernel (the caller does what it did before
 * the fake ran kernels), else a CUresult. */
int fake_gpu_launch(uintptr_t fn, const unsigned grid[3], const unsigned block[3], void *stream,
		    void **params);
/* cuGraphAddKernelNode_v2 into a graph made by cuGraphCreate: -1 when graph is not one. */
int fake_gpu_graph_kernel(void **node, void *graph, uintptr_t fn, const unsigned grid[3],
			  const unsigned block[3], void **params);
/* cuGraphExecKernelNodeSetParams_v2: node (of cuGraphAddKernelNode_v2) of exec runs fn now. */
int fake_gpu_exec_kernel_set(void *exec, void *node, uintptr_t fn, const unsigned grid[3],
			     const unsigned block[3], void **params);
/* A potentially unsafe call (memory allocation, module unload, ...) by this thread: 0, or
 * FAKE_ERR_CAPTURE_UNSUPPORTED after invalidating the captures that prohibit it. */
int fake_gpu_unsafe(const char *what);
/* A synchronous operation on the legacy stream: 0, or FAKE_ERR_CAPTURE_IMPLICIT after
 * invalidating every capture of a blocking stream (they would synchronize with it). */
int fake_gpu_legacy(const char *what);

#endif
