/* Typed ring records for traces (trace.h): a ring map declared with __type(value, struct T) in
 * a probe object's BTF gives its records' fields, which become the trace arguments. */
#include "cli/trace_internal.h"
#include "maps/btf_value.h"

#include <bpf/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_ring_type(struct tr_build *b, const char *map, struct tr_ring_type *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < b->nobjects; i++) {
		struct btf *btf = btf__parse_elf(b->objects[i], NULL);
		if (!btf)
			continue;
		uint32_t sid = gp_btf_map_value_struct(btf, map);
		if (!sid) {
			btf__free(btf);
			continue;
		}
		const struct btf_type *s = btf__type_by_id(btf, sid);
		snprintf(out->name, sizeof(out->name), "%s", btf__name_by_offset(btf, s->name_off));
		out->size = s->size;
		const struct btf_member *mb = btf_members(s);
		for (unsigned k = 0; k < btf_vlen(s) && out->nfields < TR_MAX_FIELDS; k++) {
			struct tr_field *f = &out->fields[out->nfields];
			const char *nm = btf__name_by_offset(btf, mb[k].name_off);
			if (!nm || !*nm || nm[0] == '_' || btf_member_bitfield_size(s, k))
				continue;
			snprintf(f->name, sizeof(f->name), "%s", nm);
			f->offset = btf_member_bit_offset(s, k) / 8;
			uint32_t id = mb[k].type;
			const struct btf_type *t = gp_btf_skip_mods(btf, &id);
			if (!t)
				continue;
			if (btf_is_int(t) || btf_is_enum(t)) {
				f->kind = btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_SIGNED) ? TR_F_INT : TR_F_UINT;
				f->size = t->size;
				f->count = 1;
			} else if (btf_is_ptr(t)) {
				f->kind = TR_F_UINT;
				f->size = 8;
				f->count = 1;
			} else if (btf_is_array(t)) {
				const struct btf_array *a = btf_array(t);
				uint32_t eid = a->type;
				const struct btf_type *e = gp_btf_skip_mods(btf, &eid);
				if (!e || !btf_is_int(e))
					continue;
				f->size = e->size;
				f->count = a->nelems;
				f->kind = e->size == 1 && (btf_int_encoding(e) & BTF_INT_CHAR) ? TR_F_STR
					: (btf_int_encoding(e) & BTF_INT_SIGNED) ? TR_F_INT : TR_F_UINT;
				if (e->size == 1 && !strcmp(btf__name_by_offset(btf, e->name_off), "char"))
					f->kind = TR_F_STR;
			} else {
				continue;
			}
			if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
				continue;
			out->nfields++;
		}
		btf__free(btf);
		return 1;
	}
	return 0;
}

static uint64_t get_uint(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size);
	return v;
}

static int64_t get_int(const uint8_t *p, uint32_t size)
{
	switch (size) {
	case 1: return (int8_t)p[0];
	case 2: { int16_t v; memcpy(&v, p, 2); return v; }
	case 4: { int32_t v; memcpy(&v, p, 4); return v; }
	default: { int64_t v; memcpy(&v, p, 8); return v; }
	}
}

static json_object *one(const struct tr_field *f, const uint8_t *p)
{
	return f->kind == TR_F_INT ? json_object_new_int64(get_int(p, f->size))
				   : json_object_new_uint64(get_uint(p, f->size));
}

json_object *tr_ring_decode(const struct tr_ring_type *t, const uint8_t *data, size_t size)
{
	json_object *o = json_object_new_object();
	for (unsigned i = 0; i < t->nfields; i++) {
		const struct tr_field *f = &t->fields[i];
		size_t bytes = (size_t)f->size * f->count;
		if (f->offset + bytes > size)
			continue;
		const uint8_t *p = data + f->offset;
		if (f->kind == TR_F_STR) {
			char s[257];
			size_t n = bytes < 256 ? bytes : 256;
			memcpy(s, p, n);
			s[n] = 0;
			for (size_t k = 0; s[k]; k++)
				if ((unsigned char)s[k] < 0x20 || (unsigned char)s[k] > 0x7e)
					s[k] = '?';
			json_object_object_add(o, f->name, json_object_new_string(s));
		} else if (f->count == 1) {
			json_object_object_add(o, f->name, one(f, p));
		} else {
			json_object *a = json_object_new_array();
			for (uint32_t k = 0; k < f->count && k < 64; k++)
				json_object_array_add(a, one(f, p + (size_t)k * f->size));
			json_object_object_add(o, f->name, a);
		}
	}
	return o;
}
