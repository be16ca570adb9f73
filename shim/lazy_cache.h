/* The per-user cache of kernels instrumented one at a time (lazy.c): per (module, kernel, probe
 * set, device, driver, JIT options), the instrumented split PTX (still free of addresses: it is
 * bound to the original module's variables at each load) with the names of those variables and
 * the instrumentation's counts, or the compiler's rejection of it. A second run of the same
 * program then parses and instruments nothing. Entries live in the cubin cache's directory and
 * files (cubin_cache.h: checked, atomic, 0600), under keys of their own. */
#ifndef GPUPROBE_SHIM_LAZY_CACHE_H
#define GPUPROBE_SHIM_LAZY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ptx-frontend/split.h"
#include "shim/cubin_cache.h"

struct lazy_entry {
	char *ptx;                 /* instrumented split PTX (NULL: the kernel has no probe site) */
	size_t ptx_len;
	struct ptx_split_vars vars;
	unsigned sites, functions;
	char *failed;              /* the compiler's rejection, as one line; NULL when it compiled */
};

void lazy_entry_free(struct lazy_entry *e);

/* The key of kernel in the module whose PTX has SHA-256 module_hash. jit_ids/vals: the JIT
 * options that change code. 0, or -1 when no cache is usable (GPUPROBE_CACHE=0, no directory). */
int lazy_cache_key(const uint8_t module_hash[32], const char *kernel, unsigned sm,
		   unsigned nopts, const int *jit_ids, const uint64_t *jit_vals, struct cubin_key *k);

/* 0 and *e filled on a hit; negative errno otherwise (-ENOENT: absent; -EBADMSG: corrupt). */
int lazy_cache_get(const struct cubin_key *k, struct lazy_entry *e);

/* Store e under k. 0 or negative errno. */
int lazy_cache_put(const struct cubin_key *k, const struct lazy_entry *e);

/* The entry's file, for log lines. */
void lazy_cache_path(const struct cubin_key *k, char *out, size_t len);

#endif
