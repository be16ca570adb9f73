/* libFuzzer target for linking PTX units (ptx-frontend/link.h): the input is two units, split at
 * its first NUL byte (or in the middle when it has none). Whatever they hold, ptx_link returns
 * text that our parser reads back, or NULL with a non-empty error; never a crash or a leak. */
#include "ptx-frontend/ir.h"
#include "ptx-frontend/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const unsigned char *nul = memchr(data, 0, size);
	size_t cut = nul ? (size_t)(nul - data) : size / 2;
	char *a = malloc(cut + 1), *b = malloc(size - cut + 1);
	if (!a || !b)
		abort();
	memcpy(a, data, cut);
	a[cut] = 0;
	size_t bl = nul ? size - cut - 1 : size - cut;
	memcpy(b, data + (size - bl), bl);
	b[bl] = 0;
	const char *texts[2] = {a, b};
	size_t lens[2] = {cut, bl}, len = 0;
	char err[256] = "";
	char *out = ptx_link(texts, lens, 2, &len, err, sizeof(err));
	if (!out && !err[0]) {
		fprintf(stderr, "ptx_link failed without a message\n");
		abort();
	}
	if (out) {
		ir_module *m = ptx_parse(out, len, err, sizeof(err));
		if (!m) {
			fprintf(stderr, "the linked text does not parse: %s\n---\n%s\n---\n", err, out);
			abort();
		}
		ir_module_free(m);
	}
	free(out);
	free(a);
	free(b);
	return 0;
}
