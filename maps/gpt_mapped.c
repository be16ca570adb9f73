/* The capture file's mapped windows (gpt_mapped.h). Why: every pwritev into one file takes the
 * file's inode lock, so consumer threads writing one capture file take turns: on the GPU
 * machine's tmpfs 2.4-2.8 GB/s whether 1 or 8 threads write, where 8 threads copying into a
 * mapping of the same file reach 5.3-5.8 GB/s (tests/gpu/logs/session13-h200-call2/mmtest.txt).
 *
 * The file is reserved ahead with fallocate, a window at a time, before the window is mapped:
 * a store into a mapped page whose blocks do not exist would raise SIGBUS in the application
 * when the disk is full; with the blocks reserved first it cannot, and a failed fallocate (full
 * disk, a filesystem without it) only sends the rest of the writes back to pwritev, which
 * returns the error the writer reports. */
#include "maps/gpt_mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WINDOW_BYTES (64ull << 20)
#define MAX_WINDOWS 65536u        /* 4 TiB of file; beyond it, pwritev */

struct gp_gpt_mapped {
	int fd;
	uint64_t from;                /* the first window's file offset */
	uint64_t mapped;              /* end of the reserved and mapped part (atomic) */
	int failed;                   /* a window could not be reserved or mapped: no more (atomic) */
	pthread_mutex_t lock;         /* held while a window is added */
	uint8_t *win[MAX_WINDOWS];    /* published with release stores under lock */
};

struct gp_gpt_mapped *gp_gpt_mapped__new(int fd, uint64_t from)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || from % (uint64_t)page || WINDOW_BYTES % (uint64_t)page)
		return NULL;
	struct gp_gpt_mapped *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->fd = fd;
	m->from = from;
	m->mapped = from;
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

/* Windows up to one beyond `end`, so that the next writer rarely waits for one. */
static void extend(struct gp_gpt_mapped *m, uint64_t end)
{
	pthread_mutex_lock(&m->lock);
	while (!m->failed && m->mapped < end + WINDOW_BYTES) {
		uint64_t k = (m->mapped - m->from) / WINDOW_BYTES;
		if (k >= MAX_WINDOWS || fallocate(m->fd, 0, (off_t)m->mapped, (off_t)WINDOW_BYTES)) {
			__atomic_store_n(&m->failed, 1, __ATOMIC_RELAXED);
			break;
		}
		void *p = mmap(NULL, WINDOW_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd,
			       (off_t)m->mapped);
		if (p == MAP_FAILED) {
			__atomic_store_n(&m->failed, 1, __ATOMIC_RELAXED);
			break;
		}
		madvise(p, WINDOW_BYTES, MADV_DONTFORK);   /* a forked child never writes it */
		__atomic_store_n(&m->win[k], (uint8_t *)p, __ATOMIC_RELEASE);
		__atomic_store_n(&m->mapped, m->mapped + WINDOW_BYTES, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&m->lock);
}

int gp_gpt_mapped__write(struct gp_gpt_mapped *m, const struct iovec *iov, int n, uint64_t off)
{
	if (!m || off < m->from)
		return 0;
	uint64_t len = 0;
	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	uint64_t end = off + len;
	if (__atomic_load_n(&m->mapped, __ATOMIC_ACQUIRE) < end + WINDOW_BYTES / 2 &&
	    !__atomic_load_n(&m->failed, __ATOMIC_RELAXED))
		extend(m, end);
	if (__atomic_load_n(&m->mapped, __ATOMIC_ACQUIRE) < end)
		return 0;
	for (int i = 0; i < n; i++) {
		const uint8_t *src = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			uint64_t rel = off - m->from, k = rel / WINDOW_BYTES, in = rel % WINDOW_BYTES;
			size_t step = WINDOW_BYTES - in < left ? (size_t)(WINDOW_BYTES - in) : left;
			memcpy(__atomic_load_n(&m->win[k], __ATOMIC_ACQUIRE) + in, src, step);
			src += step;
			off += step;
			left -= step;
		}
	}
	return 1;
}

int gp_gpt_mapped__free(struct gp_gpt_mapped *m, uint64_t size)
{
	if (!m)
		return 0;
	int rc = 0;
	for (uint64_t k = 0; k < MAX_WINDOWS && m->win[k]; k++)
		munmap(m->win[k], WINDOW_BYTES);
	/* the reserved tail past the last byte written goes */
	if (m->mapped > m->from && ftruncate(m->fd, (off_t)size))
		rc = -errno;
	pthread_mutex_destroy(&m->lock);
	free(m);
	return rc;
}
