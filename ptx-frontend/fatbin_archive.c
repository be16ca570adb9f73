/* Static libraries ("!<arch>\n" ar archives, e.g. libcudadevrt.a): every ELF member is read as an
 * object file; members without device code are skipped. */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>
#include <stdlib.h>

#define AR_MAGIC      "!<arch>\n"
#define AR_MAGIC_LEN  8
#define AR_HEADER_LEN 60

/* The decimal member size of an ar header (10 characters, space padded); -1 when malformed. */
static long long member_size(const uint8_t *h)
{
	long long v = 0;
	int digits = 0;
	for (int i = 48; i < 58 && h[i] != ' '; i++, digits++) {
		if (h[i] < '0' || h[i] > '9')
			return -1;
		v = v * 10 + (h[i] - '0');
	}
	return digits ? v : -1;
}

bool fb_is_archive(const uint8_t *p, size_t size)
{
	return size >= AR_MAGIC_LEN && !memcmp(p, AR_MAGIC, AR_MAGIC_LEN);
}

int fb_read_archive(struct fatbin *fb, struct fb_range r, char *err, size_t errlen)
{
	if (r.size == SIZE_MAX)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: an archive needs its size", r.base_offset);
	size_t off = AR_MAGIC_LEN;
	bool found = false;
	while (off < r.size) {
		size_t at = r.base_offset + off;
		if (r.size - off < AR_HEADER_LEN)
			return fb_error(err, errlen, EINVAL, "offset 0x%zx: archive member header truncated", at);
		const uint8_t *h = r.data + off;
		long long size = member_size(h);
		if (h[58] != '`' || h[59] != '\n' || size < 0)
			return fb_error(err, errlen, EINVAL, "offset 0x%zx: corrupt archive member header", at);
		off += AR_HEADER_LEN;
		if ((unsigned long long)size > r.size - off)
			return fb_error(err, errlen, EINVAL,
					"offset 0x%zx: archive member of %lld bytes runs past the end of the file", at, size);
		struct fb_range m = { r.data + off, (size_t)size, r.base_offset + off };
		if (m.size >= 4 && !memcmp(m.data, "\177ELF", 4)) {
			size_t before = fb->containers;
			char inner[384];
			int rc = fb_read_elf(fb, m, inner, sizeof(inner));
			if (rc && rc != -ENOENT)
				return fb_error(err, errlen, -rc, "%s", inner);
			found |= fb->containers > before;
		}
		off += (size_t)size + ((size_t)size & 1); /* members start at even offsets */
	}
	if (!found)
		return fb_error(err, errlen, ENOENT, "offset 0x%zx: archive has no member with a fatbin", r.base_offset);
	return 0;
}
