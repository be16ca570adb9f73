/* What a module-load pointer holds, and how long it is when the caller gave no size
 * (cuModuleLoadData and friends take a bare pointer). */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>

#define PTX_SNIFF_BYTES 4096

/* PTX is text: it starts (after blanks) with a comment or a directive, and its first bytes hold
 * no control characters other than whitespace. */
static bool looks_like_ptx(const uint8_t *p, size_t size)
{
	size_t n = size < PTX_SNIFF_BYTES ? size : PTX_SNIFF_BYTES;
	size_t i = 0;
	while (i < n && p[i] && strchr(" \t\r\n\f\v", p[i]))
		i++;
	if (i >= n || (p[i] != '/' && p[i] != '.'))
		return false;
	for (; i < n && p[i]; i++)
		if (p[i] < 0x20 && !strchr("\t\r\n\f\v", p[i]))
			return false;
	return true;
}

enum module_image_kind module_image_classify(const void *image, size_t size)
{
	const uint8_t *p = image;
	if (!p || size < 4)
		return MODULE_IMAGE_UNKNOWN;
	uint32_t magic = fb_le32(p);
	if (magic == FATBIN_CONTAINER_MAGIC)
		return MODULE_IMAGE_FATBIN;
	if (magic == FATBIN_WRAPPER_MAGIC)
		return MODULE_IMAGE_WRAPPER;
	if (!memcmp(p, "\177ELF", 4))
		return size >= 20 ? MODULE_IMAGE_CUBIN : MODULE_IMAGE_UNKNOWN;
	return looks_like_ptx(p, size) ? MODULE_IMAGE_PTX : MODULE_IMAGE_UNKNOWN;
}

int module_image_size(const void *image, enum module_image_kind kind, size_t *size)
{
	const uint8_t *p = image;
	if (!p || !size)
		return -EINVAL;
	switch (kind) {
	case MODULE_IMAGE_PTX:
		*size = strlen((const char *)p) + 1;
		return 0;
	case MODULE_IMAGE_CUBIN: {
		size_t n = fb_elf_image_size(p, SIZE_MAX);
		if (!n)
			return -EINVAL;
		*size = n;
		return 0;
	}
	case MODULE_IMAGE_FATBIN: {
		uint16_t hsize = fb_le16(p + 6);
		uint64_t body = fb_le64(p + 8);
		if (fb_le32(p) != FATBIN_CONTAINER_MAGIC || hsize < 16 || body > SIZE_MAX - hsize)
			return -EINVAL;
		*size = hsize + (size_t)body;
		return 0;
	}
	case MODULE_IMAGE_WRAPPER:
		if (fb_le32(p) != FATBIN_WRAPPER_MAGIC)
			return -EINVAL;
		*size = 24;
		return 0;
	case MODULE_IMAGE_UNKNOWN:
		break;
	}
	return -EINVAL;
}
