/* Fatbin containers (magic 0xBA55ED50), their entries, and the wrappers (0x466243B1) that point
 * at them. Every read is checked against the range it lies in; a range of unknown size
 * (SIZE_MAX, a pointer the driver API got) is trusted as far as the headers say. */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#define CONTAINER_HEADER_SIZE 16
#define ENTRY_HEADER_MIN      0x40 /* the fields up to the uncompressed size at +0x38 */
#define WRAPPER_SIZE          24   /* u32 magic, u32 version, u64 fatbin, u64 prelinked list */
#define WRAPPER_LIST_MAX      65536
#define FLAG_ENCODED          0x10000ull /* seen on LTO IR entries: payload is not a plain frame */

int fb_error(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

int fb_add_entry(struct fatbin *fb, const struct fatbin_entry *e, char *err, size_t errlen)
{
	if (fb->count == fb->cap) {
		size_t cap = fb->cap ? fb->cap * 2 : 8;
		struct fatbin_entry *n = realloc(fb->entries, cap * sizeof(*n));
		if (!n)
			return fb_error(err, errlen, ENOMEM, "out of memory");
		fb->entries = n;
		fb->cap = cap;
	}
	fb->entries[fb->count++] = *e;
	return 0;
}

/* Bytes left in r from off (r.size SIZE_MAX: unbounded). */
static size_t range_left(struct fb_range r, size_t off)
{
	return r.size == SIZE_MAX ? SIZE_MAX - off : r.size - off;
}

/* Optional text fields inside an entry header; ignored (left NULL) when they do not fit. */
static void read_entry_strings(struct fatbin_entry *e, const uint8_t *h, uint32_t hsize)
{
	uint32_t pair = fb_le32(h + 0x14);
	if (pair && pair <= hsize && hsize - pair >= 8) {
		uint32_t off = fb_le32(h + pair), len = fb_le32(h + pair + 4);
		if (off <= hsize && len <= hsize - off && len) {
			e->options = (const char *)h + off;
			e->options_len = strnlen(e->options, len);
		}
	}
	uint32_t name_off = fb_le32(h + 0x20), name_len = fb_le32(h + 0x24);
	if (name_off && name_off <= hsize && name_len && name_len <= hsize - name_off) {
		e->source_name = (const char *)h + name_off;
		e->source_name_len = strnlen(e->source_name, name_len);
	}
}

/* One entry at off inside a container whose entries end at end. */
static int read_entry(struct fatbin *fb, struct fb_range r, size_t off, size_t end, size_t *next,
		      char *err, size_t errlen)
{
	size_t at = r.base_offset + off;
	size_t left = end - off;
	if (left < ENTRY_HEADER_MIN)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: entry header truncated (0x%x bytes needed, 0x%zx left in the container)",
				at, ENTRY_HEADER_MIN, left);
	const uint8_t *h = r.data + off;
	uint32_t hsize = fb_le32(h + 0x04);
	uint64_t psize = fb_le64(h + 0x08);
	uint32_t csize = fb_le32(h + 0x10);
	uint64_t flags = fb_le64(h + 0x28);
	uint64_t usize = fb_le64(h + 0x38);
	if (hsize < ENTRY_HEADER_MIN)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: entry header size 0x%x is too small (at least 0x%x)", at, hsize,
				ENTRY_HEADER_MIN);
	if (hsize > left)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: entry header size 0x%x runs past the container end (0x%zx left)",
				at, hsize, left);
	if (psize > left - hsize)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: entry payload of 0x%llx bytes runs past the container end (0x%zx left)",
				at, (unsigned long long)psize, left - hsize);

	struct fatbin_entry e = {
		.kind = (enum fatbin_kind)fb_le16(h),
		.sm = fb_le32(h + 0x1c),
		.version_minor = fb_le16(h + 0x18),
		.version_major = fb_le16(h + 0x1a),
		.flags = flags,
		.compression = FATBIN_COMPRESS_NONE,
		.payload = h + hsize,
		.payload_size = (size_t)psize,
		.uncompressed_size = (size_t)psize,
		.offset = at,
	};
	bool zstd = flags & FATBIN_FLAG_ZSTD, lz4 = flags & FATBIN_FLAG_LZ4;
	if (zstd && lz4)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: entry flags 0x%llx ask for both zstd and LZ4 compression", at,
				(unsigned long long)flags);
	if (zstd || lz4) {
		if (csize == 0 || csize > psize)
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: compressed size 0x%x does not fit the payload of 0x%llx bytes",
					at, csize, (unsigned long long)psize);
		if (usize == 0 || usize > SIZE_MAX / 2)
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: bad uncompressed size 0x%llx for a compressed entry", at,
					(unsigned long long)usize);
		e.compression = zstd ? FATBIN_COMPRESS_ZSTD : FATBIN_COMPRESS_LZ4;
		e.payload_size = csize;
		e.uncompressed_size = (size_t)usize;
	}
	read_entry_strings(&e, h, hsize);
	*next = off + hsize + (size_t)psize;
	return fb_add_entry(fb, &e, err, errlen);
}

int fb_read_container(struct fatbin *fb, struct fb_range r, size_t *used, char *err, size_t errlen)
{
	size_t at = r.base_offset;
	if (r.size < CONTAINER_HEADER_SIZE)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: fatbin header truncated (%d bytes needed, %zu available)", at,
				CONTAINER_HEADER_SIZE, r.size);
	uint32_t magic = fb_le32(r.data);
	uint16_t version = fb_le16(r.data + 4), hsize = fb_le16(r.data + 6);
	uint64_t body = fb_le64(r.data + 8);
	if (magic != FATBIN_CONTAINER_MAGIC)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: bad fatbin magic 0x%08x (expected 0x%08x)", at, magic,
				FATBIN_CONTAINER_MAGIC);
	if (version != 1)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: unsupported fatbin version %u (expected 1)",
				at + 4, version);
	if (hsize < CONTAINER_HEADER_SIZE || hsize > r.size)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: bad fatbin header size %u (expected %d)",
				at + 6, hsize, CONTAINER_HEADER_SIZE);
	if (body > range_left(r, hsize))
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: fatbin of 0x%llx bytes runs past the end of the image (0x%zx bytes left)",
				at, (unsigned long long)body, r.size - hsize);
	size_t end = hsize + (size_t)body;
	for (size_t off = hsize; off < end;) {
		int rc = read_entry(fb, r, off, end, &off, err, errlen);
		if (rc)
			return rc;
	}
	fb->containers++;
	*used = end;
	return 0;
}

int fb_read_containers(struct fatbin *fb, struct fb_range r, char *err, size_t errlen)
{
	size_t off = 0;
	while (off < r.size) {
		if (r.data[off] == 0) { /* padding between or after containers */
			off++;
			continue;
		}
		size_t left = r.size - off;
		if (left >= 4 && fb_le32(r.data + off) != FATBIN_CONTAINER_MAGIC)
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: expected a fatbin (magic 0x%08x), found 0x%08x",
					r.base_offset + off, FATBIN_CONTAINER_MAGIC, fb_le32(r.data + off));
		struct fb_range sub = { r.data + off, left, r.base_offset + off };
		size_t used;
		int rc = fb_read_container(fb, sub, &used, err, errlen);
		if (rc)
			return rc;
		off += used;
	}
	return 0;
}

/* Where pointer p lands: inside r when r is sized (else an error), anywhere when it is not. */
static int follow(struct fb_range r, uint64_t p, size_t field, struct fb_range *out, char *err, size_t errlen)
{
	if (r.size == SIZE_MAX) {
		*out = (struct fb_range){ (const uint8_t *)(uintptr_t)p, SIZE_MAX, 0 };
		return 0;
	}
	uintptr_t lo = (uintptr_t)r.data;
	if (p < lo || p - lo >= r.size)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: wrapper pointer 0x%llx lies outside the image (a wrapper is only "
				"readable in the process that holds it)",
				r.base_offset + field, (unsigned long long)p);
	size_t off = (size_t)(p - lo);
	*out = (struct fb_range){ r.data + off, r.size - off, r.base_offset + off };
	return 0;
}

static int read_pointed(struct fatbin *fb, struct fb_range r, uint64_t p, size_t field, char *err, size_t errlen)
{
	struct fb_range c;
	size_t used;
	int rc = follow(r, p, field, &c, err, errlen);
	return rc ? rc : fb_read_container(fb, c, &used, err, errlen);
}

int fb_read_wrapper(struct fatbin *fb, struct fb_range r, char *err, size_t errlen)
{
	size_t at = r.base_offset;
	if (r.size < WRAPPER_SIZE)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: fatbin wrapper truncated (%d bytes needed, %zu available)", at,
				WRAPPER_SIZE, r.size);
	uint32_t version = fb_le32(r.data + 4);
	uint64_t data = fb_le64(r.data + 8), list = fb_le64(r.data + 16);
	if (version != 1 && version != 2)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: unsupported wrapper version %u (expected 1 or 2)",
				at + 4, version);
	if (!data && (version == 1 || !list))
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: wrapper points to no fatbin (NULL)", at + 8);
	if (data) {
		int rc = read_pointed(fb, r, data, 8, err, errlen);
		if (rc)
			return rc;
	}
	if (version == 1 || !list)
		return 0;
	/* Version 2 (-rdc): a NULL-terminated array of prelinked fatbins. */
	struct fb_range arr = { 0 };
	int rc = follow(r, list, 16, &arr, err, errlen);
	if (rc)
		return rc;
	for (size_t i = 0;; i++) {
		if (i >= WRAPPER_LIST_MAX)
			return fb_error(err, errlen, EINVAL, "offset 0x%zx: wrapper list has no NULL terminator "
					"within %d entries", at + 16, WRAPPER_LIST_MAX);
		if (arr.size != SIZE_MAX && arr.size / 8 <= i)
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: wrapper list runs past the end of the image", arr.base_offset);
		uint64_t p = fb_le64(arr.data + i * 8);
		if (!p)
			return 0;
		rc = read_pointed(fb, r, p, arr.base_offset - r.base_offset + i * 8, err, errlen);
		if (rc)
			return rc;
	}
}

int fatbin__open_mem(const void *image, size_t size, struct fatbin **out, char *err, size_t errlen)
{
	if (!out)
		return fb_error(err, errlen, EINVAL, "no place for the result");
	*out = NULL;
	if (!image)
		return fb_error(err, errlen, EINVAL, "no image (NULL)");
	if (size < 4)
		return fb_error(err, errlen, EINVAL, "offset 0x0: image too small (%zu bytes)", size);
	struct fatbin *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return fb_error(err, errlen, ENOMEM, "out of memory");
	const uint8_t *p = image;
	struct fb_range r = { p, size, 0 };
	uint32_t magic = fb_le32(p);
	int rc;
	if (magic == FATBIN_CONTAINER_MAGIC) {
		size_t used;
		rc = size == SIZE_MAX ? fb_read_container(fb, r, &used, err, errlen)
				      : fb_read_containers(fb, r, err, errlen);
	} else if (magic == FATBIN_WRAPPER_MAGIC) {
		rc = fb_read_wrapper(fb, r, err, errlen);
	} else if (size != SIZE_MAX && fb_is_archive(p, size)) {
		rc = fb_read_archive(fb, r, err, errlen);
	} else if (!memcmp(p, "\177ELF", 4)) {
		if (size == SIZE_MAX)
			r.size = fb_elf_image_size(p, SIZE_MAX);
		rc = fb_read_elf(fb, r, err, errlen);
	} else {
		rc = fb_error(err, errlen, EINVAL,
			      "offset 0x0: not a fatbin: magic 0x%08x (expected a fatbin 0x%08x, a wrapper 0x%08x, an ELF file or an archive)",
			      magic, FATBIN_CONTAINER_MAGIC, FATBIN_WRAPPER_MAGIC);
	}
	if (rc) {
		fatbin__close(fb);
		return rc;
	}
	*out = fb;
	return 0;
}

int fatbin__open_file(const char *path, struct fatbin **out, char *err, size_t errlen)
{
	if (!out)
		return fb_error(err, errlen, EINVAL, "no place for the result");
	*out = NULL;
	void *buf;
	size_t n;
	bool mapped;
	int rc = fb_load_file(path, &buf, &n, &mapped, err, errlen);
	if (rc)
		return rc;
	char inner[384];
	rc = fatbin__open_mem(buf, n, out, inner, sizeof(inner));
	if (rc) {
		fb_unload(buf, n, mapped);
		return fb_error(err, errlen, -rc, "%s: %s", path, inner);
	}
	(*out)->owned = buf;
	(*out)->owned_len = n;
	(*out)->owned_mapped = mapped;
	return 0;
}

size_t fatbin__entry_count(const struct fatbin *fb)
{
	return fb ? fb->count : 0;
}

const struct fatbin_entry *fatbin__entry(const struct fatbin *fb, size_t i)
{
	return fb && i < fb->count ? &fb->entries[i] : NULL;
}

static bool ptx_runs_on(const struct fatbin_entry *e, unsigned device_sm)
{
	if (e->flags & FATBIN_FLAG_ARCH_SPECIFIC)
		return e->sm == device_sm;
	if (e->flags & FATBIN_FLAG_FAMILY)
		return e->sm <= device_sm && e->sm / 10 == device_sm / 10;
	return e->sm <= device_sm;
}

const struct fatbin_entry *fatbin__best_ptx(const struct fatbin *fb, unsigned device_sm)
{
	const struct fatbin_entry *best = NULL;
	for (size_t i = 0; fb && i < fb->count; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind != FATBIN_KIND_PTX || !ptx_runs_on(e, device_sm))
			continue;
		/* higher target wins; at equal targets the specific one (it may use more features) */
		if (!best || e->sm > best->sm ||
		    (e->sm == best->sm && (e->flags & (FATBIN_FLAG_ARCH_SPECIFIC | FATBIN_FLAG_FAMILY)) &&
		     !(best->flags & (FATBIN_FLAG_ARCH_SPECIFIC | FATBIN_FLAG_FAMILY))))
			best = e;
	}
	return best;
}

const struct fatbin_entry *fatbin__lowest_portable_ptx(const struct fatbin *fb)
{
	const struct fatbin_entry *best = NULL;
	for (size_t i = 0; fb && i < fb->count; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind != FATBIN_KIND_PTX || (e->flags & (FATBIN_FLAG_ARCH_SPECIFIC | FATBIN_FLAG_FAMILY)))
			continue;
		if (!best || e->sm < best->sm)
			best = e;
	}
	return best;
}

int fatbin__entry_data(const struct fatbin_entry *e, void **out, size_t *len, char *err, size_t errlen)
{
	if (!e || !out || !len)
		return fb_error(err, errlen, EINVAL, "no entry");
	*out = NULL;
	*len = 0;
	if (e->kind == FATBIN_KIND_LTOIR && (e->flags & FLAG_ENCODED))
		return fb_error(err, errlen, ENOTSUP,
				"offset 0x%zx: LTO IR payload is encoded (flags 0x%llx) and cannot be read",
				e->offset, (unsigned long long)e->flags);
	uint8_t *buf;
	size_t n;
	if (e->compression == FATBIN_COMPRESS_NONE) {
		buf = malloc(e->payload_size + 1);
		if (!buf)
			return fb_error(err, errlen, ENOMEM, "offset 0x%zx: out of memory", e->offset);
		memcpy(buf, e->payload, e->payload_size);
		n = e->payload_size;
	} else {
		int rc = fb_decompress(e, &buf, &n, err, errlen);
		if (rc)
			return rc;
	}
	if (e->kind == FATBIN_KIND_PTX)
		while (n && buf[n - 1] == 0)
			n--;
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

void fatbin__close(struct fatbin *fb)
{
	if (!fb)
		return;
	free(fb->entries);
	if (fb->owned)
		fb_unload(fb->owned, fb->owned_len, fb->owned_mapped);
	free(fb);
}

const char *fatbin_kind_name(enum fatbin_kind kind)
{
	switch (kind) {
	case FATBIN_KIND_PTX: return "ptx";
	case FATBIN_KIND_ELF: return "cubin";
	case FATBIN_KIND_LTOIR: return "ltoir";
	}
	return "other";
}

const char *fatbin_compression_name(enum fatbin_compression c)
{
	switch (c) {
	case FATBIN_COMPRESS_NONE: return "none";
	case FATBIN_COMPRESS_ZSTD: return "zstd";
	case FATBIN_COMPRESS_LZ4: return "lz4";
	}
	return "unknown";
}

const char *fatbin_entry_target(const struct fatbin_entry *e, char *buf, size_t buflen)
{
	const char *suffix = e->flags & FATBIN_FLAG_ARCH_SPECIFIC ? "a"
			   : e->flags & FATBIN_FLAG_FAMILY      ? "f" : "";
	snprintf(buf, buflen, "sm_%u%s", e->sm, suffix);
	return buf;
}
