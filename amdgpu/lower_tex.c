/* Textures and surfaces in software, from the descriptor of spirv/texture.h: the 64-bit handle a
 * kernel gets (CUtexObject, CUsurfObject) is the device address of a gp_tex_desc the driver
 * filled. The semantics are spirv/lower_tex.c's, result for result (it is the reference):
 * tex.{1d,2d,3d,a1d,a2d,cube,acube} with float or integer coordinates, point or linear filtering
 * (weights in 8-bit fixed point), the four address modes (wrap and mirror on normalized
 * coordinates, clamp otherwise), normalized-float or integer reads of every CUarray_format,
 * integer coordinates one texel and zero out of range; tld4 gathers one component of the four
 * bilinear texels; txq/suq answer the descriptor's fields; sust.b/suld.b address x in bytes and
 * drop (stores) or read zero (loads) out of range. Mipmaps (.level, .grad), multisample textures,
 * depth compare, separate samplers and formatted surface accesses (.p) are one error line.
 * One internal function per module (gpuprobe.tex.texel) fetches and converts a texel. */
#include "amdgpu/lower.h"
#include "ptx-frontend/tex_decode.h"
#include "spirv/texture.h"

#include <stddef.h>
#include <string.h>

_Static_assert(offsetof(struct gp_tex_desc, pitch) == GP_TEX_OFF_PITCH && offsetof(struct gp_tex_desc, slice) == GP_TEX_OFF_SLICE &&
		       offsetof(struct gp_tex_desc, width) == GP_TEX_OFF_WIDTH && offsetof(struct gp_tex_desc, height) == GP_TEX_OFF_HEIGHT &&
		       offsetof(struct gp_tex_desc, depth) == GP_TEX_OFF_DEPTH && offsetof(struct gp_tex_desc, layers) == GP_TEX_OFF_LAYERS &&
		       offsetof(struct gp_tex_desc, format) == GP_TEX_OFF_FORMAT && offsetof(struct gp_tex_desc, channels) == GP_TEX_OFF_CHANNELS &&
		       offsetof(struct gp_tex_desc, filter) == GP_TEX_OFF_FILTER && offsetof(struct gp_tex_desc, address) == GP_TEX_OFF_ADDRESS &&
		       offsetof(struct gp_tex_desc, flags) == GP_TEX_OFF_FLAGS && offsetof(struct gp_tex_desc, border) == GP_TEX_OFF_BORDER &&
		       sizeof(struct gp_tex_desc) == GP_TEX_DESC_BYTES,
	       "spirv/texture.h: the offsets the lowering reads");

/* Where code goes: the function being lowered (blocks through al_new_block) or the texel helper. */
typedef struct tx {
	al *c;
	LLVMBuilderRef b;
	LLVMValueRef fn; /* the helper; NULL: the lowered function */
} tx;

static LLVMBasicBlockRef blk(tx *t, const char *name)
{
	return t->fn ? LLVMAppendBasicBlockInContext(t->c->ctx, t->fn, name) : al_new_block(t->c, name);
}

static LLVMTypeRef i1t(tx *t) { return LLVMInt1TypeInContext(t->c->ctx); }
static LLVMTypeRef i32t(tx *t) { return al_ity(t->c, 32); }
static LLVMTypeRef i64t(tx *t) { return al_ity(t->c, 64); }
static LLVMTypeRef f32t(tx *t) { return LLVMFloatTypeInContext(t->c->ctx); }
static LLVMValueRef u32c(tx *t, uint32_t v) { return LLVMConstInt(i32t(t), v, 0); }
static LLVMValueRef f32c(tx *t, float v) { return LLVMConstReal(f32t(t), v); }
static LLVMValueRef bconst(tx *t, bool v) { return LLVMConstInt(i1t(t), v, 0); }

static LLVMValueRef f_intr1(tx *t, const char *name, LLVMValueRef a)
{
	LLVMTypeRef f = f32t(t);
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(t->c->mod, id, &f, 1);
	return LLVMBuildCall2(t->b, LLVMIntrinsicGetType(t->c->ctx, id, &f, 1), fn, &a, 1, "");
}

static LLVMValueRef f_intr2(tx *t, const char *name, LLVMValueRef a, LLVMValueRef b)
{
	LLVMTypeRef f = f32t(t);
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(t->c->mod, id, &f, 1);
	LLVMValueRef args[2] = {a, b};
	return LLVMBuildCall2(t->b, LLVMIntrinsicGetType(t->c->ctx, id, &f, 1), fn, args, 2, "");
}

static LLVMValueRef eq(tx *t, LLVMValueRef a, uint32_t v) { return LLVMBuildICmp(t->b, LLVMIntEQ, a, u32c(t, v), ""); }
static LLVMValueRef bit_set(tx *t, LLVMValueRef a, uint32_t mask)
{
	return LLVMBuildICmp(t->b, LLVMIntNE, LLVMBuildAnd(t->b, a, u32c(t, mask), ""), u32c(t, 0), "");
}
static LLVMValueRef sel(tx *t, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(t->b, c, a, b, ""); }
static LLVMValueRef or1(tx *t, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildOr(t->b, a, b, ""); }
static LLVMValueRef and1(tx *t, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAnd(t->b, a, b, ""); }

/* A load of type ty from global address a (i64). */
static LLVMValueRef gload(tx *t, LLVMTypeRef ty, LLVMValueRef a, unsigned align)
{
	LLVMValueRef p = LLVMBuildIntToPtr(t->b, a, al_ptr(t->c, AS_GLOBAL), "");
	LLVMValueRef v = LLVMBuildLoad2(t->b, ty, p, "");
	LLVMSetAlignment(v, align);
	return v;
}

/* a descriptor field: u32, u64 or f32 */
static LLVMValueRef field(tx *t, LLVMValueRef desc, unsigned off, LLVMTypeRef ty)
{
	unsigned bytes = ty == i64t(t) ? 8 : 4;
	return gload(t, ty, LLVMBuildAdd(t->b, desc, LLVMConstInt(i64t(t), off, 0), ""), bytes);
}
static LLVMValueRef field32(tx *t, LLVMValueRef desc, unsigned off) { return field(t, desc, off, i32t(t)); }

static LLVMValueRef phi2(tx *t, LLVMTypeRef ty, LLVMValueRef a, LLVMBasicBlockRef ba, LLVMValueRef b, LLVMBasicBlockRef bb)
{
	LLVMValueRef p = LLVMBuildPhi(t->b, ty, "");
	LLVMValueRef v[2] = {a, b};
	LLVMBasicBlockRef f[2] = {ba, bb};
	LLVMAddIncoming(p, v, f, 2);
	return p;
}

/* element bytes of a CUarray_format: 0x01/0x08 1, 0x02/0x09/0x10 2, else 4 */
static LLVMValueRef elem_size(tx *t, LLVMValueRef fmt, LLVMValueRef *one, LLVMValueRef *two)
{
	*one = or1(t, eq(t, fmt, 0x01), eq(t, fmt, 0x08));
	*two = or1(t, eq(t, fmt, 0x02), or1(t, eq(t, fmt, 0x09), eq(t, fmt, 0x10)));
	return sel(t, *one, u32c(t, 1), sel(t, *two, u32c(t, 2), u32c(t, 4)));
}

/* A coordinate into [0, n) by the address mode (0 wrap, 1 clamp, 2 mirror, 3 border: clamped, the
 * caller replaces the value); *oob: i was outside. Wrap and mirror only with normalized
 * coordinates (CUDA clamps unnormalized ones); their divisions in a block only they enter. */
static LLVMValueRef address(tx *t, LLVMValueRef i, LLVMValueRef n, LLVMValueRef mode, LLVMValueRef norm, LLVMValueRef *oob)
{
	LLVMBuilderRef b = t->b;
	*oob = or1(t, LLVMBuildICmp(b, LLVMIntSLT, i, u32c(t, 0), ""), LLVMBuildICmp(b, LLVMIntSGE, i, n, ""));
	LLVMValueRef n1 = LLVMBuildSub(b, n, u32c(t, 1), "");
	LLVMValueRef lo = sel(t, LLVMBuildICmp(b, LLVMIntSGT, i, u32c(t, 0), ""), i, u32c(t, 0));
	LLVMValueRef clamp = sel(t, LLVMBuildICmp(b, LLVMIntSLT, lo, n1, ""), lo, n1);
	LLVMValueRef is_mirror = eq(t, mode, 2);
	LLVMValueRef go_c = and1(t, norm, or1(t, eq(t, mode, 0), is_mirror));
	LLVMBasicBlockRef from = LLVMGetInsertBlock(b), go = blk(t, "tex.wrap"), join = blk(t, "tex.wrapped");
	LLVMBuildCondBr(b, go_c, go, join);
	LLVMPositionBuilderAtEnd(b, go);
	LLVMValueRef wrap = LLVMBuildSRem(b, LLVMBuildAdd(b, LLVMBuildSRem(b, i, n, ""), n, ""), n, "");
	LLVMValueRef n2 = LLVMBuildMul(b, n, u32c(t, 2), "");
	LLVMValueRef p = LLVMBuildSRem(b, LLVMBuildAdd(b, LLVMBuildSRem(b, i, n2, ""), n2, ""), n2, "");
	LLVMValueRef mirror = sel(t, LLVMBuildICmp(b, LLVMIntSLT, p, n, ""), p, LLVMBuildSub(b, LLVMBuildSub(b, n2, u32c(t, 1), ""), p, ""));
	LLVMValueRef wm = sel(t, is_mirror, mirror, wrap);
	LLVMBasicBlockRef go_end = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	return phi2(t, i32t(t), clamp, from, wm, go_end);
}

/* <4 x i32> gpuprobe.tex.texel(i64 desc, i32 i, i32 j, i32 k, i32 layer, i32 flags): the texel's
 * four channels as bits; flags bit 0: floats (else integers), bit 1: out of range reads zero
 * (integer coordinates). Missing channels read (0, 0, 0, 1), the border its color (or 0). */
static LLVMValueRef texel_fn(al *c, LLVMTypeRef *fty_out)
{
	LLVMTypeRef i32 = al_ity(c, 32), i64 = al_ity(c, 64), v4 = LLVMVectorType(i32, 4);
	LLVMTypeRef pt[6] = {i64, i32, i32, i32, i32, i32};
	LLVMTypeRef fty = LLVMFunctionType(v4, pt, 6, 0);
	*fty_out = fty;
	LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "gpuprobe.tex.texel");
	if (fn)
		return fn;
	fn = LLVMAddFunction(c->mod, "gpuprobe.tex.texel", fty);
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	tx T = {c, LLVMCreateBuilderInContext(c->ctx), fn}, *t = &T;
	LLVMBuilderRef b = t->b;
	LLVMPositionBuilderAtEnd(b, blk(t, "entry"));
	LLVMValueRef desc = LLVMGetParam(fn, 0), fl = LLVMGetParam(fn, 5);
	LLVMTypeRef f32 = f32t(t);
	LLVMValueRef want_f = bit_set(t, fl, 1), zero_oob = bit_set(t, fl, 2);
	LLVMValueRef flags = field32(t, desc, GP_TEX_OFF_FLAGS);
	LLVMValueRef norm = bit_set(t, flags, GP_TEX_NORMALIZED_COORDS);
	LLVMValueRef idx[3], border = bconst(t, false);
	for (unsigned d = 0; d < 3; d++) {
		LLVMValueRef n = field32(t, desc, GP_TEX_OFF_WIDTH + 4 * d), mode = field32(t, desc, GP_TEX_OFF_ADDRESS + 4 * d), oob;
		idx[d] = address(t, LLVMGetParam(fn, 1 + d), n, mode, norm, &oob);
		border = or1(t, border, and1(t, or1(t, eq(t, mode, 3), zero_oob), oob));
	}
	LLVMValueRef fmt = field32(t, desc, GP_TEX_OFF_FORMAT), ch = field32(t, desc, GP_TEX_OFF_CHANNELS), one, two;
	LLVMValueRef esize = elem_size(t, fmt, &one, &two);
	LLVMValueRef sgn = or1(t, eq(t, fmt, 0x08), or1(t, eq(t, fmt, 0x09), eq(t, fmt, 0x0a)));
	LLVMValueRef is_half = eq(t, fmt, 0x10), is_flt = eq(t, fmt, 0x20);
	LLVMValueRef as_int = bit_set(t, flags, GP_TEX_READ_AS_INTEGER);
	LLVMValueRef data = field(t, desc, GP_TEX_OFF_DATA, i64), pitch = field(t, desc, GP_TEX_OFF_PITCH, i64);
	LLVMValueRef slice = field(t, desc, GP_TEX_OFF_SLICE, i64);
	LLVMValueRef tb = LLVMBuildMul(b, esize, ch, "");
	LLVMValueRef zl = LLVMBuildAdd(b, idx[2], LLVMGetParam(fn, 4), "");
	LLVMValueRef addr = LLVMBuildAdd(b, data, LLVMBuildMul(b, LLVMBuildZExt(b, zl, i64, ""), slice, ""), "");
	addr = LLVMBuildAdd(b, addr, LLVMBuildMul(b, LLVMBuildZExt(b, idx[1], i64, ""), pitch, ""), "");
	addr = LLVMBuildAdd(b, addr, LLVMBuildZExt(b, LLVMBuildMul(b, idx[0], tb, ""), i64, ""), "");
	LLVMValueRef bits = LLVMBuildMul(b, esize, u32c(t, 8), "");
	/* 2^bits - 1 and 2^(bits-1) - 1 for 8/16-bit elements (shift amounts kept below 32) */
	LLVMValueRef bits31 = sel(t, LLVMBuildICmp(b, LLVMIntULT, bits, u32c(t, 32), ""), bits, u32c(t, 31));
	LLVMValueRef maxu = LLVMBuildUIToFP(b, LLVMBuildSub(b, LLVMBuildShl(b, u32c(t, 1), bits31, ""), u32c(t, 1), ""), f32, "");
	LLVMValueRef maxs = LLVMBuildUIToFP(b, LLVMBuildSub(b, LLVMBuildShl(b, u32c(t, 1), LLVMBuildSub(b, bits31, u32c(t, 1), ""), ""), u32c(t, 1), ""), f32, "");
	LLVMValueRef shift = LLVMBuildSub(b, u32c(t, 32), bits, "");
	LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, esize, u32c(t, 4), "");
	LLVMValueRef res = LLVMGetUndef(LLVMVectorType(i32t(t), 4));
	for (unsigned k = 0; k < 4; k++) {
		LLVMValueRef have = LLVMBuildICmp(b, LLVMIntULT, u32c(t, k), ch, "");
		LLVMValueRef a = LLVMBuildAdd(b, addr, LLVMBuildZExt(b, LLVMBuildMul(b, esize, u32c(t, k), ""), i64, ""), "");
		/* a missing channel or the border needs no load nor conversion */
		LLVMValueRef bcol = field(t, desc, GP_TEX_OFF_BORDER + 4 * k, f32);
		LLVMValueRef fdef = sel(t, border, sel(t, zero_oob, f32c(t, 0.0f), bcol), f32c(t, k == 3 ? 1.0f : 0.0f));
		LLVMValueRef idef = sel(t, border, u32c(t, 0), u32c(t, k == 3 ? 1 : 0));
		LLVMValueRef def = sel(t, want_f, LLVMBuildBitCast(b, fdef, i32t(t), ""), idef);
		LLVMBasicBlockRef from = LLVMGetInsertBlock(b), go = blk(t, "tex.load"), b1 = blk(t, "tex.b1"), n2 = blk(t, "tex.n2"),
				  b2 = blk(t, "tex.b2"), b4 = blk(t, "tex.b4"), loaded = blk(t, "tex.loaded"), done = blk(t, "tex.chan");
		LLVMBuildCondBr(b, and1(t, have, LLVMBuildNot(b, border, "")), go, done);
		/* load by width (a 4-byte load of a 1-byte texel could cross the end) */
		LLVMPositionBuilderAtEnd(b, go);
		LLVMBuildCondBr(b, one, b1, n2);
		LLVMPositionBuilderAtEnd(b, b1);
		LLVMValueRef r1 = LLVMBuildZExt(b, gload(t, al_ity(c, 8), a, 1), i32, "");
		LLVMBuildBr(b, loaded);
		LLVMPositionBuilderAtEnd(b, n2);
		LLVMBuildCondBr(b, two, b2, b4);
		LLVMPositionBuilderAtEnd(b, b2);
		LLVMValueRef r2 = LLVMBuildZExt(b, gload(t, al_ity(c, 16), a, 2), i32, "");
		LLVMBuildBr(b, loaded);
		LLVMPositionBuilderAtEnd(b, b4);
		LLVMValueRef r4 = gload(t, i32, a, 4);
		LLVMBuildBr(b, loaded);
		LLVMPositionBuilderAtEnd(b, loaded);
		LLVMValueRef raw = LLVMBuildPhi(b, i32, "");
		LLVMValueRef rv[3] = {r1, r2, r4};
		LLVMBasicBlockRef rb[3] = {b1, b2, b4};
		LLVMAddIncoming(raw, rv, rb, 3);
		/* integers: 8/16-bit signed elements sign-extended */
		LLVMValueRef sext = LLVMBuildAShr(b, LLVMBuildShl(b, raw, shift, ""), shift, "");
		LLVMValueRef ival = sel(t, sgn, sext, raw);
		/* floats: f32, f16, normalized 8/16-bit (signed: max(v / max, -1)), 32-bit integers converted */
		LLVMValueRef fl32 = LLVMBuildBitCast(b, raw, f32, "");
		LLVMValueRef hf = LLVMBuildFPExt(b, LLVMBuildBitCast(b, LLVMBuildTrunc(b, raw, al_ity(c, 16), ""),
								     LLVMHalfTypeInContext(c->ctx), ""), f32, "");
		LLVMValueRef sf = LLVMBuildSIToFP(b, ival, f32, ""), uf = LLVMBuildUIToFP(b, ival, f32, "");
		LLVMValueRef nu = LLVMBuildFDiv(b, uf, maxu, "");
		LLVMValueRef ns = f_intr2(t, "llvm.maxnum", LLVMBuildFDiv(b, sf, maxs, ""), f32c(t, -1.0f));
		LLVMValueRef conv = sel(t, sgn, sf, uf), nrm = sel(t, sgn, ns, nu);
		LLVMValueRef fint = sel(t, and1(t, small, LLVMBuildNot(b, as_int, "")), nrm, conv);
		LLVMValueRef fval = sel(t, is_half, hf, fint);
		LLVMValueRef conv_bits = sel(t, want_f, LLVMBuildBitCast(b, fval, i32, ""), ival);
		/* f32 texels: their bits, read as floats or integers alike */
		LLVMValueRef got = sel(t, is_flt, raw, conv_bits);
		(void)fl32;
		LLVMBuildBr(b, done);
		LLVMPositionBuilderAtEnd(b, done);
		LLVMValueRef out = phi2(t, i32, def, from, got, loaded);
		res = LLVMBuildInsertElement(b, res, out, u32c(t, k), "");
	}
	LLVMBuildRet(b, res);
	LLVMDisposeBuilder(b);
	return fn;
}

/* the texel's four channels (i32 bits) into out[] */
static void call_texel(al *c, LLVMValueRef desc, LLVMValueRef i, LLVMValueRef j, LLVMValueRef k, LLVMValueRef layer, unsigned fl,
		       LLVMValueRef *out)
{
	LLVMTypeRef fty;
	LLVMValueRef fn = texel_fn(c, &fty);
	LLVMValueRef args[6] = {desc, i, j, k, layer, al_ci(c, 32, fl)};
	LLVMValueRef v = LLVMBuildCall2(c->b, fty, fn, args, 6, "");
	for (unsigned q = 0; q < 4; q++)
		out[q] = LLVMBuildExtractElement(c->b, v, al_ci(c, 32, q), "");
}

static LLVMValueRef read_handle(al *c, const char *name)
{
	return al_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = name}, AT('u', 64));
}

/* floor(x) clamped to +-2e9, as i32 */
static LLVMValueRef floor_i(tx *t, LLVMValueRef fl)
{
	LLVMValueRef cl = f_intr2(t, "llvm.maxnum", f_intr2(t, "llvm.minnum", fl, f32c(t, 2.0e9f)), f32c(t, -2.0e9f));
	return LLVMBuildFPToSI(t->b, cl, i32t(t), "");
}

/* ---- tex ----------------------------------------------------------------------------------------- */

/* cube map: direction (x, y, z) -> face and (s, t) in [0, 1] (the OpenGL / CUDA table) */
static void cube_face(tx *t, LLVMValueRef x, LLVMValueRef y, LLVMValueRef z, LLVMValueRef *face, LLVMValueRef *s, LLVMValueRef *tc_out)
{
	LLVMBuilderRef b = t->b;
	LLVMValueRef ax = f_intr1(t, "llvm.fabs", x), ay = f_intr1(t, "llvm.fabs", y), az = f_intr1(t, "llvm.fabs", z);
	LLVMValueRef xm = and1(t, LLVMBuildFCmp(b, LLVMRealOGE, ax, ay, ""), LLVMBuildFCmp(b, LLVMRealOGE, ax, az, ""));
	LLVMValueRef ym = and1(t, LLVMBuildNot(b, xm, ""), LLVMBuildFCmp(b, LLVMRealOGE, ay, az, ""));
	LLVMValueRef nx = LLVMBuildFNeg(b, x, ""), ny = LLVMBuildFNeg(b, y, ""), nz = LLVMBuildFNeg(b, z, "");
	LLVMValueRef xp = LLVMBuildFCmp(b, LLVMRealOGE, x, f32c(t, 0), ""), yp = LLVMBuildFCmp(b, LLVMRealOGE, y, f32c(t, 0), "");
	LLVMValueRef zp = LLVMBuildFCmp(b, LLVMRealOGE, z, f32c(t, 0), "");
	/* x major: +x (sc -z, tc -y), -x (z, -y); y major: +y (x, z), -y (x, -z); z major: +z (x, -y), -z (-x, -y) */
	LLVMValueRef sc = sel(t, xm, sel(t, xp, nz, z), sel(t, ym, x, sel(t, zp, x, nx)));
	LLVMValueRef tc = sel(t, xm, ny, sel(t, ym, sel(t, yp, z, nz), ny));
	LLVMValueRef ma = sel(t, xm, ax, sel(t, ym, ay, az));
	*face = sel(t, xm, sel(t, xp, u32c(t, 0), u32c(t, 1)), sel(t, ym, sel(t, yp, u32c(t, 2), u32c(t, 3)), sel(t, zp, u32c(t, 4), u32c(t, 5))));
	LLVMValueRef half = f32c(t, 0.5f), one = f32c(t, 1.0f);
	*s = LLVMBuildFMul(b, LLVMBuildFAdd(b, LLVMBuildFDiv(b, sc, ma, ""), one, ""), half, "");
	*tc_out = LLVMBuildFMul(b, LLVMBuildFAdd(b, LLVMBuildFDiv(b, tc, ma, ""), one, ""), half, "");
}

static int lower_tex(al *c, const ir_insn *in)
{
	if (ptx_tex_is_mipmapped(in))
		return al_unsupported(c, in, "mipmapped and multisample textures are not lowered");
	struct ptx_tex_geom g;
	ptx_tex_geom_of(in, &g);
	int dims = (int)g.dims;
	bool layered = g.layered, cube = g.cube;
	atype dt = al_insn_type_n(in, 0), ct = al_insn_type_n(in, 1);
	if (!dims || !dt.bits || !ct.bits || dt.bits != 32)
		return al_unsupported(c, in, "this texture geometry or type is not lowered");
	struct ptx_tex_coords co;
	const char *why;
	if (ptx_tex_sample_operands(in, &g, &co, &why) < 0)
		return al_unsupported(c, in, why);
	const ir_operand *ce = co.elems;
	tx T = {c, c->b, NULL}, *t = &T;
	LLVMBuilderRef b = c->b;
	LLVMValueRef desc = read_handle(c, co.handle);
	if (!desc)
		return -1;
	unsigned ci = 0;
	LLVMValueRef layer = u32c(t, 0);
	if (layered && !cube) {
		if (!(layer = al_read(c, &ce[0], AT('u', 32))))
			return -1;
		ci = 1;
	}
	bool want_f = dt.k == 'f';
	LLVMValueRef res[4];
	if (ct.k != 'f' && !cube) {
		/* integer coordinates: one texel, zero out of range */
		LLVMValueRef ic[3] = {u32c(t, 0), u32c(t, 0), u32c(t, 0)};
		for (int d = 0; d < dims; d++)
			if (!(ic[d] = al_read(c, &ce[ci + d], AT('s', 32))))
				return -1;
		call_texel(c, desc, ic[0], ic[1], ic[2], layer, (want_f ? 1 : 0) | 2, res);
	} else {
		LLVMValueRef x[3] = {0, 0, 0};
		if (cube) {
			LLVMValueRef v[3];
			for (unsigned d = 0; d < 3; d++)
				if (!(v[d] = al_read(c, &ce[(layered ? 1 : 0) + d], AT('f', 32))))
					return -1;
			LLVMValueRef face;
			cube_face(t, v[0], v[1], v[2], &face, &x[0], &x[1]);
			if (layered) {
				LLVMValueRef li = al_read(c, &ce[0], AT('u', 32));
				if (!li)
					return -1;
				face = LLVMBuildAdd(b, face, LLVMBuildMul(b, li, u32c(t, 6), ""), "");
			}
			layer = face;
		} else {
			for (int d = 0; d < dims; d++)
				if (!(x[d] = al_read(c, &ce[ci + d], AT('f', 32))))
					return -1;
		}
		LLVMValueRef norm = cube ? bconst(t, true) : bit_set(t, field32(t, desc, GP_TEX_OFF_FLAGS), GP_TEX_NORMALIZED_COORDS);
		LLVMValueRef linear = want_f ? eq(t, field32(t, desc, GP_TEX_OFF_FILTER), 1) : bconst(t, false); /* integer reads are never filtered */
		LLVMValueRef i0[3], w[3];
		for (int d = 0; d < 3; d++) {
			if (d >= dims) {
				i0[d] = u32c(t, 0);
				w[d] = f32c(t, 0);
				continue;
			}
			LLVMValueRef n = LLVMBuildUIToFP(b, field32(t, desc, GP_TEX_OFF_WIDTH + 4 * d), f32t(t), "");
			LLVMValueRef xs = sel(t, norm, LLVMBuildFMul(b, x[d], n, ""), x[d]);
			LLVMValueRef xb = sel(t, linear, LLVMBuildFSub(b, xs, f32c(t, 0.5f), ""), xs);
			LLVMValueRef fl = f_intr1(t, "llvm.floor", xb);
			/* the weight in 8-bit fixed point, as the texture unit computes it */
			LLVMValueRef fr = LLVMBuildFSub(b, xb, fl, "");
			fr = LLVMBuildFMul(b, f_intr1(t, "llvm.rint", LLVMBuildFMul(b, fr, f32c(t, 256.0f), "")), f32c(t, 1.0f / 256.0f), "");
			w[d] = sel(t, linear, fr, f32c(t, 0));
			i0[d] = floor_i(t, fl);
		}
		/* the first of 2^dims texels; the others only where filtering is linear */
		LLVMValueRef first[4];
		call_texel(c, desc, i0[0], i0[1], i0[2], layer, want_f ? 1 : 0, first);
		if (!want_f) {
			memcpy(res, first, sizeof(res));
		} else {
			LLVMBasicBlockRef from = LLVMGetInsertBlock(b), lin = al_new_block(c, "tex.linear"), join = al_new_block(c, "tex.filtered");
			LLVMBuildCondBr(b, linear, lin, join);
			LLVMPositionBuilderAtEnd(b, lin);
			unsigned nt = 1u << dims;
			LLVMValueRef acc[4] = {0, 0, 0, 0};
			for (unsigned s = 0; s < nt; s++) {
				LLVMValueRef ii[3], wt = f32c(t, 1.0f), tv[4];
				for (int d = 0; d < 3; d++) {
					bool hi = d < dims && (s >> d & 1);
					ii[d] = hi ? LLVMBuildAdd(b, i0[d], u32c(t, 1), "") : i0[d];
					if (d < dims)
						wt = LLVMBuildFMul(b, wt, hi ? w[d] : LLVMBuildFSub(b, f32c(t, 1.0f), w[d], ""), "");
				}
				if (s)
					call_texel(c, desc, ii[0], ii[1], ii[2], layer, 1, tv);
				else
					memcpy(tv, first, sizeof(tv));
				for (unsigned k = 0; k < 4; k++) {
					LLVMValueRef v = LLVMBuildFMul(b, wt, LLVMBuildBitCast(b, tv[k], f32t(t), ""), "");
					acc[k] = s ? LLVMBuildFAdd(b, acc[k], v, "") : v;
				}
			}
			LLVMValueRef accb[4];
			for (unsigned k = 0; k < 4; k++)
				accb[k] = LLVMBuildBitCast(b, acc[k], i32t(t), "");
			LLVMBasicBlockRef lin_end = LLVMGetInsertBlock(b);
			LLVMBuildBr(b, join);
			LLVMPositionBuilderAtEnd(b, join);
			for (unsigned k = 0; k < 4; k++)
				res[k] = phi2(t, i32t(t), first[k], from, accb[k], lin_end);
		}
	}
	for (unsigned k = 0; k < 4; k++)
		if (al_write(c, &in->ops[0].elems[k], want_f ? AT('f', 32) : AT('b', 32),
			     want_f ? LLVMBuildBitCast(b, res[k], f32t(t), "") : res[k]) < 0)
			return -1;
	return 1;
}

/* ---- tld4 ----------------------------------------------------------------------------------------- */

/* tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32 (texture gather): the component of the four texels that
 * bilinear filtering at (x, y) would weigh, in PTX's order (u0,v1), (u1,v1), (u1,v0), (u0,v0) with
 * u0 = floor(x - 0.5), v0 = floor(y - 0.5) after normalized coordinates are scaled. */
static int lower_tld4(al *c, const ir_insn *in)
{
	unsigned comp;
	struct ptx_tex_coords gc;
	int form = ptx_tex_gather_decode(in, &comp, &gc);
	atype dt = al_insn_type_n(in, 0);
	if (form < 0 || !dt.bits || dt.bits != 32)
		return al_unsupported(c, in, "only tld4.{r,g,b,a}.2d with [handle, {x, y}] is lowered");
	tx T = {c, c->b, NULL}, *t = &T;
	LLVMBuilderRef b = c->b;
	LLVMValueRef desc = read_handle(c, gc.handle);
	if (!desc)
		return -1;
	const ir_operand *co = gc.elems;
	LLVMValueRef norm = bit_set(t, field32(t, desc, GP_TEX_OFF_FLAGS), GP_TEX_NORMALIZED_COORDS);
	LLVMValueRef i0[2];
	for (unsigned d = 0; d < 2; d++) {
		LLVMValueRef x = al_read(c, &co[d], AT('f', 32));
		if (!x)
			return -1;
		LLVMValueRef n = LLVMBuildUIToFP(b, field32(t, desc, GP_TEX_OFF_WIDTH + 4 * d), f32t(t), "");
		LLVMValueRef xs = sel(t, norm, LLVMBuildFMul(b, x, n, ""), x);
		i0[d] = floor_i(t, f_intr1(t, "llvm.floor", LLVMBuildFSub(b, xs, f32c(t, 0.5f), "")));
	}
	static const unsigned du[4] = {0, 1, 1, 0}, dv[4] = {1, 1, 0, 0};
	bool want_f = dt.k == 'f';
	for (unsigned k = 0; k < 4; k++) {
		LLVMValueRef tv[4];
		call_texel(c, desc, LLVMBuildAdd(b, i0[0], u32c(t, du[k]), ""), LLVMBuildAdd(b, i0[1], u32c(t, dv[k]), ""), u32c(t, 0),
			   u32c(t, 0), want_f ? 1 : 0, tv);
		LLVMValueRef v = want_f ? LLVMBuildBitCast(b, tv[comp], f32t(t), "") : tv[comp];
		if (al_write(c, &in->ops[0].elems[k], want_f ? AT('f', 32) : AT('b', 32), v) < 0)
			return -1;
	}
	return 1;
}

/* ---- surfaces and queries ------------------------------------------------------------------------ */

/* sust.b / suld.b .1d/.2d/.3d/.a1d/.a2d: x in bytes; out of range: dropped / zero. */
static int lower_surface(al *c, const ir_insn *in, bool store)
{
	if (!al_mod(in, ".b"))
		return al_unsupported(c, in, "formatted surface accesses (.p) are not lowered");
	struct ptx_tex_geom g;
	ptx_tex_geom_of(in, &g);
	int dims = g.cube ? 0 : (int)g.dims; /* no cube surfaces */
	bool layered = g.layered;
	atype ty = al_insn_type(in);
	if (!dims || !ty.bits || ty.bits > 64 || ty.k == 'p' || in->nops != 2)
		return al_unsupported(c, in, "expected [handle, {coordinates}] and a value");
	struct ptx_tex_coords sc;
	const ir_operand *vals_op;
	unsigned n;
	const char *why;
	if (ptx_tex_surface_operands(in, store, &g, &sc, &vals_op, &n, &why) < 0)
		return al_unsupported(c, in, why);
	const char *handle = sc.handle;
	const ir_operand *ce = sc.elems;
	if (n > 4)
		return al_unsupported(c, in, "expected at most 4 values");
	tx T = {c, c->b, NULL}, *t = &T;
	LLVMBuilderRef b = c->b;
	LLVMTypeRef i64 = i64t(t);
	LLVMValueRef desc = read_handle(c, handle);
	if (!desc)
		return -1;
	unsigned ci = sc.first;
	LLVMValueRef layer = layered ? al_read(c, &ce[0], AT('u', 32)) : u32c(t, 0);
	if (!layer)
		return -1;
	LLVMValueRef co[3] = {u32c(t, 0), u32c(t, 0), u32c(t, 0)};
	for (int d = 0; d < dims; d++)
		if (!(co[d] = al_read(c, &ce[ci + d], AT('s', 32))))
			return -1;
	unsigned eb = ty.bits / 8, bytes = eb * n;
	/* x is in bytes: in range while x + bytes <= width * texel bytes (texel bytes from the format) */
	LLVMValueRef one, two;
	LLVMValueRef esz = elem_size(t, field32(t, desc, GP_TEX_OFF_FORMAT), &one, &two);
	LLVMValueRef rowbytes = LLVMBuildMul(b, field32(t, desc, GP_TEX_OFF_WIDTH), LLVMBuildMul(b, esz, field32(t, desc, GP_TEX_OFF_CHANNELS), ""), "");
	LLVMValueRef ok = and1(t, LLVMBuildICmp(b, LLVMIntSGE, co[0], u32c(t, 0), ""),
			       LLVMBuildICmp(b, LLVMIntULE, LLVMBuildAdd(b, co[0], u32c(t, bytes), ""), rowbytes, ""));
	for (int d = 1; d < dims; d++)
		ok = and1(t, ok, LLVMBuildICmp(b, LLVMIntULT, co[d], field32(t, desc, GP_TEX_OFF_WIDTH + 4 * d), ""));
	LLVMValueRef data = field(t, desc, GP_TEX_OFF_DATA, i64), pitch = field(t, desc, GP_TEX_OFF_PITCH, i64);
	LLVMValueRef slice = field(t, desc, GP_TEX_OFF_SLICE, i64);
	LLVMValueRef addr = LLVMBuildAdd(b, data, LLVMBuildZExt(b, co[0], i64, ""), "");
	addr = LLVMBuildAdd(b, addr, LLVMBuildMul(b, LLVMBuildZExt(b, co[1], i64, ""), pitch, ""), "");
	addr = LLVMBuildAdd(b, addr, LLVMBuildMul(b, LLVMBuildZExt(b, LLVMBuildAdd(b, co[2], layer, ""), i64, ""), slice, ""), "");
	atype mt = AT('u', ty.bits);
	LLVMTypeRef et = al_ity(c, ty.bits);
	LLVMValueRef vals[4];
	if (store)
		for (unsigned k = 0; k < n; k++)
			if (!(vals[k] = al_read(c, &vals_op[k], mt)))
				return -1;
	LLVMBasicBlockRef from = LLVMGetInsertBlock(b), then = al_new_block(c, store ? "sust" : "suld"), join = al_new_block(c, "surf.done");
	LLVMBuildCondBr(b, ok, then, join);
	LLVMPositionBuilderAtEnd(b, then);
	LLVMValueRef got[4];
	for (unsigned k = 0; k < n; k++) {
		LLVMValueRef p = LLVMBuildIntToPtr(b, LLVMBuildAdd(b, addr, LLVMConstInt(i64, k * eb, 0), ""), al_ptr(c, AS_GLOBAL), "");
		if (store) {
			LLVMValueRef s = LLVMBuildStore(b, vals[k], p);
			LLVMSetAlignment(s, eb);
		} else {
			got[k] = LLVMBuildLoad2(b, et, p, "");
			LLVMSetAlignment(got[k], eb);
		}
	}
	LLVMBasicBlockRef then_end = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	LLVMValueRef r[4];
	for (unsigned k = 0; k < n && !store; k++) /* the phis first, then the writes */
		r[k] = phi2(t, et, LLVMConstInt(et, 0, 0), from, got[k], then_end);
	for (unsigned k = 0; k < n && !store; k++)
		if (al_write(c, &vals_op[k], mt, r[k]) < 0)
			return -1;
	return 1;
}

static int lower_txq(al *c, const ir_insn *in)
{
	static const struct {
		const char *m;
		unsigned off;
	} q[] = {
		{".width", GP_TEX_OFF_WIDTH}, {".height", GP_TEX_OFF_HEIGHT}, {".depth", GP_TEX_OFF_DEPTH},
		{".array_size", GP_TEX_OFF_LAYERS}, {".channel_order", GP_TEX_OFF_CHANNELS},
		{".channel_data_type", GP_TEX_OFF_FORMAT}, {".normalized_coords", GP_TEX_OFF_FLAGS},
		{".filter_mode", GP_TEX_OFF_FILTER}, {".addr_mode_0", GP_TEX_OFF_ADDRESS},
	};
	if (in->nops != 2 || in->ops[1].kind != IR_OPND_ADDR || !in->ops[1].name)
		return al_unsupported(c, in, "expected d, [handle]");
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if (!al_mod(in, q[i].m))
			continue;
		tx T = {c, c->b, NULL}, *t = &T;
		LLVMValueRef desc = read_handle(c, in->ops[1].name);
		if (!desc)
			return -1;
		LLVMValueRef v = field32(t, desc, q[i].off);
		if (q[i].off == GP_TEX_OFF_FLAGS)
			v = LLVMBuildAnd(c->b, v, u32c(t, GP_TEX_NORMALIZED_COORDS), "");
		return al_write(c, &in->ops[0], AT('b', 32), v) < 0 ? -1 : 1;
	}
	return al_unsupported(c, in, "this texture query is not lowered");
}

int al_texture(al *c, const ir_insn *in)
{
	enum ptx_tex_kind k = ptx_tex_kind_of(in);
	/* nvptx: NVIDIA's texture units with the driver's handles, the instruction passed through
	 * (GPUPROBE_LLVM_GENERIC keeps this emulation on nvptx for PoCL's check of it). Only what
	 * the emulation accepts too (a handle in a register, no mip levels), so that both targets
	 * leave the same kernels out; the rest goes on to its error line below. */
	if (c->target == AMDGPU_TARGET_NVPTX && !al_generic() && k != PTX_TEX_NOT && !ptx_tex_is_mipmapped(in)) {
		const ir_operand *h = NULL;
		for (unsigned i = 0; i < in->nops && !h; i++)
			if (in->ops[i].kind == IR_OPND_ADDR)
				h = &in->ops[i];
		struct al_var *v = h && h->name ? al_lookup(c, h->name) : NULL;
		if (v && v->is_reg)
			return al_inline_ptx(c, in, k == PTX_TEX_SURF_STORE ? 0 : 1);
	}
	switch (k) {
	case PTX_TEX_GATHER: return lower_tld4(c, in);
	case PTX_TEX_SAMPLE: return lower_tex(c, in);
	case PTX_TEX_SURF_STORE: return lower_surface(c, in, true);
	case PTX_TEX_SURF_LOAD: return lower_surface(c, in, false);
	case PTX_TEX_QUERY: return lower_txq(c, in);
	default: return 0;
	}
}
