/* How a map prints, decided by types rather than names (include/gpuprobe/output.h): the map's
 * key type is followed through typedefs and qualifiers, and the first gpuprobe key typedef met
 * (gp_kernel_id_t, gp_api_id_t, gp_log2_key_t, gp_lhist_key_t, gp_no_key_t) names the printing;
 * a struct of integers laid out as C lays them out (no bit fields, no holes beyond alignment)
 * prints as a tuple, its kernel and API members by name. A linear
 * histogram's bucket width is a BTF decl tag on the map's variable ("gp_lhist_step:N"). Nothing
 * found leaves GP_PRINT_BY_NAME, and the output falls back on the map's name. The BTF was checked
 * by object_btf.c before libbpf read it (type ids in range, chains bounded). */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"

#define CHAIN_MAX 32   /* object_btf.c allows longer chains; a key type this deep is no typedef of ours */

static const struct {
	const char *name;
	enum gp_map_print as;
} key_types[] = {
	{"gp_kernel_id_t", GP_PRINT_KERNEL},
	{"gp_api_id_t", GP_PRINT_API},
	{"gp_log2_key_t", GP_PRINT_LOG2},
	{"gp_lhist_key_t", GP_PRINT_LINEAR},
	{"gp_no_key_t", GP_PRINT_SCALAR},
};

static enum gp_map_print key_print(const struct btf *btf, __u32 id)
{
	for (int depth = 0; id && depth < CHAIN_MAX; depth++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t)
			return GP_PRINT_BY_NAME;
		int kind = btf_kind(t);
		if (kind == BTF_KIND_TYPEDEF) {
			const char *n = btf__name_by_offset(btf, t->name_off);
			for (size_t i = 0; n && i < sizeof(key_types) / sizeof(key_types[0]); i++)
				if (!strcmp(n, key_types[i].name))
					return key_types[i].as;
		} else if (kind != BTF_KIND_CONST && kind != BTF_KIND_VOLATILE &&
			   kind != BTF_KIND_RESTRICT && kind != BTF_KIND_TYPE_TAG) {
			return GP_PRINT_BY_NAME;
		}
		id = t->type;
	}
	return GP_PRINT_BY_NAME;
}

/* The step of a "gp_lhist_step:N" decl tag on the map's variable, 0 when none. */
static uint64_t lhist_step(const struct btf *btf, const char *map)
{
	__s32 var = btf__find_by_name_kind(btf, map, BTF_KIND_VAR);
	if (var <= 0)
		return 0;
	__u32 n = btf__type_cnt(btf);
	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t || btf_kind(t) != BTF_KIND_DECL_TAG || t->type != (__u32)var)
			continue;
		const char *tag = btf__name_by_offset(btf, t->name_off);
		static const char pfx[] = "gp_lhist_step:";
		if (!tag || strncmp(tag, pfx, sizeof(pfx) - 1))
			continue;
		char *end;
		unsigned long long s = strtoull(tag + sizeof(pfx) - 1, &end, 10);
		if (!*end && s)
			return s;
	}
	return 0;
}

/* A tuple member: GP_TUPLE_* byte, its size in *size; 0 when it is no integer. */
static unsigned tuple_member(const struct btf *btf, __u32 id, uint32_t *size)
{
	unsigned kind = GP_TUPLE_INT;
	for (int depth = 0; id && depth < CHAIN_MAX; depth++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t)
			return 0;
		int k = btf_kind(t);
		if (k == BTF_KIND_INT || k == BTF_KIND_ENUM) {
			if (k == BTF_KIND_INT && (btf_int_offset(t) || btf_int_bits(t) != t->size * 8))
				return 0;
			*size = t->size;
			unsigned lg = t->size == 1 ? 0 : t->size == 2 ? 1 : t->size == 4 ? 2 : t->size == 8 ? 3 : 4;
			return lg > 3 ? 0 : GP_TUPLE_PRESENT | lg | kind << 2;
		}
		if (k == BTF_KIND_TYPEDEF && kind == GP_TUPLE_INT) {
			const char *n = btf__name_by_offset(btf, t->name_off);
			if (n && !strcmp(n, "gp_kernel_id_t"))
				kind = GP_TUPLE_KERNEL;
			else if (n && !strcmp(n, "gp_api_id_t"))
				kind = GP_TUPLE_API;
		} else if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_CONST && k != BTF_KIND_VOLATILE &&
			   k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG) {
			return 0;
		}
		id = t->type;
	}
	return 0;
}

/* The GP_PRINT_TUPLE layout of a struct key of key_size bytes, 0 when it is not one. */
static uint64_t tuple_layout(const struct btf *btf, __u32 id, uint32_t key_size)
{
	const struct btf_type *t = NULL;
	for (int depth = 0; id && depth < CHAIN_MAX; depth++) {
		t = btf__type_by_id(btf, id);
		if (!t || btf_kind(t) == BTF_KIND_STRUCT)
			break;
		int k = btf_kind(t);
		if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_CONST && k != BTF_KIND_VOLATILE)
			return 0;
		id = t->type;
	}
	if (!t || btf_kind(t) != BTF_KIND_STRUCT || t->size != key_size)
		return 0;
	__u16 n = btf_vlen(t);
	if (!n || n > GP_TUPLE_MAX)
		return 0;
	const struct btf_member *mb = btf_members(t);
	uint64_t layout = 0;
	uint32_t at = 0, align = 1;
	for (__u16 i = 0; i < n; i++) {
		uint32_t size = 0;
		unsigned b = tuple_member(btf, mb[i].type, &size);
		__u32 bits = btf_member_bit_offset(t, i);
		if (!b || btf_member_bitfield_size(t, i) || bits % 8)
			return 0;
		at = (at + size - 1) / size * size;
		if (bits / 8 != at)
			return 0;
		at += size;
		align = size > align ? size : align;
		layout |= (uint64_t)b << (8 * i);
	}
	return (at + align - 1) / align * align == key_size ? layout : 0;
}

void ld_map_print_type(struct bpf_object *bo, struct bpf_map *bm, struct gp_map *m)
{
	const struct btf *btf = bpf_object__btf(bo);
	__u32 key = bpf_map__btf_key_type_id(bm);
	if (!btf || !key || !m->name)
		return;
	bool int_key = m->key_size == 4 || m->key_size == 8;
	enum gp_map_print as = int_key ? key_print(btf, key) : GP_PRINT_BY_NAME;
	if (as == GP_PRINT_BY_NAME) {
		uint64_t layout = tuple_layout(btf, key, m->key_size);
		if (layout) {
			m->print_as = GP_PRINT_TUPLE;
			m->print_step = layout;
			return;
		}
	}
	if (as == GP_PRINT_LINEAR) {
		/* without its width a linear histogram cannot be drawn: the name may still say it */
		m->print_step = lhist_step(btf, m->name);
		if (!m->print_step)
			as = GP_PRINT_BY_NAME;
	}
	m->print_as = as;
}
