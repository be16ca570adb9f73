/* The map table of an object, in this order (the index ld_imm64 refers to):
 *   1. BTF-defined maps (symbols in .maps, by offset): attributes read by libbpf;
 *   2. legacy maps (symbols in "maps", struct bpf_map_def, by offset): read here, because
 *      libbpf 1.x refuses them;
 *   3. global data sections (.data*, .rodata*, .bss*, by section index): one-entry arrays holding
 *      the section, as libbpf does.
 * libbpf opens the object without a kernel (bpf_object__open_mem). It is shown a copy in which what
 * we read ourselves is hidden: code relocations (applied in object_reloc.c), .BTF.ext (not needed
 * before a kernel load; Debian 12's libbpf trusts its contents) and a legacy "maps" section (which
 * libbpf 1.x refuses). .BTF is checked first (object_btf.c). */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/object_internal.h"

/* libbpf reports through one process-wide print callback: keep its last warning for our message. */
static _Thread_local char libbpf_last[256];

static int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char line[sizeof libbpf_last];
	vsnprintf(line, sizeof line, fmt, ap);
	if (strncmp(line, "libbpf: ", 8) == 0)
		memmove(line, line + 8, strlen(line + 8) + 1);
	size_t l = strlen(line);
	while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
		line[--l] = '\0';
	if (l)
		memcpy(libbpf_last, line, l + 1);
	return 0;
}

static bool map_type_supported(uint32_t t)
{
	switch (t) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_RINGBUF:
	case 1501: /* bpftime GPU hash (one shared copy) */
	case 1502: /* bpftime per-thread array */
	case 1503: /* bpftime GPU array (one shared copy) */
	case 1504: /* bpftime kernel-shared array (host-mapped, one copy) */
	case 1512: /* bpftime per-thread array in host memory */
	case 1513: /* bpftime GPU array in host memory (one copy) */
	case 1527: /* bpftime GPU ring buffer */
		return true;
	}
	return false;
}

/* Map flags bpftime's array and hash types accept (Linux's meaning; gpuprobe needs none of them:
 * BPF_F_MMAPABLE, which bpftime's 1504 examples set, is what every host-mapped map is anyway).
 * Bits outside these make a clear error rather than being ignored. */
#define LINUX_F_NO_PREALLOC (1u << 0)
#define LINUX_F_NUMA_NODE (1u << 2)
#define LINUX_F_RDONLY (1u << 3)
#define LINUX_F_WRONLY (1u << 4)
#define LINUX_F_ZERO_SEED (1u << 6)
#define LINUX_F_RDONLY_PROG (1u << 7)
#define LINUX_F_WRONLY_PROG (1u << 8)
#define LINUX_F_MMAPABLE (1u << 10)
#define LINUX_F_ACCESS (LINUX_F_NUMA_NODE | LINUX_F_RDONLY | LINUX_F_WRONLY | LINUX_F_RDONLY_PROG | \
			LINUX_F_WRONLY_PROG)

static uint32_t bpftime_flags_allowed(uint32_t t)
{
	switch (t) {
	case 1501:
		return LINUX_F_ACCESS | LINUX_F_NO_PREALLOC | LINUX_F_ZERO_SEED;
	case 1502: case 1503: case 1504: case 1512: case 1513:
		return LINUX_F_ACCESS | LINUX_F_MMAPABLE;
	}
	return ~0u;   /* other types: not checked here */
}

static bool is_data_section(const struct elf_sec *s)
{
	static const char *const pfx[] = { ".data", ".rodata", ".bss" };
	if (!(s->sh.sh_flags & SHF_ALLOC) || s->exec)
		return false;
	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(pfx[i]);
		if (strncmp(s->name, pfx[i], l) == 0 && (s->name[l] == '\0' || s->name[l] == '.'))
			return true;
	}
	return false;
}

/* Symbols defining maps in section sec, sorted by offset. */
static int map_symbols(struct loader *ld, size_t sec, size_t **out, size_t *n)
{
	size_t *v = NULL, cnt = 0;
	for (size_t i = 1; i < ld->nsyms; i++) {
		GElf_Sym sym;
		if (ld_sym(ld, i, &sym, NULL)) {
			free(v);
			return -EINVAL;
		}
		if (sym.st_shndx != sec || GELF_ST_TYPE(sym.st_info) == STT_SECTION)
			continue;
		size_t *p = realloc(v, (cnt + 1) * sizeof *p);
		if (!p) {
			free(v);
			return ld_fail(ld, ENOMEM, "out of memory");
		}
		v = p;
		/* insertion by offset */
		size_t j = cnt++;
		for (; j > 0; j--) {
			GElf_Sym prev;
			ld_sym(ld, v[j - 1], &prev, NULL);
			if (prev.st_value <= sym.st_value)
				break;
			v[j] = v[j - 1];
		}
		v[j] = i;
		if (cnt > GP_OBJ_MAX_MAPS) {
			free(v);
			return ld_fail(ld, E2BIG, "more than %d maps", GP_OBJ_MAX_MAPS);
		}
	}
	*out = v;
	*n = cnt;
	return 0;
}

static struct gp_map *new_map(struct loader *ld, size_t sec, uint64_t off, uint64_t size)
{
	struct gp_object *o = ld->obj;
	if (o->nmaps >= GP_OBJ_MAX_MAPS) {
		ld_fail(ld, E2BIG, "more than %d maps", GP_OBJ_MAX_MAPS);
		return NULL;
	}
	struct gp_map *m = realloc(o->maps, (o->nmaps + 1) * sizeof *m);
	struct map_sym *s = realloc(ld->map_syms, (o->nmaps + 1) * sizeof *s);
	if (m)
		o->maps = m;
	if (s)
		ld->map_syms = s;
	if (!m || !s) {
		ld_fail(ld, ENOMEM, "out of memory");
		return NULL;
	}
	ld->map_syms[o->nmaps] = (struct map_sym){ .sec = sec, .off = off, .size = size };
	m = &o->maps[o->nmaps++];
	memset(m, 0, sizeof *m);
	return m;
}

/* A copy of the image without the sections libbpf need not see. */
static void *libbpf_view(struct loader *ld, const void *image, size_t size)
{
	GElf_Ehdr eh;
	gelf_getehdr(ld->elf, &eh);
	uint8_t *copy = malloc(size);
	if (!copy)
		return NULL;
	memcpy(copy, image, size);
	for (size_t i = 1; i < ld->shnum; i++) {
		struct elf_sec *s = &ld->secs[i];
		bool hide = i == ld->legacy_maps_sec || strcmp(s->name, ".BTF.ext") == 0 ||
			    strcmp(s->name, ".rel.BTF.ext") == 0 ||
			    (s->sh.sh_type == SHT_REL && s->sh.sh_info < ld->shnum && ld->secs[s->sh.sh_info].exec);
		uint64_t at = eh.e_shoff + (uint64_t)i * eh.e_shentsize + offsetof(Elf64_Shdr, sh_type);
		if (!hide || eh.e_shentsize < sizeof(Elf64_Shdr) || at + 4 > size)
			continue;
		uint32_t t = SHT_STRTAB;   /* libbpf skips string tables */
		memcpy(copy + at, &t, 4);
	}
	return copy;
}

static int btf_maps(struct loader *ld, struct bpf_object *bo)
{
	size_t *syms, n;
	if (!ld->btf_maps_sec)
		return 0;
	if (map_symbols(ld, ld->btf_maps_sec, &syms, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		ld_sym(ld, syms[i], &sym, &name);
		struct bpf_map *bm = bo ? bpf_object__find_map_by_name(bo, name) : NULL;
		if (!bm) {
			free(syms);
			return ld_fail(ld, EINVAL, "map '%s' in .maps has no BTF definition libbpf could read", name);
		}
		struct gp_map *m = new_map(ld, ld->btf_maps_sec, sym.st_value, sym.st_size);
		if (!m) {
			free(syms);
			return -ENOMEM;
		}
		m->name = strdup(name);
		m->type = bpf_map__type(bm);
		m->key_size = bpf_map__key_size(bm);
		m->value_size = bpf_map__value_size(bm);
		m->max_entries = bpf_map__max_entries(bm);
		m->flags = bpf_map__map_flags(bm);
		m->map_extra = bpf_map__map_extra(bm);
		ld_map_print_type(bo, bm, m);
	}
	free(syms);
	return 0;
}

static int legacy_maps(struct loader *ld)
{
	size_t *syms, n;
	if (!ld->legacy_maps_sec)
		return 0;
	const struct elf_sec *s = &ld->secs[ld->legacy_maps_sec];
	if (map_symbols(ld, ld->legacy_maps_sec, &syms, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		ld_sym(ld, syms[i], &sym, &name);
		/* struct bpf_map_def: type, key_size, value_size, max_entries[, map_flags, ...] */
		uint64_t sz = sym.st_size ? sym.st_size : 20;
		if (sz < 16 || !s->data || sym.st_value > s->sh.sh_size || s->sh.sh_size - sym.st_value < (sz < 20 ? sz : 20)) {
			free(syms);
			return ld_fail(ld, EINVAL, "legacy map '%s': definition of %llu bytes at offset %llu does not fit section"
				       " 'maps' (%llu bytes)", name, (unsigned long long)sz, (unsigned long long)sym.st_value,
				       (unsigned long long)s->sh.sh_size);
		}
		uint32_t f[5] = { 0 };
		memcpy(f, (const uint8_t *)s->data->d_buf + sym.st_value, sz < 20 ? sz : 20);
		struct gp_map *m = new_map(ld, ld->legacy_maps_sec, sym.st_value, sz);
		if (!m) {
			free(syms);
			return -ENOMEM;
		}
		m->name = strdup(name);
		m->type = f[0];
		m->key_size = f[1];
		m->value_size = f[2];
		m->max_entries = f[3];
		m->flags = f[4];
	}
	free(syms);
	return 0;
}

static int data_maps(struct loader *ld)
{
	for (size_t i = 1; i < ld->shnum; i++) {
		struct elf_sec *s = &ld->secs[i];
		if (!is_data_section(s) || s->sh.sh_size == 0)
			continue;
		if (s->sh.sh_size > GP_OBJ_MAX_DATA_MAP)
			return ld_fail(ld, E2BIG, "global data section '%s' of %llu bytes (limit %u)", s->name,
				       (unsigned long long)s->sh.sh_size, GP_OBJ_MAX_DATA_MAP);
		struct gp_map *m = new_map(ld, i, 0, s->sh.sh_size);
		if (!m)
			return -ENOMEM;
		s->data_map = (int)(ld->obj->nmaps - 1);
		bool ro = strncmp(s->name, ".rodata", 7) == 0;
		m->name = strdup(s->name);
		m->type = BPF_MAP_TYPE_ARRAY;
		m->key_size = 4;
		m->value_size = (uint32_t)s->sh.sh_size;
		m->max_entries = 1;
		m->flags = BPF_F_MMAPABLE | (ro ? BPF_F_RDONLY_PROG : 0);
		m->readonly = ro;
		void *init = calloc(1, s->sh.sh_size);
		if (!init)
			return ld_fail(ld, ENOMEM, "out of memory");
		if (s->sh.sh_type != SHT_NOBITS && s->data)
			memcpy(init, s->data->d_buf, s->sh.sh_size);
		m->initial = init;
		m->initial_size = s->sh.sh_size;
	}
	return 0;
}

int ld_collect_maps(struct loader *ld, const void *image, size_t size)
{
	int rc = ld_check_btf(ld);
	if (rc)
		return rc;
	void *shown = libbpf_view(ld, image, size);
	if (!shown)
		return ld_fail(ld, ENOMEM, "out of memory");
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "gpuprobe");
	libbpf_last[0] = '\0';
	libbpf_print_fn_t old = libbpf_set_print(capture_libbpf);
	struct bpf_object *bo = bpf_object__open_mem(shown, size, &opts);
	long oerr = libbpf_get_error(bo);
	libbpf_set_print(old);
	if (!bo || oerr) {
		free(shown);
		return ld_fail(ld, EINVAL, "libbpf cannot open it: %s", libbpf_last[0] ? libbpf_last : strerror((int)-oerr));
	}
	rc = btf_maps(ld, bo);
	bpf_object__close(bo);
	free(shown);
	if (!rc)
		rc = legacy_maps(ld);
	if (!rc)
		rc = data_maps(ld);
	if (rc)
		return rc;
	for (size_t i = 0; i < ld->obj->nmaps; i++) {
		const struct gp_map *m = &ld->obj->maps[i];
		if (!m->name)
			return ld_fail(ld, ENOMEM, "out of memory");
		if (!ld_name_ok(m->name))
			return ld_fail(ld, EINVAL, "map %zu: name '%s' is empty or not printable", i, m->name);
		if (!map_type_supported(m->type))
			return ld_fail(ld, EINVAL, "map '%s': type %u is not supported (array, hash, per-CPU and LRU variants,"
				       " ringbuf, perf event array, bpftime's 1501-1504, 1512, 1513 and 1527)", m->name,
				       m->type);
		uint32_t bad = m->flags & ~bpftime_flags_allowed(m->type);
		if (bad)
			return ld_fail(ld, EINVAL, "map '%s': map_flags 0x%x has bits 0x%x that bpftime's type %u does"
				       " not take (it takes 0x%x: %s, BPF_F_NUMA_NODE, BPF_F_RDONLY/WRONLY[_PROG])",
				       m->name, m->flags, bad, m->type, bpftime_flags_allowed(m->type),
				       m->type == 1501 ? "BPF_F_NO_PREALLOC, BPF_F_ZERO_SEED" : "BPF_F_MMAPABLE");
	}
	return 0;
}
