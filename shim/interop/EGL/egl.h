/* The EGL types cudaEGL.h's prototypes use, with their ABI (EGL's own headers are not a build
 * dependency of the shim). Used only to generate and compile the shim's interop exports. */
#ifndef GPUPROBE_SHIM_EGL_STUB_H
#define GPUPROBE_SHIM_EGL_STUB_H
#include <stdint.h>
typedef int32_t EGLint;
typedef void *EGLDisplay;
typedef void *EGLImage;
typedef void *EGLSync;
#endif
