/* libFuzzer target for the BPF object loader: any bytes opened as a BPF object; every program
 * that loads goes through the encoding check and, when its maps are small, runs on the host
 * interpreter for a bounded number of steps (which must fault cleanly, never touch memory outside
 * its regions). Seeds: tests/ebpf/fuzz-seeds/bpf_object/ (clang-built objects). */
#include "ebpf/interp.h"
#include "ebpf/object.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_MAPS 16
#define FUZZ_MAX_MAP_BYTES (1u << 20)

static void quiet(void *user, const char *line)
{
	(void)user;
	(void)line;
}

static uint64_t map_bytes(const struct gp_map *m)
{
	return (uint64_t)(m->key_size + m->value_size) * m->max_entries;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_object *obj = NULL;
	char err[512];
	if (gp_object__open_mem(data, size, "fuzz.o", &obj, err, sizeof err)) {
		if (!memchr(err, '\0', sizeof err) || strchr(err, '\n'))
			abort();   /* the error must be one terminated line */
		return 0;
	}
	size_t nmaps = gp_object__map_count(obj);
	struct gp_map defs[FUZZ_MAX_MAPS];
	int runnable = nmaps <= FUZZ_MAX_MAPS;
	for (size_t i = 0; runnable && i < nmaps; i++) {
		defs[i] = *gp_object__map(obj, i);
		if (map_bytes(&defs[i]) > FUZZ_MAX_MAP_BYTES)
			runnable = 0;
	}
	(void)gp_object__license(obj);
	for (size_t i = 0; i < gp_object__program_count(obj); i++) {
		const struct gp_program *p = gp_object__program(obj, i);
		if (!p->name || !p->section || (p->ninsns && !p->insns))
			abort();
		if (gp_interp_check(p->insns, p->ninsns, err, sizeof err) || !runnable)
			continue;
		uint8_t ctx[256] = { 0 };
		struct gp_interp_env env = { .maps = defs, .nmaps = nmaps, .max_steps = 4096, .ctx_size = sizeof ctx,
					   .on_print = quiet };
		uint64_t r0;
		gp_interp_run(p->insns, p->ninsns, (uint64_t)(uintptr_t)ctx, 0, &env, &r0, err, sizeof err);
	}
	gp_object__close(obj);
	return 0;
}
