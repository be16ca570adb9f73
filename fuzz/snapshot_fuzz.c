/* A map snapshot as `gpuprobe run` reads it from an application's segment (maps/snapshot.h):
 * any bytes are checked (gp_snap_parse: one error or a decode), and whatever decodes prints, as
 * text and as JSON lines, the final report included (maps/output.h). Seeds:
 * tests/planes/fuzz-seeds/snapshot/ (a snapshot of every kind of map, segment_test.c writes it). */
#include "maps/output.h"
#include "maps/snapshot.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_snap s;
	char err[256];
	if (gp_snap_parse(data, size, &s, err, sizeof(err)))
		return 0;
	gp_snap_free(&s);
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	for (int json = 0; json < 2; json++) {
		struct gp_output *o;
		struct gp_output_opts opts = {.out = null, .json = json, .top_n = 3};
		if (gp_output__open(&opts, &o))
			break;
		gp_output__use_snapshot(o, data, size, err, sizeof(err));
		gp_output__print_maps(o);
		gp_output__print_final(o);
		gp_output__close(o);
	}
	fclose(null);
	return 0;
}
