/* The configuration's limits, checked on libyaml's events (see config_internal.h). The document
 * API builds the whole tree before anyone can look at it, and libyaml itself limits neither
 * nesting nor size: 100,000 nested '[' took it 12.8 s. Events let us stop at the first value
 * past a limit. */
#include "maps/config.h"
#include "maps/config_internal.h"
#include "ptx-frontend/escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int gp_config_err(char *err, size_t errlen, const char *name, const yaml_mark_t *m,
		  const char *fmt, ...)
{
	if (!err || !errlen)
		return -EINVAL;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m)
		snprintf(err, errlen, "%s:%zu:%zu: %s", name, m->line + 1, m->column + 1, msg);
	else
		snprintf(err, errlen, "%s: %s", name, msg);
	gp_escape_line(err, errlen);
	return -EINVAL;
}

static int syntax_error(const yaml_parser_t *ps, const char *name, char *err, size_t errlen)
{
	if (ps->error == YAML_MEMORY_ERROR) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	return gp_config_err(err, errlen, name, &ps->problem_mark, "%s",
			     ps->problem ? ps->problem : "malformed YAML");
}

int gp_config_scan(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
	if (len > GP_CONFIG_MAX_BYTES)
		return gp_config_err(err, errlen, name, NULL,
				     "%zu bytes is larger than the %u-byte limit for a probe configuration",
				     len, GP_CONFIG_MAX_BYTES);
	yaml_parser_t ps;
	if (!yaml_parser_initialize(&ps))
		return -ENOMEM;
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	unsigned depth = 0, values = 0, docs = 0;
	int rc = 0, done = 0;
	while (!rc && !done) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&ps, &ev)) {
			rc = syntax_error(&ps, name, err, errlen);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			/* the shim would read the first document and silently drop the rest */
			if (++docs > 1)
				rc = gp_config_err(err, errlen, name, &ev.start_mark,
						   "a second YAML document: a probe configuration is one document");
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > GP_CONFIG_MAX_DEPTH) {
				rc = gp_config_err(err, errlen, name, &ev.start_mark,
						   "nested more than %u levels deep (the limit for a probe configuration)",
						   GP_CONFIG_MAX_DEPTH);
				break;
			}
			/* a collection is a value too */
			__attribute__((fallthrough));
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (!rc && ++values > GP_CONFIG_MAX_VALUES)
				rc = gp_config_err(err, errlen, name, &ev.start_mark,
						   "more than %u values (the limit for a probe configuration)",
						   GP_CONFIG_MAX_VALUES);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ps);
	return rc;
}
