/* The capture file's writer (gpt.h): chunks written whole at offsets reserved by one atomic
 * add, so consumer threads never take a lock to write, and a thread's spans land in the file in
 * the order it consumed them. The first MAPPED_FROM bytes go with pwritev; from there on into
 * mapped windows of the file (gpt_mapped.h: pwritev takes turns on the inode lock), unless
 * GPUPROBE_CAPTURE_WRITE=pwritev asks for pwritev throughout (to compare the two). */
#include "maps/gpt.h"
#include "maps/gpt_mapped.h"
#include "common/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (4u << 20)      /* a consumer's buffer: one pwrite per 4 MiB of small spans */
#define DIRECT_BYTES (256u << 10) /* a span this large goes to the file without the copy */
#define MAPPED_FROM (64ull << 20)   /* a small capture never reserves mapped windows */

struct gp_gpt_writer {
	int fd;
	uint64_t off;                 /* next free byte (atomic) */
	int error;                    /* first -errno (atomic) */
	uint64_t t0;
	char *path;
	struct gp_gpt_mapped *mapped; /* NULL: pwritev only */
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int full_pwritev(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		ssize_t k = pwritev(fd, iov, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		off += (uint64_t)k;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

/* The bytes at off, reserved by the caller: into the mapped windows where they take them. */
static int put_at(struct gp_gpt_writer *w, struct iovec *iov, int n, uint64_t off)
{
	if (gp_gpt_mapped__write(w->mapped, iov, n, off))
		return 0;
	return full_pwritev(w->fd, iov, n, off);
}

int gp_gpt_writer__open(const char *path, struct gp_gpt_writer **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "capture %s: cannot create it (%s)", path, strerror(e));
		return -e;
	}
	struct gp_gpt_writer *w = calloc(1, sizeof(*w));
	char *p = strdup(path);
	if (!w || !p) {
		free(w);
		free(p);
		close(fd);
		snprintf(err, errlen, "capture %s: out of memory", path);
		return -ENOMEM;
	}
	w->fd = fd;
	w->path = p;
	w->t0 = now_ns(CLOCK_MONOTONIC);
	uint8_t h[GP_GPT_HEADER_SIZE] = {0};
	memcpy(h, GP_GPT_MAGIC, 8);
	uint32_t v = GP_GPT_VERSION, hs = GP_GPT_HEADER_SIZE;
	uint64_t rt = now_ns(CLOCK_REALTIME);
	memcpy(h + 8, &v, 4);
	memcpy(h + 12, &hs, 4);
	memcpy(h + 16, &rt, 8);
	struct iovec iov = {h, sizeof(h)};
	int rc = full_pwritev(fd, &iov, 1, 0);
	if (rc) {
		snprintf(err, errlen, "capture %s: cannot write it (%s)", path, strerror(-rc));
		close(fd);
		free(p);
		free(w);
		return rc;
	}
	w->off = GP_GPT_HEADER_SIZE;
	if (gp_env_choice(GP_VAR_CAPTURE_WRITE) == 0)   /* mapped (the default), else pwritev */
		w->mapped = gp_gpt_mapped__new(fd, MAPPED_FROM);   /* NULL: pwritev after all */
	*out = w;
	return 0;
}

int gp_gpt_writer__error(const struct gp_gpt_writer *w)
{
	return w ? __atomic_load_n(&w->error, __ATOMIC_RELAXED) : -EINVAL;
}

uint64_t gp_gpt_writer__bytes(const struct gp_gpt_writer *w)
{
	return w ? __atomic_load_n(&w->off, __ATOMIC_RELAXED) : 0;
}

const char *gp_gpt_writer__path(const struct gp_gpt_writer *w) { return w ? w->path : ""; }

int gp_gpt_writer__chunk(struct gp_gpt_writer *w, uint32_t type, uint32_t map, uint32_t ring,
			 const struct iovec *iov, int niov)
{
	if (!w || niov < 0 || niov > 14)
		return -EINVAL;
	int e = gp_gpt_writer__error(w);
	if (e)
		return e;
	size_t len = 0;
	for (int i = 0; i < niov; i++)
		len += iov[i].iov_len;
	size_t padded = (len + 7) & ~(size_t)7;
	if (padded > GP_GPT_MAX_CHUNK)
		return -E2BIG;
	uint32_t hdr[4] = {type, (uint32_t)padded, map, ring};
	static const uint8_t zeros[8];
	struct iovec v[16];
	v[0] = (struct iovec){hdr, sizeof(hdr)};
	memcpy(v + 1, iov, sizeof(*iov) * (size_t)niov);
	int n = niov + 1;
	if (padded != len)
		v[n++] = (struct iovec){(void *)zeros, padded - len};
	uint64_t off = __atomic_fetch_add(&w->off, GP_GPT_CHUNK_HDR + padded, __ATOMIC_RELAXED);
	int rc = put_at(w, v, n, off);
	if (rc) {
		int zero = 0;
		__atomic_compare_exchange_n(&w->error, &zero, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return rc;
}

int gp_gpt_writer__map(struct gp_gpt_writer *w, uint32_t id, const struct gp_gpt_map *m,
		       const char *name, const struct gp_gpt_field *fields)
{
	static const uint8_t zeros[8];
	size_t nl = m->name_len;
	struct iovec v[4] = {{(void *)m, sizeof(*m)}, {(void *)name, nl},
			     {(void *)zeros, ((nl + 7) & ~(size_t)7) - nl},
			     {(void *)fields, sizeof(*fields) * m->nfields}};
	return gp_gpt_writer__chunk(w, GP_GPT_MAP, id, 0, v, 4);
}

int gp_gpt_buf__flush(struct gp_gpt_writer *w, struct gp_gpt_buf *b)
{
	if (!b->len)
		return 0;
	/* The buffer holds whole chunks already: reserve its size and write it as it is. */
	int e = gp_gpt_writer__error(w);
	if (!e) {
		uint64_t off = __atomic_fetch_add(&w->off, b->len, __ATOMIC_RELAXED);
		struct iovec v = {b->p, b->len};
		e = put_at(w, &v, 1, off);
		if (e) {
			int zero = 0;
			__atomic_compare_exchange_n(&w->error, &zero, e, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		}
	}
	b->len = 0;
	return e;
}

int gp_gpt_buf__span(struct gp_gpt_writer *w, struct gp_gpt_buf *b, uint32_t map, uint32_t ring,
		     uint64_t pos, const void *bytes, size_t len)
{
	/* Ring records are whole multiples of 8 bytes: the chunk needs no padding. */
	if (len & 7 || len > GP_GPT_MAX_CHUNK - 8)
		return -EINVAL;
	if (len >= DIRECT_BYTES) {
		int rc = gp_gpt_buf__flush(w, b);   /* keeps this ring's spans in order */
		if (rc)
			return rc;
		struct iovec v[2] = {{&pos, 8}, {(void *)bytes, len}};
		return gp_gpt_writer__chunk(w, GP_GPT_SPAN, map, ring, v, 2);
	}
	size_t need = GP_GPT_CHUNK_HDR + 8 + len;
	if (!b->p) {
		b->p = malloc(BUF_BYTES);
		b->cap = b->p ? BUF_BYTES : 0;
		if (!b->p)
			return -ENOMEM;
	}
	if (b->len + need > b->cap) {
		int rc = gp_gpt_buf__flush(w, b);
		if (rc)
			return rc;
	}
	uint32_t hdr[4] = {GP_GPT_SPAN, (uint32_t)(8 + len), map, ring};
	uint8_t *d = b->p + b->len;
	memcpy(d, hdr, sizeof(hdr));
	memcpy(d + GP_GPT_CHUNK_HDR, &pos, 8);
	memcpy(d + GP_GPT_CHUNK_HDR + 8, bytes, len);
	b->len += need;
	return gp_gpt_writer__error(w);
}

int gp_gpt_writer__spans(struct gp_gpt_writer *w, const struct gp_gpt_span_ref *s, size_t n)
{
	enum { GROUP = 256 };   /* 2 iovecs a span: under IOV_MAX (1024) */
	struct iovec v[2 * GROUP];
	struct { uint32_t h[4]; uint64_t pos; } hdr[GROUP];
	for (size_t i0 = 0; i0 < n; i0 += GROUP) {
		int e = gp_gpt_writer__error(w);
		if (e)
			return e;
		size_t k = n - i0 < GROUP ? n - i0 : GROUP, total = 0;
		for (size_t i = 0; i < k; i++) {
			const struct gp_gpt_span_ref *r = &s[i0 + i];
			if (r->len & 7 || r->len > GP_GPT_MAX_CHUNK - 8)
				return -EINVAL;
			hdr[i].h[0] = GP_GPT_SPAN;
			hdr[i].h[1] = (uint32_t)(8 + r->len);
			hdr[i].h[2] = r->map;
			hdr[i].h[3] = r->ring;
			hdr[i].pos = r->pos;
			v[2 * i] = (struct iovec){&hdr[i], sizeof(hdr[i])};
			v[2 * i + 1] = (struct iovec){(void *)r->bytes, r->len};
			total += sizeof(hdr[i]) + r->len;
		}
		uint64_t off = __atomic_fetch_add(&w->off, total, __ATOMIC_RELAXED);
		e = put_at(w, v, (int)(2 * k), off);
		if (e) {
			int zero = 0;
			__atomic_compare_exchange_n(&w->error, &zero, e, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
			return e;
		}
	}
	return 0;
}

int gp_gpt_writer__close(struct gp_gpt_writer *w, uint64_t records, uint64_t host_lost)
{
	if (!w)
		return 0;
	struct gp_gpt_end e = {.records = records, .host_lost = host_lost,
			       .bytes = gp_gpt_writer__bytes(w),
			       .elapsed_ns = now_ns(CLOCK_MONOTONIC) - w->t0};
	struct iovec v = {&e, sizeof(e)};
	int rc = gp_gpt_writer__chunk(w, GP_GPT_END, 0, 0, &v, 1);
	int rc2 = gp_gpt_mapped__free(w->mapped, w->off);
	if (rc2 && !rc)
		rc = rc2;
	if (close(w->fd) && !rc)
		rc = -errno;
	free(w->path);
	free(w);
	return rc;
}
