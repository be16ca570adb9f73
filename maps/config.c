/* The probe configuration file (see config.h): libyaml's document API, walked node by node, with
 * one error line naming the file, line and column of the first problem. */
#include "maps/config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
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
};

static int at(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int at(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s:%zu:%zu: %s", p->name, n->start_mark.line + 1,
			 n->start_mark.column + 1, msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(struct parse *p, int id) { return yaml_document_get_node(p->doc, id); }

static int want(struct parse *p, const yaml_node_t *n, yaml_node_type_t t, const char *what)
{
	static const char *const kinds[] = {"nothing", "a value", "a list", "a mapping"};
	if (n->type == t)
		return 0;
	return at(p, n, "%s must be %s", what, kinds[t]);
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
		return at(p, n, "%s must be a whole number from 0 to %u, not '%s'", what, max, s);
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

/* A list of strings (or one string) into a malloc'd array. */
static int strings(struct parse *p, const yaml_node_t *n, const char *what, char ***out, size_t *nout)
{
	if (n->type == YAML_SCALAR_NODE) {
		*out = calloc(1, sizeof(char *));
		if (!*out || !((*out)[0] = strdup(scalar(n))))
			return -ENOMEM;
		*nout = 1;
		return 0;
	}
	if (want(p, n, YAML_SEQUENCE_NODE, what))
		return -EINVAL;
	size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	*out = calloc(cnt ? cnt : 1, sizeof(char *));
	if (!*out)
		return -ENOMEM;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(p, *it);
		if (!scalar(e))
			return at(p, e, "each entry of %s must be a value", what);
		if (!((*out)[(*nout)++] = strdup(scalar(e))))
			return -ENOMEM;
	}
	return 0;
}

#define FOR_PAIRS(p, n, k, v)                                                                  \
	for (yaml_node_pair_t *_pr = (n)->data.mapping.pairs.start; _pr < (n)->data.mapping.pairs.top; _pr++) \
		for (yaml_node_t *k = node(p, _pr->key), *v = node(p, _pr->value); k; k = NULL)

static int probes_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_SEQUENCE_NODE, "probes"))
		return -EINVAL;
	size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	p->cfg->probes = calloc(cnt ? cnt : 1, sizeof(*p->cfg->probes));
	if (!p->cfg->probes)
		return -ENOMEM;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(p, *it);
		struct gp_config_probe *pr = &p->cfg->probes[p->cfg->nprobes++];
		if (scalar(e)) {   /* "- counter.bpf.o" */
			if (!(pr->path = path_value(p, scalar(e))))
				return -ENOMEM;
			continue;
		}
		if (want(p, e, YAML_MAPPING_NODE, "a probe"))
			return -EINVAL;
		int rc = 0;
		FOR_PAIRS(p, e, k, v) {
			const char *key = scalar(k);
			if (key && !strcmp(key, "path")) {
				if (!scalar(v))
					return at(p, v, "path must be a value");
				if (!(pr->path = path_value(p, scalar(v))))
					return -ENOMEM;
			} else if (key && !strcmp(key, "kernels")) {
				rc = strings(p, v, "kernels", &pr->kernels, &pr->nkernels);
			} else {
				return at(p, k, "unknown key '%s' in a probe (expected path, kernels)",
					  key ? key : "?");
			}
			if (rc)
				return rc;
		}
		if (!pr->path)
			return at(p, e, "a probe needs a path");
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
			return at(p, k, "unknown key '%s' in kernels (expected include, exclude)", key ? key : "?");
		if (rc)
			return rc;
	}
	return 0;
}

static int maps_section(struct parse *p, const yaml_node_t *n)
{
	if (want(p, n, YAML_MAPPING_NODE, "maps"))
		return -EINVAL;
	size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	p->cfg->maps = calloc(cnt ? cnt : 1, sizeof(*p->cfg->maps));
	if (!p->cfg->maps)
		return -ENOMEM;
	FOR_PAIRS(p, n, k, v) {
		if (!scalar(k))
			return at(p, k, "a map name must be a value");
		if (want(p, v, YAML_MAPPING_NODE, "a map's settings"))
			return -EINVAL;
		struct gp_config_map *m = &p->cfg->maps[p->cfg->nmaps++];
		if (!(m->name = strdup(scalar(k))))
			return -ENOMEM;
		FOR_PAIRS(p, v, k2, v2) {
			const char *key = scalar(k2);
			if (!key || strcmp(key, "placement"))
				return at(p, k2, "unknown key '%s' for map %s (expected placement)",
					  key ? key : "?", m->name);
			const char *s = scalar(v2);
			if (s && !strcmp(s, "device"))
				m->placement = GP_MAP_PLACE_DEVICE;
			else if (s && !strcmp(s, "host"))
				m->placement = GP_MAP_PLACE_HOST;
			else
				return at(p, v2, "placement of map %s must be device or host, not '%s'",
					  m->name, s ? s : "?");
		}
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
		} else {
			return at(p, k, "unknown key '%s' in output (expected interval, json, top)",
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
			return at(p, k, "unknown key '%s' in limits (expected printk_ring_bytes, perthread_slots)",
				  key ? key : "?");
		if (rc)
			return rc;
	}
	return 0;
}

int gp_config__parse(const char *text, size_t len, const char *name, const char *base_dir,
		     struct gp_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%zu:%zu: %s", name, parser.problem_mark.line + 1,
				 parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed YAML");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	struct parse p = {&doc, name, base_dir, cfg, err, errlen};
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		rc = at(&p, root, "the configuration must be a mapping (probes:, kernels:, maps:, output:, limits:)");
	} else if (root) {
		FOR_PAIRS(&p, root, k, v) {
			const char *key = scalar(k);
			if (key && !strcmp(key, "probes"))
				rc = probes_section(&p, v);
			else if (key && !strcmp(key, "kernels"))
				rc = kernels_section(&p, v);
			else if (key && !strcmp(key, "maps"))
				rc = maps_section(&p, v);
			else if (key && !strcmp(key, "output"))
				rc = output_section(&p, v);
			else if (key && !strcmp(key, "limits"))
				rc = limits_section(&p, v);
			else
				rc = at(&p, k, "unknown section '%s' (expected probes, kernels, maps, output, limits)",
					key ? key : "?");
			if (rc)
				break;
		}
	}
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc)
		gp_config__free(cfg);
	return rc;
}

int gp_config__check_file(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st)) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot read %s: %s", path, what, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s is not a regular file", path, what);
		return -EINVAL;
	}
	if (st.st_uid != getuid() && st.st_uid != 0) {
		snprintf(err, errlen, "%s: refusing %s owned by uid %u (not you or root)", path, what,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s: refusing %s that %s can write (mode %04o); run: chmod go-w %s",
			 path, what, (st.st_mode & S_IWOTH) ? "everyone" : "its group",
			 (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

int gp_config__load(const char *path, struct gp_config *cfg, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	int rc = gp_config__check_file(path, "a probe configuration", err, errlen);
	if (rc)
		return rc;
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot read a probe configuration: %s", path, strerror(e));
		return -e;
	}
	char *text = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			char *nt = realloc(text, cap = cap ? cap * 2 : 8192);
			if (!nt) {
				free(text);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			text = nt;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		len += n;
		if (!n)
			break;
	}
	fclose(f);
	char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = 0;
	rc = gp_config__parse(text ? text : "", len, path, slash ? dir : NULL, cfg, err, errlen);
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
		if (!fnmatch(globs[i], a, 0) || (b && !fnmatch(globs[i], b, 0)))
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
