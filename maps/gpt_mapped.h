/* The capture file's mapped windows: consumer threads copy their chunks into a shared mapping
 * of the file instead of calling pwritev, which takes turns on the file's inode lock. Used by
 * the writer (gpt_write.c) for every chunk at or past a starting offset; a write it cannot take
 * (before that offset, a window that could not be reserved or mapped) is the caller's to
 * pwritev. */
#ifndef GPUPROBE_MAPS_GPT_MAPPED_H
#define GPUPROBE_MAPS_GPT_MAPPED_H

#include <stdint.h>
#include <sys/uio.h>

struct gp_gpt_mapped;

/* Windows over fd from offset `from` (page aligned) on; NULL where that cannot be. */
struct gp_gpt_mapped *gp_gpt_mapped__new(int fd, uint64_t from);
/* 1: the bytes are in the file at off; 0: not taken, pwritev them. Thread-safe. */
int gp_gpt_mapped__write(struct gp_gpt_mapped *m, const struct iovec *iov, int n, uint64_t off);
/* Unmaps and cuts the file to `size` (the reserved tail goes): 0 or -errno. */
int gp_gpt_mapped__free(struct gp_gpt_mapped *m, uint64_t size);

#endif
