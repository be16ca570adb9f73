/* A structural check of the .BTF section before libbpf reads it. Debian 12's libbpf (1.1) trusts
 * BTF type ids and follows modifier chains without a depth limit, so a corrupted object could crash
 * or hang it (found by fuzz/bpf_object_fuzz.c). Checked here: the header, every type record's
 * length, name offsets inside the string section, every referenced type id in range, and no
 * reference chain (modifiers, typedefs, pointers, arrays, vars) longer than a sane depth, which
 * also rules out cycles. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"

#define BTF_MAGIC_LE 0xeB9F
#define BTF_MAX_TYPES (1u << 20)
#define BTF_MAX_CHAIN 64

enum {
	K_INT = 1, K_PTR, K_ARRAY, K_STRUCT, K_UNION, K_ENUM, K_FWD, K_TYPEDEF, K_VOLATILE, K_CONST,
	K_RESTRICT, K_FUNC, K_FUNC_PROTO, K_VAR, K_DATASEC, K_FLOAT, K_DECL_TAG, K_TYPE_TAG, K_ENUM64,
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

struct btf_view {
	const uint8_t *types;
	uint32_t types_len, str_len;
	uint32_t *off;        /* offset of type id i (1-based) in types */
	uint32_t n;
};

/* The single type a record refers to through its size_or_type field, or 0. */
static uint32_t chain_next(const struct btf_view *v, uint32_t id)
{
	const uint8_t *t = v->types + v->off[id];
	uint32_t kind = (rd32(t + 4) >> 24) & 0x1f;
	switch (kind) {
	case K_PTR: case K_TYPEDEF: case K_VOLATILE: case K_CONST: case K_RESTRICT: case K_FUNC:
	case K_VAR: case K_DECL_TAG: case K_TYPE_TAG:
		return rd32(t + 8);
	case K_ARRAY:
		return rd32(t + 12);   /* element type */
	default:
		return 0;
	}
}

static int check_name(struct loader *ld, const struct btf_view *v, uint32_t name_off, uint32_t id)
{
	if (name_off >= v->str_len)
		return ld_fail(ld, EINVAL, "BTF type %u: name offset %u outside the string section", id, name_off);
	return 0;
}

static int check_ref(struct loader *ld, const struct btf_view *v, uint32_t ref, uint32_t id)
{
	if (ref > v->n)
		return ld_fail(ld, EINVAL, "BTF type %u refers to type %u (only %u types)", id, ref, v->n);
	return 0;
}

static int check_types(struct loader *ld, struct btf_view *v)
{
	/* pass 1: record boundaries */
	uint32_t cap = 256;
	v->off = malloc(cap * sizeof *v->off);
	if (!v->off)
		return ld_fail(ld, ENOMEM, "out of memory");
	uint32_t pos = 0;
	v->n = 0;
	while (pos < v->types_len) {
		if (v->types_len - pos < 12)
			return ld_fail(ld, EINVAL, "BTF: truncated type record at offset %u", pos);
		const uint8_t *t = v->types + pos;
		uint32_t info = rd32(t + 4), kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
		uint64_t extra;
		switch (kind) {
		case K_INT: case K_VAR: case K_DECL_TAG: extra = 4; break;
		case K_ARRAY: extra = 12; break;
		case K_STRUCT: case K_UNION: case K_DATASEC: case K_ENUM64: extra = 12ull * vlen; break;
		case K_ENUM: case K_FUNC_PROTO: extra = 8ull * vlen; break;
		case K_PTR: case K_FWD: case K_TYPEDEF: case K_VOLATILE: case K_CONST: case K_RESTRICT:
		case K_FUNC: case K_FLOAT: case K_TYPE_TAG: extra = 0; break;
		default:
			return ld_fail(ld, EINVAL, "BTF type %u: unknown kind %u", v->n + 1, kind);
		}
		if (extra > v->types_len - pos - 12)
			return ld_fail(ld, EINVAL, "BTF type %u: record runs past the type section", v->n + 1);
		if (v->n + 2 > cap) {
			if (cap >= BTF_MAX_TYPES)
				return ld_fail(ld, E2BIG, "BTF: more than %u types", BTF_MAX_TYPES);
			cap *= 2;
			uint32_t *p = realloc(v->off, cap * sizeof *p);
			if (!p)
				return ld_fail(ld, ENOMEM, "out of memory");
			v->off = p;
		}
		v->off[++v->n] = pos;
		pos += 12 + (uint32_t)extra;
	}
	/* pass 2: names and references */
	for (uint32_t id = 1; id <= v->n; id++) {
		const uint8_t *t = v->types + v->off[id];
		uint32_t info = rd32(t + 4), kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
		const uint8_t *x = t + 12;
		if (check_name(ld, v, rd32(t), id))
			return -EINVAL;
		switch (kind) {
		case K_PTR: case K_TYPEDEF: case K_VOLATILE: case K_CONST: case K_RESTRICT: case K_FUNC:
		case K_VAR: case K_DECL_TAG: case K_TYPE_TAG: case K_FUNC_PROTO:
			if (check_ref(ld, v, rd32(t + 8), id))
				return -EINVAL;
			break;
		default:
			break;
		}
		for (uint32_t i = 0; i < vlen; i++) {
			switch (kind) {
			case K_STRUCT: case K_UNION:
				if (check_name(ld, v, rd32(x + 12 * i), id) || check_ref(ld, v, rd32(x + 12 * i + 4), id))
					return -EINVAL;
				break;
			case K_DATASEC:
				if (check_ref(ld, v, rd32(x + 12 * i), id))
					return -EINVAL;
				break;
			case K_FUNC_PROTO:
				if (check_name(ld, v, rd32(x + 8 * i), id) || check_ref(ld, v, rd32(x + 8 * i + 4), id))
					return -EINVAL;
				break;
			case K_ENUM:
				if (check_name(ld, v, rd32(x + 8 * i), id))
					return -EINVAL;
				break;
			case K_ENUM64:
				if (check_name(ld, v, rd32(x + 12 * i), id))
					return -EINVAL;
				break;
			default:
				break;
			}
		}
		if (kind == K_ARRAY && (check_ref(ld, v, rd32(x), id) || check_ref(ld, v, rd32(x + 4), id)))
			return -EINVAL;
	}
	/* pass 3: reference chains end */
	for (uint32_t id = 1; id <= v->n; id++) {
		uint32_t cur = id;
		for (int depth = 0; (cur = chain_next(v, cur)) != 0; depth++)
			if (depth >= BTF_MAX_CHAIN)
				return ld_fail(ld, EINVAL, "BTF type %u: reference chain longer than %d (a cycle?)", id,
					       BTF_MAX_CHAIN);
	}
	return 0;
}

int ld_check_btf(struct loader *ld)
{
	const struct elf_sec *s = NULL;
	for (size_t i = 1; i < ld->shnum; i++)
		if (strcmp(ld->secs[i].name, ".BTF") == 0)
			s = &ld->secs[i];
	if (!s)
		return ld->btf_maps_sec ? ld_fail(ld, EINVAL, "maps in .maps need BTF (build with clang -g)") : 0;
	const uint8_t *d = s->data ? s->data->d_buf : NULL;
	uint64_t size = s->data ? s->data->d_size : 0;
	if (size < 24 || (rd32(d) & 0xffff) != BTF_MAGIC_LE || d[2] != 1)
		return ld_fail(ld, EINVAL, "BTF: bad header (not little-endian BTF version 1)");
	uint32_t hdr_len = rd32(d + 4), type_off = rd32(d + 8), type_len = rd32(d + 12), str_off = rd32(d + 16),
		 str_len = rd32(d + 20);
	if (hdr_len < 24 || hdr_len > size)
		return ld_fail(ld, EINVAL, "BTF: header length %u", hdr_len);
	uint64_t body = size - hdr_len;
	if ((uint64_t)type_off + type_len > body || (uint64_t)str_off + str_len > body || type_off % 4)
		return ld_fail(ld, EINVAL, "BTF: type or string section outside the %llu-byte BTF data",
			       (unsigned long long)size);
	const uint8_t *strs = d + hdr_len + str_off;
	if (str_len == 0 || strs[0] != '\0' || strs[str_len - 1] != '\0')
		return ld_fail(ld, EINVAL, "BTF: string section is not NUL-delimited");
	struct btf_view v = { .types = d + hdr_len + type_off, .types_len = type_len, .str_len = str_len };
	int rc = check_types(ld, &v);
	free(v.off);
	return rc;
}
