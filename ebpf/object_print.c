/* How a map prints, decided by types rather than names (include/gpuprobe/output.h): the map's
 * key type is followed through typedefs and qualifiers, and the first gpuprobe key typedef met
 * (gp_kernel_id_t, gp_api_id_t, gp_log2_key_t, gp_lhist_key_t) names the printing. A linear
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

void ld_map_print_type(struct bpf_object *bo, struct bpf_map *bm, struct gp_map *m)
{
	const struct btf *btf = bpf_object__btf(bo);
	__u32 key = bpf_map__btf_key_type_id(bm);
	if (!btf || !key || !m->name)
		return;
	bool int_key = m->key_size == 4 || m->key_size == 8;
	enum gp_map_print as = int_key ? key_print(btf, key) : GP_PRINT_BY_NAME;
	if (as == GP_PRINT_LINEAR) {
		/* without its width a linear histogram cannot be drawn: the name may still say it */
		m->print_step = lhist_step(btf, m->name);
		if (!m->print_step)
			as = GP_PRINT_BY_NAME;
	}
	m->print_as = as;
}
