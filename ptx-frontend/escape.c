/* Printable message text (see escape.h). */
#include "ptx-frontend/escape.h"

#include <string.h>

static const char hex[] = "0123456789abcdef";

size_t gp_escape(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	if (!dstlen)
		return 0;
	size_t o = 0, i = 0;
	for (; i < srclen; i++) {
		unsigned char c = (unsigned char)src[i];
		size_t need = gp_escape_plain(c) ? 1 : 4;
		if (o + need >= dstlen)
			break;
		if (need == 1) {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	dst[o] = 0;
	return i;
}

void gp_escape_line(char *buf, size_t buflen)
{
	if (!buflen)
		return;
	size_t len = strnlen(buf, buflen - 1);
	buf[len] = 0;
	/* How many source bytes fit once escaped, and the escaped length. */
	size_t keep = 0, out = 0;
	for (; keep < len; keep++) {
		size_t need = gp_escape_plain((unsigned char)buf[keep]) ? 1 : 4;
		if (out + need >= buflen)
			break;
		out += need;
	}
	if (out == keep) {   /* nothing to escape */
		buf[keep] = 0;
		return;
	}
	/* Fill from the end: each source byte lies at or before where its escape goes. */
	buf[out] = 0;
	size_t o = out;
	while (keep--) {
		unsigned char c = (unsigned char)buf[keep];
		if (gp_escape_plain(c)) {
			buf[--o] = (char)c;
		} else {
			buf[--o] = hex[c & 15];
			buf[--o] = hex[c >> 4];
			buf[--o] = 'x';
			buf[--o] = '\\';
		}
	}
}
