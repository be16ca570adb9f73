/* Capturing ring maps into a file at the rate the device makes records (issue 18): consumer
 * threads, each the only consumer of one group of SM rings, move whole ready spans of records
 * (gp_map_inst__ring_drain_span) into a capture file (gpt.h) and never format anything.
 *
 * A thread drains its rings back to back while any has data, and sleeps only when a whole pass
 * found nothing: 20 us, doubling to at most 1 ms. A lossless ring's producer therefore waits for
 * space for at most about a millisecond plus the copy, and a lossy ring loses only what arrives
 * faster than the bus and the file take it. Stopping (gp_capture__stop, after the application's
 * kernels finished) drains until a pass finds nothing, so no record committed before it is
 * lost; nothing waits for the consumer after it. A process that exits without stopping (killed)
 * leaves a file without its END chunk: the reader says so and decodes what is whole. */
#ifndef GPUPROBE_MAPS_CAPTURE_H
#define GPUPROBE_MAPS_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "maps/gpt.h"

/* The ring floor a capture asks of map creation (gp_map_set_opts.ring_floor_total): what a
 * 25 GB/s link carries in 1.3 ms, spread over the SMs (256 KiB per SM on 132 SMs, 2 MiB on 16),
 * so that a ring holds what its SM makes between two drains of a busy consumer. */
#define GP_CAPTURE_RING_FLOOR_TOTAL (32ull << 20)

struct gp_map_set;
struct gp_map_inst;
struct gp_capture;

struct gp_capture_opts {
	unsigned threads;                 /* consumers (0: one per 16 rings, at most 8 and half
	                                   * the CPUs; a 132-SM GPU on 16 CPUs gets 8) */
	const char *const *objects;       /* probe objects whose BTF types the records (may be 0) */
	size_t nobjects;
	unsigned idle_max_us;             /* longest idle sleep (0: 1000) */
};

struct gp_capture_stats {
	uint64_t records;                 /* committed records written */
	uint64_t bytes;                   /* ring bytes moved (headers and padding included) */
	uint64_t host_lost;               /* consumed but not written (the file failed) */
	uint64_t drops;                   /* records the rings lost (device side, exact) */
	unsigned threads, rings;
};

/* Start capturing every ring map of sets[0..n) (not the printk rings: their lines stay with the
 * segment) into path. 0, or -errno with one line in err. Zero ring maps is not an error: the
 * file then holds only its header, the maps' descriptions and END. */
int gp_capture__start(const char *path, struct gp_map_set *const *sets, size_t n,
		      const struct gp_capture_opts *opts, struct gp_capture **out, char *err,
		      size_t errlen);
/* Whether m's records go to the capture (then nobody else may drain m). */
int gp_capture__owns(const struct gp_capture *c, const struct gp_map_inst *m);
/* Drain to the end, write drop counts, clock (may be NULL) and END, close. 0 or the file's
 * first -errno. NULL is a no-op. */
int gp_capture__stop(struct gp_capture *c, const struct gp_gpt_clock *clock,
		     struct gp_capture_stats *st);
const char *gp_capture__path(const struct gp_capture *c);

#endif
