/* What a texture or surface instruction (tex, tld4, suld.b, sust.b) asks for, independent of the
 * target: its geometry, where its handle and coordinates are, how many coordinates it needs and
 * which component a gather reads.
 *
 * spirv/lower_tex.c and amdgpu/lower_tex.c sample textures in software the same way, result for
 * result; reading the instruction in one place keeps the two accepting the same forms and finding
 * the layer and coordinates at the same operands. Element and result types stay with each
 * lowering (each parses types into its own type struct), as does everything that emits code. */
#ifndef GPUPROBE_PTX_TEX_DECODE_H
#define GPUPROBE_PTX_TEX_DECODE_H

#include <stdbool.h>

#include "ptx-frontend/ir.h"

/* Which texture or surface instruction this is: txq and suq are both queries of the descriptor. */
enum ptx_tex_kind { PTX_TEX_NOT, PTX_TEX_SAMPLE, PTX_TEX_GATHER, PTX_TEX_SURF_STORE, PTX_TEX_SURF_LOAD, PTX_TEX_QUERY };

enum ptx_tex_kind ptx_tex_kind_of(const ir_insn *in);

/* The geometry modifier: .1d/.2d/.3d (dims 1-3), .a1d/.a2d (layered), .cube (2 dims, a face
 * from three coordinates), .acube (both). dims is 0 when the instruction names none. */
struct ptx_tex_geom {
	unsigned dims;
	bool layered, cube;
};

void ptx_tex_geom_of(const ir_insn *in, struct ptx_tex_geom *g);

/* True for what the software sampler does not model: mip levels (.level, .grad, .base) and
 * multisample textures (.2dms, .a2dms). */
bool ptx_tex_is_mipmapped(const ir_insn *in);

/* The coordinates of an access: the handle register, then n coordinate operands (a vector's
 * elements, or the one scalar). For layered (and layered cube) geometry, elems[0] is the layer
 * and the spatial coordinates begin at elems[first]. */
struct ptx_tex_coords {
	const char *handle;
	const ir_operand *elems;
	unsigned n;
	unsigned first;
};

/* tex d, [handle, {coordinates}]: d a four-vector, no separate sampler, enough coordinates for g
 * (a layer, then dims, or the three of a cube direction). 0, or -1 with *why (the reason the
 * lowerings report). */
int ptx_tex_sample_operands(const ir_insn *in, const struct ptx_tex_geom *g, struct ptx_tex_coords *co,
			    const char **why);

/* tld4.{r,g,b,a}.2d d, [handle, {x, y}]: the component gathered (0-3) and the coordinates.
 * 0, or -1 when the form is not that one (the result type is the caller's to check). */
int ptx_tex_gather_decode(const ir_insn *in, unsigned *comp, struct ptx_tex_coords *co);

/* suld.b/sust.b [handle, {coordinates}] and the value: coordinates (a layer first where
 * layered, then dims, x in bytes) and the value operands (*vals: a vector's elements or the one
 * register, *nvals of them). The caller has checked the geometry, the type and two operands.
 * 0, or -1 with *why. */
int ptx_tex_surface_operands(const ir_insn *in, bool store, const struct ptx_tex_geom *g, struct ptx_tex_coords *co,
			     const ir_operand **vals, unsigned *nvals, const char **why);

#endif
