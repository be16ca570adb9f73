/* The cubin cache (cubin_cache.h). No locks: every writer renames a complete private temporary
 * file over the entry, so readers see an old entry, a new one, or none. */
#include "shim/cubin_cache.h"
#include "shim/sha256.h"

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
	const char *v = getenv("GPUPROBE_CACHE");
	return !(v && !strcmp(v, "0"));
}

/* mkdir -p, each missing component 0700. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

int cubin_cache_dir(char *out, size_t len, char *why, size_t whylen)
{
	const char *d = getenv("GPUPROBE_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (d && *d)
		n = snprintf(out, len, "%s", d);
	else if (x && *x == '/')   /* the XDG spec: a relative value is to be ignored */
		n = snprintf(out, len, "%s/gpuprobe", x);
	else if (home && *home)
		n = snprintf(out, len, "%s/.cache/gpuprobe", home);
	else {
		snprintf(why, whylen, "no GPUPROBE_CACHE_DIR, XDG_CACHE_HOME or HOME");
		return -ENOENT;
	}
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, whylen, "path too long");
		return -ENAMETOOLONG;
	}
	int rc = make_dirs(out);
	struct stat st;
	if (rc == 0 && stat(out, &st))
		rc = -errno;
	if (rc) {
		snprintf(why, whylen, "%s", strerror(-rc));
		return rc;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "not a directory");
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, whylen, "belongs to another user");
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, whylen, "is writable by others (chmod 700 it)");
		return -EPERM;
	}
	return 0;
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

static int write_all(int fd, const void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

int cubin_cache_get(const char *dir, const struct cubin_key *k, void **data, size_t *size)
{
	char path[PATH_MAX];
	cubin_cache_path(dir, k, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
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
	static unsigned seq;
	char path[PATH_MAX], tmp[PATH_MAX];
	if (!size || size > ENTRY_MAX)
		return -EINVAL;
	cubin_cache_path(dir, k, path, sizeof(path));
	/* Unique per process and call: concurrent writers never share a temporary file. */
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.%u.tmp", dir, k->hex, (long)getpid(),
		     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	struct entry_header h = {.size = size, .checksum = payload_checksum(data, size)};
	memcpy(h.magic, ENTRY_MAGIC, 8);
	memcpy(h.key, k->hash, 32);
	int rc = write_all(fd, &h, sizeof(h));
	if (rc == 0)
		rc = write_all(fd, data, size);
	if (close(fd) && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
