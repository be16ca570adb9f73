/* Opening a BPF object for the GPU (ebpf/object.h): the ELF is read with libelf, libbpf opens it
 * without a kernel for the BTF map definitions, and everything the rest of gpuprobe needs is
 * copied into a self-contained gp_object (no libbpf or libelf handles are kept). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ebpf/object_internal.h"
#include "common/safe_open.h"

static void free_object(struct gp_object *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nprogs; i++) {
		free((char *)o->progs[i].name);
		free((char *)o->progs[i].section);
		free((char *)o->progs[i].target);
		free(o->progs[i].insns);
	}
	for (size_t i = 0; i < o->nmaps; i++) {
		free((char *)o->maps[i].name);
		free((void *)o->maps[i].initial);
	}
	free(o->progs);
	free(o->maps);
	free(o->license);
	free(o->path);
	free(o);
}

void gp_object__close(struct gp_object *obj)
{
	free_object(obj);
}

static int read_license(struct loader *ld)
{
	for (size_t i = 1; i < ld->shnum; i++) {
		const struct elf_sec *s = &ld->secs[i];
		if (strcmp(s->name, "license") != 0)
			continue;
		if (!s->data || !memchr(s->data->d_buf, '\0', s->data->d_size))
			return ld_fail(ld, EINVAL, "license section is not a NUL-terminated string");
		if (ld->obj->license)
			return ld_fail(ld, EINVAL, "two license sections");
		ld->obj->license = strdup(s->data->d_buf);
		if (!ld->obj->license)
			return ld_fail(ld, ENOMEM, "out of memory");
	}
	return 0;
}

/* Programs: global functions in code sections other than .text (libbpf's rule; .text holds
 * subprograms). */
static int read_programs(struct loader *ld)
{
	struct gp_object *o = ld->obj;
	size_t count = 0;
	for (size_t i = 0; i < ld->nfuncs; i++)
		if (strcmp(ld->secs[ld->funcs[i].sec].name, ".text") != 0)
			count++;
	if (count == 0)
		return ld_fail(ld, EINVAL, "no programs (functions in a SEC(\"gpu/...\") section)");
	o->progs = calloc(count, sizeof *o->progs);
	if (!o->progs)
		return ld_fail(ld, ENOMEM, "out of memory");
	for (size_t i = 0; i < ld->nfuncs; i++) {
		const struct elf_func *fn = &ld->funcs[i];
		const char *sec = ld->secs[fn->sec].name;
		if (strcmp(sec, ".text") == 0)
			continue;
		if (!ld_name_ok(fn->name) || !ld_name_ok(sec))
			return ld_fail(ld, EINVAL, "program '%s' in section '%s': names must be printable", fn->name, sec);
		if (!fn->global)
			return ld_fail(ld, EINVAL, "program '%s' in section '%s' is static: programs must be global functions",
				       fn->name, sec);
		struct gp_program *p = &o->progs[o->nprogs++];
		p->name = strdup(fn->name);
		p->section = strdup(sec);
		if (!p->name || !p->section)
			return ld_fail(ld, ENOMEM, "out of memory");
		char *target = NULL, msg[400];
		if (gp_parse_attach(sec, &p->attach, &target, &p->mem_filter, &p->barrier_after, msg, sizeof msg))
			return ld_fail(ld, EINVAL, "program '%s': %s", fn->name, msg);
		p->target = target;
		int rc = ld_build_program(ld, fn, &p->insns, &p->ninsns);
		if (rc)
			return rc;
	}
	return 0;
}

static void free_loader(struct loader *ld)
{
	if (ld->secs)
		for (size_t i = 0; i < ld->shnum; i++)
			free(ld->secs[i].rel_at);
	free(ld->secs);
	free(ld->funcs);
	free(ld->map_syms);
	if (ld->elf)
		elf_end(ld->elf);
}

int gp_object__open_mem(const void *data, size_t size, const char *name, struct gp_object **out, char *err,
			size_t errlen)
{
	struct loader ld = { .name = name ? name : "<memory>", .err = err, .errlen = errlen };
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!data || size < sizeof(Elf64_Ehdr))
		return ld_fail(&ld, EINVAL, "not an ELF file (%zu bytes)", size);
	if (size > GP_OBJ_MAX_FILE)
		return ld_fail(&ld, EFBIG, "%zu bytes is larger than the %u-byte limit for BPF objects", size,
			       GP_OBJ_MAX_FILE);
	if (memcmp(data, ELFMAG, SELFMAG) != 0)
		return ld_fail(&ld, EINVAL, "not an ELF file");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ld_fail(&ld, EINVAL, "libelf: %s", elf_errmsg(-1));
	/* libelf may keep pointers into the image: give it our own aligned copy. */
	void *image = malloc(size);
	if (!image)
		return ld_fail(&ld, ENOMEM, "out of memory");
	memcpy(image, data, size);
	int rc;
	ld.obj = calloc(1, sizeof *ld.obj);
	ld.elf = elf_memory(image, size);
	if (!ld.obj) {
		rc = ld_fail(&ld, ENOMEM, "out of memory");
		goto out;
	}
	if (!ld.elf) {
		rc = ld_fail(&ld, EINVAL, "not an ELF file: %s", elf_errmsg(-1));
		goto out;
	}
	ld.obj->path = strdup(ld.name);
	if (!ld.obj->path) {
		rc = ld_fail(&ld, ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = ld_read_elf(&ld)) || (rc = ld_collect_maps(&ld, image, size)))
		goto out;
	ld.nsym_maps = ld.obj->nmaps;
	if ((rc = read_license(&ld)) || (rc = read_programs(&ld)))
		goto out;
	*out = ld.obj;
	ld.obj = NULL;
out:
	free_loader(&ld);
	free_object(ld.obj);
	free(image);
	return rc;
}

int gp_object__open_file(const char *path, struct gp_object **out, char *err, size_t errlen)
{
	*out = NULL;
	/* common/safe_open.h: a regular file only, checked on the descriptor (a FIFO in its place
	 * is refused, not waited on in open()), never inherited by a child */
	int fd = gp_open_read(path, 0, err, errlen);
	if (fd < 0)
		return fd;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((unsigned long long)st.st_size > GP_OBJ_MAX_FILE) {
		fclose(f);
		snprintf(err, errlen, "%s: %lld bytes is larger than the %u-byte limit for BPF objects", path,
			 (long long)st.st_size, GP_OBJ_MAX_FILE);
		return -EFBIG;
	}
	size_t size = (size_t)st.st_size;
	void *buf = malloc(size ? size : 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	size_t got = fread(buf, 1, size, f);
	int rerr = ferror(f);
	fclose(f);
	if (rerr || got != size) {
		free(buf);
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	int rc = gp_object__open_mem(buf, size, path, out, err, errlen);
	free(buf);
	return rc;
}

size_t gp_object__program_count(const struct gp_object *obj)
{
	return obj ? obj->nprogs : 0;
}

const struct gp_program *gp_object__program(const struct gp_object *obj, size_t i)
{
	return obj && i < obj->nprogs ? &obj->progs[i] : NULL;
}

size_t gp_object__map_count(const struct gp_object *obj)
{
	return obj ? obj->nmaps : 0;
}

const struct gp_map *gp_object__map(const struct gp_object *obj, size_t i)
{
	return obj && i < obj->nmaps ? &obj->maps[i] : NULL;
}

const char *gp_object__license(const struct gp_object *obj)
{
	return obj ? obj->license : NULL;
}

const char *gp_object__path(const struct gp_object *obj)
{
	return obj ? obj->path : NULL;
}
