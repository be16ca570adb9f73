/* Opening files safely (safe_open.h). */
#include "common/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) || S_ISBLK(m)
		? "a device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The descriptor was opened O_NONBLOCK so that a FIFO or device could not block the open; once
 * it is known to be a regular file, reads and writes block as usual. */
static int clear_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? -errno : 0;
}

static int fail(int fd, int rc)
{
	if (fd >= 0)
		close(fd);
	return rc;
}

static int check_trusted(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		ERR("%s: belongs to uid %u (not you or root): refusing it", path, (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		ERR("%s: %s can write it (mode %04o): refusing it (chmod go-w %s)", path,
		    (st->st_mode & S_IWOTH) ? "everyone" : "its group", (unsigned)(st->st_mode & 07777),
		    path);
		return -EPERM;
	}
	return 0;
}

int gp_open_read(const char *path, unsigned flags, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
			    (flags & GP_OPEN_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0) {
		int e = errno;
		ERR("%s: %s", path, e == ELOOP && (flags & GP_OPEN_NOFOLLOW)
		    ? "is a symbolic link: refusing it" : strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		ERR("%s: %s", path, strerror(e));
		return fail(fd, -e);
	}
	if (!S_ISREG(st.st_mode)) {
		ERR("%s: is %s, not a regular file: refusing it", path, kind_of(st.st_mode));
		return fail(fd, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL);
	}
	int rc = flags & GP_OPEN_TRUSTED ? check_trusted(path, &st, err, errlen) : 0;
	if (!rc && (rc = clear_nonblock(fd)))
		ERR("%s: %s", path, strerror(-rc));
	return rc ? fail(fd, rc) : fd;
}

int gp_openat_read(int dirfd, const char *name, char *err, size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		ERR("%s: %s", name, e == ELOOP ? "is a symbolic link" : strerror(e));
		return -e;
	}
	struct stat st;
	int rc = fstat(fd, &st) ? -errno : 0;
	if (!rc && !S_ISREG(st.st_mode)) {
		ERR("%s: is %s, not a regular file", name, kind_of(st.st_mode));
		rc = -EINVAL;
	} else if (!rc && st.st_uid != geteuid()) {
		ERR("%s: belongs to uid %u, not you", name, (unsigned)st.st_uid);
		rc = -EPERM;
	} else if (!rc && (rc = clear_nonblock(fd))) {
		ERR("%s: %s", name, strerror(-rc));
	}
	return rc ? fail(fd, rc) : fd;
}

int gp_read_all(int fd, size_t max, void **data, size_t *len)
{
	/* read at most max + 1 bytes: one more than allowed says the file is too large */
	size_t cap = 0, n = 0, limit = max < SIZE_MAX - 2 ? max + 1 : SIZE_MAX - 2;
	char *buf = NULL;
	while (n < limit) {
		if (n + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > limit + 1)
				ncap = limit + 1;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		size_t want = cap - n - 1 < limit - n ? cap - n - 1 : limit - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return -EFBIG;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[n] = 0;
	*data = buf;
	*len = n;
	return 0;
}

/* Open (or create) one output file: see gp_open_output. */
static int open_output(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
		      0600);
	if (fd < 0) {
		int e = errno;
		/* ENXIO: a FIFO nobody reads (O_NONBLOCK makes that an error, not a hang). */
		ERR("%s: %s", path, e == ELOOP ? "is a symbolic link: refusing to write through it"
		    : e == ENXIO ? "is a FIFO: refusing it" : strerror(e));
		return -e;
	}
	struct stat st;
	int rc = fstat(fd, &st) ? -errno : 0;
	if (rc) {
		ERR("%s: %s", path, strerror(-rc));
	} else if (!S_ISREG(st.st_mode)) {
		ERR("%s: is %s: refusing to write into it", path, kind_of(st.st_mode));
		rc = -EINVAL;
	} else if (st.st_uid != geteuid()) {
		ERR("%s: belongs to uid %u: refusing to write into another user's file", path,
		    (unsigned)st.st_uid);
		rc = -EPERM;
	} else if (st.st_nlink != 1) {
		/* another name for one of the user's files, planted where the output goes */
		ERR("%s: has %lu links: refusing to write into it", path, (unsigned long)st.st_nlink);
		rc = -EPERM;
	} else if ((rc = clear_nonblock(fd))) {
		ERR("%s: %s", path, strerror(-rc));
	}
	return rc ? fail(fd, rc) : fd;
}

/* Truncated only once it is known to be ours: O_TRUNC would cut another user's file (or the
 * user's own, reached through a link) before any check. */
static int take(int fd, const char *path, char *err, size_t errlen)
{
	if (ftruncate(fd, 0)) {
		int e = errno;
		ERR("%s: %s", path, strerror(e));
		return fail(fd, -e);
	}
	return fd;
}

int gp_open_output(const char *path, enum gp_output_how how, char *used, size_t usedlen,
		   char *err, size_t errlen)
{
	if (how != GP_OUTPUT_OTHER) {
		int fd = open_output(path, err, errlen);
		if (fd < 0)
			return fd;
		/* The lock goes with the open file description: it lasts as long as this process
		 * (or a forked child still holding the descriptor) lives, and dies with it, even by
		 * SIGKILL. A file system without locks: this process owns the file, as before. */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK ||
		    how == GP_OUTPUT_OWN) {
			if (used && usedlen)
				snprintf(used, usedlen, "%s", path);
			return take(fd, path, err, errlen);
		}
		close(fd);
	}
	char mine[PATH_MAX];
	if (snprintf(mine, sizeof(mine), "%s.%ld", path, (long)getpid()) >= (int)sizeof(mine)) {
		ERR("%s: path too long", path);
		return -ENAMETOOLONG;
	}
	int fd = open_output(mine, err, errlen);
	if (fd < 0)
		return fd;
	/* held only by an earlier process that had our PID: it ended; ours now */
	(void)!flock(fd, LOCK_EX | LOCK_NB);
	if (used && usedlen)
		snprintf(used, usedlen, "%s", mine);
	return take(fd, mine, err, errlen);
}

/* One directory component: not through a link when last, created 0700 when missing. */
static int step(int dfd, const char *name, int last, int create)
{
	int fl = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (last ? O_NOFOLLOW : 0);
	int fd = openat(dfd, name, fl);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dfd, name, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(dfd, name, fl | O_NOFOLLOW);
	}
	/* O_DIRECTORY says ENOTDIR before O_NOFOLLOW says ELOOP: tell a link from a file */
	struct stat st;
	if (fd < 0 && errno == ENOTDIR && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		errno = ELOOP;
	return fd < 0 ? -errno : fd;
}

int gp_dir_open(const char *path, unsigned flags, char *why, size_t whylen)
{
	char buf[PATH_MAX];
	char *err = why;
	size_t errlen = whylen;
	if (!path || !*path || snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		ERR("%s", path && *path ? "path too long" : "no path");
		return -ENAMETOOLONG;
	}
	int dfd = open(buf[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		ERR("%s", strerror(e));
		return -e;
	}
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; ) {
		char *next = strtok_r(NULL, "/", &save);
		int fd = step(dfd, c, next == NULL, flags & GP_DIR_CREATE);
		close(dfd);
		if (fd < 0) {
			ERR("%s", fd == -ELOOP ? "is a symbolic link" : fd == -ENOTDIR
			    ? "not a directory" : strerror(-fd));
			return fd;
		}
		dfd = fd;
		c = next;
	}
	struct stat st;
	if (fstat(dfd, &st)) {
		int e = errno;
		ERR("%s", strerror(e));
		return fail(dfd, -e);
	}
	if (!S_ISDIR(st.st_mode)) {
		ERR("not a directory");
		return fail(dfd, -ENOTDIR);
	}
	if (st.st_uid != geteuid()) {
		ERR("belongs to another user");
		return fail(dfd, -EPERM);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ERR("is writable by others (chmod 700 it)");
		return fail(dfd, -EPERM);
	}
	return dfd;
}

int gp_write_file_at(int dirfd, const char *name, const struct iovec *iov, int iovcnt)
{
	static unsigned seq;
	char tmp[NAME_MAX + 1];
	/* unique per process and call: concurrent writers never share a temporary file */
	if (snprintf(tmp, sizeof(tmp), ".%s.%ld.%u.tmp", name, (long)getpid(),
		     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = 0;
	for (int i = 0; i < iovcnt && !rc; i++) {
		const char *p = iov[i].iov_base;
		for (size_t left = iov[i].iov_len; left;) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = w < 0 ? -errno : -EIO;
				break;
			}
			p += w;
			left -= (size_t)w;
		}
	}
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name))
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}
