/* Textures and surfaces sampled in software from a descriptor (spirv/texture.h): the 64-bit
 * handle a kernel gets is the address of a gp_tex_desc the driver filled. tex.{1d,2d,3d,a1d,
 * a2d,cube,acube} with float or integer coordinates, point or linear filtering (the weights in
 * 8-bit fixed point, as the hardware's), the four address modes (wrap and mirror on normalized
 * coordinates; clamp otherwise), normalized coordinates, normalized-float or integer reads of
 * every CUarray_format; integer coordinates fetch one texel, zero out of range (tex1Dfetch).
 * Missing channels read (0, 0, 0, 1). sust.b/suld.b address surfaces in bytes (x) and rows;
 * out-of-range accesses are dropped (stores) or read zero (loads), not trapped. txq answers
 * width, height, depth and array size; tld4 gathers a component of the four bilinear texels.
 * Mipmaps (.level, .grad), depth compare and separate samplers stay unlowered. One helper function per module fetches a texel. */
#include "spirv/lower.h"
#include "ptx-frontend/tex_decode.h"
#include "spirv/texture.h"

#include <stddef.h>
#include <string.h>

_Static_assert(offsetof(struct gp_tex_desc, pitch) == GP_TEX_OFF_PITCH && offsetof(struct gp_tex_desc, slice) == GP_TEX_OFF_SLICE &&
		       offsetof(struct gp_tex_desc, width) == GP_TEX_OFF_WIDTH && offsetof(struct gp_tex_desc, layers) == GP_TEX_OFF_LAYERS &&
		       offsetof(struct gp_tex_desc, format) == GP_TEX_OFF_FORMAT && offsetof(struct gp_tex_desc, filter) == GP_TEX_OFF_FILTER &&
		       offsetof(struct gp_tex_desc, address) == GP_TEX_OFF_ADDRESS && offsetof(struct gp_tex_desc, flags) == GP_TEX_OFF_FLAGS &&
		       offsetof(struct gp_tex_desc, border) == GP_TEX_OFF_BORDER && sizeof(struct gp_tex_desc) == GP_TEX_DESC_BYTES,
	       "spirv/texture.h: the offsets the lowering reads");

/* ---- helper functions emitted beside the others ----------------------------------------------- */

struct hfn {
	spv_buf save_body, save_vars, head;
	bool save_in;
	uint32_t id;
	uint32_t p[12];
};

static void hbegin(lw *c, struct hfn *h, uint32_t id, uint32_t ret, unsigned np, const uint32_t *pt)
{
	memset(h, 0, sizeof(*h));
	h->id = id;
	h->save_body = c->body;
	h->save_vars = c->vars;
	h->save_in = c->in_block;
	c->body = (spv_buf){0};
	c->vars = (spv_buf){0};
	c->in_block = false;
	spv_op(&h->head, SpvOpFunction, 4, ret, id, (uint32_t)SpvFunctionControlMaskNone, spv_t_func(c->e, ret, np, pt));
	for (unsigned i = 0; i < np; i++) {
		h->p[i] = spv_id(c->e);
		spv_op(&h->head, SpvOpFunctionParameter, 2, pt[i], h->p[i]);
	}
	lw_ensure_block(c);
}

static void hend(lw *c, struct hfn *h)
{
	spv_buf *out = &c->helper_funcs;
	spv_buf_append(out, &h->head);
	spv_op(out, SpvOpLabel, 1, spv_id(c->e));
	spv_buf_append(out, &c->vars);
	spv_op(out, SpvOpBranch, 1, c->body.w[1]);
	spv_buf_append(out, &c->body);
	spv_op(out, SpvOpFunctionEnd, 0);
	spv_buf_free(&h->head);
	spv_buf_free(&c->body);
	spv_buf_free(&c->vars);
	c->body = h->save_body;
	c->vars = h->save_vars;
	c->in_block = h->save_in;
}

/* ---- descriptor fields ------------------------------------------------------------------------ */

static uint32_t field(lw *c, uint32_t desc, unsigned off, ptype t)
{
	uint32_t u64 = spv_t_int(c->e, 64);
	uint32_t a = lw_op2(c, SpvOpIAdd, u64, desc, lw_u64(c, off));
	uint32_t p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, lw_type(c, t)), a);
	lw_ensure_block(c);
	uint32_t v = spv_id(c->e);
	spv_op(&c->body, SpvOpLoad, 5, lw_type(c, t), v, p, (uint32_t)SpvMemoryAccessAlignedMask, t.bits / 8);
	return v;
}

static uint32_t f32c(lw *c, float f)
{
	uint32_t r;
	memcpy(&r, &f, 4);
	return spv_c_float(c->e, 32, r);
}

/* f16 bits (low 16 of a u32) -> f32 */
static uint32_t h2f(lw *c, uint32_t h)
{
	return lw_h2f(c, lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 16), h));
}

/* A coordinate into [0, n) by the address mode (0 wrap, 1 clamp, 2 mirror, 3 border: clamped,
 * the caller replaces the value); *oob set when i was outside. Wrap and mirror apply to normalized
 * coordinates only (norm): with unnormalized ones CUDA clamps. They take four integer divisions,
 * computed in a block only they enter (as selects, every texel of every mode paid them, 12
 * divisions a fetch: most of convolutionTexture's time on PoCL). */
static uint32_t address(lw *c, uint32_t i, uint32_t n, uint32_t mode, uint32_t norm, uint32_t *oob)
{
	uint32_t u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	*oob = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpSLessThan, bl, i, lw_u32(c, 0)),
		      lw_op2(c, SpvOpSGreaterThanEqual, bl, i, n));
	uint32_t n1 = lw_op2(c, SpvOpISub, u32, n, lw_u32(c, 1));
	uint32_t clamp = lw_ext(c, u32, OpenCLstd_SClamp, 3, i, lw_u32(c, 0), n1);
	uint32_t rv = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), rv, (uint32_t)SpvStorageClassFunction);
	spv_op(&c->body, SpvOpStore, 2, rv, clamp);
	uint32_t is_mirror = lw_op2(c, SpvOpIEqual, bl, mode, lw_u32(c, 2));
	uint32_t go = spv_id(c->e), join = spv_id(c->e);
	uint32_t wrap_or_mirror = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, mode, lw_u32(c, 0)), is_mirror);
	lw_branch_cond(c, lw_op2(c, SpvOpLogicalAnd, bl, norm, wrap_or_mirror), go, join);
	lw_label(c, go);
	uint32_t wrap = lw_op2(c, SpvOpSRem, u32, lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpSRem, u32, i, n), n), n);
	uint32_t n2 = lw_op2(c, SpvOpIMul, u32, n, lw_u32(c, 2));
	uint32_t p = lw_op2(c, SpvOpSRem, u32, lw_op2(c, SpvOpIAdd, u32, lw_op2(c, SpvOpSRem, u32, i, n2), n2), n2);
	uint32_t mirror = lw_select(c, u32, lw_op2(c, SpvOpSLessThan, bl, p, n), p,
				    lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpISub, u32, n2, lw_u32(c, 1)), p));
	spv_op(&c->body, SpvOpStore, 2, rv, lw_select(c, u32, is_mirror, mirror, wrap));
	lw_branch(c, join);
	lw_label(c, join);
	return lw_op1(c, SpvOpLoad, u32, rv);
}

/* void texel(u64 desc, i32 i, i32 j, i32 k, u32 layer, u32 flags, u32 *c0, *c1, *c2, *c3):
 * flags bit 0: want floats (else integers), bit 1: out of range reads zero (integer
 * coordinates). (Out pointers, not a vector return: llvm-spirv 15 crashed on the latter.) */
static uint32_t texel_fn(lw *c)
{
	if (c->tex_texel)
		return c->tex_texel;
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t pu = spv_t_ptr(c->e, SpvStorageClassFunction, u32);
	uint32_t pt[10] = {u64, u32, u32, u32, u32, u32, pu, pu, pu, pu};
	c->tex_texel = spv_id(c->e);
	spv_name(c->e, c->tex_texel, "gpuprobe_tex_texel");
	struct hfn h;
	hbegin(c, &h, c->tex_texel, spv_t_void(c->e), 10, pt);
	uint32_t desc = h.p[0], want_f = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, h.p[5], lw_u32(c, 1)), lw_u32(c, 0));
	uint32_t zero_oob = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, h.p[5], lw_u32(c, 2)), lw_u32(c, 0));
	uint32_t dims[3] = {field(c, desc, GP_TEX_OFF_WIDTH, PT('u', 32)), field(c, desc, GP_TEX_OFF_HEIGHT, PT('u', 32)),
			    field(c, desc, GP_TEX_OFF_DEPTH, PT('u', 32))};
	uint32_t idx[3], border = spv_c_bool(c->e, 0);
	uint32_t flags = field(c, desc, GP_TEX_OFF_FLAGS, PT('u', 32));
	uint32_t norm = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, flags, lw_u32(c, GP_TEX_NORMALIZED_COORDS)),
			       lw_u32(c, 0));
	for (unsigned d = 0; d < 3; d++) {
		uint32_t mode = field(c, desc, GP_TEX_OFF_ADDRESS + 4 * d, PT('u', 32)), oob;
		idx[d] = address(c, h.p[1 + d], dims[d], mode, norm, &oob);
		uint32_t is_border = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, mode, lw_u32(c, 3)), zero_oob);
		border = lw_op2(c, SpvOpLogicalOr, bl, border, lw_op2(c, SpvOpLogicalAnd, bl, is_border, oob));
	}
	uint32_t fmt = field(c, desc, GP_TEX_OFF_FORMAT, PT('u', 32)), ch = field(c, desc, GP_TEX_OFF_CHANNELS, PT('u', 32));
	/* element bytes: 0x01/0x08 1, 0x02/0x09/0x10 2, else 4 */
	uint32_t low = lw_op2(c, SpvOpBitwiseAnd, u32, fmt, lw_u32(c, 0x0f));
	uint32_t one = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x01)),
			      lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x08)));
	uint32_t two = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x02)),
			      lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x09)),
				     lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x10))));
	(void)low;
	uint32_t esize = lw_select(c, u32, one, lw_u32(c, 1), lw_select(c, u32, two, lw_u32(c, 2), lw_u32(c, 4)));
	uint32_t sgn = lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x08)),
			      lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x09)),
				     lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x0a))));
	uint32_t is_half = lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x10)), is_flt = lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x20));
	uint32_t as_int = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, flags, lw_u32(c, GP_TEX_READ_AS_INTEGER)),
				 lw_u32(c, 0));
	/* the texel's address */
	uint32_t data = field(c, desc, GP_TEX_OFF_DATA, PT('u', 64)), pitch = field(c, desc, GP_TEX_OFF_PITCH, PT('u', 64));
	uint32_t slice = field(c, desc, GP_TEX_OFF_SLICE, PT('u', 64));
	uint32_t tb = lw_op2(c, SpvOpIMul, u32, esize, ch);
	uint32_t zl = lw_op2(c, SpvOpIAdd, u32, idx[2], h.p[4]);
	uint32_t addr = lw_op2(c, SpvOpIAdd, u64, data, lw_op2(c, SpvOpIMul, u64, lw_op1(c, SpvOpUConvert, u64, zl), slice));
	addr = lw_op2(c, SpvOpIAdd, u64, addr, lw_op2(c, SpvOpIMul, u64, lw_op1(c, SpvOpUConvert, u64, idx[1]), pitch));
	addr = lw_op2(c, SpvOpIAdd, u64, addr, lw_op1(c, SpvOpUConvert, u64, lw_op2(c, SpvOpIMul, u32, idx[0], tb)));
	uint32_t out[4];
	uint32_t u8t = spv_t_int(c->e, 8), u16t = spv_t_int(c->e, 16);
	for (unsigned k = 0; k < 4; k++) {
		/* load by width in three guarded blocks (a 4-byte load of a 1-byte texel could cross the end) */
		uint32_t have = lw_op2(c, SpvOpULessThan, bl, lw_u32(c, k), ch);
		uint32_t a = lw_op2(c, SpvOpIAdd, u64, addr, lw_op1(c, SpvOpUConvert, u64, lw_op2(c, SpvOpIMul, u32, esize, lw_u32(c, k))));
		uint32_t rv = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), rv, (uint32_t)SpvStorageClassFunction);
		spv_op(&c->body, SpvOpStore, 2, rv, lw_u32(c, 0));
		uint32_t b1 = spv_id(c->e), b2 = spv_id(c->e), b4 = spv_id(c->e), n2 = spv_id(c->e), n4 = spv_id(c->e), join = spv_id(c->e);
		uint32_t go = spv_id(c->e), done = spv_id(c->e);
		/* a missing channel (0, alpha 1) or the border (its color as floats, or 0) needs no
		 * load nor conversion: only present texels enter the blocks below (computing every
		 * format's conversion as selects cost two float divisions a channel) */
		uint32_t ov = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), ov, (uint32_t)SpvStorageClassFunction);
		uint32_t bcol = field(c, desc, GP_TEX_OFF_BORDER + 4 * k, PT('f', 32));
		uint32_t fdef = lw_select(c, f32, border, lw_select(c, f32, zero_oob, f32c(c, 0.0f), bcol), f32c(c, k == 3 ? 1.0f : 0.0f));
		uint32_t idef = lw_select(c, u32, border, lw_u32(c, 0), lw_u32(c, k == 3 ? 1 : 0));
		spv_op(&c->body, SpvOpStore, 2, ov, lw_select(c, u32, want_f, lw_op1(c, SpvOpBitcast, u32, fdef), idef));
		lw_branch_cond(c, lw_op2(c, SpvOpLogicalAnd, bl, have, lw_op1(c, SpvOpLogicalNot, bl, border)), go, done);
		lw_label(c, go);
		lw_branch_cond(c, one, b1, n2);
		lw_label(c, b1);
		spv_op(&c->body, SpvOpStore, 2, rv,
		       lw_op1(c, SpvOpUConvert, u32, lw_op1(c, SpvOpLoad, u8t, lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u8t), a))));
		lw_branch(c, join);
		lw_label(c, n2);
		lw_branch_cond(c, two, b2, n4);
		lw_label(c, b2);
		spv_op(&c->body, SpvOpStore, 2, rv,
		       lw_op1(c, SpvOpUConvert, u32, lw_op1(c, SpvOpLoad, u16t, lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u16t), a))));
		lw_branch(c, join);
		lw_label(c, n4);
		lw_branch(c, b4);
		lw_label(c, b4);
		spv_op(&c->body, SpvOpStore, 2, rv,
		       lw_op1(c, SpvOpLoad, u32, lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u32), a)));
		lw_branch(c, join);
		lw_label(c, join);
		uint32_t raw = lw_op1(c, SpvOpLoad, u32, rv);
		/* f32 texels: their bits, read as floats or integers alike */
		uint32_t fast = spv_id(c->e), slow = spv_id(c->e);
		lw_branch_cond(c, is_flt, fast, slow);
		lw_label(c, fast);
		spv_op(&c->body, SpvOpStore, 2, ov, raw);
		lw_branch(c, done);
		lw_label(c, slow);
		/* integers: sign-extend 8/16-bit signed elements */
		uint32_t shift = lw_op2(c, SpvOpISub, u32, lw_u32(c, 32), lw_op2(c, SpvOpIMul, u32, esize, lw_u32(c, 8)));
		uint32_t sext = lw_op2(c, SpvOpShiftRightArithmetic, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, raw, shift), shift);
		uint32_t ival = lw_select(c, u32, sgn, sext, raw);
		/* floats: f32, f16, normalized 8/16-bit (signed: max(v / max, -1)), 32-bit integers converted */
		uint32_t fl = lw_op1(c, SpvOpBitcast, f32, raw);
		uint32_t hf = h2f(c, raw);
		uint32_t maxu = lw_op1(c, SpvOpConvertUToF, f32,
				       lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1),
									lw_op2(c, SpvOpIMul, u32, esize, lw_u32(c, 8))), lw_u32(c, 1)));
		uint32_t maxs = lw_op1(c, SpvOpConvertUToF, f32,
				       lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1),
									lw_op2(c, SpvOpISub, u32, lw_op2(c, SpvOpIMul, u32, esize, lw_u32(c, 8)), lw_u32(c, 1))), lw_u32(c, 1)));
		uint32_t nu = lw_op2(c, SpvOpFDiv, f32, lw_op1(c, SpvOpConvertUToF, f32, ival), maxu);
		uint32_t ns = lw_ext(c, f32, OpenCLstd_Fmax, 2, lw_op2(c, SpvOpFDiv, f32, lw_op1(c, SpvOpConvertSToF, f32, ival), maxs), f32c(c, -1.0f));
		uint32_t conv = lw_select(c, f32, sgn, lw_op1(c, SpvOpConvertSToF, f32, ival), lw_op1(c, SpvOpConvertUToF, f32, ival));
		uint32_t norm = lw_select(c, f32, sgn, ns, nu);
		uint32_t small = lw_op2(c, SpvOpULessThan, bl, esize, lw_u32(c, 4));
		uint32_t fint = lw_select(c, f32, lw_op2(c, SpvOpLogicalAnd, bl, small, lw_op1(c, SpvOpLogicalNot, bl, as_int)), norm, conv);
		uint32_t fval = lw_select(c, f32, is_flt, fl, lw_select(c, f32, is_half, hf, fint));
		spv_op(&c->body, SpvOpStore, 2, ov, lw_select(c, u32, want_f, lw_op1(c, SpvOpBitcast, u32, fval), ival));
		lw_branch(c, done);
		lw_label(c, done);
		out[k] = lw_op1(c, SpvOpLoad, u32, ov);
	}
	for (unsigned k = 0; k < 4; k++)
		spv_op(&c->body, SpvOpStore, 2, h.p[6 + k], out[k]);
	spv_op(&c->body, SpvOpReturn, 0);
	c->in_block = false;
	hend(c, &h);
	return c->tex_texel;
}

/* the texel's four channels (u32 bits) into out[] */
static void call_texel(lw *c, uint32_t desc, uint32_t i, uint32_t j, uint32_t k, uint32_t layer, unsigned fl, uint32_t *out)
{
	uint32_t u32 = spv_t_int(c->e, 32), fn = texel_fn(c);
	uint32_t v[4];
	for (unsigned q = 0; q < 4; q++) {
		v[q] = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), v[q],
		       (uint32_t)SpvStorageClassFunction);
	}
	lw_ensure_block(c);
	uint32_t r = spv_id(c->e);
	spv_op(&c->body, SpvOpFunctionCall, 13, spv_t_void(c->e), r, fn, desc, i, j, k, layer, lw_u32(c, fl), v[0], v[1], v[2],
	       v[3]);
	for (unsigned q = 0; q < 4; q++)
		out[q] = lw_op1(c, SpvOpLoad, u32, v[q]);
}

/* ---- tex ----------------------------------------------------------------------------------------- */

/* cube map: direction (x, y, z) -> face and (s, t) in [0, 1] (the OpenGL / CUDA table) */
static void cube_face(lw *c, uint32_t x, uint32_t y, uint32_t z, uint32_t *face, uint32_t *s, uint32_t *t)
{
	uint32_t f32 = spv_t_float(c->e, 32), u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t ax = lw_ext(c, f32, OpenCLstd_Fabs, 1, x), ay = lw_ext(c, f32, OpenCLstd_Fabs, 1, y),
		 az = lw_ext(c, f32, OpenCLstd_Fabs, 1, z);
	uint32_t xm = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, ax, ay),
			     lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, ax, az));
	uint32_t ym = lw_op2(c, SpvOpLogicalAnd, bl, lw_op1(c, SpvOpLogicalNot, bl, xm), lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, ay, az));
	uint32_t nx = lw_op1(c, SpvOpFNegate, f32, x), ny = lw_op1(c, SpvOpFNegate, f32, y), nz = lw_op1(c, SpvOpFNegate, f32, z);
	uint32_t xp = lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, x, f32c(c, 0)), yp = lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, y, f32c(c, 0)),
		 zp = lw_op2(c, SpvOpFOrdGreaterThanEqual, bl, z, f32c(c, 0));
	/* x major: +x (sc -z, tc -y), -x (sc z, tc -y); y major: +y (x, z), -y (x, -z); z major: +z (x, -y), -z (-x, -y) */
	uint32_t sc = lw_select(c, f32, xm, lw_select(c, f32, xp, nz, z), lw_select(c, f32, ym, x, lw_select(c, f32, zp, x, nx)));
	uint32_t tc = lw_select(c, f32, xm, ny, lw_select(c, f32, ym, lw_select(c, f32, yp, z, nz), ny));
	uint32_t ma = lw_select(c, f32, xm, ax, lw_select(c, f32, ym, ay, az));
	*face = lw_select(c, u32, xm, lw_select(c, u32, xp, lw_u32(c, 0), lw_u32(c, 1)),
			  lw_select(c, u32, ym, lw_select(c, u32, yp, lw_u32(c, 2), lw_u32(c, 3)),
				    lw_select(c, u32, zp, lw_u32(c, 4), lw_u32(c, 5))));
	uint32_t half = f32c(c, 0.5f);
	*s = lw_op2(c, SpvOpFMul, f32, lw_op2(c, SpvOpFAdd, f32, lw_op2(c, SpvOpFDiv, f32, sc, ma), f32c(c, 1.0f)), half);
	*t = lw_op2(c, SpvOpFMul, f32, lw_op2(c, SpvOpFAdd, f32, lw_op2(c, SpvOpFDiv, f32, tc, ma), f32c(c, 1.0f)), half);
}

static int lower_tex(lw *c, const ir_insn *in)
{
	if (ptx_tex_is_mipmapped(in))
		return lw_unsupported(c, in, "mipmapped and multisample textures are not lowered");
	struct ptx_tex_geom g;
	ptx_tex_geom_of(in, &g);
	int dims = (int)g.dims;
	bool layered = g.layered, cube = g.cube;
	ptype dt = lw_insn_type_n(in, 0), ct = lw_insn_type_n(in, 1);
	if (!dims || !ptype_ok(dt) || !ptype_ok(ct) || dt.bits != 32)
		return lw_unsupported(c, in, "this texture geometry or type is not lowered");
	struct ptx_tex_coords co;
	const char *why;
	if (ptx_tex_sample_operands(in, &g, &co, &why) < 0)
		return lw_unsupported(c, in, why);
	const ir_operand *ce = co.elems;
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t desc = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = co.handle}, PT('u', 64));
	if (!desc)
		return -1;
	unsigned ci = 0;
	uint32_t layer = lw_u32(c, 0);
	if (layered && !cube) {
		if (!(layer = lw_read(c, &ce[0], PT('u', 32))))
			return -1;
		ci = 1;
	}
	bool want_f = dt.k == 'f';
	uint32_t res[4];
	if (ct.k != 'f' && !cube) {
		/* integer coordinates: one texel, zero out of range */
		uint32_t ic[3] = {lw_u32(c, 0), lw_u32(c, 0), lw_u32(c, 0)};
		for (int d = 0; d < dims; d++)
			if (!(ic[d] = lw_read(c, &ce[ci + d], PT('s', 32))))
				return -1;
		call_texel(c, desc, ic[0], ic[1], ic[2], layer, (want_f ? 1 : 0) | 2, res);
	} else {
		uint32_t x[3] = {0, 0, 0};
		if (cube) {
			uint32_t v[3];
			for (unsigned d = 0; d < 3; d++)
				if (!(v[d] = lw_read(c, &ce[(layered ? 1 : 0) + d], PT('f', 32))))
					return -1;
			uint32_t face;
			cube_face(c, v[0], v[1], v[2], &face, &x[0], &x[1]);
			if (layered) {
				uint32_t li = lw_read(c, &ce[0], PT('u', 32));
				if (!li)
					return -1;
				face = lw_op2(c, SpvOpIAdd, u32, face, lw_op2(c, SpvOpIMul, u32, li, lw_u32(c, 6)));
			}
			layer = face;
		} else {
			for (int d = 0; d < dims; d++)
				if (!(x[d] = lw_read(c, &ce[ci + d], PT('f', 32))))
					return -1;
		}
		uint32_t flags = field(c, desc, GP_TEX_OFF_FLAGS, PT('u', 32));
		uint32_t norm = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, flags, lw_u32(c, GP_TEX_NORMALIZED_COORDS)),
				       lw_u32(c, 0));
		if (cube)
			norm = spv_c_bool(c->e, 1);
		uint32_t linear = lw_op2(c, SpvOpIEqual, bl, field(c, desc, GP_TEX_OFF_FILTER, PT('u', 32)), lw_u32(c, 1));
		if (!want_f)
			linear = spv_c_bool(c->e, 0); /* integer reads are never filtered */
		uint32_t i0[3], w[3];
		for (int d = 0; d < 3; d++) {
			if (d >= dims) {
				i0[d] = lw_u32(c, 0);
				w[d] = f32c(c, 0);
				continue;
			}
			uint32_t n = lw_op1(c, SpvOpConvertUToF, f32, field(c, desc, GP_TEX_OFF_WIDTH + 4 * d, PT('u', 32)));
			uint32_t xs = lw_select(c, f32, norm, lw_op2(c, SpvOpFMul, f32, x[d], n), x[d]);
			uint32_t xb = lw_select(c, f32, linear, lw_op2(c, SpvOpFSub, f32, xs, f32c(c, 0.5f)), xs);
			uint32_t fl = lw_ext(c, f32, OpenCLstd_Floor, 1, xb);
			/* the weight in 8-bit fixed point, as the texture unit computes it */
			uint32_t fr = lw_op2(c, SpvOpFSub, f32, xb, fl);
			fr = lw_op2(c, SpvOpFMul, f32, lw_ext(c, f32, OpenCLstd_Rint, 1, lw_op2(c, SpvOpFMul, f32, fr, f32c(c, 256.0f))),
				    f32c(c, 1.0f / 256.0f));
			w[d] = lw_select(c, f32, linear, fr, f32c(c, 0));
			i0[d] = lw_op1(c, SpvOpConvertFToS, u32, lw_ext(c, f32, OpenCLstd_Fmax, 2, lw_ext(c, f32, OpenCLstd_Fmin, 2, fl, f32c(c, 2.0e9f)),
									  f32c(c, -2.0e9f)));
		}
		/* 2^dims texels; point sampling takes the first alone */
		unsigned nt = 1u << dims;
		uint32_t acc[4] = {0, 0, 0, 0}, first[4] = {0, 0, 0, 0};
		for (unsigned t = 0; t < nt; t++) {
			uint32_t ii[3];
			uint32_t wt = f32c(c, 1.0f);
			for (int d = 0; d < 3; d++) {
				bool hi = d < dims && (t >> d & 1);
				ii[d] = hi ? lw_op2(c, SpvOpIAdd, u32, i0[d], lw_u32(c, 1)) : i0[d];
				if (d < dims)
					wt = lw_op2(c, SpvOpFMul, f32, wt, hi ? w[d] : lw_op2(c, SpvOpFSub, f32, f32c(c, 1.0f), w[d]));
			}
			uint32_t tv[4];
			call_texel(c, desc, ii[0], ii[1], ii[2], layer, want_f ? 1 : 0, tv);
			if (!t)
				memcpy(first, tv, sizeof(first));
			for (unsigned k = 0; k < 4 && want_f; k++) {
				uint32_t v = lw_op2(c, SpvOpFMul, f32, wt, lw_op1(c, SpvOpBitcast, f32, tv[k]));
				acc[k] = t ? lw_op2(c, SpvOpFAdd, f32, acc[k], v) : v;
			}
		}
		for (unsigned k = 0; k < 4; k++) {
			uint32_t p = first[k];
			res[k] = want_f ? lw_select(c, u32, linear, lw_op1(c, SpvOpBitcast, u32, acc[k]), p) : p;
		}
	}
	for (unsigned k = 0; k < 4; k++)
		if (lw_write(c, &in->ops[0].elems[k], want_f ? PT('f', 32) : PT('b', 32),
			     want_f ? lw_op1(c, SpvOpBitcast, f32, res[k]) : res[k]) < 0)
			return -1;
	return 1;
}

/* ---- surfaces and queries ------------------------------------------------------------------------ */

/* sust.b / suld.b .1d/.2d/.3d/.a1d/.a2d: x in bytes; out of range: dropped / zero. */
static int lower_surface(lw *c, const ir_insn *in, bool store)
{
	if (!ir_insn_has_mod(in, ".b"))
		return lw_unsupported(c, in, "formatted surface accesses (.p) are not lowered");
	struct ptx_tex_geom g;
	ptx_tex_geom_of(in, &g);
	int dims = g.cube ? 0 : (int)g.dims; /* no cube surfaces */
	bool layered = g.layered;
	ptype t = lw_insn_type(in);
	if (!dims || !ptype_ok(t) || in->nops != 2)
		return lw_unsupported(c, in, "expected [handle, {coordinates}] and a value");
	struct ptx_tex_coords sc;
	const ir_operand *vals_op;
	unsigned n;
	const char *why;
	if (ptx_tex_surface_operands(in, store, &g, &sc, &vals_op, &n, &why) < 0)
		return lw_unsupported(c, in, why);
	const char *handle = sc.handle;
	const ir_operand *ce = sc.elems;
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t desc = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = handle}, PT('u', 64));
	if (!desc)
		return -1;
	unsigned ci = sc.first;
	uint32_t layer = layered ? lw_read(c, &ce[0], PT('u', 32)) : lw_u32(c, 0);
	if (!layer)
		return -1;
	uint32_t co[3] = {lw_u32(c, 0), lw_u32(c, 0), lw_u32(c, 0)};
	for (int d = 0; d < dims; d++)
		if (!(co[d] = lw_read(c, &ce[ci + d], PT('s', 32))))
			return -1;
	uint32_t eb = t.bits / 8, bytes = eb * n;
	uint32_t w = field(c, desc, GP_TEX_OFF_WIDTH, PT('u', 32)), tb = lw_op2(c, SpvOpIMul, u32, field(c, desc, GP_TEX_OFF_CHANNELS, PT('u', 32)),
									    lw_u32(c, 4));
	(void)tb;
	/* x is in bytes: in range while x + bytes <= width * texel bytes (texel bytes from the format) */
	uint32_t fmt = field(c, desc, GP_TEX_OFF_FORMAT, PT('u', 32));
	uint32_t esz = lw_select(c, u32, lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 1)), lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 8))),
				 lw_u32(c, 1),
				 lw_select(c, u32, lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 2)),
							  lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 9)), lw_op2(c, SpvOpIEqual, bl, fmt, lw_u32(c, 0x10)))),
					   lw_u32(c, 2), lw_u32(c, 4)));
	uint32_t rowbytes = lw_op2(c, SpvOpIMul, u32, w, lw_op2(c, SpvOpIMul, u32, esz, field(c, desc, GP_TEX_OFF_CHANNELS, PT('u', 32))));
	uint32_t ok = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpSGreaterThanEqual, bl, co[0], lw_u32(c, 0)),
			     lw_op2(c, SpvOpULessThanEqual, bl, lw_op2(c, SpvOpIAdd, u32, co[0], lw_u32(c, bytes)), rowbytes));
	for (int d = 1; d < dims; d++) {
		uint32_t nd = field(c, desc, GP_TEX_OFF_WIDTH + 4 * d, PT('u', 32));
		ok = lw_op2(c, SpvOpLogicalAnd, bl, ok, lw_op2(c, SpvOpULessThan, bl, co[d], nd));
	}
	uint32_t data = field(c, desc, GP_TEX_OFF_DATA, PT('u', 64)), pitch = field(c, desc, GP_TEX_OFF_PITCH, PT('u', 64));
	uint32_t slice = field(c, desc, GP_TEX_OFF_SLICE, PT('u', 64));
	uint32_t addr = lw_op2(c, SpvOpIAdd, u64, data, lw_op1(c, SpvOpUConvert, u64, co[0]));
	addr = lw_op2(c, SpvOpIAdd, u64, addr, lw_op2(c, SpvOpIMul, u64, lw_op1(c, SpvOpUConvert, u64, co[1]), pitch));
	addr = lw_op2(c, SpvOpIAdd, u64, addr,
		      lw_op2(c, SpvOpIMul, u64, lw_op1(c, SpvOpUConvert, u64, lw_op2(c, SpvOpIAdd, u32, co[2], layer)), slice));
	ptype mt = PT('u', t.bits);
	uint32_t vals[4];
	if (store)
		for (unsigned k = 0; k < n; k++)
			if (!(vals[k] = lw_read(c, &vals_op[k], mt)))
				return -1;
	uint32_t then = spv_id(c->e), join = spv_id(c->e);
	uint32_t loaded[4];
	uint32_t tmp[4];
	for (unsigned k = 0; k < n && !store; k++) {
		tmp[k] = spv_id(c->e);
		spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, lw_type(c, mt)), tmp[k],
		       (uint32_t)SpvStorageClassFunction);
		spv_op(&c->body, SpvOpStore, 2, tmp[k], lw_const(c, mt, 0));
	}
	lw_branch_cond(c, ok, then, join);
	lw_label(c, then);
	for (unsigned k = 0; k < n; k++) {
		uint32_t p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, lw_type(c, mt)),
				    lw_op2(c, SpvOpIAdd, u64, addr, lw_u64(c, k * eb)));
		if (store)
			spv_op(&c->body, SpvOpStore, 4, p, vals[k], (uint32_t)SpvMemoryAccessAlignedMask, eb);
		else
			spv_op(&c->body, SpvOpStore, 2, tmp[k], lw_op1(c, SpvOpLoad, lw_type(c, mt), p));
	}
	lw_branch(c, join);
	lw_label(c, join);
	for (unsigned k = 0; k < n && !store; k++) {
		loaded[k] = lw_op1(c, SpvOpLoad, lw_type(c, mt), tmp[k]);
		if (lw_write(c, &vals_op[k], mt, loaded[k]) < 0)
			return -1;
	}
	return 1;
}

static int lower_txq(lw *c, const ir_insn *in)
{
	static const struct { const char *m; unsigned off; } q[] = {
		{".width", GP_TEX_OFF_WIDTH}, {".height", GP_TEX_OFF_HEIGHT}, {".depth", GP_TEX_OFF_DEPTH},
		{".array_size", GP_TEX_OFF_LAYERS}, {".channel_order", GP_TEX_OFF_CHANNELS},
		{".channel_data_type", GP_TEX_OFF_FORMAT}, {".normalized_coords", GP_TEX_OFF_FLAGS},
		{".filter_mode", GP_TEX_OFF_FILTER}, {".addr_mode_0", GP_TEX_OFF_ADDRESS},
	};
	if (in->nops != 2 || in->ops[1].kind != IR_OPND_ADDR || !in->ops[1].name)
		return lw_unsupported(c, in, "expected d, [handle]");
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if (!ir_insn_has_mod(in, q[i].m))
			continue;
		uint32_t desc = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->ops[1].name}, PT('u', 64));
		if (!desc)
			return -1;
		uint32_t v = field(c, desc, q[i].off, PT('u', 32));
		if (q[i].off == GP_TEX_OFF_FLAGS)
			v = lw_op2(c, SpvOpBitwiseAnd, spv_t_int(c->e, 32), v, lw_u32(c, GP_TEX_NORMALIZED_COORDS));
		return lw_write(c, &in->ops[0], PT('b', 32), v) < 0 ? -1 : 1;
	}
	return lw_unsupported(c, in, "this texture query is not lowered");
}

/* tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32 (texture gather): the component of the four texels that
 * bilinear filtering at (x, y) would weigh, in PTX's order (u0,v1), (u1,v1), (u1,v0), (u0,v0) with
 * u0 = floor(x - 0.5), v0 = floor(y - 0.5) after normalized coordinates are scaled. */
static int lower_tld4(lw *c, const ir_insn *in)
{
	unsigned comp;
	struct ptx_tex_coords gc;
	int form = ptx_tex_gather_decode(in, &comp, &gc);
	ptype dt = lw_insn_type_n(in, 0);
	if (form < 0 || !ptype_ok(dt) || dt.bits != 32)
		return lw_unsupported(c, in, "only tld4.{r,g,b,a}.2d with [handle, {x, y}] is lowered");
	uint32_t u32 = spv_t_int(c->e, 32), f32 = spv_t_float(c->e, 32), bl = spv_t_bool(c->e);
	uint32_t desc = lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = gc.handle}, PT('u', 64));
	if (!desc)
		return -1;
	const ir_operand *co = gc.elems;
	uint32_t flags = field(c, desc, GP_TEX_OFF_FLAGS, PT('u', 32));
	uint32_t norm = lw_op2(c, SpvOpINotEqual, bl, lw_op2(c, SpvOpBitwiseAnd, u32, flags, lw_u32(c, GP_TEX_NORMALIZED_COORDS)),
			       lw_u32(c, 0));
	uint32_t i0[2];
	for (unsigned d = 0; d < 2; d++) {
		uint32_t x = lw_read(c, &co[d], PT('f', 32));
		if (!x)
			return -1;
		uint32_t n = lw_op1(c, SpvOpConvertUToF, f32, field(c, desc, GP_TEX_OFF_WIDTH + 4 * d, PT('u', 32)));
		uint32_t xs = lw_select(c, f32, norm, lw_op2(c, SpvOpFMul, f32, x, n), x);
		uint32_t fl = lw_ext(c, f32, OpenCLstd_Floor, 1, lw_op2(c, SpvOpFSub, f32, xs, f32c(c, 0.5f)));
		i0[d] = lw_op1(c, SpvOpConvertFToS, u32,
			       lw_ext(c, f32, OpenCLstd_Fmax, 2, lw_ext(c, f32, OpenCLstd_Fmin, 2, fl, f32c(c, 2.0e9f)), f32c(c, -2.0e9f)));
	}
	static const unsigned du[4] = {0, 1, 1, 0}, dv[4] = {1, 1, 0, 0};
	bool want_f = dt.k == 'f';
	for (unsigned k = 0; k < 4; k++) {
		uint32_t tv[4];
		call_texel(c, desc, lw_op2(c, SpvOpIAdd, u32, i0[0], lw_u32(c, du[k])), lw_op2(c, SpvOpIAdd, u32, i0[1], lw_u32(c, dv[k])),
			   lw_u32(c, 0), lw_u32(c, 0), want_f ? 1 : 0, tv);
		uint32_t v = want_f ? lw_op1(c, SpvOpBitcast, f32, tv[comp]) : tv[comp];
		if (lw_write(c, &in->ops[0].elems[k], want_f ? PT('f', 32) : PT('b', 32), v) < 0)
			return -1;
	}
	return 1;
}

int lw_texture(lw *c, const ir_insn *in)
{
	switch (ptx_tex_kind_of(in)) {
	case PTX_TEX_GATHER: return lower_tld4(c, in);
	case PTX_TEX_SAMPLE: return lower_tex(c, in);
	case PTX_TEX_SURF_STORE: return lower_surface(c, in, true);
	case PTX_TEX_SURF_LOAD: return lower_surface(c, in, false);
	case PTX_TEX_QUERY: return lower_txq(c, in);
	default: return 0;
	}
}
