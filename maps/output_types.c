/* Typed ring records in gpuprobe run's output (output.h, gp_output__add_types): a ring map
 * declared with __type(value, struct T) prints its records field by field, as `gpuprobe
 * decode` prints a capture's (maps/gpt_btf.c flattens the struct, maps/gpt_format.c writes
 * the fields), instead of 8-byte words of hex. The record types come from the probe objects'
 * BTF, read once; each map's type is looked up at its first record and kept. */
#include "maps/output_internal.h"
#include "maps/gpt_btf.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS 64
#define MAX_MAPS 64

struct typed_map {
	char name[64];
	int typed;                       /* 0: its records print as words */
	struct gp_gpt_map m;
	struct gp_gpt_field fields[GP_GPT_MAX_FIELDS];
	struct gp_gpt_map_info info;
};

struct gp_output_types {
	struct btf *btfs[MAX_OBJECTS];
	size_t nbtfs;
	struct typed_map maps[MAX_MAPS];
	size_t nmaps;
};

int gp_output__add_types(struct gp_output *o, const char *object)
{
	if (!o->types && !(o->types = calloc(1, sizeof(*o->types))))
		return -ENOMEM;
	struct gp_output_types *t = o->types;
	if (t->nbtfs == MAX_OBJECTS)
		return -E2BIG;
	struct btf *b = btf__parse_elf(object, NULL);
	if (!b)
		return -errno ? -errno : -EINVAL;   /* no BTF: its maps print as words */
	pthread_mutex_lock(&o->lock);
	t->btfs[t->nbtfs++] = b;
	pthread_mutex_unlock(&o->lock);
	return 0;
}

int gp_output__add_types_list(struct gp_output *o, const char *objects)
{
	char *list = objects ? strdup(objects) : NULL;
	if (objects && !list)
		return -ENOMEM;
	int rc = 0;
	for (char *save = NULL, *t = list ? strtok_r(list, ":", &save) : NULL; t;
	     t = strtok_r(NULL, ":", &save)) {
		int r = gp_output__add_types(o, t);
		rc = rc ? rc : r;
	}
	free(list);
	return rc;
}

const struct gp_gpt_map_info *gp_output_type(struct gp_output *o, const char *map)
{
	struct gp_output_types *t = o->types;
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->nmaps; i++)
		if (!strcmp(t->maps[i].name, map))
			return t->maps[i].typed ? &t->maps[i].info : NULL;
	if (t->nmaps == MAX_MAPS || strlen(map) >= sizeof(t->maps[0].name))
		return NULL;
	struct typed_map *tm = &t->maps[t->nmaps++];
	memset(tm, 0, sizeof(*tm));
	strcpy(tm->name, map);
	for (size_t b = 0; b < t->nbtfs && !tm->typed; b++) {
		uint32_t id, size;
		unsigned nf = 0;
		if (gp_gpt_btf__record(t->btfs[b], map, &id, &size, tm->fields, &nf) || !nf)
			continue;
		tm->m.record_size = size;
		tm->m.nfields = (uint16_t)nf;
		tm->info = (struct gp_gpt_map_info){.m = &tm->m, .name = tm->name,
						    .fields = tm->fields};
		tm->typed = 1;
	}
	return tm->typed ? &tm->info : NULL;
}

void gp_output_types_free(struct gp_output_types *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbtfs; i++)
		btf__free(t->btfs[i]);
	free(t);
}
