/* A ring map's record type in a probe object's BTF: the struct its `__type(value, struct T)`
 * names. Shared by the capture files (maps/gpt_btf.c) and the traces (cli/trace_btf.c), both of
 * which read libbpf's BTF; header-only so that the trace library needs nothing else of maps/. */
#ifndef GPUPROBE_MAPS_BTF_VALUE_H
#define GPUPROBE_MAPS_BTF_VALUE_H

#include <bpf/btf.h>
#include <stdint.h>
#include <string.h>

/* id's type past typedefs and qualifiers (a bounded walk: a hostile chain ends), or NULL */
static inline const struct btf_type *gp_btf_skip_mods(const struct btf *btf, uint32_t *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);
	for (int i = 0; t && i < 32 && (btf_is_typedef(t) || btf_is_const(t) ||
				       btf_is_volatile(t) || btf_is_restrict(t)); i++) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The struct a .maps variable's "value" member points at, or 0. */
static inline uint32_t gp_btf_map_value_struct(const struct btf *btf, const char *map)
{
	int sec = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	if (sec < 0)
		return 0;
	const struct btf_type *ds = btf__type_by_id(btf, (uint32_t)sec);
	const struct btf_var_secinfo *vs = btf_var_secinfos(ds);
	for (unsigned i = 0; i < btf_vlen(ds); i++) {
		const struct btf_type *v = btf__type_by_id(btf, vs[i].type);
		if (!v || !btf_is_var(v) || strcmp(btf__name_by_offset(btf, v->name_off), map))
			continue;
		uint32_t id = v->type;
		const struct btf_type *def = gp_btf_skip_mods(btf, &id);
		if (!def || !btf_is_struct(def))
			return 0;
		const struct btf_member *mb = btf_members(def);
		for (unsigned k = 0; k < btf_vlen(def); k++) {
			if (strcmp(btf__name_by_offset(btf, mb[k].name_off), "value"))
				continue;
			uint32_t pid = mb[k].type;
			const struct btf_type *p = gp_btf_skip_mods(btf, &pid);
			if (!p || !btf_is_ptr(p))
				return 0;
			uint32_t sid = p->type;
			const struct btf_type *s = gp_btf_skip_mods(btf, &sid);
			return s && btf_is_struct(s) ? sid : 0;
		}
	}
	return 0;
}

#endif
