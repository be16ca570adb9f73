/* Shared by the fatbin_*.c files only: the fatbin object and the bounded readers they use. */
#ifndef GPUPROBE_FATBIN_INTERNAL_H
#define GPUPROBE_FATBIN_INTERNAL_H

#include "ptx-frontend/fatbin.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct fatbin {
	struct fatbin_entry *entries;
	size_t count, cap;
	size_t containers;   /* how many containers the entries came from */
	void *owned;         /* the file's bytes (fatbin__open_file), released on close */
	size_t owned_len;
	bool owned_mapped;   /* owned is an mmap of the file (else malloc'd) */
};

/* A byte range being read: every access is checked against size (SIZE_MAX: unknown, trusted).
 * offsets in errors are base_offset + the offset inside the range. */
struct fb_range {
	const uint8_t *data;
	size_t size;
	size_t base_offset;
};

static inline uint16_t fb_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t fb_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t fb_le64(const uint8_t *p) { return fb_le32(p) | (uint64_t)fb_le32(p + 4) << 32; }

/* The whole file at path, mapped read-only (or read, where mapping fails); *mapped says which.
 * Release with fb_unload. Errors name the file. */
int fb_load_file(const char *path, void **data, size_t *len, bool *mapped, char *err, size_t errlen);
void fb_unload(void *data, size_t len, bool mapped);

/* Format one error line into err (if any) and return -code (negative errno). */
int fb_error(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Append one entry; -ENOMEM on failure. */
int fb_add_entry(struct fatbin *fb, const struct fatbin_entry *e, char *err, size_t errlen);

/* Read one container at r.data (its header says how long it is; that must fit in r).
 * On success *used is the container's total size. */
int fb_read_container(struct fatbin *fb, struct fb_range r, size_t *used, char *err, size_t errlen);

/* Read every container in r, back to back, allowing zero padding between and after them. */
int fb_read_containers(struct fatbin *fb, struct fb_range r, char *err, size_t errlen);

/* Read a wrapper (magic 0x466243B1) at r.data and the containers it points to. */
int fb_read_wrapper(struct fatbin *fb, struct fb_range r, char *err, size_t errlen);

/* Read every fatbin section (.nv_fatbin, __nv_relfatbin, and what .nvFatBinSegment wrappers
 * point at) of a host ELF file or image. */
int fb_read_elf(struct fatbin *fb, struct fb_range r, char *err, size_t errlen);

/* Static libraries: "!<arch>\n" and every ELF member's fatbins (offsets count from the file). */
bool fb_is_archive(const uint8_t *p, size_t size);
int fb_read_archive(struct fatbin *fb, struct fb_range r, char *err, size_t errlen);

/* Size of an ELF image from its headers (ELF64 little endian only); 0 when not one. */
size_t fb_elf_image_size(const uint8_t *p, size_t size);

/* Decompress one entry's payload into a malloc'd buffer of e->uncompressed_size (+1 for a NUL). */
int fb_decompress(const struct fatbin_entry *e, uint8_t **out, size_t *len, char *err, size_t errlen);

#endif
