/* Fatbin payload decompression: zstd frames (flag 0x8000) and raw LZ4 blocks (flag 0x2000).
 * The entry header names the uncompressed size; the output must be exactly that long. */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>
#include <lz4.h>
#include <stdlib.h>
#include <zstd.h>

/* A cubin or PTX module larger than this is not real; refusing it keeps a corrupt size field
 * from turning into a huge allocation. */
#define MAX_UNCOMPRESSED ((size_t)1 << 30)
/* LZ4 cannot expand a block by more than 255x (one literal-length byte per 255 output bytes). */
#define LZ4_MAX_RATIO 255

/* Checked before allocating: the frame's own size field must agree with the entry's. */
static int check_zstd(const struct fatbin_entry *e, char *err, size_t errlen)
{
	unsigned long long framed = ZSTD_getFrameContentSize(e->payload, e->payload_size);
	if (framed == ZSTD_CONTENTSIZE_ERROR)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: payload is not a zstd frame", e->offset);
	if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != e->uncompressed_size)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: zstd frame holds 0x%llx bytes, the entry says 0x%zx", e->offset,
				framed, e->uncompressed_size);
	return 0;
}

static int decompress_zstd(const struct fatbin_entry *e, uint8_t *out, char *err, size_t errlen)
{
	size_t n = ZSTD_decompress(out, e->uncompressed_size, e->payload, e->payload_size);
	if (ZSTD_isError(n))
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: zstd: %s", e->offset, ZSTD_getErrorName(n));
	if (n != e->uncompressed_size)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: zstd frame gave 0x%zx bytes, the entry says 0x%zx",
				e->offset, n, e->uncompressed_size);
	return 0;
}

static int decompress_lz4(const struct fatbin_entry *e, uint8_t *out, char *err, size_t errlen)
{
	if (e->payload_size > INT32_MAX || e->uncompressed_size > INT32_MAX)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: LZ4 block too large", e->offset);
	int n = LZ4_decompress_safe((const char *)e->payload, (char *)out, (int)e->payload_size,
				    (int)e->uncompressed_size);
	if (n < 0)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: corrupt LZ4 block (error at input byte %d)",
				e->offset, -n - 1);
	if ((size_t)n != e->uncompressed_size)
		return fb_error(err, errlen, EINVAL, "offset 0x%zx: LZ4 block gave 0x%x bytes, the entry says 0x%zx",
				e->offset, n, e->uncompressed_size);
	return 0;
}

int fb_decompress(const struct fatbin_entry *e, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	size_t usize = e->uncompressed_size;
	if (usize > MAX_UNCOMPRESSED)
		return fb_error(err, errlen, EFBIG, "offset 0x%zx: uncompressed size 0x%zx is too large", e->offset,
				usize);
	if (e->compression == FATBIN_COMPRESS_LZ4 && usize / LZ4_MAX_RATIO > e->payload_size + 16)
		return fb_error(err, errlen, EINVAL,
				"offset 0x%zx: uncompressed size 0x%zx cannot come from a 0x%zx-byte LZ4 block",
				e->offset, usize, e->payload_size);
	if (e->compression == FATBIN_COMPRESS_ZSTD) {
		int rc = check_zstd(e, err, errlen);
		if (rc)
			return rc;
	}
	uint8_t *buf = malloc(usize + 1);
	if (!buf)
		return fb_error(err, errlen, ENOMEM, "offset 0x%zx: out of memory for 0x%zx bytes", e->offset, usize);
	int rc = e->compression == FATBIN_COMPRESS_ZSTD ? decompress_zstd(e, buf, err, errlen)
		: e->compression == FATBIN_COMPRESS_LZ4 ? decompress_lz4(e, buf, err, errlen)
		: fb_error(err, errlen, EINVAL, "offset 0x%zx: unknown compression", e->offset);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = usize;
	return 0;
}
