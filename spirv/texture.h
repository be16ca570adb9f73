/* Texture and surface objects as the SPIR-V lowering reads them (spirv/lower_tex.c).
 *
 * PTX reads a texture through a 64-bit handle (CUtexObject, CUsurfObject). On our own driver
 * (the OpenCL and Level Zero backends) that handle is the device address of one gp_tex_desc in
 * memory the kernel can read, which the driver fills when the object is created
 * (cuTexObjectCreate / cuSurfObjectCreate) and frees with it. The lowering then samples in
 * software (point and linear filtering, every address mode, normalized coordinates and read
 * mode, 1D/2D/3D, layered and cubemap), so textures work on any device, images or not.
 * The numbering is the driver API's: CUaddress_mode, CUfilter_mode, CUarray_format. */
#ifndef GPUPROBE_SPIRV_TEXTURE_H
#define GPUPROBE_SPIRV_TEXTURE_H

#include <stdint.h>

enum {
	GP_TEX_NORMALIZED_COORDS = 1u << 0, /* coordinates in [0, 1) (CU_TRSF_NORMALIZED_COORDINATES) */
	GP_TEX_READ_AS_INTEGER = 1u << 1,   /* 8/16-bit integers read as integers, not as [0, 1] / [-1, 1] floats */
};

struct gp_tex_desc {
	uint64_t data;       /* device address of texel (0, 0, 0) of layer/face 0 */
	uint64_t pitch;      /* bytes from one row to the next (>= width * texel bytes) */
	uint64_t slice;      /* bytes from one 2D slice, layer or cube face to the next */
	uint32_t width;      /* texels; height and depth are 1 where the resource has none */
	uint32_t height;
	uint32_t depth;
	uint32_t layers;     /* layered: layers; cubemap: 6 (x layers for cubemap arrays); else 1 */
	uint32_t format;     /* CUarray_format: 0x01 u8, 0x02 u16, 0x03 u32, 0x08 s8, 0x09 s16, 0x0a s32, 0x10 f16, 0x20 f32 */
	uint32_t channels;   /* 1, 2 or 4 */
	uint32_t filter;     /* CUfilter_mode: 0 point, 1 linear */
	uint32_t address[3]; /* CUaddress_mode per dimension: 0 wrap, 1 clamp, 2 mirror, 3 border */
	uint32_t flags;      /* GP_TEX_* */
	uint32_t reserved;
	float border[4];     /* the border color (address mode border) */
};

/* Offsets the lowering reads (checked against the struct in spirv/lower_tex.c). */
#define GP_TEX_OFF_DATA 0
#define GP_TEX_OFF_PITCH 8
#define GP_TEX_OFF_SLICE 16
#define GP_TEX_OFF_WIDTH 24
#define GP_TEX_OFF_HEIGHT 28
#define GP_TEX_OFF_DEPTH 32
#define GP_TEX_OFF_LAYERS 36
#define GP_TEX_OFF_FORMAT 40
#define GP_TEX_OFF_CHANNELS 44
#define GP_TEX_OFF_FILTER 48
#define GP_TEX_OFF_ADDRESS 52
#define GP_TEX_OFF_FLAGS 64
#define GP_TEX_OFF_BORDER 72
#define GP_TEX_DESC_BYTES 88

#endif
