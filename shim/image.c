/* Inspecting module images (see image.h). */
#include "shim/image.h"
#include "shim/log.h"
#include "common/env.h"
#include "common/safe_open.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *shim_dump_dir;

__attribute__((constructor)) static void shim_image_env(void)
{
	shim_dump_dir = gp_env_str(GP_VAR_DUMP_DIR);
}

/* The application names this file (cuModuleLoad): read as the driver would, but never a FIFO or
 * device (not regular: the driver gets the call as it was) and never leaked to a child. */
static void *read_whole_file(const char *path, size_t *len)
{
	int fd = gp_open_read(path, 0, NULL, 0);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	void *buf = NULL;
	int rc = gp_read_all(fd, (size_t)1 << 31, &buf, len);   /* NUL after: PTX is text */
	close(fd);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return buf;
}

int shim_image_open(struct shim_image *img)
{
	if (img->path) {
		size_t len;
		img->owned = read_whole_file(img->path, &len);
		if (!img->owned)
			return -errno ? -errno : -EIO;
		img->data = img->owned;
		img->size = len;
	}
	if (!img->data)
		return -EINVAL;
	img->kind = module_image_classify(img->data, img->size);
	return 0;
}

void shim_image_close(struct shim_image *img)
{
	free(img->owned);
	img->owned = NULL;
}

/* ".entry" as a directive (not inside a longer word). */
static unsigned count_ptx_entries(const char *ptx, size_t len)
{
	unsigned n = 0;
	for (const char *p = ptx; (p = memmem(p, len - (p - ptx), ".entry", 6)); p += 6) {
		int before_ok = p == ptx || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
		int after_ok = (size_t)(p + 6 - ptx) < len && (p[6] == ' ' || p[6] == '\t');
		n += before_ok && after_ok;
	}
	return n;
}

/* Kernels of a cubin: each has a ".nv.info.<name>" section. Bounds-checked against size. */
static unsigned count_cubin_kernels(const uint8_t *elf, size_t size)
{
	if (size < sizeof(Elf64_Ehdr))
		return 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum)
		return 0;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
	const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
	if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
		return 0;
	const char *names = (const char *)elf + strs->sh_offset;
	unsigned n = 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		size_t off = sh[i].sh_name;
		if (off + 10 <= strs->sh_size && !strncmp(names + off, ".nv.info.", 9))
			n++;
	}
	return n;
}

/* GPUPROBE_DUMP_DIR, opened and checked once (the user's, writable by nobody else, created 0700
 * when missing); files are written whole into that descriptor (O_EXCL temporary, renamed). */
static pthread_once_t dump_once = PTHREAD_ONCE_INIT;
static int dump_fd = -1;

static void dump_open(void)
{
	char why[256];
	dump_fd = gp_dir_open(shim_dump_dir, GP_DIR_CREATE, why, sizeof(why));
	if (dump_fd < 0)
		shim_msg("GPUPROBE_DUMP_DIR=%s: %s; no PTX written", shim_dump_dir, why);
}

static void dump_file(const struct shim_module *m, const char *suffix, const void *data,
		      size_t len)
{
	pthread_once(&dump_once, dump_open);
	if (dump_fd < 0)
		return;
	char name[256];
	snprintf(name, sizeof(name), "module-%04u%s.ptx", m->seq, suffix);
	struct iovec iov = {(void *)data, len};
	int rc = gp_write_file_at(dump_fd, name, &iov, 1);
	if (rc) {
		shim_msg("GPUPROBE_DUMP_DIR: cannot write %s/%s: %s", shim_dump_dir, name,
			 strerror(-rc));
		return;
	}
	shim_log("module %u: PTX written to %s/%s", m->seq, shim_dump_dir, name);
}

void shim_image_dump(const struct shim_module *m, const char *suffix, const void *data, size_t len)
{
	if (shim_dump_dir)
		dump_file(m, suffix, data, len);
}

static void inspect_fatbin(const struct shim_image *img, struct shim_module *m, char *desc,
			   size_t desclen, int log, const char *dump)
{
	char err[256];
	struct fatbin *fb;
	int rc = fatbin__open_mem(img->data, img->size, &fb, err, sizeof(err));
	if (rc) {
		snprintf(desc, desclen, "unreadable fatbin (%s)", err);
		return;
	}
	size_t used = snprintf(desc, desclen, "fatbin:");
	size_t count = fatbin__entry_count(fb);
	int counted = 0, counted_ptx = 0;   /* kernels counted (from PTX preferably) */
	for (size_t i = 0; i < count; i++) {
		const struct fatbin_entry *e = fatbin__entry(fb, i);
		int is_ptx = e->kind == FATBIN_KIND_PTX;
		m->has_ptx |= is_ptx;
		if (used < desclen)
			used += snprintf(desc + used, desclen - used, "%s %s sm_%u%s%s",
					 i ? "," : "", fatbin_kind_name(e->kind), e->sm,
					 e->compression != FATBIN_COMPRESS_NONE ? " " : "",
					 e->compression != FATBIN_COMPRESS_NONE ?
					 fatbin_compression_name(e->compression) : "");
		/* Decompress only what the log or the dump needs: the plain path stays cheap. */
		int need = is_ptx ? (dump || (log && !counted_ptx)) : (log && !counted);
		if (!need)
			continue;
		void *text;
		size_t len;
		if (fatbin__entry_data(e, &text, &len, err, sizeof(err))) {
			shim_msg("module %u: entry %zu: %s", m->seq, i, err);
			continue;
		}
		if (is_ptx) {
			if (!counted_ptx)
				m->kernels = count_ptx_entries(text, len);
			counted = counted_ptx = 1;
			if (dump) {
				char suffix[64];
				snprintf(suffix, sizeof(suffix), "-%zu-sm_%u", i, e->sm);
				dump_file(m, suffix, text, len);
			}
		} else {
			m->kernels = count_cubin_kernels(text, len);
			counted = 1;
		}
		free(text);
	}
	fatbin__close(fb);
}

void shim_image_inspect(const struct shim_image *img, struct shim_module *m, char *desc,
			size_t desclen, int quick)
{
	int log = shim_log_enabled && !quick;
	const char *dump = quick ? NULL : shim_dump_dir;
	desc[0] = 0;
	size_t size = img->size;
	switch (img->kind) {
	case MODULE_IMAGE_PTX:
		m->has_ptx = 1;
		if (size == SIZE_MAX)
			size = strlen(img->data);
		m->kernels = count_ptx_entries(img->data, size);
		snprintf(desc, desclen, "ptx");
		if (dump)
			dump_file(m, "", img->data, strnlen(img->data, size));
		break;
	case MODULE_IMAGE_CUBIN:
		if (size == SIZE_MAX && module_image_size(img->data, img->kind, &size))
			break;
		m->kernels = count_cubin_kernels(img->data, size);
		snprintf(desc, desclen, "cubin");
		break;
	case MODULE_IMAGE_FATBIN:
	case MODULE_IMAGE_WRAPPER:
		inspect_fatbin(img, m, desc, desclen, log, dump);
		break;
	default:
		snprintf(desc, desclen, "unrecognised image");
		break;
	}
}
