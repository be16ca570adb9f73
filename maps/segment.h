/* The shared-memory segment between the two planes (docs/architecture.md, "Two planes"): the
 * application's process (the shim's copier) writes, the `gpuprobe` process reads. One file per
 * process with probes, "seg.<pid>.<n>", mode 0600, in the folder `gpuprobe run` made for the run
 * inside the user's private runtime directory ($XDG_RUNTIME_DIR/gpuprobe/run.<pid>, a tmpfs where
 * the system has one: the pages are shared, never written to a disk). The writer never waits for
 * the reader and never for the application: it only writes the file.
 *
 * Layout (little endian; version 1):
 *   0       header (GP_SEG_HEADER_SIZE bytes reserved): struct gp_seg_header
 *   ev_off  the event log: ev_cap bytes, a ring of records written at ev_head (a byte count
 *           that only grows); a record never wraps (a pad record fills the end instead)
 *   ...     two snapshot slots (maps/snapshot.h blobs); the header names the one to read
 * Event record: u32 length (all of it, padded to 8), u16 type (0 pad, 1 printk, 2 ring record, 3 line),
 *   u16 name length, u32 ring, u32 payload size, the map's name, the payload, padding.
 * Consistency: a sequence counter (seq) is odd while the header changes; the writer fills the
 * slot the header does not name, then names it. A reader copies the header (seq even), the
 * snapshot or events it names, and the header again: the same seq means a consistent copy. A
 * writer killed at any point leaves the last named snapshot whole.
 * The reader trusts nothing it reads: every offset and size is checked against the file, and
 * a segment that fails a check is one error (gp_seg_read), never a crash. */
#ifndef GPUPROBE_MAPS_SEGMENT_H
#define GPUPROBE_MAPS_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#define GP_SEG_MAGIC 0x47455350u      /* "PSEG" */
#define GP_SEG_VERSION 1u
#define GP_SEG_HEADER_SIZE 4096u
/* The reader's word in the header page (it alone writes there, the writer only reads): where it
 * has read the event log up to, plus one (0: no reader has said), so that the writer never goes
 * round over records not read yet: records that do not fit stay in their rings, whose drops the
 * device counts, and delivered + lost stays exact however slow the reader is. */
#define GP_SEG_READER_TAIL (GP_SEG_HEADER_SIZE - 8u)
#define GP_SEG_EVENT_BYTES (4u << 20) /* the event log */
#define GP_SEG_MAX_SNAPSHOT (1ull << 30)

enum gp_seg_flags {
	GP_SEG_FORKED = 1u << 0,   /* the process is the child of a fork of one with probes */
	GP_SEG_FINAL = 1u << 1,    /* the process wrote its final snapshot (at exit) */
};

/* PRINTK: a printk ring's record (gp_printk_format formats it); EVENT: a ring's record; LINE: a
 * line of text made in the application's process (host probes' bpf_printk), printed as it is */
enum gp_seg_record { GP_SEG_PAD = 0, GP_SEG_PRINTK = 1, GP_SEG_EVENT = 2, GP_SEG_LINE = 3 };

struct gp_seg_header {
	uint32_t magic, version, header_size, flags;
	uint64_t seq;
	int64_t pid, ppid;
	uint64_t ev_off, ev_cap, ev_head, ev_dropped;
	uint64_t snap_off, snap_len, snap_count;   /* the snapshot to read (snap_count: how many so far) */
	uint64_t slot_off[2], slot_cap[2];
};

/* ---- the writer (the shim) --------------------------------------------------------------- */
struct gp_seg_writer;
/* Create this process's segment in dir (which must be the user's own and closed to others).
 * 0 or -errno with one line in err. */
int gp_seg_create(const char *dir, int forked, struct gp_seg_writer **out, char *err, size_t errlen);
/* Queue one record (a printk line or a ring's record) for the next gp_seg_flush. 0, or -ENOSPC
 * when the log holds as much as the reader has not read yet (GP_SEG_READER_TAIL): a ring's record
 * is not queued (the caller leaves it in its ring), a LINE is dropped and counted. */
int gp_seg_event(struct gp_seg_writer *w, enum gp_seg_record type, const char *map,
		 unsigned ring, const void *data, size_t size);
/* Write the queued records, and (blob non-NULL) a snapshot; final marks the last one. */
int gp_seg_flush(struct gp_seg_writer *w, const void *blob, size_t len, int final);
void gp_seg_close(struct gp_seg_writer *w);   /* the file stays, for the reader */
const char *gp_seg_path(const struct gp_seg_writer *w);

/* ---- the reader (`gpuprobe run`) --------------------------------------------------------- */
struct gp_seg_reader;
/* Open entry name of the directory dirfd: a regular file of the user's, mode 0600, not a link.
 * 0 or -errno with one line in err. */
int gp_seg_open(int dirfd, const char *name, struct gp_seg_reader **out, char *err, size_t errlen);
typedef void (*gp_seg_event_cb)(void *user, enum gp_seg_record type, const char *map,
				unsigned ring, const void *data, size_t size);
struct gp_seg_state {
	int64_t pid, ppid;
	uint32_t flags;
	uint64_t snap_count;       /* snapshots the writer has made */
	int new_snapshot;          /* the blob below is new since the last read */
	const void *blob;          /* the latest consistent snapshot read (NULL: none yet) */
	size_t blob_len;
	uint64_t events_lost;      /* records the reader fell too far behind to read */
	uint64_t events_dropped;   /* records the writer could not put in the log (counted there) */
};
/* The writer: n records it took from its rings and could not put in the log (counted, reported
 * by the reader as events_dropped). */
void gp_seg_count_dropped(struct gp_seg_writer *w, uint64_t n);
/* Read what is new: events (to cb, in order) and the latest snapshot. 0; -EAGAIN when no
 * consistent copy could be had this time (the writer was busy: try later); -EBADMSG with one
 * line in err when the segment is corrupt (then the reader stops reading it). */
int gp_seg_read(struct gp_seg_reader *r, gp_seg_event_cb cb, void *user, struct gp_seg_state *st,
		char *err, size_t errlen);
/* Whose segment it is (pid, ppid, flags), reading nothing else. 0, -EAGAIN or -EBADMSG. */
int gp_seg_ident(struct gp_seg_reader *r, struct gp_seg_state *st, char *err, size_t errlen);
void gp_seg_reader_close(struct gp_seg_reader *r);

#endif
