/* Shared by the configuration parser's files (config.c walks the document, config_scan.c holds
 * the limits). */
#ifndef GPUPROBE_MAPS_CONFIG_INTERNAL_H
#define GPUPROBE_MAPS_CONFIG_INTERNAL_H

#include <stddef.h>
#include <yaml.h>

/* One error line into err, "NAME:LINE:COL: message" (or "NAME: message" when m is NULL),
 * escaped: keys and values in it come from the file. Returns -EINVAL. */
int gp_config_err(char *err, size_t errlen, const char *name, const yaml_mark_t *m,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Check text against the limits of config.h with libyaml's event parser, before any document
 * is built: one document, nesting depth, number of values. Syntax errors are reported here too.
 * Stops at the first problem, so a hostile file costs time and memory in proportion to the
 * limits, not to its length. Returns 0 or -EINVAL (-ENOMEM) with one line in err. */
int gp_config_scan(const char *text, size_t len, const char *name, char *err, size_t errlen);

#endif
