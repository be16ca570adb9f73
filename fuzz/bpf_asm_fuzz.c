/* libFuzzer target for the conformance-file reader, the assembler and the host interpreter:
 * any text read as a bpf_conformance case; what assembles runs on the interpreter with its
 * "-- mem" for a bounded number of steps (faults must be clean errors). Errors must be one line.
 * Seeds: tests/ebpf/fuzz-seeds/bpf_asm/. */
#include "ebpf/asm.h"
#include "ebpf/interp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void one_line(const char *err)
{
	if (strchr(err, '\n'))
		abort();
}

static void quiet(void *user, const char *line)
{
	(void)user;
	(void)line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct bpf_conformance_case c;
	char err[256] = "";
	if (bpf_conformance_parse(text, &c, err, sizeof err)) {
		one_line(err);
		free(text);
		return 0;
	}
	struct bpf_insn *insns = NULL;
	size_t n = 0;
	if (c.asm_text && bpf_asm(c.asm_text, &insns, &n, err, sizeof err) == 0) {
		struct gp_interp_env env = { .max_steps = 4096, .on_print = quiet };
		uint64_t r0;
		gp_interp_run(insns, n, c.mem_len ? (uint64_t)(uintptr_t)c.mem : 0, c.mem_len, &env, &r0, err, sizeof err);
		one_line(err);
	} else if (c.asm_text) {
		one_line(err);
	}
	if (c.raw && c.raw_len >= 8) {
		struct gp_interp_env env = { .max_steps = 4096, .on_print = quiet };
		uint64_t r0;
		struct bpf_insn *raw = malloc(c.raw_len);
		memcpy(raw, c.raw, c.raw_len);
		gp_interp_run(raw, c.raw_len / 8, 0, 0, &env, &r0, err, sizeof err);
		one_line(err);
		free(raw);
	}
	free(insns);
	bpf_conformance_free(&c);
	free(text);
	return 0;
}
