/* libFuzzer target for the PTX parser and printer. For any input the parser accepts:
 *  - printing reproduces the input byte for byte (parsed nodes keep their source text), up to
 *    trailing NULs, which end the text;
 *  - the canonical print (every node from the IR) parses again, and printing that canonically
 *    gives the same text (the canonical form is a fixed point).
 * Rejected inputs must come with a "LINE:COL: message" error. */
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char err[256];
	ir_module *m = ptx_parse((const char *)data, size, err, sizeof(err));
	if (!m) {
		unsigned line, col;
		if (sscanf(err, "%u:%u: ", &line, &col) != 2 || line == 0 || col == 0) {
			fprintf(stderr, "rejected without a LINE:COL error: '%s'\n", err);
			abort();
		}
		return 0;
	}
	size_t len;
	char *out = ptx_print(m, &len);
	while (size && data[size - 1] == 0) /* trailing NULs end the text */
		size--;
	if (len != size || memcmp(out, data, size)) {
		fprintf(stderr, "verbatim print differs from the input\n");
		abort();
	}
	free(out);
	size_t clen;
	char *canon = ptx_print_canonical(m, &clen);
	ir_module_free(m);
	ir_module *m2 = ptx_parse(canon, clen, err, sizeof(err));
	if (!m2) {
		fprintf(stderr, "canonical print does not parse: %s\n---\n%s\n---\n", err, canon);
		abort();
	}
	size_t clen2;
	char *canon2 = ptx_print_canonical(m2, &clen2);
	if (clen2 != clen || memcmp(canon, canon2, clen)) {
		fprintf(stderr, "canonical print is not a fixed point\n---\n%s\n---\n%s\n---\n", canon, canon2);
		abort();
	}
	free(canon2);
	free(canon);
	ir_module_free(m2);
	return 0;
}
