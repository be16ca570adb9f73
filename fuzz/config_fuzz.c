/* libFuzzer target for the probe configuration parser (maps/config.c), which the shim runs inside
 * the application: any bytes parsed as a configuration. A rejection must be one NUL-terminated
 * line of printable ASCII (text from the file escaped); an accepted configuration must be whole
 * (every probe has a path, every list its strings) and answer the shim's queries. The escaping
 * helper is checked on the same bytes. Dictionary: fuzz/config.dict (scripts/fuzz.sh passes it).
 * Seeds: tests/config/fuzz-seeds/config/. */
#include "maps/config.h"
#include "ptx-frontend/escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void one_printable_line(const char *s, size_t cap)
{
	const char *end = memchr(s, '\0', cap);
	if (!end)
		abort();
	for (; s < end; s++)
		if (!gp_escape_plain((unsigned char)*s))
			abort();
}

static void check_escape(const uint8_t *data, size_t size)
{
	char buf[300];
	size_t len = size < 256 ? size : 256;
	size_t buflen = size ? 1 + data[0] % sizeof(buf) : sizeof(buf);
	memcpy(buf, data, len);
	buf[len < buflen ? len : buflen - 1] = 0;
	gp_escape_line(buf, buflen);
	one_printable_line(buf, buflen);
	char out[64];
	size_t used = gp_escape(out, sizeof(out), (const char *)data, size);
	if (used > size)
		abort();
	one_printable_line(out, sizeof(out));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_escape(data, size);
	struct gp_config cfg;
	char err[512];
	if (gp_config__parse((const char *)data, size, "fuzz.yaml", "/base", &cfg, err, sizeof(err))) {
		one_printable_line(err, sizeof(err));
		return 0;
	}
	if (cfg.nprobes > GP_CONFIG_MAX_PROBES)
		abort();
	for (size_t i = 0; i < cfg.nprobes; i++) {
		if (!cfg.probes[i].path || !cfg.probes[i].line || !cfg.probes[i].col)
			abort();
		for (size_t k = 0; k < cfg.probes[i].nkernels; k++)
			if (!cfg.probes[i].kernels[k])
				abort();
		gp_config__kernel_selected(&cfg, (int)i, "_Z6vecAddPKfS0_Pfi", "vecAdd(float const*, float const*, float*, int)");
	}
	for (size_t i = 0; i < cfg.ninclude; i++)
		if (!cfg.include[i])
			abort();
	for (size_t i = 0; i < cfg.nexclude; i++)
		if (!cfg.exclude[i])
			abort();
	for (size_t i = 0; i < cfg.nmaps; i++)
		if (gp_config__placement(&cfg, cfg.maps[i].name) != cfg.maps[i].placement &&
		    !cfg.maps[i].name)
			abort();
	gp_config__kernel_selected(&cfg, -1, "k", NULL);
	gp_config__free(&cfg);
	return 0;
}
