/* Text from files (configuration keys, BPF object and section names, kernel names) made safe to
 * print: every byte outside printable ASCII becomes \xNN, so a hostile file cannot put terminal
 * escape sequences, newlines or invalid UTF-8 into a message line. Shared by every part that
 * prints such text (the shim, the CLI, the object loader, the configuration parser). */
#ifndef GPUPROBE_PTX_ESCAPE_H
#define GPUPROBE_PTX_ESCAPE_H

#include <stddef.h>

/* Escape src[0..srclen) into dst (always NUL-terminated when dstlen > 0; an escape is never cut
 * in half). Returns the number of source bytes consumed. */
size_t gp_escape(char *dst, size_t dstlen, const char *src, size_t srclen);

/* Escape the NUL-terminated string in buf in place, within buflen bytes; what no longer fits
 * is dropped from the end. Allocates nothing (usable on error paths and in signal-free
 * contexts where memory is short). */
void gp_escape_line(char *buf, size_t buflen);

/* 1 when c prints as itself. */
static inline int gp_escape_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

#endif
