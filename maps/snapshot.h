/* A snapshot of every map of a process's probes, as one self-contained byte string (a "blob"):
 * what the shim's copier writes into its shared-memory segment (maps/segment.h) and what the
 * `gpuprobe` process reads back and formats (maps/output.h). docs/architecture.md, "Two planes".
 *
 * The blob holds, per map, its description (name, BPF type, layout class, key and value sizes,
 * flags, how its BTF says it prints) and its elements at one moment: keys and values (per-CPU
 * maps: each SM's copy; per-thread maps: their copies summed), array elements that are all zero
 * left out; for
 * rings only the count of records lost. Then the kernel names the shim saw (FNV-1a hash ->
 * mangled name, for maps keyed by kernel) and, when measured, the clock the probes' times are on.
 *
 * Layout (little endian, every part 8-byte aligned; version 1):
 *   header   u32 magic 'GPSB', u32 version, u64 total length, u64 time_ms, u32 nmaps,
 *            u32 nnames, u32 has_clock, u32 0
 *   clock    (has_clock) i64 offset, u64 uncertainty, i64 monotonic offset, i64 last offset,
 *            u64 last uncertainty, u32 checks, u32 updates, f64 span_s, u64 resolution,
 *            u32 corrected, u32 nhistory, u32 why length, u32 0, why + NUL (padded),
 *            nhistory x (f64 time_s, i64 offset, u64 uncertainty)
 *   map      u32 name length, u32 bpf_type, kind, key_size, value_size, max_entries, flags,
 *            print_as, u64 print_step, u64 lost, u64 count, u32 copies, u32 0,
 *            name + NUL (padded), count keys (padded), count x copies values (padded)
 *   name     u32 hash, u32 length, name + NUL (padded)
 * A reader trusts nothing in it: gp_snap_parse checks every length and count against the bytes
 * there are, and a blob that fails is one error, never a crash. */
#ifndef GPUPROBE_MAPS_SNAPSHOT_H
#define GPUPROBE_MAPS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct gp_map_set;

/* The clocks probe times are on (docs/architecture.md "One clock"). Host probes read the host's
 * clocks (bpf_ktime_get_ns CLOCK_MONOTONIC, bpf_get_globaltimer CLOCK_REALTIME); device probes read
 * the GPU's %globaltimer, plus the measured offset when corrected is set, so that both sides'
 * times compare. Offsets are host clock minus %globaltimer, +- their uncertainty. The
 * timestamp field of device probes' contexts stays %globaltimer (add offset_ns to compare it).
 *   text: clock: probe times are on the host's clocks (...); CLOCK_REALTIME - %globaltimer =
 *         -5000123 ns +- 2100 at start, -5000098 ns +- 1900 at the last of 4 checks 12.3 s later
 *         (drift +25 ns; offset updated 0 times)
 *   JSON: {"type":"clock","corrected":true,"offset_ns":-5000123,"uncertainty_ns":2100,...} */
struct gp_output_clock {
	int corrected;             /* device helpers add the offsets */
	const char *why;           /* when not corrected: why not */
	int64_t offset_ns;         /* CLOCK_REALTIME - %globaltimer when probes started */
	uint64_t uncertainty_ns;
	int64_t monotonic_offset_ns;    /* CLOCK_MONOTONIC - %globaltimer then */
	int64_t last_offset_ns;    /* CLOCK_REALTIME - %globaltimer at the latest check */
	uint64_t last_uncertainty_ns;
	unsigned checks;           /* measurements, the first included */
	unsigned updates;          /* re-checks that changed the offset the device applies */
	double span_s;             /* seconds from the first check to the latest */
	uint64_t resolution_ns;    /* the step by which %globaltimer advances (0: unknown) */
	/* Each check (the latest ones when there were many), oldest first: JSON "history". */
	const struct gp_output_clock_check {
		double time_s;             /* since the first check */
		int64_t offset_ns;         /* CLOCK_REALTIME - %globaltimer */
		uint64_t uncertainty_ns;
	} *history;
	unsigned nhistory;
};

#define GP_SNAP_MAGIC 0x42535047u   /* "GPSB" */
#define GP_SNAP_VERSION 1u
/* What a reader accepts (a snapshot past these is refused as corrupt). */
#define GP_SNAP_MAX_NAME 4096u
#define GP_SNAP_MAX_KEY 65536u
#define GP_SNAP_MAX_VALUE (1u << 20)
#define GP_SNAP_MAX_MAPS 65536u
#define GP_SNAP_MAX_NAMES (1u << 20)
#define GP_SNAP_MAX_HISTORY 4096u
#define GP_SNAP_MAX_COPIES 65536u

/* One map of a snapshot. keys and values point into the snapshot's memory. */
struct gp_snap_map {
	const char *name;
	uint32_t bpf_type, kind, key_size, value_size, max_entries, flags;
	uint32_t print_as;         /* enum gp_map_print (ebpf/object.h) */
	uint64_t print_step;
	uint64_t lost;             /* rings: records lost because a ring was full */
	size_t count;              /* elements (rings: 0) */
	uint32_t copies;           /* values per element: the SMs' copies of per-CPU maps, else 1 */
	const uint8_t *keys, *values;   /* count x key_size, count x copies x value_size */
};

struct gp_snap_name {
	uint32_t hash;             /* gp_name_hash of the mangled name */
	const char *name;
};

struct gp_snap {
	uint64_t time_ms;          /* when it was taken: ms since the probes started */
	int has_clock;
	struct gp_output_clock clock;
	size_t nmaps;
	struct gp_snap_map *maps;
	size_t nnames;
	struct gp_snap_name *names;
	void *mem;                 /* everything above points into it */
};

/* What a snapshot is made of. */
struct gp_snap_input {
	struct gp_map_set *const *sets;   /* each set's maps in order, then its printk ring */
	size_t nsets;
	const struct gp_snap_name *names;
	size_t nnames;
	const struct gp_output_clock *clock;   /* NULL: none measured */
	uint64_t time_ms;
};

/* Read every map now (gp_map_inst__snapshot: host-mapped memory directly, device memory through
 * the allocator's copies) and encode it. *blob is malloc'd. 0 or -ENOMEM. A map that cannot be
 * read is written without elements. */
int gp_snap_build(const struct gp_snap_input *in, void **blob, size_t *len);
/* Check and decode a blob (copied: the caller's buffer may go). 0, or -EBADMSG with one line in
 * err saying what is wrong, or -ENOMEM. */
int gp_snap_parse(const void *blob, size_t len, struct gp_snap *out, char *err, size_t errlen);
void gp_snap_free(struct gp_snap *s);
/* The mangled name of kernel hash id in s, or NULL. */
const char *gp_snap_kernel_name(const struct gp_snap *s, uint64_t id);

#endif
