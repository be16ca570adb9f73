/* The VDPAU types cudaVDPAU.h's prototypes use, with their ABI (VDPAU's header is not a build
 * dependency of the shim). Used only to generate and compile the shim's interop exports. */
#ifndef GPUPROBE_SHIM_VDPAU_STUB_H
#define GPUPROBE_SHIM_VDPAU_STUB_H
#include <stdint.h>
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef uint32_t VdpChromaType;
typedef uint32_t VdpRGBAFormat;
typedef uint32_t VdpFuncId;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id, void **function_pointer);
#endif
