/* The one-liner compiler's entry points (ebpf/oneliner.h): parse, generate each probe's code,
 * write the ELF image; and the dump of what a one-liner compiles to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object.h"
#include "ebpf/oneliner.h"
#include "ebpf/oneliner_internal.h"
#include "ebpf/verifier.h"

int gp_oneliner_compile(const char *src, void **elf, size_t *size, char *err, size_t errlen)
{
	*elf = NULL;
	*size = 0;
	if (err && errlen)
		err[0] = 0;
	struct ol_program *p = calloc(1, sizeof *p);
	struct ol_code *codes = NULL;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = ol_parse(src, p, err, errlen);
	if (!rc && !(codes = calloc(p->nprobes, sizeof *codes))) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	for (size_t i = 0; !rc && i < p->nprobes; i++)
		rc = ol_gen_probe(p, i, &codes[i], err, errlen);
	if (!rc)
		rc = ol_write_elf(p, codes, elf, size, err, errlen);
	for (size_t i = 0; codes && i < p->nprobes; i++)
		ol_code_free(&codes[i]);
	free(codes);
	ol_program_free(p);
	free(p);
	return rc;
}

static const char *map_type_name(uint32_t t)
{
	return t == BPF_MAP_TYPE_ARRAY ? "array" : t == BPF_MAP_TYPE_HASH ? "hash" : "map";
}

static const char *print_name(const struct gp_map *m)
{
	switch (m->print_as) {
	case GP_PRINT_KERNEL: return "kernel names (gp_kernel_id_t)";
	case GP_PRINT_API: return "driver function names (gp_api_id_t)";
	case GP_PRINT_LOG2: return "log2 histogram (gp_log2_key_t)";
	case GP_PRINT_LINEAR: return "linear histogram (gp_lhist_key_t)";
	case GP_PRINT_SCALAR: return "one value (gp_no_key_t)";
	case GP_PRINT_TUPLE: return "tuples";
	default: return "counts";
	}
}

int gp_oneliner_dump(const char *src, FILE *out, char *err, size_t errlen)
{
	void *elf;
	size_t size;
	int rc = gp_oneliner_compile(src, &elf, &size, err, errlen);
	if (rc)
		return rc;
	struct gp_object *obj;
	rc = gp_object__open_mem(elf, size, "one-liner", &obj, err, errlen);
	free(elf);
	if (rc)
		return rc;
	for (size_t i = 0; i < gp_object__map_count(obj); i++) {
		const struct gp_map *m = gp_object__map(obj, i);
		fprintf(out, "map %zu: @%s %s, key %u bytes, value %u bytes, %u entries; prints as %s",
			i, m->name, map_type_name(m->type), m->key_size, m->value_size, m->max_entries,
			print_name(m));
		if (m->print_as == GP_PRINT_LINEAR)
			fprintf(out, " step %llu", (unsigned long long)m->print_step);
		for (int k = 0; m->print_as == GP_PRINT_TUPLE && k < GP_TUPLE_MAX; k++) {
			unsigned b = (unsigned)(m->print_step >> (8 * k)) & 0xff;
			if (!(b & GP_TUPLE_PRESENT))
				break;
			unsigned kind = b >> 2 & 3;
			fprintf(out, "%s%s", k ? ", " : " (", kind == GP_TUPLE_KERNEL ? "kernel" : kind == GP_TUPLE_API ? "api" : (b & 3) == 3 ? "u64" : "u32");
		}
		if (m->print_as == GP_PRINT_TUPLE)
			fputc(')', out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < gp_object__program_count(obj); i++) {
		const struct gp_program *p = gp_object__program(obj, i);
		fprintf(out, "%s (%s): %zu insns\n", p->name, p->section, p->ninsns);
		for (size_t k = 0; k < p->ninsns; k++) {
			char text[128];
			gp_disasm_insn(&p->insns[k], text, sizeof text);
			fprintf(out, "%4zu: %s\n", k, text);
			if (p->insns[k].code == (BPF_LD | BPF_DW | BPF_IMM))
				k++;
		}
	}
	gp_object__close(obj);
	return 0;
}
