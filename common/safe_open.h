/* Every file gpuprobe opens, reads or creates goes through these (see docs/security.md).
 *
 * - Every descriptor is O_CLOEXEC: nothing leaks into the application's children.
 * - Opens that could block (a FIFO or a device in place of a file) are O_NONBLOCK, and anything
 *   but a regular file is refused before the flag is cleared: a FIFO never hangs the app.
 * - Trusted input (probe objects, the configuration) must belong to the user (or root) and be
 *   writable by nobody else.
 * - Files gpuprobe creates are mode 0600, never reached through a symbolic link, and never
 *   another user's: whole files are written to an O_EXCL temporary name and renamed.
 * - A directory gpuprobe keeps files in (the cubin cache, the PTX dump) is opened once, checked
 *   (a directory, the user's, writable by nobody else) and every entry is opened relative to
 *   that descriptor, never by path again: swapping the path afterwards changes nothing.
 *
 * Functions return a descriptor (>= 0) or -errno; err (may be NULL) gets one phrase that starts
 * with the path. */
#ifndef GPUPROBE_COMMON_SAFE_OPEN_H
#define GPUPROBE_COMMON_SAFE_OPEN_H

#include <stddef.h>
#include <sys/uio.h>

/* gp_open_read flags */
#define GP_OPEN_TRUSTED  0x1    /* the user's or root's, writable by nobody else */
#define GP_OPEN_NOFOLLOW 0x2    /* the last component must not be a symbolic link */

/* A regular file, read-only. */
int gp_open_read(const char *path, unsigned flags, char *err, size_t errlen);
/* An entry of a directory opened with gp_dir_open: never through a symbolic link, a regular
 * file, owned by the user (another user's entry in the user's directory is refused: -EPERM). */
int gp_openat_read(int dirfd, const char *name, char *err, size_t errlen);
/* Read all of fd (at most max bytes, else -EFBIG) into a malloc'd buffer with a NUL after it. */
int gp_read_all(int fd, size_t max, void **data, size_t *len);

/* An output file the process writes as it goes (JSON lines): created 0600 or an existing regular
 * file of the user with one link, never followed through a symbolic link, never a FIFO or device.
 * Which process writes PATH, and which PATH.PID (another process of the same run: a forked or
 * exec'd child, a spawned worker), is the caller's word (how):
 *   GP_OUTPUT_OWN    this process owns PATH (the application `gpuprobe run` started)
 *   GP_OUTPUT_OTHER  another process owns PATH: write PATH.PID
 *   GP_OUTPUT_FIRST  the first live process owns PATH: it holds a lock on PATH for its life;
 *                    a process that finds PATH locked writes PATH.PID
 * PATH is truncated only once it is known to be the user's own. used gets the path written. */
enum gp_output_how { GP_OUTPUT_FIRST, GP_OUTPUT_OWN, GP_OUTPUT_OTHER };
int gp_open_output(const char *path, enum gp_output_how how, char *used, size_t usedlen,
		   char *err, size_t errlen);

/* gp_dir_open flags */
#define GP_DIR_CREATE 0x1       /* create missing components, 0700 */

/* A directory gpuprobe trusts: opened (the last component not through a symbolic link), a
 * directory of the user's, writable by nobody else. why (may be NULL) gets the reason alone
 * ("belongs to another user", "is writable by others (chmod 700 it)", ...). */
int gp_dir_open(const char *path, unsigned flags, char *why, size_t whylen);

/* Write a whole file into dirfd: a private O_EXCL temporary file (0600), then renamed over name.
 * Readers see the old file, the new one or none; never a part. 0 or -errno. */
int gp_write_file_at(int dirfd, const char *name, const struct iovec *iov, int iovcnt);

#endif
