/* Reader of bpf_conformance test files: sections introduced by "-- name" lines.
 *   -- asm      assembly text (ebpf/asm.c)
 *   -- raw      instructions as bytes ("07 00 01 00 ...", 8 per instruction) or as one
 *               little-endian 64-bit hex word per line ("0x5566778800000018")
 *   -- mem      input memory as hex bytes
 *   -- result   expected r0
 *   -- error    expected error text (may be empty)
 *   -- c, -- no register offset: informational, ignored.
 * Lines before the first section ('#' comments) are ignored. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"

#define CONFORMANCE_MAX_FILE (16u << 20)

enum section { S_NONE, S_ASM, S_RAW, S_MEM, S_RESULT, S_ERROR, S_IGNORED };

struct bytebuf {
	uint8_t *p;
	size_t len, cap;
};

static int buf_push(struct bytebuf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;   /* keeps text buffers NUL-terminated */
	return 0;
}

static enum section section_of(const char *name)
{
	if (strcmp(name, "asm") == 0)
		return S_ASM;
	if (strcmp(name, "raw") == 0)
		return S_RAW;
	if (strcmp(name, "mem") == 0)
		return S_MEM;
	if (strcmp(name, "result") == 0)
		return S_RESULT;
	if (strcmp(name, "error") == 0)
		return S_ERROR;
	if (strcmp(name, "c") == 0 || strcmp(name, "no register offset") == 0)
		return S_IGNORED;
	return S_NONE;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Hex bytes separated by blanks ("aa bb 11"), '#' comments allowed. */
static int parse_hex_bytes(const char *line, struct bytebuf *b, int lineno, char *err, size_t errlen)
{
	const char *p = line;
	while (*p && *p != '#') {
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		int hi = hexval((unsigned char)p[0]);
		int lo = hi < 0 ? -1 : hexval((unsigned char)p[1]);
		if (hi < 0 || lo < 0 || (p[2] && !isspace((unsigned char)p[2]) && p[2] != '#')) {
			snprintf(err, errlen, "line %d: expected hex bytes like 'aa bb', got '%.20s'", lineno, p);
			return -EINVAL;
		}
		uint8_t v = (uint8_t)(hi << 4 | lo);
		if (buf_push(b, &v, 1))
			return -ENOMEM;
		p += 2;
	}
	return 0;
}

/* One raw line: either byte pairs or a single "0x" 64-bit little-endian word. */
static int parse_raw_line(const char *line, struct bytebuf *b, int lineno, char *err, size_t errlen)
{
	const char *p = line;
	while (isspace((unsigned char)*p))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 16);
		while (isspace((unsigned char)*end))
			end++;
		if (errno || (*end && *end != '#')) {
			snprintf(err, errlen, "line %d: bad raw instruction word '%.24s'", lineno, p);
			return -EINVAL;
		}
		uint8_t bytes[8];
		for (int i = 0; i < 8; i++)
			bytes[i] = (uint8_t)(v >> (8 * i));
		return buf_push(b, bytes, 8);
	}
	return parse_hex_bytes(line, b, lineno, err, errlen);
}

static char *trimmed_copy(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	char *r = malloc(len + 1);
	if (r) {
		memcpy(r, s, len);
		r[len] = '\0';
	}
	return r;
}

int bpf_conformance_parse(const char *text, struct bpf_conformance_case *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	struct bytebuf asmb = { 0 }, mem = { 0 }, raw = { 0 }, result = { 0 }, error = { 0 };
	enum section sec = S_NONE;
	int rc = 0, have_asm = 0, have_mem = 0, have_raw = 0, have_error = 0;
	const char *p = text;
	for (int lineno = 1; *p; lineno++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[1024];
		if (len >= sizeof line) {
			snprintf(err, errlen, "line %d: line too long", lineno);
			rc = -EINVAL;
			goto fail;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = e ? e + 1 : p + len;   /* before len drops a '\r' */
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';

		if (strncmp(line, "--", 2) == 0) {
			char *name = trimmed_copy(line + 2, len - 2);
			if (!name) {
				rc = -ENOMEM;
				goto fail;
			}
			sec = section_of(name);
			if (sec == S_NONE) {
				snprintf(err, errlen, "line %d: unknown section '-- %s'", lineno, name);
				free(name);
				rc = -EINVAL;
				goto fail;
			}
			free(name);
			have_asm |= sec == S_ASM;
			have_mem |= sec == S_MEM;
			have_raw |= sec == S_RAW;
			have_error |= sec == S_ERROR;
			if (sec == S_RESULT)
				c->has_result = 1;
			continue;
		}
		switch (sec) {
		case S_NONE:
		case S_IGNORED:
			break;
		case S_ASM:
			if (buf_push(&asmb, line, len) || buf_push(&asmb, "\n", 1))
				rc = -ENOMEM;
			break;
		case S_MEM:
			rc = parse_hex_bytes(line, &mem, lineno, err, errlen);
			break;
		case S_RAW:
			rc = parse_raw_line(line, &raw, lineno, err, errlen);
			break;
		case S_RESULT:
		case S_ERROR: {
			struct bytebuf *b = sec == S_RESULT ? &result : &error;
			if (b->len && buf_push(b, "\n", 1))
				rc = -ENOMEM;
			else if (buf_push(b, line, len))
				rc = -ENOMEM;
			break;
		}
		}
		if (rc)
			goto fail;
	}

	if (c->has_result) {
		char *r = trimmed_copy(result.p ? (char *)result.p : "", result.len);
		if (!r) {
			rc = -ENOMEM;
			goto fail;
		}
		char *end;
		errno = 0;
		c->result = strtoull(r, &end, 0);
		int bad = errno || end == r || *end;
		free(r);
		if (bad) {
			snprintf(err, errlen, "-- result: expected one number, got '%.40s'",
				 result.p ? (char *)result.p : "");
			rc = -EINVAL;
			goto fail;
		}
	}
	if (raw.len % 8) {
		snprintf(err, errlen, "-- raw: %zu bytes is not a whole number of 8-byte instructions", raw.len);
		rc = -EINVAL;
		goto fail;
	}
	if (have_asm) {
		c->asm_text = asmb.p ? (char *)asmb.p : strdup("");
		asmb.p = NULL;
	}
	if (have_mem) {
		c->mem = mem.p ? mem.p : calloc(1, 1);
		c->mem_len = mem.len;
		mem.p = NULL;
	}
	if (have_raw) {
		c->raw = raw.p ? raw.p : calloc(1, 1);
		c->raw_len = raw.len;
		raw.p = NULL;
	}
	if (have_error) {
		c->error = trimmed_copy(error.p ? (char *)error.p : "", error.len);
	}
fail:
	free(asmb.p);
	free(mem.p);
	free(raw.p);
	free(result.p);
	free(error.p);
	if (rc) {
		bpf_conformance_free(c);
		for (char *q = err; err && *q; q++)   /* echoed input stays one printable line */
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
	}
	return rc;
}

int bpf_conformance_read(const char *path, struct bpf_conformance_case *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct bytebuf b = { 0 };
	char chunk[4096];
	size_t n;
	int rc = 0;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b.len + n > CONFORMANCE_MAX_FILE) {
			snprintf(err, errlen, "%s: file larger than %u bytes", path, CONFORMANCE_MAX_FILE);
			rc = -EFBIG;
			break;
		}
		if (buf_push(&b, chunk, n)) {
			rc = -ENOMEM;
			break;
		}
	}
	fclose(f);
	if (!rc) {
		if (b.p && memchr(b.p, '\0', b.len)) {
			snprintf(err, errlen, "%s: binary file (contains NUL bytes)", path);
			rc = -EINVAL;
		} else {
			char sub[256];
			rc = bpf_conformance_parse(b.p ? (char *)b.p : "", c, sub, sizeof sub);
			if (rc)
				snprintf(err, errlen, "%s: %s", path, sub);
		}
	}
	free(b.p);
	return rc;
}

void bpf_conformance_free(struct bpf_conformance_case *c)
{
	free(c->asm_text);
	free(c->mem);
	free(c->raw);
	free(c->error);
	memset(c, 0, sizeof *c);
}
