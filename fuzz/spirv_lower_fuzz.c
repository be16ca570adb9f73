/* libFuzzer target for the SPIR-V lowering (spirv/): the own driver lowers whatever PTX an
 * application loads, so for any input the parser accepts, spirv_lower_module must either give a
 * SPIR-V module (magic number, a header, validated by SPIRV-Tools inside) or refuse with a
 * negative errno and one line of error, never crash, hang or leak. Kernels left out are told
 * through the skipped callback, each with a reason.
 * FUZZ_SPIRV_STRICT=1 also stops on a module the validator rejects (a lowering that made invalid
 * SPIR-V, which the driver reports as an error but is still a bug to fix). */
#include "ptx-frontend/ir.h"
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void skipped(void *arg, const char *kernel, const char *why)
{
	(void)arg;
	if (!kernel || !kernel[0] || !why || !why[0]) {
		fprintf(stderr, "a kernel left out without a name or a reason\n");
		abort();
	}
}

static void noted(void *arg, const char *func, const char *note)
{
	(void)arg;
	if (!func || !note || !note[0]) {
		fprintf(stderr, "a note without a function or text\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size > (16u << 10))   /* the lowering is linear-ish; big inputs only slow the search */
		return 0;
	char err[1024];
	ir_module *m = ptx_parse((const char *)data, size, err, sizeof(err));
	if (!m)
		return 0;
	struct spirv_options o = {.skipped = skipped, .noted = noted};
	uint32_t *words = NULL;
	size_t n = 0;
	err[0] = 0;
	int r = spirv_lower_module(m, &o, &words, &n, err, sizeof(err));
	if (r == 0) {
		if (!words || n < 5 || words[0] != 0x07230203u) {
			fprintf(stderr, "lowered without a SPIR-V module (%zu words)\n", n);
			abort();
		}
	} else {
		if (r > 0 || words || !err[0] || strchr(err, '\n')) {
			fprintf(stderr, "refused without a negative errno and one line: %d '%s'\n", r, err);
			abort();
		}
		const char *strict = getenv("FUZZ_SPIRV_STRICT");
		if (strict && *strict == '1' && strstr(err, "SPIR-V validation failed")) {
			fprintf(stderr, "invalid SPIR-V made: %s\n", err);
			abort();
		}
	}
	free(words);
	ir_module_free(m);
	return 0;
}
