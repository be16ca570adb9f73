/* The segment between the application's process and `gpuprobe run` (segment.h). Both sides use
 * plain pread/pwrite on the file: on the tmpfs of the runtime directory that is a copy to or
 * from shared pages, and no side ever maps memory the other may shrink under it. */
#include "maps/segment.h"
#include "maps/map_layout.h"
#include "common/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_HDR 16u
#define MAX_MAP_NAME 255u

struct gp_seg_writer {
	int fd;
	struct gp_seg_header h;
	unsigned cur;               /* the slot the header names */
	uint64_t file_end;
	uint8_t *q;                 /* queued event records */
	size_t qlen, qcap, qmax;    /* qmax: the longest queued record (a wrap's pad is shorter) */
	uint64_t tail;              /* the reader's tail as last read (GP_SEG_READER_TAIL) */
	char path[4096];
};

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = pwrite(fd, b, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The header, under the sequence counter: odd while it changes. */
static int publish(struct gp_seg_writer *w)
{
	w->h.seq++;
	int rc = pwrite_all(w->fd, &w->h.seq, 8, offsetof(struct gp_seg_header, seq));
	if (!rc)
		rc = pwrite_all(w->fd, &w->h, sizeof(w->h), 0);
	w->h.seq++;
	if (!rc)
		rc = pwrite_all(w->fd, &w->h.seq, 8, offsetof(struct gp_seg_header, seq));
	return rc;
}

int gp_seg_create(const char *dir, int forked, struct gp_seg_writer **out, char *err, size_t errlen)
{
	char why[512] = "";
	int dfd = gp_dir_open(dir, 0, why, sizeof(why));
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, why[0] ? why : strerror(-dfd));
		return dfd;
	}
	struct gp_seg_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		close(dfd);
		return -ENOMEM;
	}
	/* made whole under a temporary name, then linked to its own: a reader never sees a
	 * segment without its header */
	char tmp[64], name[64];
	snprintf(tmp, sizeof(tmp), "tmp.%ld", (long)getpid());
	unlinkat(dfd, tmp, 0);   /* an earlier process of our PID's, gone */
	int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = fd < 0 ? -errno : 0;
	w->fd = fd;
	w->h = (struct gp_seg_header){.magic = GP_SEG_MAGIC, .version = GP_SEG_VERSION,
				      .header_size = sizeof(struct gp_seg_header),
				      .flags = forked ? GP_SEG_FORKED : 0, .pid = getpid(),
				      .ppid = getppid(), .ev_off = GP_SEG_HEADER_SIZE,
				      .ev_cap = GP_SEG_EVENT_BYTES};
	w->file_end = GP_SEG_HEADER_SIZE + GP_SEG_EVENT_BYTES;
	if (!rc)
		rc = ftruncate(fd, (off_t)w->file_end) ? -errno : publish(w);
	snprintf(name, sizeof(name), "seg.%ld.0", (long)getpid());
	for (unsigned n = 0; !rc && n < 1000; n++) {
		snprintf(name, sizeof(name), "seg.%ld.%u", (long)getpid(), n);
		rc = linkat(dfd, tmp, dfd, name, 0) ? -errno : 0;
		if (rc != -EEXIST)
			break;
	}
	if (fd >= 0)
		unlinkat(dfd, tmp, 0);
	snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
	close(dfd);
	if (rc) {
		snprintf(err, errlen, "%s: cannot create it: %s", w->path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

const char *gp_seg_path(const struct gp_seg_writer *w) { return w->path; }

/* Whether len more bytes fit in the log without going round over what the reader has not read:
 * the queue, its wraps' pads (each shorter than the longest record) and this record. Without a
 * reader that says where it is (0 in its word), the log goes round as it always did. */
static int has_room(struct gp_seg_writer *w, size_t len)
{
	size_t pad = len > w->qmax ? len : w->qmax;
	uint64_t need = w->h.ev_head + w->qlen + len + pad;
	if (!w->tail || need - (w->tail - 1) <= w->h.ev_cap)
		return 1;
	/* short as far as we knew: has the reader moved on since? */
	uint64_t t = 0;
	if (pread(w->fd, &t, 8, GP_SEG_READER_TAIL) != 8 || t < w->tail || t - 1 > w->h.ev_head)
		return 0;   /* no word, or one we cannot trust: wait */
	w->tail = t;
	return need - (t - 1) <= w->h.ev_cap;
}

int gp_seg_event(struct gp_seg_writer *w, enum gp_seg_record type, const char *map,
		 unsigned ring, const void *data, size_t size)
{
	size_t nl = strnlen(map, MAX_MAP_NAME);
	size_t len = gp_round_up(REC_HDR + nl + size, 8);
	if (len > w->h.ev_cap / 4) {   /* never fits the log: counted, not written */
		w->h.ev_dropped++;
		return 0;
	}
	if (!has_room(w, len)) {
		if (type == GP_SEG_LINE)
			w->h.ev_dropped++;
		return -ENOSPC;
	}
	if (w->qlen + len > w->qcap) {
		size_t cap = w->qcap ? w->qcap : 65536;
		while (cap < w->qlen + len)
			cap *= 2;
		uint8_t *q = realloc(w->q, cap);
		if (!q) {
			w->h.ev_dropped++;
			return 0;
		}
		w->q = q;
		w->qcap = cap;
	}
	uint8_t *r = w->q + w->qlen;
	memset(r, 0, len);
	uint32_t l32 = (uint32_t)len, ring32 = ring, size32 = (uint32_t)size;
	uint16_t t16 = (uint16_t)type, n16 = (uint16_t)nl;
	memcpy(r, &l32, 4);
	memcpy(r + 4, &t16, 2);
	memcpy(r + 6, &n16, 2);
	memcpy(r + 8, &ring32, 4);
	memcpy(r + 12, &size32, 4);
	memcpy(r + REC_HDR, map, nl);
	if (size)
		memcpy(r + REC_HDR + nl, data, size);
	w->qlen += len;
	if (len > w->qmax)
		w->qmax = len;
	return 0;
}

/* The queued records into the log, in runs that never cross its end. */
static int write_events(struct gp_seg_writer *w)
{
	uint64_t cap = w->h.ev_cap;
	size_t at = 0, run = 0;
	uint64_t run_pos = w->h.ev_head % cap;
	while (at < w->qlen) {
		uint32_t len;
		memcpy(&len, w->q + at, 4);
		uint64_t pos = (w->h.ev_head + (at - run)) % cap;
		if (pos + len > cap) {
			/* flush the run, pad to the end, start again at 0 */
			int rc = at > run ? pwrite_all(w->fd, w->q + run, at - run, w->h.ev_off + run_pos) : 0;
			w->h.ev_head += at - run;
			uint8_t pad[8] = {0};
			uint32_t pl = (uint32_t)(cap - pos);
			memcpy(pad, &pl, 4);
			if (!rc)
				rc = pwrite_all(w->fd, pad, sizeof(pad), w->h.ev_off + pos);
			if (rc)
				return rc;
			w->h.ev_head += pl;
			run = at;
			run_pos = 0;
			continue;
		}
		at += len;
	}
	int rc = at > run ? pwrite_all(w->fd, w->q + run, at - run, w->h.ev_off + run_pos) : 0;
	w->h.ev_head += at - run;
	w->qlen = 0;
	w->qmax = 0;
	return rc;
}

void gp_seg_count_dropped(struct gp_seg_writer *w, uint64_t n) { w->h.ev_dropped += n; }

int gp_seg_flush(struct gp_seg_writer *w, const void *blob, size_t len, int final)
{
	/* has a reader said where it is yet? (from then on has_room rereads it when short) */
	if (!w->tail && pread(w->fd, &w->tail, 8, GP_SEG_READER_TAIL) != 8)
		w->tail = 0;
	int rc = write_events(w);
	if (!rc && blob) {
		unsigned t = w->cur ^ 1;
		if (w->h.snap_count == 0)
			t = 0;
		if (w->h.slot_cap[t] < len) {
			w->h.slot_off[t] = w->file_end;
			w->h.slot_cap[t] = gp_round_up(len + len / 2, 4096);
			w->file_end += w->h.slot_cap[t];
		}
		rc = pwrite_all(w->fd, blob, len, w->h.slot_off[t]);
		if (!rc) {
			w->h.snap_off = w->h.slot_off[t];
			w->h.snap_len = len;
			w->h.snap_count++;
			w->cur = t;
		}
	}
	if (final)
		w->h.flags |= GP_SEG_FINAL;
	int p = publish(w);
	return rc ? rc : p;
}

void gp_seg_close(struct gp_seg_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w->q);
	free(w);
}

/* ---- the reader -------------------------------------------------------------------------- */

struct gp_seg_reader {
	int fd;
	int wfd;                    /* the same file for our word (GP_SEG_READER_TAIL), or -1 */
	uint64_t tail;              /* events read up to here */
	uint64_t snap_count;
	int started;
	void *blob;
	size_t blob_len;
	uint64_t lost;
	struct gp_seg_header last;
	uint8_t *ev;                /* a copy of the log's new bytes */
	char name[64];
};

static void tell_tail(struct gp_seg_reader *r)
{
	uint64_t word = r->tail + 1;
	if (r->wfd >= 0 && pwrite(r->wfd, &word, 8, GP_SEG_READER_TAIL) != 8) {
		close(r->wfd);   /* the writer goes on as without us saying */
		r->wfd = -1;
	}
}

int gp_seg_open(int dirfd, const char *name, struct gp_seg_reader **out, char *err, size_t errlen)
{
	char why[512] = "";
	int fd = gp_openat_read(dirfd, name, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "segment %s: %s", name, why[0] ? why : strerror(-fd));
		return fd;
	}
	struct stat st;
	if (fstat(fd, &st) || (st.st_mode & 077)) {
		snprintf(err, errlen, "segment %s: open to others (mode %04o): not read", name,
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	struct gp_seg_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	snprintf(r->name, sizeof(r->name), "%s", name);
	/* Our word in the header page: the writer does not go round over what we have not read.
	 * Opened apart (the checks above were made read-only) and only if it is the same file. */
	struct stat ws;
	r->wfd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (r->wfd >= 0 && (fstat(r->wfd, &ws) || ws.st_ino != st.st_ino || ws.st_dev != st.st_dev)) {
		close(r->wfd);
		r->wfd = -1;
	}
	tell_tail(r);
	*out = r;
	return 0;
}

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *b = p;
	while (n) {
		ssize_t g = pread(fd, b, n, (off_t)off);
		if (g < 0 && errno == EINTR)
			continue;
		if (g <= 0)
			return -EIO;
		b += g;
		n -= (size_t)g;
		off += (uint64_t)g;
	}
	return 0;
}

static int corrupt(const struct gp_seg_reader *r, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int corrupt(const struct gp_seg_reader *r, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		int n = snprintf(err, errlen, "segment %s is corrupt: ", r->name);
		va_list ap;
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < errlen)
			vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}
#define CORRUPT(...) corrupt(r, err, errlen, __VA_ARGS__)

/* A header with an even sequence number that passes every check against the file's size. */
static int read_header(struct gp_seg_reader *r, struct gp_seg_header *h, char *err, size_t errlen)
{
	for (int tries = 0; tries < 1000; tries++) {
		struct stat st;
		if (fstat(r->fd, &st))
			return CORRUPT("%s", strerror(errno));
		if (st.st_size < (off_t)sizeof(*h))
			return CORRUPT("too short");
		if (pread_all(r->fd, h, sizeof(*h), 0))
			return CORRUPT("unreadable");
		if (h->seq & 1) {
			sched_yield();
			continue;
		}
		uint64_t size = (uint64_t)st.st_size;
		if (h->magic != GP_SEG_MAGIC || h->version != GP_SEG_VERSION ||
		    h->header_size != sizeof(*h))
			return CORRUPT("not a gpuprobe segment of version %u", GP_SEG_VERSION);
		if (h->ev_off != GP_SEG_HEADER_SIZE || h->ev_cap < 4096 || h->ev_cap > (64u << 20) ||
		    h->ev_cap % 8 || h->ev_off + h->ev_cap > size)
			return CORRUPT("event log at %llu of %llu bytes",
				       (unsigned long long)h->ev_off, (unsigned long long)h->ev_cap);
		if (h->snap_count && (h->snap_len > GP_SEG_MAX_SNAPSHOT ||
				      h->snap_off < h->ev_off + h->ev_cap || h->snap_off > size ||
				      h->snap_len > size - h->snap_off))
			return CORRUPT("snapshot at %llu of %llu bytes in a file of %llu",
				       (unsigned long long)h->snap_off, (unsigned long long)h->snap_len,
				       (unsigned long long)size);
		return 0;
	}
	return -EAGAIN;
}

static int same_seq(struct gp_seg_reader *r, uint64_t seq)
{
	uint64_t now;
	return !pread_all(r->fd, &now, 8, offsetof(struct gp_seg_header, seq)) && now == seq;
}

static int read_events(struct gp_seg_reader *r, const struct gp_seg_header *h, gp_seg_event_cb cb,
		       void *user, char *err, size_t errlen)
{
	if (h->ev_head < r->tail)
		return CORRUPT("the event log went back from %llu to %llu",
			       (unsigned long long)r->tail, (unsigned long long)h->ev_head);
	uint64_t n = h->ev_head - r->tail, cap = h->ev_cap;
	if (!n)
		return 0;
	if (n > cap) {   /* the writer went round the log since the last read */
		r->lost++;
		r->tail = h->ev_head;
		tell_tail(r);
		return 0;
	}
	uint8_t *buf = realloc(r->ev, (size_t)n);
	if (!buf)
		return -ENOMEM;
	r->ev = buf;
	uint64_t pos = r->tail % cap, first = n < cap - pos ? n : cap - pos;
	if (pread_all(r->fd, buf, (size_t)first, h->ev_off + pos) ||
	    (n > first && pread_all(r->fd, buf + first, (size_t)(n - first), h->ev_off)))
		return CORRUPT("event log unreadable");
	/* the bytes are good when the writer has not gone round over them meanwhile */
	uint64_t head_now = 0;
	if (pread_all(r->fd, &head_now, 8, offsetof(struct gp_seg_header, ev_head)) ||
	    head_now - r->tail > cap) {
		r->lost++;
		r->tail = head_now > h->ev_head ? head_now : h->ev_head;
		tell_tail(r);
		return 0;
	}
	for (uint64_t k = 0; k < n;) {
		uint32_t len;
		uint16_t type, nl;
		uint32_t ring, size;
		if (n - k < 8)
			return CORRUPT("a record cut short in the event log");
		memcpy(&len, buf + k, 4);
		memcpy(&type, buf + k + 4, 2);
		uint64_t at = (r->tail + k) % cap;
		if (len < 8 || len % 8 || len > n - k || at + len > cap)
			return CORRUPT("a record of %u bytes at %llu of the event log", len,
				       (unsigned long long)at);
		if (type != GP_SEG_PAD) {
			if (len < REC_HDR || (type != GP_SEG_PRINTK && type != GP_SEG_EVENT &&
					      type != GP_SEG_LINE))
				return CORRUPT("a record of type %u", type);
			memcpy(&nl, buf + k + 6, 2);
			memcpy(&ring, buf + k + 8, 4);
			memcpy(&size, buf + k + 12, 4);
			if (nl > MAX_MAP_NAME || (uint64_t)REC_HDR + nl + size > len)
				return CORRUPT("a record's name of %u and payload of %u bytes in %u", nl,
					       size, len);
			char name[MAX_MAP_NAME + 1];
			memcpy(name, buf + k + REC_HDR, nl);
			name[nl] = 0;
			if (cb)
				cb(user, (enum gp_seg_record)type, name, ring, buf + k + REC_HDR + nl, size);
		}
		k += len;
	}
	r->tail = h->ev_head;
	tell_tail(r);
	return 0;
}

int gp_seg_read(struct gp_seg_reader *r, gp_seg_event_cb cb, void *user, struct gp_seg_state *st,
		char *err, size_t errlen)
{
	struct gp_seg_header h;
	int rc = read_header(r, &h, err, errlen);
	if (!rc && r->started && (h.pid != r->last.pid || h.snap_count < r->snap_count))
		rc = CORRUPT("its process or snapshot count changed");
	if (!rc)
		rc = read_events(r, &h, cb, user, err, errlen);
	st->new_snapshot = 0;
	for (int tries = 0; !rc && h.snap_count != r->snap_count && h.snap_len && tries < 3; tries++) {
		void *b = malloc((size_t)h.snap_len);
		if (!b)
			return -ENOMEM;
		struct gp_seg_header h2;
		if (pread_all(r->fd, b, (size_t)h.snap_len, h.snap_off)) {
			free(b);
			return CORRUPT("snapshot unreadable");
		}
		/* whole when the writer did not name another snapshot meanwhile (it writes only
		 * the slot not named) */
		if (same_seq(r, h.seq) ||
		    (!read_header(r, &h2, err, errlen) && h2.snap_count == h.snap_count &&
		     h2.snap_off == h.snap_off && h2.snap_len == h.snap_len)) {
			free(r->blob);
			r->blob = b;
			r->blob_len = (size_t)h.snap_len;
			r->snap_count = h.snap_count;
			st->new_snapshot = 1;
			break;
		}
		free(b);
		rc = read_header(r, &h, err, errlen);
	}
	if (rc < 0 && rc != -EAGAIN)
		return rc;
	if (!rc) {
		r->last = h;
		r->started = 1;
	}
	st->pid = r->last.pid;
	st->ppid = r->last.ppid;
	st->flags = r->last.flags;
	/* final only once its last snapshot is the one held and every event before it was read
	 * (a header read again for the snapshot may name events this call did not read yet) */
	if ((st->flags & GP_SEG_FINAL) &&
	    (r->snap_count != r->last.snap_count || r->tail != r->last.ev_head))
		st->flags &= ~GP_SEG_FINAL;
	st->snap_count = r->last.snap_count;
	st->blob = r->blob;
	st->blob_len = r->blob_len;
	st->events_lost = r->lost;
	st->events_dropped = r->last.ev_dropped;
	return rc;
}

int gp_seg_ident(struct gp_seg_reader *r, struct gp_seg_state *st, char *err, size_t errlen)
{
	struct gp_seg_header h;
	int rc = read_header(r, &h, err, errlen);
	if (rc)
		return rc;
	memset(st, 0, sizeof(*st));
	st->pid = h.pid;
	st->ppid = h.ppid;
	st->flags = h.flags & ~GP_SEG_FINAL;
	return 0;
}

void gp_seg_reader_close(struct gp_seg_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	if (r->wfd >= 0)
		close(r->wfd);
	free(r->blob);
	free(r->ev);
	free(r);
}
