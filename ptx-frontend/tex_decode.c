/* Decoding of texture and surface instructions, shared by spirv/ and amdgpu/ (see tex_decode.h). */
#include "ptx-frontend/tex_decode.h"

#include <string.h>

enum ptx_tex_kind ptx_tex_kind_of(const ir_insn *in)
{
	static const struct { const char *op; enum ptx_tex_kind k; } tab[] = {
		{"tld4", PTX_TEX_GATHER}, {"tex", PTX_TEX_SAMPLE}, {"sust", PTX_TEX_SURF_STORE},
		{"suld", PTX_TEX_SURF_LOAD}, {"txq", PTX_TEX_QUERY}, {"suq", PTX_TEX_QUERY},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(in->opcode, tab[i].op))
			return tab[i].k;
	return PTX_TEX_NOT;
}

void ptx_tex_geom_of(const ir_insn *in, struct ptx_tex_geom *g)
{
	static const struct { const char *m; unsigned dims; bool layered, cube; } tab[] = {
		{".1d", 1, false, false},  {".2d", 2, false, false},  {".3d", 3, false, false},
		{".a1d", 1, true, false},  {".a2d", 2, true, false},  {".cube", 2, false, true},
		{".acube", 2, true, true},
	};
	*g = (struct ptx_tex_geom){0};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (ir_insn_has_mod(in, tab[i].m)) {
			*g = (struct ptx_tex_geom){tab[i].dims, tab[i].layered, tab[i].cube};
			return;
		}
}

bool ptx_tex_is_mipmapped(const ir_insn *in)
{
	static const char *const bad[] = {".level", ".grad", ".base", ".2dms", ".a2dms"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ir_insn_has_mod(in, bad[i]))
			return true;
	return false;
}

/* {c0, c1, ...} or a lone c0 as n operands */
static void coords_of(const ir_operand *a, struct ptx_tex_coords *co)
{
	if (a->kind == IR_OPND_VEC) {
		co->elems = a->elems;
		co->n = a->nelems;
	} else {
		co->elems = a;
		co->n = 1;
	}
}

int ptx_tex_sample_operands(const ir_insn *in, const struct ptx_tex_geom *g, struct ptx_tex_coords *co,
			    const char **why)
{
	if (in->nops != 2 || in->ops[0].kind != IR_OPND_VEC || in->ops[0].nelems != 4 || in->ops[1].kind != IR_OPND_ADDR ||
	    !in->ops[1].name || !in->ops[1].nelems) {
		*why = "expected {d0, d1, d2, d3}, [handle, {coordinates}] (separate samplers, "
		       "offsets and depth compare are not lowered)";
		return -1;
	}
	if (in->ops[1].nelems != 1) {
		*why = "separate samplers are not lowered";
		return -1;
	}
	co->handle = in->ops[1].name;
	coords_of(&in->ops[1].elems[0], co);
	co->first = g->layered ? 1 : 0;
	/* a cube direction has three coordinates; a layer (cube or not) one more */
	unsigned need = g->dims + (g->layered && !g->cube) + (g->cube ? 1 + g->layered : 0);
	if (co->n < need) {
		*why = "too few coordinates";
		return -1;
	}
	return 0;
}

int ptx_tex_gather_decode(const ir_insn *in, unsigned *comp, struct ptx_tex_coords *co)
{
	static const char comps[] = "rgba";
	int cm = -1;
	for (unsigned i = 0; i < 4 && cm < 0; i++)
		if (ir_insn_has_mod(in, (const char[]){'.', comps[i], 0}))
			cm = (int)i;
	if (cm < 0 || !ir_insn_has_mod(in, ".2d") || in->nops != 2 || in->ops[0].kind != IR_OPND_VEC ||
	    in->ops[0].nelems != 4 || in->ops[1].kind != IR_OPND_ADDR || !in->ops[1].name || in->ops[1].nelems != 1 ||
	    in->ops[1].elems[0].kind != IR_OPND_VEC || in->ops[1].elems[0].nelems < 2)
		return -1;
	*comp = (unsigned)cm;
	co->handle = in->ops[1].name;
	coords_of(&in->ops[1].elems[0], co);
	co->first = 0;
	return 0;
}

int ptx_tex_surface_operands(const ir_insn *in, bool store, const struct ptx_tex_geom *g, struct ptx_tex_coords *co,
			     const ir_operand **vals, unsigned *nvals, const char **why)
{
	const ir_operand *a = &in->ops[store ? 0 : 1], *v = &in->ops[store ? 1 : 0];
	if (a->kind != IR_OPND_ADDR || !a->name || a->nelems != 1) {
		*why = "expected [handle, {coordinates}] and a value";
		return -1;
	}
	co->handle = a->name;
	coords_of(&a->elems[0], co);
	co->first = g->layered ? 1 : 0;
	if (co->n < g->dims + g->layered) {
		*why = "too few coordinates";
		return -1;
	}
	if (v->kind == IR_OPND_VEC) {
		*vals = v->elems;
		*nvals = v->nelems;
	} else {
		*vals = v;
		*nvals = 1;
	}
	return 0;
}
