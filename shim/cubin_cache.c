/* The cubin cache (cubin_cache.h). No locks: every writer renames a complete private temporary
 * file over the entry, so readers see an old entry, a new one, or none. The directory is opened
 * once and checked (common/safe_open.h); entries are opened relative to that descriptor, so a
 * directory swapped for a link afterwards (its parent writable by someone else) is never read. */
#include "shim/cubin_cache.h"
#include "shim/sha256.h"
#include "common/env.h"
#include "common/safe_open.h"

#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Entry file: this header, then the cubin. Little-endian on the machine that wrote it; the
 * key covers the driver, so an entry never travels to another kind of machine anyway. */
#define ENTRY_MAGIC "GPCUBIN1"
struct entry_header {
	char magic[8];
	uint8_t key[32];
	uint64_t size;           /* bytes of cubin after the header */
	uint64_t checksum;       /* payload_checksum() of them */
	uint64_t reserved;
};

/* Larger entries are refused (a cubin of 1 GiB is not a real module). */
#define ENTRY_MAX ((uint64_t)1 << 30)

/* Not cryptographic: it catches torn writes and bit rot, fast (8 bytes per step). */
static uint64_t payload_checksum(const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void put_u32(struct gp_sha256 *s, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	gp_sha256_update(s, b, 4);
}

static void put_u64(struct gp_sha256 *s, uint64_t v)
{
	put_u32(s, (uint32_t)v);
	put_u32(s, (uint32_t)(v >> 32));
}

/* Every field is length- or count-prefixed, so no two inputs hash the same byte stream. */
void cubin_key_make(const struct cubin_key_input *in, struct cubin_key *k)
{
	struct gp_sha256 s;
	gp_sha256_init(&s);
	static const char version[] = "gpuprobe cubin cache 1";
	gp_sha256_update(&s, version, sizeof(version));
	put_u32(&s, in->sm);
	put_u32(&s, (uint32_t)in->driver_version);
	const char *id = in->driver_id ? in->driver_id : "";
	put_u64(&s, strlen(id));
	gp_sha256_update(&s, id, strlen(id));
	put_u32(&s, in->nopts);
	for (unsigned i = 0; i < in->nopts; i++) {
		put_u32(&s, (uint32_t)in->opt_ids[i]);
		put_u64(&s, in->opt_vals[i]);
	}
	put_u64(&s, in->ptx_len);
	gp_sha256_update(&s, in->ptx, in->ptx_len);
	gp_sha256_final(&s, k->hash);
	for (int i = 0; i < 32; i++)
		snprintf(k->hex + 2 * i, 3, "%02x", k->hash[i]);
}

int cubin_cache_enabled(void)
{
	return gp_env_flag(GP_VAR_CACHE);
}

/* The directory cubin_cache_dir checked last, held open: get and put on that path go through this
 * descriptor. Any other path (tests) is opened and checked again for the one call. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static char held_path[PATH_MAX];
static int held_fd = -1;

int cubin_cache_dir(char *out, size_t len, char *why, size_t whylen)
{
	const char *d = gp_env_str(GP_VAR_CACHE_DIR), *x = gp_env_str(GP_VAR_XDG_CACHE_HOME);
	const char *home = gp_env_str(GP_VAR_HOME);
	int n;
	out[0] = 0;
	if (d)
		n = snprintf(out, len, "%s", d);
	else if (x && *x == '/')   /* the XDG spec: a relative value is to be ignored */
		n = snprintf(out, len, "%s/gpuprobe", x);
	else if (home)
		n = snprintf(out, len, "%s/.cache/gpuprobe", home);
	else {
		snprintf(why, whylen, "no GPUPROBE_CACHE_DIR, XDG_CACHE_HOME or HOME");
		return -ENOENT;
	}
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, whylen, "path too long");
		return -ENAMETOOLONG;
	}
	int fd = gp_dir_open(out, GP_DIR_CREATE, why, whylen);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&held_lock);
	if (held_fd >= 0)
		close(held_fd);
	held_fd = fd;
	snprintf(held_path, sizeof(held_path), "%s", out);
	pthread_mutex_unlock(&held_lock);
	return 0;
}

/* A descriptor for dir: the held one (dup'd, so a concurrent cubin_cache_dir cannot close it
 * under us) or a fresh, checked open. */
static int dir_fd(const char *dir)
{
	int fd = -1;
	pthread_mutex_lock(&held_lock);
	if (held_fd >= 0 && !strcmp(dir, held_path))
		fd = fcntl(held_fd, F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&held_lock);
	return fd >= 0 ? fd : gp_dir_open(dir, 0, NULL, 0);
}

void cubin_cache_path(const char *dir, const struct cubin_key *k, char *out, size_t len)
{
	snprintf(out, len, "%s/%s.cubin", dir, k->hex);
}

static int read_all(int fd, void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = read(fd, (char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EBADMSG;
		done += (size_t)r;
	}
	return 0;
}

int cubin_cache_get(const char *dir, const struct cubin_key *k, void **data, size_t *size)
{
	char name[80];
	snprintf(name, sizeof(name), "%s.cubin", k->hex);
	int dfd = dir_fd(dir);
	if (dfd < 0)
		return dfd;
	/* not through a link, a regular file (a FIFO named like an entry must not block us), the
	 * user's own: another user's entry is ignored (-EPERM), whatever its contents */
	int fd = gp_openat_read(dfd, name, NULL, 0);
	close(dfd);
	if (fd < 0)
		return fd;
	struct stat st;
	struct entry_header h;
	void *buf = NULL;
	int rc = fstat(fd, &st) ? -errno : 0;
	if (rc == 0 && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(h)))
		rc = -EBADMSG;
	if (rc == 0)
		rc = read_all(fd, &h, sizeof(h));
	if (rc == 0 && (memcmp(h.magic, ENTRY_MAGIC, 8) || memcmp(h.key, k->hash, 32) ||
			h.size == 0 || h.size > ENTRY_MAX ||
			h.size != (uint64_t)st.st_size - sizeof(h)))
		rc = -EBADMSG;
	if (rc == 0 && !(buf = malloc(h.size)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = read_all(fd, buf, h.size);
	if (rc == 0 && payload_checksum(buf, h.size) != h.checksum)
		rc = -EBADMSG;
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*data = buf;
	*size = h.size;
	return 0;
}

int cubin_cache_put(const char *dir, const struct cubin_key *k, const void *data, size_t size)
{
	if (!size || size > ENTRY_MAX)
		return -EINVAL;
	char name[80];
	snprintf(name, sizeof(name), "%s.cubin", k->hex);
	struct entry_header h = {.size = size, .checksum = payload_checksum(data, size)};
	memcpy(h.magic, ENTRY_MAGIC, 8);
	memcpy(h.key, k->hash, 32);
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)data, size}};
	int dfd = dir_fd(dir);
	if (dfd < 0)
		return dfd;
	int rc = gp_write_file_at(dfd, name, iov, 2);
	close(dfd);
	return rc;
}
