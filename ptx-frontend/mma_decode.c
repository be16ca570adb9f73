/* Decoding of tensor-core instructions, shared by spirv/ and amdgpu/ (see mma_decode.h). */
#include "ptx-frontend/mma_decode.h"

#include <stdio.h>
#include <string.h>

enum ptx_mma_etype ptx_mma_etype_of(const char *mod)
{
	static const struct { const char *s; enum ptx_mma_etype t; } tab[] = {
		{".f16", PTX_MMA_F16}, {".bf16", PTX_MMA_BF16}, {".tf32", PTX_MMA_TF32}, {".f32", PTX_MMA_F32},
		{".f64", PTX_MMA_F64}, {".u8", PTX_MMA_U8},     {".s8", PTX_MMA_S8},     {".s32", PTX_MMA_S32},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(mod, tab[i].s))
			return tab[i].t;
	return PTX_MMA_NONE;
}

unsigned ptx_mma_etype_bits(enum ptx_mma_etype t)
{
	switch (t) {
	case PTX_MMA_F16: case PTX_MMA_BF16: return 16;
	case PTX_MMA_U8: case PTX_MMA_S8: return 8;
	case PTX_MMA_F64: return 64;
	default: return 32;
	}
}

void ptx_mma_acc_type(enum ptx_mma_etype t, char *kind, unsigned *bits)
{
	*kind = 'f';
	*bits = 32;
	if (t == PTX_MMA_F64)
		*bits = 64;
	else if (t == PTX_MMA_U8 || t == PTX_MMA_S8 || t == PTX_MMA_S32)
		*kind = 's';
}

unsigned ptx_mma_etypes_of(const ir_insn *in, enum ptx_mma_etype *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < in->nmods && n < max; i++) {
		enum ptx_mma_etype t = ptx_mma_etype_of(in->mods[i]);
		if (t != PTX_MMA_NONE)
			out[n++] = t;
	}
	return n;
}

int ptx_mma_shape_of(const ir_insn *in, struct ptx_mma_shape *s)
{
	for (unsigned i = 0; i < in->nmods; i++) {
		unsigned m, n, k;
		if (sscanf(in->mods[i], ".m%un%uk%u", &m, &n, &k) == 3) {
			*s = (struct ptx_mma_shape){m, n, k};
			return 0;
		}
	}
	return -1;
}

const ir_operand *ptx_mma_regs_of(const ir_operand *o, unsigned *n)
{
	if (o->kind == IR_OPND_VEC) {
		*n = o->nelems;
		return o->elems;
	}
	*n = 1;
	return o;
}

int ptx_mma_ldst_decode(const ir_insn *in, bool store, struct ptx_mma_ldst *d, const char **why)
{
	enum ptx_mma_etype ty[2];
	if (ptx_mma_shape_of(in, &d->sh) < 0 || ptx_mma_etypes_of(in, ty, 2) < 1) {
		*why = "needs a shape and a type";
		return -1;
	}
	d->t = ty[0];
	d->which = store ? 'd' : 0;
	for (unsigned i = 0; i < in->nmods && !d->which; i++)
		if (!strcmp(in->mods[i], ".a") || !strcmp(in->mods[i], ".b") || !strcmp(in->mods[i], ".c"))
			d->which = in->mods[i][1];
	if (!d->which) {
		*why = "which matrix (.a, .b, .c)?";
		return -1;
	}
	d->col_major = ir_insn_has_mod(in, ".col");
	d->rows = d->which == 'b' ? d->sh.k : d->sh.m;
	d->cols = d->which == 'a' ? d->sh.k : d->sh.n;
	return 0;
}

int ptx_mma_wmma_decode(const ir_insn *in, struct ptx_mma_op *d, const char **why)
{
	enum ptx_mma_etype ty[4];
	unsigned nt = ptx_mma_etypes_of(in, ty, 4);
	if (ptx_mma_shape_of(in, &d->sh) < 0 || (nt != 2 && nt != 4) || in->nops != 4) {
		*why = "needs a shape, types and four operands";
		return -1;
	}
	/* two types name d and c alone: the f16 shapes, whose multiplicands are always f16 and whose
	 * accumulators are f16 or f32 (anything else is a type this decoder did not recognise) */
	bool fp_acc = (ty[0] == PTX_MMA_F16 || ty[0] == PTX_MMA_F32) && (ty[nt - 1] == PTX_MMA_F16 || ty[nt - 1] == PTX_MMA_F32);
	if (nt == 2 && !fp_acc) {
		*why = "two types (d and c) must be f16 or f32: the multiplicands' types are missing or unknown";
		return -1;
	}
	d->td = ty[0];
	d->ta = nt == 4 ? ty[1] : PTX_MMA_F16;
	d->tb = nt == 4 ? ty[2] : PTX_MMA_F16;
	d->tc = ty[nt - 1];
	if (d->ta == PTX_MMA_F32 || d->tb == PTX_MMA_F32) {
		*why = "f32 multiplicands";
		return -1;
	}
	return 0;
}

int ptx_mma_sync_decode(const ir_insn *in, struct ptx_mma_op *d, const char **why)
{
	enum ptx_mma_etype ty[4];
	unsigned nt = ptx_mma_etypes_of(in, ty, 4);
	if (ptx_mma_shape_of(in, &d->sh) < 0 || nt != 4 || in->nops != 4) {
		*why = "needs a shape, four types and four operands";
		return -1;
	}
	if (!ir_insn_has_mod(in, ".row") || !ir_insn_has_mod(in, ".col")) {
		*why = "only the .row.col layout is lowered";
		return -1;
	}
	d->td = ty[0];
	d->ta = ty[1];
	d->tb = ty[2];
	d->tc = ty[3];
	bool f64 = d->ta == PTX_MMA_F64;
	if (!(d->sh.m == 16 && d->sh.n == 8) && !(f64 && d->sh.m == 8 && d->sh.n == 8 && d->sh.k == 4)) {
		*why = "this shape is not lowered";
		return -1;
	}
	if (ptx_mma_etype_bits(d->ta) != ptx_mma_etype_bits(d->tb) || d->ta == PTX_MMA_F32) {
		*why = "these multiplicand types are not lowered";
		return -1;
	}
	return 0;
}

int ptx_mma_ldmatrix_decode(const ir_insn *in, bool store, struct ptx_mma_ldmatrix *d, const char **why)
{
	d->n = ir_insn_has_mod(in, ".x4") ? 4 : ir_insn_has_mod(in, ".x2") ? 2 : 1;
	d->trans = ir_insn_has_mod(in, ".trans");
	d->ai = store ? 0 : 1;
	if (!ir_insn_has_mod(in, ".m8n8") || !ir_insn_has_mod(in, ".b16") || in->nops != 2 ||
	    in->ops[d->ai].kind != IR_OPND_ADDR) {
		*why = "only .m8n8 .b16 is lowered";
		return -1;
	}
	return 0;
}

enum ptx_mma_kind ptx_mma_kind_of(const ir_insn *in)
{
	if (!strcmp(in->opcode, "mma") && in->nmods && !strcmp(in->mods[0], ".sync"))
		return PTX_MMA_SYNC;
	if (!strcmp(in->opcode, "ldmatrix"))
		return PTX_MMA_LDMATRIX;
	if (!strcmp(in->opcode, "stmatrix"))
		return PTX_MMA_STMATRIX;
	if (strcmp(in->opcode, "wmma") || !in->nmods)
		return PTX_MMA_NOT;
	if (!strcmp(in->mods[0], ".load"))
		return PTX_MMA_WMMA_LOAD;
	if (!strcmp(in->mods[0], ".store"))
		return PTX_MMA_WMMA_STORE;
	if (!strcmp(in->mods[0], ".mma"))
		return PTX_MMA_WMMA_MMA;
	return PTX_MMA_WMMA_OTHER;
}

int ptx_mma_op_decode(const ir_insn *in, enum ptx_mma_kind kind, struct ptx_mma_op *d, const char **why)
{
	return kind == PTX_MMA_SYNC ? ptx_mma_sync_decode(in, d, why) : ptx_mma_wmma_decode(in, d, why);
}
