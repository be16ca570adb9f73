/* Shared by the BPF object loader's files (object.c, object_elf.c, object_reloc.c,
 * object_attach.c). Not part of the public API. */
#ifndef GPUPROBE_EBPF_OBJECT_INTERNAL_H
#define GPUPROBE_EBPF_OBJECT_INTERNAL_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>

#include "ebpf/object.h"

/* Bounds against hostile objects. */
#define GP_OBJ_MAX_FILE (64u << 20)
#define GP_OBJ_MAX_PROG_INSNS (1u << 20)    /* after subprograms are appended */
#define GP_OBJ_MAX_DATA_MAP (64u << 20)     /* bytes of one global data section */
#define GP_OBJ_MAX_MAPS 4096

struct gp_object {
	char *path;
	char *license;
	struct gp_program *progs;
	size_t nprogs;
	struct gp_map *maps;
	size_t nmaps;
};

struct elf_sec {
	const char *name;
	GElf_Shdr sh;
	Elf_Data *data;        /* NULL for NOBITS/empty */
	bool exec;             /* SHF_EXECINSTR PROGBITS: holds BPF code */
	int data_map;          /* map index of a global data section, -1 otherwise */
	size_t rel;            /* index of the SHT_REL section for it, 0 when none */
	int32_t *rel_at;       /* per instruction: index of its relocation or -1 (built on demand) */
};

struct elf_func {
	const char *name;
	size_t sec;
	size_t start, len;     /* in instructions */
	bool global;
};

/* A map defined by a symbol (BTF .maps or legacy maps), located by section and offset. */
struct map_sym {
	size_t sec;
	uint64_t off, size;
};

struct loader {
	const char *name;              /* for messages */
	Elf *elf;
	size_t shnum, strtab;
	struct elf_sec *secs;
	Elf_Data *symdata;
	size_t nsyms;
	size_t btf_maps_sec, legacy_maps_sec;   /* 0 when absent */
	struct elf_func *funcs;
	size_t nfuncs;
	struct map_sym *map_syms;      /* one per map index below nsym_maps */
	size_t nsym_maps;
	struct gp_object *obj;
	char *err;
	size_t errlen;
};

int ld_fail(struct loader *ld, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* object_elf.c: sections, symbols, functions; validates what later passes rely on. */
int ld_read_elf(struct loader *ld);
bool ld_name_ok(const char *s);   /* non-empty, no control characters */
int ld_sym(struct loader *ld, size_t idx, GElf_Sym *sym, const char **name);

/* object_btf.c: structural check of .BTF before libbpf reads it. */
int ld_check_btf(struct loader *ld);

/* object_maps.c: map table (BTF/legacy symbols via libbpf, then global data sections). */
int ld_collect_maps(struct loader *ld, const void *image, size_t size);
/* object_print.c: print_as/print_step of a BTF-defined map from its key type and decl tags. */
struct bpf_object;
struct bpf_map;
void ld_map_print_type(struct bpf_object *bo, struct bpf_map *bm, struct gp_map *m);

/* object_reloc.c: a program's instructions with its subprograms appended and relocated. */
int ld_build_program(struct loader *ld, const struct elf_func *main_fn, struct bpf_insn **out, size_t *n);

/* object_attach.c: attach point and target from a section name. */
int gp_parse_attach(const char *section, enum gp_attach_kind *kind, char **target, unsigned *mem_filter,
		    int *barrier_after, char *err, size_t errlen);

#endif
