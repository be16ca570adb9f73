/* One capture record as a line of text or JSON (gpt.h), for `gpuprobe decode` and the decode
 * bench. Integers are written by hand: printf would be most of the cost of a trace of 1e8. */
#include "maps/gpt.h"

#include <stdio.h>
#include <string.h>

static char *put_u64(char *p, uint64_t v)
{
	char t[20];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_hex(char *p, const uint8_t *b, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		*p++ = hx[b[i] >> 4];
		*p++ = hx[b[i] & 15];
	}
	return p;
}

/* Printable ASCII as it is, anything else as \xNN (JSON: \u00NN), up to the first NUL. */
static char *put_chars(char *p, const uint8_t *b, size_t n, int json)
{
	*p++ = '"';
	for (size_t i = 0; i < n && b[i]; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\') {
			*p++ = (char)b[i];
		} else {
			p += sprintf(p, json ? "\\u%04x" : "\\x%02x", b[i]);
		}
	}
	*p++ = '"';
	return p;
}

size_t gp_gpt_format_max(const struct gp_gpt_map_info *mi, uint32_t size)
{
	/* per field: name, '=' or '":', the widest value (6 output bytes per input byte for a
	 * string), separators; the map's name; the record as hex when untyped */
	size_t n = 64 + strlen(mi->name) * 2 + (size_t)size * 2;
	/* A record shorter than its type prints as hex only: its fields (each inside the type's
	 * record_size, which a hostile file may set to 4 GiB) print nothing and cost nothing. */
	if (size < mi->m->record_size)
		return n;
	for (unsigned i = 0; i < mi->m->nfields; i++)
		n += 8 + strlen(mi->fields[i].name) + 24 + (size_t)mi->fields[i].size * 6;
	return n;
}

size_t gp_gpt_format(const struct gp_gpt_map_info *mi, uint32_t ring, const void *rec,
		     uint32_t size, int json, char *out)
{
	char *p = out;
	const uint8_t *b = rec;
	if (json) {
		p = put_str(p, "{\"map\":");
		p = put_chars(p, (const uint8_t *)mi->name, strlen(mi->name), 1);
		p = put_str(p, ",\"ring\":");
		p = put_u64(p, ring);
	} else {
		p = put_str(p, mi->name);
		p = put_str(p, " ring ");
		p = put_u64(p, ring);
		*p++ = ':';
	}
	unsigned nf = mi->m->nfields;
	if (!nf || size < mi->m->record_size) {
		/* untyped, or shorter than its type (a record of another size): its bytes */
		p = put_str(p, json ? ",\"data\":\"" : " ");
		p = put_hex(p, b, size);
		if (json)
			*p++ = '"';
	}
	for (unsigned i = 0; nf && size >= mi->m->record_size && i < nf; i++) {
		const struct gp_gpt_field *f = &mi->fields[i];
		if (json) {
			p = put_str(p, ",\"");
			p = put_str(p, f->name);
			p = put_str(p, "\":");
		} else {
			*p++ = ' ';
			p = put_str(p, f->name);
			*p++ = '=';
		}
		uint64_t v = gp_gpt_field__get(f, b, size);
		switch (f->kind) {
		case GP_GPT_F_UINT:
			p = put_u64(p, v);
			break;
		case GP_GPT_F_INT:
			if ((int64_t)v < 0) {
				*p++ = '-';
				v = 0 - v;
			}
			p = put_u64(p, v);
			break;
		case GP_GPT_F_FLOAT: {
			double d;
			if (f->size == 4) {
				float fl;
				uint32_t w = (uint32_t)v;
				memcpy(&fl, &w, 4);
				d = fl;
			} else {
				memcpy(&d, &v, 8);
			}
			if (d != d || d - d != 0)   /* NaN, inf: not JSON numbers */
				p += sprintf(p, json ? "null" : "%g", d);
			else
				p += sprintf(p, "%.17g", d);
			break;
		}
		case GP_GPT_F_CHARS:
			p = put_chars(p, b + f->offset, f->size, json);
			break;
		default:
			*p++ = '"';
			p = put_hex(p, b + f->offset, f->size);
			*p++ = '"';
		}
	}
	if (json)
		*p++ = '}';
	*p++ = '\n';
	return (size_t)(p - out);
}
