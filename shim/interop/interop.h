/* The driver's graphics-interop entry points (OpenGL, EGL, VDPAU): declared outside cuda.h, but
 * exported by the real libcuda.so.1, so the shim exports them too. The GL/EGL/VDPAU types come
 * from the minimal headers beside this file. */
#ifndef GPUPROBE_SHIM_INTEROP_H
#define GPUPROBE_SHIM_INTEROP_H
#include <cuda.h>
#include <vdpau/vdpau.h>
#include <cudaGL.h>
#include <cudaEGL.h>
#include <cudaVDPAU.h>
#endif
