/* A ring map's record fields from a probe object's BTF, for capture files (gpt.h). */
#ifndef GPUPROBE_MAPS_GPT_BTF_H
#define GPUPROBE_MAPS_GPT_BTF_H

#include "maps/gpt.h"

struct btf;

/* The struct that map's `__type(value, struct T)` names in btf: its type id, size, and its
 * fields flattened (nested members "a.b", at most GP_GPT_MAX_FIELDS, bitfields left out) into
 * fields[]. 0, or -ENOENT when the map has no such type (records then print as bytes). */
int gp_gpt_btf__record(const struct btf *btf, const char *map, uint32_t *type_id,
		       uint32_t *size, struct gp_gpt_field *fields, unsigned *nfields);

#endif
