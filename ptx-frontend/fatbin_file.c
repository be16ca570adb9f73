/* Loading a whole file for the fatbin reader: mapped read-only where possible (libraries such as
 * libcublasLt are hundreds of megabytes, of which only the fatbins are touched), read otherwise
 * (pipes, /proc files). */
#include "ptx-frontend/fatbin_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_fd(int fd, const char *path, void **data, size_t *len, char *err, size_t errlen)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf)
			return fb_error(err, errlen, ENOMEM, "%s: out of memory", path);
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return fb_error(err, errlen, e, "%s: %s", path, strerror(e));
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	*data = buf;
	*len = n;
	return 0;
}

int fb_load_file(const char *path, void **data, size_t *len, bool *mapped, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fb_error(err, errlen, errno, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return fb_error(err, errlen, e, "%s: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return fb_error(err, errlen, EISDIR, "%s: %s", path, strerror(EISDIR));
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			*data = p;
			*len = (size_t)st.st_size;
			*mapped = true;
			return 0;
		}
	}
	*mapped = false;
	int rc = read_fd(fd, path, data, len, err, errlen);
	close(fd);
	return rc;
}

void fb_unload(void *data, size_t len, bool mapped)
{
	if (mapped)
		munmap(data, len);
	else
		free(data);
}
