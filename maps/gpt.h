/* Event capture files (FILE.gpt): ring records moved in bulk from the rings to a file, decoded
 * later by `gpuprobe decode` (issue 18, "Event streams at the speed of the bus").
 *
 * The shim never formats (docs/architecture.md, "Two planes"): under `gpuprobe run --output
 * FILE.gpt` its consumer threads copy whole ready spans of ring bytes (the records as the device
 * wrote them: 8-byte header, payload padded to 8) into the file, and write beside them what a
 * decoder needs: each map's name, layout and record fields (flattened from the probe object's
 * BTF, the BTF blob itself too), the clock offset, and every ring's exact drop count at the end.
 *
 * Layout (little endian, every part 8-byte aligned; version 1):
 *   header  char magic[8] "GPTRACE\0", u32 version, u32 header size (32), u64 realtime ns at
 *           open, u64 0
 *   chunks  u32 type, u32 size (payload bytes after this 16-byte header, a multiple of 8),
 *           u32 map id, u32 ring; then the payload:
 *     MAP    struct gp_gpt_map, the name (name_len bytes, NUL-padded to 8), nfields x
 *            struct gp_gpt_field. Comes before any chunk naming the map id.
 *     BTF    the probe object's raw BTF (map id field: the BTF's index, which MAP's btf names)
 *     CLOCK  struct gp_gpt_clock
 *     SPAN   u64 ring position of the first record, then whole records: u32 len, u32 state
 *            (1 committed, 2 discarded), payload padded to 8. In one file the spans of one
 *            (map, ring) follow each other in ring order.
 *     DROPS  nrings x u64: records each ring of the map lost (device full rings, exact), the
 *            totals at the time of writing (the last DROPS chunk of a map is final)
 *     END    struct gp_gpt_end: the writer finished (its absence: the process died first)
 *     STATS  nrings x struct gp_gpt_ring_stats: what the producers of each ring did besides
 *            writing (lossless waits, giving up, sampled records offered); the last is final
 * The reader trusts nothing: every size, id and record is checked against the file, and a bad
 * file is one error line naming the chunk and its offset, never a crash (fuzz/gpt_fuzz.c). */
#ifndef GPUPROBE_MAPS_GPT_H
#define GPUPROBE_MAPS_GPT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define GP_GPT_MAGIC "GPTRACE"        /* 8 bytes with its NUL */
#define GP_GPT_VERSION 1u
#define GP_GPT_HEADER_SIZE 32u
#define GP_GPT_CHUNK_HDR 16u
#define GP_GPT_MAX_CHUNK (1u << 30)
#define GP_GPT_MAX_MAPS 4096u
#define GP_GPT_MAX_FIELDS 64u
#define GP_GPT_FIELD_NAME 48u
#define GP_GPT_NO_BTF 0xffffffffu

enum gp_gpt_chunk {
	GP_GPT_MAP = 1, GP_GPT_BTF = 2, GP_GPT_CLOCK = 3, GP_GPT_SPAN = 4, GP_GPT_DROPS = 5,
	GP_GPT_END = 6, GP_GPT_STATS = 7,
};

enum gp_gpt_map_flags {
	GP_GPT_LOSSLESS = 1u << 0,   /* producers waited for space instead of dropping */
	GP_GPT_PRINTK = 1u << 1,     /* records are printk records (maps/map_layout.h) */
};

struct gp_gpt_map {
	uint32_t bpf_type, value_size;  /* value_size: the map's (0 for RINGBUF: records vary) */
	uint32_t nrings, ring_bytes;
	uint32_t flags;                 /* enum gp_gpt_map_flags */
	uint32_t sample_every;          /* 1: every event; N: one in N was recorded */
	uint32_t btf_type_id, btf;      /* the record struct in BTF chunk `btf` (GP_GPT_NO_BTF: none) */
	uint32_t record_size;           /* the struct's size (0: no type, records print as bytes) */
	uint16_t name_len, nfields;
};
_Static_assert(sizeof(struct gp_gpt_map) == 40, "gpt map layout");

/* A record's field, flattened from BTF (nested structs become "outer.inner"). */
enum gp_gpt_field_kind {
	GP_GPT_F_UINT = 1, GP_GPT_F_INT = 2, GP_GPT_F_FLOAT = 3, GP_GPT_F_CHARS = 4,
	GP_GPT_F_BYTES = 5,
};
struct gp_gpt_field {
	uint32_t offset, size;          /* bytes into the record */
	uint32_t kind, reserved;
	char name[GP_GPT_FIELD_NAME];   /* NUL-terminated */
};
_Static_assert(sizeof(struct gp_gpt_field) == 64, "gpt field layout");

struct gp_gpt_clock {
	int64_t offset_ns;              /* CLOCK_REALTIME - %globaltimer when probes started */
	uint64_t uncertainty_ns;
	int64_t monotonic_offset_ns;    /* CLOCK_MONOTONIC - %globaltimer */
	uint32_t corrected, reserved;   /* device times already carry the offset */
};

struct gp_gpt_ring_stats {
	uint64_t wait_ns;               /* lossless: ns warps' leaders spent waiting for space */
	uint64_t gave_up_ns;            /* lossless: %globaltimer when the ring turned lossy (a
	                                 * producer waited 2 s: the consumer was gone), else 0 */
	uint64_t offered;               /* sampled: records offered, kept or not (0: not sampled) */
	uint64_t reserved;
};

struct gp_gpt_end {
	uint64_t records;               /* records the writer put into SPAN chunks */
	uint64_t host_lost;             /* records consumed but not written (the file failed) */
	uint64_t bytes;                 /* file size at the end chunk's start */
	uint64_t elapsed_ns;            /* open to end */
};

/* ---- the writer (the shim's consumer threads) ------------------------------------------- */
struct gp_gpt_writer;
/* Create path (O_EXCL is not used: `gpuprobe run --output` names it; mode 0600, no link
 * followed). 0 or -errno with one line in err. */
int gp_gpt_writer__open(const char *path, struct gp_gpt_writer **out, char *err, size_t errlen);
/* One chunk, written whole at an offset reserved atomically: any thread, no lock. 0 or -errno
 * (the first error sticks: later chunks are refused with it). */
int gp_gpt_writer__chunk(struct gp_gpt_writer *w, uint32_t type, uint32_t map, uint32_t ring,
			 const struct iovec *iov, int niov);
int gp_gpt_writer__map(struct gp_gpt_writer *w, uint32_t id, const struct gp_gpt_map *m,
		       const char *name, const struct gp_gpt_field *fields);
int gp_gpt_writer__error(const struct gp_gpt_writer *w);
uint64_t gp_gpt_writer__bytes(const struct gp_gpt_writer *w);
/* Write END (records, host_lost from the caller) and close. NULL is a no-op. */
int gp_gpt_writer__close(struct gp_gpt_writer *w, uint64_t records, uint64_t host_lost);
const char *gp_gpt_writer__path(const struct gp_gpt_writer *w);

/* A consumer thread's buffer: spans are copied in and written as a few large chunks. */
struct gp_gpt_buf {
	uint8_t *p;
	size_t len, cap;
};
/* Append one SPAN chunk (or write it directly when it is large); flushes when full. */
int gp_gpt_buf__span(struct gp_gpt_writer *w, struct gp_gpt_buf *b, uint32_t map, uint32_t ring,
		     uint64_t pos, const void *bytes, size_t len);
int gp_gpt_buf__flush(struct gp_gpt_writer *w, struct gp_gpt_buf *b);
/* SPAN chunks written straight from where the records are (the rings), no copy: one offset
 * reserved for all of them, in the order given. The caller flushes its buffer first (a ring's
 * spans stay in order). 0 or -errno. */
struct gp_gpt_span_ref {
	uint32_t map, ring;
	uint64_t pos;
	const void *bytes;
	size_t len;                     /* a multiple of 8 */
};
int gp_gpt_writer__spans(struct gp_gpt_writer *w, const struct gp_gpt_span_ref *s, size_t n);

/* ---- the reader (`gpuprobe decode`, tests, the fuzzer) ---------------------------------- */
struct gp_gpt;
struct gp_gpt_map_info {
	const struct gp_gpt_map *m;     /* points into the file */
	const char *name;               /* NUL-terminated copy */
	const struct gp_gpt_field *fields;
	const void *btf;                /* the raw BTF the map names, or NULL */
	size_t btf_len;
	const uint64_t *drops;          /* the last DROPS chunk's nrings counts, or NULL */
	uint64_t drops_total;
	const struct gp_gpt_ring_stats *stats;   /* the last STATS chunk's nrings, or NULL */
	uint64_t wait_ns, offered;      /* summed over the rings */
	uint32_t gave_up;               /* rings whose lossless producers gave up */
	uint64_t records;               /* committed records in its spans (counted by open) */
	uint64_t discarded;
};
/* Check the whole file (chunk sizes, map ids, every record of every span). The data must stay
 * valid while the reader is used. 0, or -EBADMSG / -ENOMEM with one line in err naming the
 * chunk's offset. A file without an END chunk opens (what it holds is whole) with truncated set. */
int gp_gpt__open_mem(const void *data, size_t size, struct gp_gpt **out, char *err, size_t errlen);
void gp_gpt__close(struct gp_gpt *g);
size_t gp_gpt__map_count(const struct gp_gpt *g);
const struct gp_gpt_map_info *gp_gpt__map(const struct gp_gpt *g, size_t id);   /* NULL: none */
int gp_gpt__truncated(const struct gp_gpt *g);
const struct gp_gpt_clock *gp_gpt__clock(const struct gp_gpt *g);                /* NULL: none */
const struct gp_gpt_end *gp_gpt__end(const struct gp_gpt *g);                    /* NULL: none */
uint64_t gp_gpt__realtime_ns(const struct gp_gpt *g);

/* The END chunk of the file fd (size bytes) read from its tail, without reading the rest: 0, or
 * -ENOENT when the file does not end with one (the writer died, or is still writing). */
int gp_gpt__peek_end(int fd, uint64_t size, struct gp_gpt_end *end);

/* Every committed record in file order (per ring: ring order); cb returns nonzero to stop.
 * Returns the number of records given to cb (open checked them all: nothing can fail here). */
typedef int (*gp_gpt_record_cb)(void *user, uint32_t map, uint32_t ring, const void *data,
				uint32_t size);
int64_t gp_gpt__for_each(const struct gp_gpt *g, gp_gpt_record_cb cb, void *user);

/* A record as one line (text: "MAP ring R: field=value ...", JSON: {"map":..,"ring":..,
 * fields...}) with its newline, into out, which holds gp_gpt_format_max(mi, size) bytes.
 * Records of an untyped map, or shorter than the type, print their bytes in hex. */
size_t gp_gpt_format_max(const struct gp_gpt_map_info *mi, uint32_t size);
size_t gp_gpt_format(const struct gp_gpt_map_info *mi, uint32_t ring, const void *rec,
		     uint32_t size, int json, char *out);

/* Typed decoding in bulk: every committed record of every typed map as a row of its fields'
 * values (gp_gpt_field__get's bits, nfields u64s a row), handed to cb in batches of up to 1024
 * rows of one (map, ring), in file order. Untyped maps are skipped. cb returns nonzero to stop.
 * Returns the rows given. This is the path a consumer of 1e8 events/s takes (bench/capture). */
typedef int (*gp_gpt_rows_cb)(void *user, uint32_t map, uint32_t ring, const uint64_t *rows,
			      size_t nrows, unsigned nfields);
int64_t gp_gpt__decode_rows(const struct gp_gpt *g, gp_gpt_rows_cb cb, void *user);

/* A field's value as integer bits (UINT/INT sign-extended, FLOAT: the bits); 0 past the record. */
uint64_t gp_gpt_field__get(const struct gp_gpt_field *f, const void *rec, uint32_t size);

#endif
