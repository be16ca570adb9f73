/* The per-user cache of compiled instrumented modules: a cubin per key, where the key is the
 * SHA-256 of everything that decides the cubin's bytes (the instrumented PTX, the device's compute
 * capability, the driver, the JIT options that change code). A hit loads without any JIT.
 *
 * Directory: $GPUPROBE_CACHE_DIR, else $XDG_CACHE_HOME/gpuprobe, else ~/.cache/gpuprobe, created
 * 0700; it must belong to the user and be writable by nobody else (another user's cubin would run
 * in this process's GPU context). Entries are files KEY.cubin, mode 0600, written to a temporary
 * file and renamed, each with a header (magic, key, size, checksum) so that a torn or corrupt
 * entry is detected, ignored and rewritten. GPUPROBE_CACHE=0 turns the cache off. */
#ifndef GPUPROBE_SHIM_CUBIN_CACHE_H
#define GPUPROBE_SHIM_CUBIN_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct cubin_key {
	uint8_t hash[32];
	char hex[65];
};

struct cubin_key_input {
	const char *ptx;            /* the instrumented PTX, exactly as compiled */
	size_t ptx_len;
	unsigned sm;                /* compute capability of the device, e.g. 90 */
	int driver_version;         /* cuDriverGetVersion */
	const char *driver_id;      /* the driver's file (path, size, mtime); "" when unknown */
	unsigned nopts;             /* JIT options that change code, in the application's order */
	const int *opt_ids;
	const uint64_t *opt_vals;
};

void cubin_key_make(const struct cubin_key_input *in, struct cubin_key *k);

/* Nonzero unless GPUPROBE_CACHE=0. */
int cubin_cache_enabled(void);

/* The cache directory, created (with missing parents) 0700 when absent. 0, or -errno with a
 * reason in why (for example "is writable by others"). */
int cubin_cache_dir(char *out, size_t len, char *why, size_t whylen);

/* Look k up in dir: 0 and a malloc'd copy in *data, its size in *size, on a hit; -ENOENT when
 * absent; -EBADMSG for a corrupt entry (wrong magic, key, size or checksum); other -errno when
 * unreadable. */
int cubin_cache_get(const char *dir, const struct cubin_key *k, void **data, size_t *size);

/* Store (or replace) the entry of k atomically. 0 or -errno. */
int cubin_cache_put(const char *dir, const struct cubin_key *k, const void *data, size_t size);

/* The path of k's entry in dir (for log lines). */
void cubin_cache_path(const char *dir, const struct cubin_key *k, char *out, size_t len);

#endif
