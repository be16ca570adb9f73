/* EGL extension handle types (opaque pointers) used by cudaEGL.h; see egl.h here. */
#ifndef GPUPROBE_SHIM_EGLEXT_STUB_H
#define GPUPROBE_SHIM_EGLEXT_STUB_H
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
#endif
