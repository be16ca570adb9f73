/* A ring map's record type for capture files (gpt.h): a ring declared with
 * __type(value, struct T) in the probe object's BTF (the convention cli/trace_btf.c reads for
 * traces) has its records' fields flattened into the file's map chunk, so that `gpuprobe decode`
 * prints typed fields without libbpf and without the object. Runs once per map at start. */
#include "maps/gpt_btf.h"
#include "maps/btf_value.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct flat {
	struct gp_gpt_field *f;
	unsigned n, max;
};

static void add(struct flat *fl, const char *name, uint32_t off, uint32_t size, uint32_t kind)
{
	if (fl->n >= fl->max)
		return;
	struct gp_gpt_field *f = &fl->f[fl->n++];
	memset(f, 0, sizeof(*f));
	f->offset = off;
	f->size = size;
	f->kind = kind;
	snprintf(f->name, sizeof(f->name), "%s", name);
}

static void flatten(const struct btf *btf, uint32_t id, const char *prefix, uint32_t base,
		    struct flat *fl, int depth)
{
	const struct btf_type *t = gp_btf_skip_mods(btf, &id);
	if (!t || depth > 4)
		return;
	if (btf_is_composite(t)) {
		const struct btf_member *mb = btf_members(t);
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			if (btf_member_bitfield_size(t, i))
				continue;   /* bitfields: not one of the kinds a record prints */
			char name[GP_GPT_FIELD_NAME];
			const char *mn = btf__name_by_offset(btf, mb[i].name_off);
			if (*prefix)
				snprintf(name, sizeof(name), "%s.%s", prefix, mn && *mn ? mn : "?");
			else
				snprintf(name, sizeof(name), "%s", mn && *mn ? mn : "?");
			flatten(btf, mb[i].type, name, base + btf_member_bit_offset(t, i) / 8, fl,
				depth + 1);
		}
		return;
	}
	if (btf_is_int(t)) {
		uint8_t enc = btf_int_encoding(t);
		uint32_t sz = t->size;
		if (sz == 1 || sz == 2 || sz == 4 || sz == 8)
			add(fl, prefix, base, sz, enc & BTF_INT_SIGNED ? GP_GPT_F_INT : GP_GPT_F_UINT);
		else
			add(fl, prefix, base, sz, GP_GPT_F_BYTES);
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		add(fl, prefix, base, t->size, GP_GPT_F_UINT);
	} else if (btf_is_ptr(t)) {
		add(fl, prefix, base, 8, GP_GPT_F_UINT);
	} else if (btf_is_float(t)) {
		add(fl, prefix, base, t->size, t->size == 4 || t->size == 8 ? GP_GPT_F_FLOAT : GP_GPT_F_BYTES);
	} else if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		uint32_t eid = a->type;
		const struct btf_type *e = gp_btf_skip_mods(btf, &eid);
		__s64 sz = btf__resolve_size(btf, id);
		if (sz <= 0)
			return;
		int chars = e && btf_is_int(e) && e->size == 1;
		add(fl, prefix, base, (uint32_t)sz, chars ? GP_GPT_F_CHARS : GP_GPT_F_BYTES);
	}
}

int gp_gpt_btf__record(const struct btf *btf, const char *map, uint32_t *type_id,
		       uint32_t *size, struct gp_gpt_field *fields, unsigned *nfields)
{
	*nfields = 0;
	uint32_t sid = btf ? gp_btf_map_value_struct(btf, map) : 0;
	if (!sid)
		return -ENOENT;
	__s64 sz = btf__resolve_size(btf, sid);
	if (sz <= 0 || sz > (1 << 20))
		return -EINVAL;
	struct flat fl = {fields, 0, GP_GPT_MAX_FIELDS};
	flatten(btf, sid, "", 0, &fl, 0);
	*type_id = sid;
	*size = (uint32_t)sz;
	*nfields = fl.n;
	return 0;
}
