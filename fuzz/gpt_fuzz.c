/* A capture file as `gpuprobe decode` reads it (maps/gpt.h): any bytes are checked
 * (gp_gpt__open_mem: one error line, or a file whose every chunk and record was checked), and
 * every record of what opens is formatted as text and as JSON into buffers of exactly the size
 * gp_gpt_format_max promises (ASan catches a byte more), and decoded as typed rows. Seeds: tests/capture/fuzz-seeds/gpt/
 * (a capture of a typed ring on two rings, test_capture --sample writes it). */
#include "maps/gpt.h"

#include <stdint.h>
#include <stdlib.h>

static int on_record(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	const struct gp_gpt_map_info *mi = gp_gpt__map(user, map);
	if (!mi)
		abort();   /* open let a span through whose map it never described */
	size_t max = gp_gpt_format_max(mi, size);
	for (int json = 0; json < 2; json++) {
		char *b = malloc(max);
		if (!b)
			return 1;
		if (gp_gpt_format(mi, ring, data, size, json, b) > max)
			abort();
		free(b);
	}
	return 0;
}

static int on_rows(void *user, uint32_t map, uint32_t ring, const uint64_t *rows, size_t n,
		   unsigned nf)
{
	(void)ring;
	const struct gp_gpt_map_info *mi = gp_gpt__map(user, map);
	if (!mi || nf != mi->m->nfields || !n)
		abort();
	volatile uint64_t x = rows[n * nf - 1];   /* the whole batch is readable */
	(void)x;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_gpt *g;
	char err[512];
	if (gp_gpt__open_mem(data, size, &g, err, sizeof(err)))
		return 0;
	gp_gpt__for_each(g, on_record, g);
	gp_gpt__decode_rows(g, on_rows, g);
	for (size_t i = 0; i < gp_gpt__map_count(g); i++) {
		const struct gp_gpt_map_info *mi = gp_gpt__map(g, i);
		if (mi && mi->drops)
			for (uint32_t r = 0; r < mi->m->nrings; r++)
				(void)__atomic_load_n(&mi->drops[r], __ATOMIC_RELAXED);
	}
	gp_gpt__close(g);
	return 0;
}
