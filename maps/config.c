/* The probe configuration file (see config.h): checked against the limits on libyaml's events
 * (config_scan.c), then loaded with libyaml's document API and walked node by node, with one
 * error line naming the file, line and column of the first problem.
 *
 * Every array of the result grows in one place (push), sized by what is already in it and
 * charged to one budget of entries: a repeated key once appended a second list to an array
 * sized for the first (a heap overflow), and aliases can make a small document name the same
 * long list many times. */
#include "maps/config.h"
#include "common/safe_open.h"
#include "maps/config_internal.h"
#include "ptx-frontend/escape.h"

#include <errno.h>
#include <fcntl.h>
#include "ptx-frontend/kernel_match.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

struct parse {
	yaml_document_t *doc;
	const char *name, *base_dir;
	struct gp_config *cfg;
	char *err;
	size_t errlen;
	size_t entries;   /* strings and records made so far, against GP_CONFIG_MAX_VALUES */
};

static int at(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int at(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gp_config_err(p->err, p->errlen, p->name, &n->start_mark, "%s", msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A key or value quoted in a message: long ones are cut (the message is one line). */
#define SHOW "%.80s"

static yaml_node_t *node(struct parse *p, int id) { return yaml_document_get_node(p->doc, id); }

static int want(struct parse *p, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	static const char *const kinds[] = {"nothing", "a value", "a list", "a mapping"};
	if (n->type == t)
		return 0;
	return at(p, n, "%s must be %s", what, kinds[t]);
}

/* Room for element n of *arr (elements of size bytes, *cap allocated), one entry charged to
 * the budget. Returns 0, -EINVAL (budget spent, message at n) or -ENOMEM. */
static int push(struct parse *p, const yaml_node_t *at_node, void **arr, size_t *cap, size_t n,
		size_t size)
{
	if (++p->entries > GP_CONFIG_MAX_VALUES)
		return at(p, at_node, "more than %u entries once aliases are expanded (the limit for a probe configuration)",
			  GP_CONFIG_MAX_VALUES);
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 4;
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	void *na = realloc(*arr, ncap * size);
	if (!na)
		return -ENOMEM;
	memset((char *)na + *cap * size, 0, (ncap - *cap) * size);
	*arr = na;
	*cap = ncap;
	return 0;
}

static int uint_value(struct parse *p, const yaml_node_t *n, const char *what, unsigned max,
		      unsigned *out)
{
	const char *s = scalar(n);
	char *end;
	if (!s || !*s || *s == '-')
		return at(p, n, "%s must be a whole number", what);
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v > max)
		return at(p, n, "%s must be a whole number from 0 to %u, not '" SHOW "'", what, max, s);
	*out = (unsigned)v;
	return 0;
}

static char *path_value(struct parse *p, const char *s)
{
	if (s[0] == '/' || !p->base_dir)
		return strdup(s);
	size_t n = strlen(p->base_dir) + strlen(s) + 2;
	char *r = malloc(n);
	if (r)
		snprintf(r, n, "%s/%s", p->base_dir, s);
	return r;
}

/* A list of strings (or one string) into a new malloc'd array; *out must be empty (unique keys
 * guarantee it; checked so that no caller can append to an array sized for another list). */
static int strings(struct parse *p, const yaml_node_t *n, const char *what, char ***out, size_t *nout)
{
	if (*out || *nout)
		return at(p, n, "%s given twice", what);
	size_t cap = 0;
	int rc;
	if (n->type == YAML_SCALAR_NODE) {
		if ((rc = push(p, n, (void **)out, &cap, 0, sizeof(char *))))
			return rc;
		if (!((*out)[0] = strdup(scalar(n))))
			return -ENOMEM;
		*nout = 1;
		return 0;
	}
	if (want(p, n, YAML_SEQUENCE_NODE, what))
		return -EINVAL;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(p, *it);
		if (!scalar(e))
			return at(p, e, "each entry of %s must be a value", what);
		if ((rc = push(p, e, (void **)out, &cap, *nout, sizeof(char *))))
			return rc;
		if (!((*out)[*nout] = strdup(scalar(e))))
			return -ENOMEM;
		++*nout;
	}
	return 0;
}

#define FOR_PAIRS(p, n, k, v)                                                                  \
	for (yaml_node_pair_t *_pr = (n)->data.mapping.pairs.start; _pr < (n)->data.mapping.pairs.top; _pr++) \
		for (yaml_node_t *k = node(p, _pr->key), *v = node(p, _pr->value); k; k = NULL)

static int probe_entry(struct parse *p, const yaml_node_t *e, struct gp_config_probe *pr)
{
	if (scalar(e)) {   /* "- counter.bpf.o" */
		if (!*scalar(e))   /* "-" alone: the folder itself, not a file */
			return at(p, e, "a probe needs a path");
		pr->line = (unsigned)e->start_mark.line + 1;
		pr->col = (unsigned)e->start_mark.column + 1;
		return (pr->path = path_value(p, scalar(e))) ? 0 : -ENOMEM;
	}
	if (want(p, e, YAML_MAPPING_NODE, "a probe"))
		return -EINVAL;
	FOR_PAIRS(p, e, k, v) {
		const char *key = scalar(k);
		int rc = 0;
		if (key && !strcmp(key, "path")) {
			if (!scalar(v) || !*scalar(v))
				return at(p, v, "path must be a file name");
			if (pr->path)
				return at(p, k, "path given twice");
			if (!(pr->path = path_value(p, scalar(v))))
				return -ENOMEM;
			pr->line = (unsigned)v->start_mark.line + 1;
			pr->col = (unsigned)v->start_mark.column + 1;
		} else if (key && !strcmp(key, "kernels")) {
			rc = strings(p, v, "kernels", &pr->kernels, &pr->nkernels);
		} else {
			return at(p, k, "unknown key '" SHOW "' in a probe (expected path, kernels)",
				  key ? key : "?");
		}
		if (rc)
			return rc;
	}
	if (!pr->path)
		return at(p, e, "a probe needs a path");
	return 0;
}

static int probes_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_SEQUENCE_NODE, "probes"))
		return -EINVAL;
	if (p->cfg->probes)
		return at(p, n, "probes given twice");
	size_t cap = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(p, *it);
		if (p->cfg->nprobes >= GP_CONFIG_MAX_PROBES)
			return at(p, e, "more than %u probe objects", GP_CONFIG_MAX_PROBES);
		int rc = push(p, e, (void **)&p->cfg->probes, &cap, p->cfg->nprobes,
			      sizeof(*p->cfg->probes));
		if (rc)
			return rc;
		/* counted before it is filled: gp_config__free frees what a failure leaves */
		rc = probe_entry(p, e, &p->cfg->probes[p->cfg->nprobes++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int kernels_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_MAPPING_NODE, "kernels"))
		return -EINVAL;
	int rc = 0;
	FOR_PAIRS(p, n, k, v) {
		const char *key = scalar(k);
		if (key && !strcmp(key, "include"))
			rc = strings(p, v, "include", &p->cfg->include, &p->cfg->ninclude);
		else if (key && !strcmp(key, "exclude"))
			rc = strings(p, v, "exclude", &p->cfg->exclude, &p->cfg->nexclude);
		else
			return at(p, k, "unknown key '" SHOW "' in kernels (expected include, exclude)",
				  key ? key : "?");
		if (rc)
			return rc;
	}
	return 0;
}

static int map_settings(struct parse *p, const yaml_node_t *v, struct gp_config_map *m)
{
	FOR_PAIRS(p, v, k2, v2) {
		const char *key = scalar(k2);
		if (!key || strcmp(key, "placement"))
			return at(p, k2, "unknown key '" SHOW "' for map " SHOW " (expected placement)",
				  key ? key : "?", m->name);
		const char *s = scalar(v2);
		if (s && !strcmp(s, "device"))
			m->placement = GP_MAP_PLACE_DEVICE;
		else if (s && !strcmp(s, "host"))
			m->placement = GP_MAP_PLACE_HOST;
		else
			return at(p, v2, "placement of map " SHOW " must be device or host, not '" SHOW "'",
				  m->name, s ? s : "?");
	}
	return 0;
}

static int maps_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_MAPPING_NODE, "maps"))
		return -EINVAL;
	if (p->cfg->maps)
		return at(p, n, "maps given twice");
	size_t cap = 0;
	FOR_PAIRS(p, n, k, v) {
		if (!scalar(k))
			return at(p, k, "a map name must be a value");
		if (want(p, v, YAML_MAPPING_NODE, "a map's settings"))
			return -EINVAL;
		int rc = push(p, k, (void **)&p->cfg->maps, &cap, p->cfg->nmaps, sizeof(*p->cfg->maps));
		if (rc)
			return rc;
		struct gp_config_map *m = &p->cfg->maps[p->cfg->nmaps++];
		if (!(m->name = strdup(scalar(k))))
			return -ENOMEM;
		if ((rc = map_settings(p, v, m)))
			return rc;
	}
	return 0;
}

static int output_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_MAPPING_NODE, "output"))
		return -EINVAL;
	FOR_PAIRS(p, n, k, v) {
		const char *key = scalar(k);
		int rc;
		if (key && !strcmp(key, "interval")) {
			rc = uint_value(p, v, "output.interval", 86400, &p->cfg->interval_s);
		} else if (key && !strcmp(key, "top")) {
			rc = uint_value(p, v, "output.top", 1000000, &p->cfg->top_n);
		} else if (key && !strcmp(key, "json")) {
			const char *s = scalar(v);
			if (!s || !*s)
				return at(p, v, "output.json must be a file name or -");
			free(p->cfg->json_path);
			rc = (p->cfg->json_path = !strcmp(s, "-") ? strdup(s) : path_value(p, s)) ? 0 : -ENOMEM;
			p->cfg->json_line = (unsigned)v->start_mark.line + 1;
			p->cfg->json_col = (unsigned)v->start_mark.column + 1;
		} else {
			return at(p, k, "unknown key '" SHOW "' in output (expected interval, json, top)",
				  key ? key : "?");
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int limits_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_MAPPING_NODE, "limits"))
		return -EINVAL;
	FOR_PAIRS(p, n, k, v) {
		const char *key = scalar(k);
		int rc;
		if (key && !strcmp(key, "printk_ring_bytes"))
			rc = uint_value(p, v, "limits.printk_ring_bytes", 1u << 30, &p->cfg->printk_ring_bytes);
		else if (key && !strcmp(key, "perthread_slots"))
			rc = uint_value(p, v, "limits.perthread_slots", 1u << 24, &p->cfg->perthread_slots);
		else
			return at(p, k, "unknown key '" SHOW "' in limits (expected printk_ring_bytes, perthread_slots)",
				  key ? key : "?");
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	const yaml_node_t *x = *(const yaml_node_t *const *)a, *y = *(const yaml_node_t *const *)b;
	int c = strcmp(scalar(x), scalar(y));
	if (c)
		return c;
	return x->start_mark.index < y->start_mark.index ? -1 : x->start_mark.index > y->start_mark.index;
}

/* YAML keys are unique in a mapping (YAML 1.2, 3.2.1.1); libyaml does not check. A repeated key
 * is one error at its second appearance, the earliest such in the file, whatever the section:
 * a mapping no section reads is checked too. Sorting keeps this O(n log n) per mapping. */
static int unique_keys(struct parse *p)
{
	const yaml_node_t *worst = NULL, *first_of_worst = NULL;
	const yaml_node_t **keys = NULL;
	size_t cap = 0;
	int rc = 0;
	for (yaml_node_t *n = p->doc->nodes.start; n < p->doc->nodes.top; n++) {
		if (n->type != YAML_MAPPING_NODE)
			continue;
		size_t cnt = 0;
		size_t npairs = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
		if (npairs > cap) {
			const yaml_node_t **nk = realloc(keys, npairs * sizeof(*keys));
			if (!nk) {
				rc = -ENOMEM;
				break;
			}
			keys = nk;
			cap = npairs;
		}
		for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
			const yaml_node_t *k = node(p, pr->key);
			if (scalar(k))
				keys[cnt++] = k;
		}
		if (cnt < 2)   /* nothing to compare (and keys is still NULL for {}) */
			continue;
		qsort(keys, cnt, sizeof(*keys), cmp_key);
		for (size_t i = 1; i < cnt; i++) {
			if (strcmp(scalar(keys[i - 1]), scalar(keys[i])))
				continue;
			/* keys[i] repeats keys[i-1]; the first of the run is where it was first written */
			size_t f = i - 1;
			while (f && !strcmp(scalar(keys[f - 1]), scalar(keys[i])))
				f--;
			if (!worst || keys[i]->start_mark.index < worst->start_mark.index) {
				worst = keys[i];
				first_of_worst = keys[f];
			}
		}
	}
	free(keys);
	if (!rc && worst)
		rc = at(p, worst, "key '" SHOW "' repeated (first at line %zu, column %zu): YAML keys are unique",
			scalar(worst), first_of_worst->start_mark.line + 1,
			first_of_worst->start_mark.column + 1);
	return rc;
}

static int walk(struct parse *p)
{
	yaml_node_t *root = yaml_document_get_root_node(p->doc);
	if (!root)
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return at(p, root, "the configuration must be a mapping (probes:, kernels:, maps:, output:, limits:)");
	int rc = unique_keys(p);
	FOR_PAIRS(p, root, k, v) {
		if (rc)
			break;
		const char *key = scalar(k);
		if (key && !strcmp(key, "probes"))
			rc = probes_section(p, v);
		else if (key && !strcmp(key, "kernels"))
			rc = kernels_section(p, v);
		else if (key && !strcmp(key, "maps"))
			rc = maps_section(p, v);
		else if (key && !strcmp(key, "output"))
			rc = output_section(p, v);
		else if (key && !strcmp(key, "limits"))
			rc = limits_section(p, v);
		else
			rc = at(p, k, "unknown section '" SHOW "' (expected probes, kernels, maps, output, limits)",
				key ? key : "?");
	}
	return rc;
}

int gp_config__parse(const char *text, size_t len, const char *name, const char *base_dir,
		     struct gp_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	if (err && errlen)
		err[0] = 0;
	int rc = gp_config_scan(text, len, name, err, errlen);
	if (rc)
		return rc;
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		/* the scan saw every event: what is left is the composer's (an undefined alias) */
		rc = parser.error == YAML_MEMORY_ERROR ? -ENOMEM :
		     gp_config_err(err, errlen, name, &parser.problem_mark, "%s",
				   parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		if (rc == -ENOMEM && err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		return rc;
	}
	struct parse p = {&doc, name, base_dir, cfg, err, errlen, 0};
	rc = walk(&p);
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc)
		gp_config__free(cfg);
	return rc;
}

/* Who may have written the file st describes (see config.h). */
static int check_stat(const struct stat *st, const char *path, const char *what, char *err,
		      size_t errlen)
{
	int rc = 0;
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s: %s is not a regular file", path, what);
		rc = -EINVAL;
	} else if (st->st_uid != getuid() && st->st_uid != 0) {
		snprintf(err, errlen, "%s: refusing %s owned by uid %u (not you or root)", path, what,
			 (unsigned)st->st_uid);
		rc = -EPERM;
	} else if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s: refusing %s that %s can write (mode %04o); run: chmod go-w %s",
			 path, what, (st->st_mode & S_IWOTH) ? "everyone" : "its group",
			 (unsigned)(st->st_mode & 07777), path);
		rc = -EPERM;
	}
	if (rc)
		gp_escape_line(err, errlen);
	return rc;
}

static int cannot_read(const char *path, const char *what, int e, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: cannot read %s: %s", path, what, strerror(e));
	gp_escape_line(err, errlen);
	return -e;
}

int gp_config__check_file(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st))
		return cannot_read(path, what, errno, err, errlen);
	return check_stat(&st, path, what, err, errlen);
}

/* The file's text, at most GP_CONFIG_MAX_BYTES (a larger file is refused after reading one byte
 * more, not 100 MB). Opened through common/safe_open.h like every file gpuprobe reads (O_CLOEXEC;
 * O_NONBLOCK until it is known to be a regular file: a FIFO in its place must not block the
 * application in open()), and the ownership and mode checks are made on that descriptor: checking
 * the path and then opening it again would read whatever was put there in between. */
static int read_config(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	const char *what = "a probe configuration";
	int fd = gp_open_read(path, 0, NULL, 0);
	if (fd == -EINVAL || fd == -EISDIR) {
		snprintf(err, errlen, "%s: %s is not a regular file", path, what);
		gp_escape_line(err, errlen);
		return -EINVAL;
	}
	if (fd < 0)
		return cannot_read(path, what, -fd, err, errlen);
	struct stat st;
	int rc = fstat(fd, &st) ? cannot_read(path, what, errno, err, errlen)
				: check_stat(&st, path, what, err, errlen);
	void *data = NULL;
	if (!rc && (rc = gp_read_all(fd, GP_CONFIG_MAX_BYTES, &data, len))) {
		if (rc == -EFBIG)
			rc = gp_config_err(err, errlen, path, NULL,
					   "larger than the %u-byte limit for a probe configuration",
					   GP_CONFIG_MAX_BYTES);
		else if (rc == -ENOMEM)
			gp_config_err(err, errlen, path, NULL, "out of memory");
		else
			cannot_read(path, what, -rc, err, errlen);
	}
	close(fd);
	*text = data;
	return rc;
}

int gp_config__load(const char *path, struct gp_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	char *text = NULL;
	size_t len = 0;
	int rc = read_config(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = 0;
	rc = gp_config__parse(text, len, path, slash ? dir : NULL, cfg, err, errlen);
	free(dir);
	free(text);
	return rc;
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

void gp_config__free(struct gp_config *cfg)
{
	for (size_t i = 0; i < cfg->nprobes; i++) {
		free(cfg->probes[i].path);
		free_strings(cfg->probes[i].kernels, cfg->probes[i].nkernels);
	}
	free(cfg->probes);
	free_strings(cfg->include, cfg->ninclude);
	free_strings(cfg->exclude, cfg->nexclude);
	for (size_t i = 0; i < cfg->nmaps; i++)
		free(cfg->maps[i].name);
	free(cfg->maps);
	free(cfg->json_path);
	memset(cfg, 0, sizeof(*cfg));
}

enum gp_map_placement gp_config__placement(const struct gp_config *cfg, const char *map_name)
{
	for (size_t i = 0; cfg && i < cfg->nmaps; i++)
		if (!strcmp(cfg->maps[i].name, map_name))
			return cfg->maps[i].placement;
	return GP_MAP_PLACE_DEVICE;
}

static int any_match(char *const *globs, size_t n, const char *a, const char *b)
{
	for (size_t i = 0; i < n; i++)
		if (gp_kernel_match_dem(globs[i], a, b))   /* ptx-frontend/kernel_match.h: the one rule */
			return 1;
	return 0;
}

int gp_config__kernel_selected(const struct gp_config *cfg, int probe, const char *mangled,
			       const char *demangled)
{
	if (!cfg)
		return 1;
	if (cfg->ninclude && !any_match(cfg->include, cfg->ninclude, mangled, demangled))
		return 0;
	if (any_match(cfg->exclude, cfg->nexclude, mangled, demangled))
		return 0;
	if (probe >= 0 && (size_t)probe < cfg->nprobes && cfg->probes[probe].nkernels)
		return any_match(cfg->probes[probe].kernels, cfg->probes[probe].nkernels, mangled, demangled);
	return 1;
}
