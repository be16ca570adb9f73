/* libFuzzer target for gpuprobe report's inputs (cli/trace.h): any bytes as a Perfetto trace, as a
 * Chrome JSON trace and as JSON lines of a capture; whatever reads is built, ordered and written
 * out again in both formats (to /dev/null). Seeds: tests/trace/fuzz-seeds/trace/. */
#include "cli/trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void write_both(struct tr_model *m)
{
	char err[512];
	tr_write_pftrace(m, "/dev/null", err, sizeof(err));
	tr_write_chrome(m, "/dev/null", err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[4096];
	struct tr_model m;
	tr_model_init(&m);
	if (!tr_read_pftrace(&m, data, size, err, sizeof(err)))
		write_both(&m);
	tr_model_free(&m);

	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	tr_model_init(&m);
	if (!tr_read_chrome(&m, text, size, err, sizeof(err)))
		write_both(&m);
	tr_model_free(&m);

	tr_model_init(&m);
	if (!tr_model_add_jsonl(&m, "fuzz", text, size, err, sizeof(err))) {
		tr_model_finish(&m);
		write_both(&m);
	}
	tr_model_free(&m);
	free(text);
	return 0;
}
