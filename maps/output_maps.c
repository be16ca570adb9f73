/* Printing one map: counts, log2 and linear histograms, kernel- and API-keyed top-N tables and
 * global data, in text (bpftrace's look) or JSON, chosen by the key type the map's BTF declares
 * and, without one, by the map's name (include/gpuprobe/output.h). */
#include "maps/output_internal.h"
#include "gpuprobe/api.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The type the probe declared, when it declared one this output knows. */
static enum gp_show by_type(uint32_t print_as, uint64_t print_step, uint64_t *step)
{
	switch (print_as) {
	case GP_PRINT_KERNEL: return GP_SHOW_KERNEL;
	case GP_PRINT_API: return GP_SHOW_API;
	case GP_PRINT_SCALAR: return GP_SHOW_SCALAR;
	case GP_PRINT_LOG2: return GP_SHOW_LOG2;
	case GP_PRINT_LINEAR:
		if (!print_step)
			return GP_SHOW_NONE;
		*step = print_step;
		return GP_SHOW_LINEAR;
	}
	return GP_SHOW_NONE;
}

enum gp_show gp_output_classify(const char *name, uint32_t kind, uint32_t key_size, uint32_t print_as,
				uint64_t print_step, uint64_t *step)
{
	if (!strcmp(name, ".printk"))
		return GP_SHOW_PRINTK;
	if (kind == GP_MAP_KIND_RING)
		return GP_SHOW_RING;
	if (!strcmp(name, ".bss") || !strcmp(name, ".data"))
		return GP_SHOW_GLOBAL;
	if (name[0] == '.' || name[0] == '_')
		return GP_SHOW_NONE;
	if (print_as == GP_PRINT_TUPLE && print_step) {
		*step = print_step;   /* the members' layout */
		return GP_SHOW_TUPLE;
	}
	bool int_key = key_size == 4 || key_size == 8;
	enum gp_show typed = int_key ? by_type(print_as, print_step, step) : GP_SHOW_NONE;
	if (typed != GP_SHOW_NONE)
		return typed;
	/* no type said: the names that decided before the types existed */
	const char *lh = strstr(name, "lhist_");
	if (lh && int_key) {
		char *end;
		unsigned long long s = strtoull(lh + 6, &end, 10);
		if (s && end != lh + 6) {
			*step = s;
			return GP_SHOW_LINEAR;
		}
	}
	size_t n = strlen(name);
	if (n >= 4 && !strcmp(name + n - 4, "hist") && int_key)
		return GP_SHOW_LOG2;
	if (strstr(name, "kernel") && int_key)
		return GP_SHOW_KERNEL;
	return GP_SHOW_COUNTS;
}

/* ---- values ------------------------------------------------------------------------------ */

struct row {
	const uint8_t *key;
	uint64_t ikey;       /* key as an integer (1/2/4/8 bytes) */
	const uint8_t *value;/* value_size bytes, copies summed (the snapshot did) */
	uint64_t ival;       /* value as an integer when it is 1/2/4/8 bytes, else its first word */
};

static uint64_t as_int(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;
	if (size == 1 || size == 2 || size == 4 || size == 8)
		memcpy(&v, p, size);   /* little endian hosts (x86-64, arm64) */
	else
		memcpy(&v, p, size < 8 ? size : 8);
	return v;
}

static bool int_sized(uint32_t s) { return s == 1 || s == 2 || s == 4 || s == 8; }

/* Rows of a snapshot's map (whose array elements that are all zero were left out already), the
 * SMs' copies of per-CPU values summed into *store. */
static struct row *rows_of(const struct gp_snap_map *m, size_t *nrows, uint8_t **store)
{
	struct row *rows = calloc(m->count ? m->count : 1, sizeof(*rows));
	uint8_t *sums = m->copies > 1 ? calloc(m->count ? m->count : 1, m->value_size) : NULL;
	if (!rows || (m->copies > 1 && !sums)) {
		free(rows);
		free(sums);
		return NULL;
	}
	for (size_t i = 0; i < m->count; i++) {
		rows[i].key = m->keys + i * m->key_size;
		rows[i].ikey = as_int(rows[i].key, m->key_size);
		if (sums) {
			const uint8_t *v = m->values + i * m->copies * m->value_size;
			for (uint32_t c = 0; c < m->copies; c++)
				gp_map_add_words(sums + i * m->value_size, v + (size_t)c * m->value_size,
						 m->value_size);
			rows[i].value = sums + i * m->value_size;
		} else {
			rows[i].value = m->values + i * m->value_size;
		}
		rows[i].ival = as_int(rows[i].value, m->value_size);
	}
	*nrows = m->count;
	*store = sums;
	return rows;
}

static int by_value(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->ival != y->ival)
		return x->ival < y->ival ? -1 : 1;
	return x->ikey < y->ikey ? -1 : x->ikey > y->ikey;
}

static int by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->ikey < y->ikey ? -1 : x->ikey > y->ikey;
}

/* Key text: integer, printable string, or hex bytes. */
static void key_text(char *buf, size_t len, const uint8_t *k, uint32_t size)
{
	if (int_sized(size)) {
		snprintf(buf, len, "%llu", (unsigned long long)as_int(k, size));
		return;
	}
	size_t sl = strnlen((const char *)k, size);
	bool printable = sl > 0 && sl < size;
	for (size_t i = 0; i < sl && printable; i++)
		printable = isprint(k[i]);
	for (size_t i = sl; i < size && printable; i++)
		printable = !k[i];
	if (printable) {
		snprintf(buf, len, "%s", (const char *)k);
		return;
	}
	size_t o = 0;
	for (uint32_t i = 0; i < size && o + 3 < len; i++)
		o += snprintf(buf + o, len - o, "%02x", k[i]);
}

static void value_text(FILE *f, const uint8_t *v, uint32_t size)
{
	if (int_sized(size)) {
		fprintf(f, "%llu", (unsigned long long)as_int(v, size));
		return;
	}
	fputc('(', f);
	for (uint32_t i = 0; i < size; i += 8) {
		uint64_t w = 0;
		memcpy(&w, v + i, size - i < 8 ? size - i : 8);
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)w);
	}
	fputc(')', f);
}

static json_object *value_json(const uint8_t *v, uint32_t size)
{
	if (int_sized(size))
		return json_object_new_uint64(as_int(v, size));
	json_object *a = json_object_new_array();
	for (uint32_t i = 0; i < size; i += 8) {
		uint64_t w = 0;
		memcpy(&w, v + i, size - i < 8 ? size - i : 8);
		json_object_array_add(a, json_object_new_uint64(w));
	}
	return a;
}

static json_object *header(const char *type, const char *name, double time)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "type", json_object_new_string(type));
	json_object_object_add(j, "name", json_object_new_string(name));
	json_object_object_add(j, "time", json_object_new_double(time));
	return j;
}

/* ---- histograms -------------------------------------------------------------------------- */

/* 2^e with bpftrace's suffixes: 512, 1K, 2K, ... 1M ... 16E. */
static void pow2_text(char *buf, size_t len, unsigned e)
{
	static const char suffix[] = " KMGTPE";
	if (e < 10)
		snprintf(buf, len, "%llu", 1ull << e);
	else
		snprintf(buf, len, "%llu%c", 1ull << (e % 10), suffix[e / 10]);
}

struct bucket {
	uint64_t lo, hi;     /* values in [lo, hi] */
	uint64_t count;
	char label[64];
};

#define HIST_BAR 52

static void print_hist(struct gp_output *o, const char *name, struct row *rows, size_t n,
		       enum gp_show kind, uint64_t step, double time)
{
	qsort(rows, n, sizeof(*rows), by_key);
	size_t nb = 0;
	uint64_t kmin = 0, kmax = 0;
	for (size_t i = 0; i < n; i++) {
		if (!rows[i].ival || (kind == GP_SHOW_LOG2 && rows[i].ikey > 64))
			continue;
		if (!nb++)
			kmin = rows[i].ikey;
		kmax = rows[i].ikey;
	}
	if (!nb)
		return;
	if (kmax - kmin > 100000)   /* a sparse linear histogram: keep the table printable */
		kmin = kmax - 100000;
	size_t span = (size_t)(kmax - kmin + 1);
	struct bucket *b = calloc(span, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < n; i++)
		if (rows[i].ikey >= kmin && rows[i].ikey <= kmax)
			b[rows[i].ikey - kmin].count += rows[i].ival;
	uint64_t maxc = 0;
	int lw = 0, cw = 1;
	for (size_t i = 0; i < span; i++) {
		uint64_t k = kmin + i;
		struct bucket *x = &b[i];
		if (kind == GP_SHOW_LOG2) {
			if (k <= 1) {
				x->lo = x->hi = k;
				snprintf(x->label, sizeof(x->label), "[%llu]", (unsigned long long)k);
			} else {
				char lo[24], hi[24];
				pow2_text(lo, sizeof(lo), (unsigned)(k - 1));
				pow2_text(hi, sizeof(hi), (unsigned)k);
				x->lo = 1ull << (k - 1);
				x->hi = k >= 64 ? UINT64_MAX : (1ull << k) - 1;
				snprintf(x->label, sizeof(x->label), "[%s, %s)", lo, hi);
			}
		} else {
			x->lo = k * step;
			x->hi = (k + 1) * step - 1;
			snprintf(x->label, sizeof(x->label), "[%llu, %llu)", (unsigned long long)x->lo,
				 (unsigned long long)(x->hi + 1));
		}
		int l = (int)strlen(x->label);
		lw = l > lw ? l : lw;
		char digits[24];
		int d = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)x->count);
		cw = d > cw ? d : cw;
		maxc = x->count > maxc ? x->count : maxc;
	}
	if (o->o.json) {
		json_object *j = header("hist", name, time), *a = json_object_new_array();
		for (size_t i = 0; i < span; i++) {
			json_object *e = json_object_new_object();
			json_object_object_add(e, "min", json_object_new_uint64(b[i].lo));
			json_object_object_add(e, "max", json_object_new_uint64(b[i].hi));
			json_object_object_add(e, "count", json_object_new_uint64(b[i].count));
			json_object_array_add(a, e);
		}
		json_object_object_add(j, "data", a);
		gp_output_json(o, j);
	} else {
		fprintf(o->o.out, "@%s:\n", name);
		for (size_t i = 0; i < span; i++) {
			int bar = maxc ? (int)((unsigned __int128)b[i].count * HIST_BAR / maxc) : 0;
			fprintf(o->o.out, "%-*s %*llu |", lw, b[i].label, cw, (unsigned long long)b[i].count);
			for (int c = 0; c < HIST_BAR; c++)
				fputc(c < bar ? '@' : ' ', o->o.out);
			fputs("|\n", o->o.out);
		}
	}
	free(b);
}

/* ---- tables ------------------------------------------------------------------------------ */

/* A kernel's demangled name, or kernel#<hash> when it was never seen. */
static void kernel_key(struct gp_output *o, uint64_t id, char *key, size_t len)
{
	const char *kn = o->o.kernel_name ? o->o.kernel_name(o->o.kernel_name_user, id) : NULL;
	if (!kn)
		kn = gp_output_kernel_name(o, id);
	if (!kn)
		kn = gp_snap_kernel_name(&o->snap, id);
	char *dm = kn ? gp_output_demangle(kn) : NULL;
	if (dm)
		snprintf(key, len, "%s", dm);
	else
		snprintf(key, len, "kernel#%llu", (unsigned long long)id);
	free(dm);
}

/* A driver function's name (gpuprobe/api.h), or api#<id>. */
static void api_key(uint64_t id, char *key, size_t len)
{
	const char *n = id <= UINT32_MAX ? gp_api_name((unsigned)id) : NULL;
	if (n)
		snprintf(key, len, "%s", n);
	else
		snprintf(key, len, "api#%llu", (unsigned long long)id);
}

/* A tuple key (GP_PRINT_TUPLE): its members, ", "-separated, kernels and APIs by name. */
static void tuple_key(struct gp_output *o, uint64_t layout, const uint8_t *k, uint32_t key_size,
		      char *key, size_t len)
{
	size_t at = 0, out = 0;
	key[0] = 0;
	for (int i = 0; i < GP_TUPLE_MAX && out + 1 < len; i++) {
		unsigned b = (unsigned)(layout >> (8 * i)) & 0xff;
		if (!(b & GP_TUPLE_PRESENT))
			break;
		size_t size = (size_t)1 << (b & 3);
		at = (at + size - 1) / size * size;
		if (at + size > key_size)
			break;
		uint64_t v = as_int(k + at, (uint32_t)size);
		at += size;
		char part[512];
		if ((b >> 2 & 3) == GP_TUPLE_KERNEL)
			kernel_key(o, v, part, sizeof(part));
		else if ((b >> 2 & 3) == GP_TUPLE_API)
			api_key(v, part, sizeof(part));
		else
			snprintf(part, sizeof(part), "%llu", (unsigned long long)v);
		out += (size_t)snprintf(key + out, len - out, "%s%s", i ? ", " : "", part);
	}
}

static void print_table(struct gp_output *o, const struct gp_snap_map *d, struct row *rows, size_t n,
			enum gp_show kind, uint64_t layout, double time)
{
	bool kernels = kind == GP_SHOW_KERNEL || kind == GP_SHOW_API;   /* named ids: "top" */
	const char *name = d->name;
	qsort(rows, n, sizeof(*rows), by_value);
	size_t first = 0;
	if (o->o.top_n != -1u && n > o->o.top_n)
		first = n - o->o.top_n;   /* the largest top_n, still printed largest last */
	json_object *j = NULL, *data = NULL;
	if (o->o.json) {
		j = header(kernels ? "top" : "map", name, time);
		data = kernels ? json_object_new_array() : json_object_new_object();
	} else if (first) {
		fprintf(o->o.out, "@%s: top %u of %zu\n", name, o->o.top_n, n);
	}
	for (size_t i = first; i < n; i++) {
		char key[1024];
		if (kind == GP_SHOW_KERNEL) {
			kernel_key(o, rows[i].ikey, key, sizeof(key));
		} else if (kind == GP_SHOW_API) {
			api_key(rows[i].ikey, key, sizeof(key));
		} else if (kind == GP_SHOW_TUPLE) {
			tuple_key(o, layout, rows[i].key, d->key_size, key, sizeof(key));
		} else {
			key_text(key, sizeof(key), rows[i].key, d->key_size);
		}
		if (o->o.json) {
			if (kernels) {
				json_object *e = json_object_new_object();
				json_object_object_add(e, "key", json_object_new_string(key));
				json_object_object_add(e, "id", json_object_new_uint64(rows[i].ikey));
				json_object_object_add(e, "value", value_json(rows[i].value, d->value_size));
				json_object_array_add(data, e);
			} else {
				json_object_object_add(data, key, value_json(rows[i].value, d->value_size));
			}
		} else {
			fprintf(o->o.out, "@%s[%s]: ", name, key);
			value_text(o->o.out, rows[i].value, d->value_size);
			fputc('\n', o->o.out);
		}
	}
	if (j) {
		json_object_object_add(j, "data", data);
		gp_output_json(o, j);
	}
}

void gp_output_print_map(struct gp_output *o, const struct gp_snap_map *m, double time)
{
	const char *name = m->name;
	uint64_t step = 0;
	enum gp_show kind = gp_output_classify(name, m->kind, m->key_size, m->print_as, m->print_step,
					       &step);
	if (kind == GP_SHOW_NONE || kind == GP_SHOW_RING || kind == GP_SHOW_PRINTK)
		return;
	size_t n = 0;
	uint8_t *store = NULL;
	struct row *rows = rows_of(m, &n, &store);
	if (rows && n) {
		switch (kind) {
		case GP_SHOW_LOG2:
		case GP_SHOW_LINEAR:
			print_hist(o, name, rows, n, kind, step, time);
			break;
		case GP_SHOW_SCALAR:   /* one value: "@name: value" (a key other than 0 as a count) */
			if (n > 1 || rows[0].ikey) {
				print_table(o, m, rows, n, GP_SHOW_COUNTS, 0, time);
				break;
			}
			/* fall through */
		case GP_SHOW_GLOBAL:
			if (o->o.json) {
				json_object *j = header("map", name, time);
				json_object_object_add(j, "data", value_json(rows[0].value, m->value_size));
				gp_output_json(o, j);
			} else {
				fprintf(o->o.out, "@%s: ", name);
				value_text(o->o.out, rows[0].value, m->value_size);
				fputc('\n', o->o.out);
			}
			break;
		default:
			print_table(o, m, rows, n, kind, step, time);
		}
	}
	free(rows);
	free(store);
}
