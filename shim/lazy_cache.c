/* Instrumented kernels on disk (lazy_cache.h). */
#include "shim/lazy_cache.h"
#include "common/env.h"
#include "common/safe_open.h"
#include "shim/forward.h"
#include "shim/log.h"
#include "shim/probes.h"
#include "shim/sha256.h"

#include "maps/config.h"
#include "maps/maps.h"
#include "nvidia/probes.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int usable;
static char dir[PATH_MAX];
static uint8_t probe_set[32];     /* what decides the instrumented text besides the PTX */
static char driver_id[PATH_MAX + 64];
static int driver_version;

static void put_str(struct gp_sha256 *s, const char *str)
{
	uint64_t n = str ? strlen(str) : 0;
	gp_sha256_update(s, &n, sizeof(n));
	if (n)
		gp_sha256_update(s, str, n);
}

/* A file's bytes into the hash (its absence too). */
static void put_file(struct gp_sha256 *s, const char *path)
{
	put_str(s, path);
	/* common/safe_open.h: a regular file only (a FIFO would block the hash), not inherited */
	int fd = path ? gp_open_read(path, 0, NULL, 0) : -1;
	if (fd < 0) {
		put_str(s, "(unreadable)");
		return;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		gp_sha256_update(s, buf, (size_t)n);
	close(fd);
}

/* A file's identity (path, size, modification time) into the hash. */
static void put_file_id(struct gp_sha256 *s, const void *addr_inside)
{
	Dl_info di;
	struct stat st;
	char id[PATH_MAX + 64] = "?";
	if (dladdr(addr_inside, &di) && di.dli_fname && !stat(di.dli_fname, &st))
		snprintf(id, sizeof(id), "%s %lld %lld.%09ld", di.dli_fname, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	put_str(s, id);
}

/* The probe set: the probe objects and the configuration (their bytes), where the maps are (map
 * addresses are immediates in the instrumented PTX), the device's SM count (per-SM shards), the
 * settings the instrumentation reads, and this very shim (its code does the instrumenting). */
static void fingerprint(void)
{
	struct gp_sha256 s;
	gp_sha256_init(&s);
	put_str(&s, "gpuprobe lazy kernels 1");
	put_file_id(&s, (const void *)fingerprint);
	const char *probes = gp_env_str(GP_VAR_PROBES), *config = gp_env_str(GP_VAR_CONFIG);
	put_str(&s, probes);
	char *list = probes ? strdup(probes) : NULL;
	for (char *save = NULL, *t = list ? strtok_r(list, ":", &save) : NULL; t;
	     t = strtok_r(NULL, ":", &save))
		put_file(&s, t);
	free(list);
	if (config && *config) {
		put_file(&s, config);
		struct gp_config cfg;
		char err[256];
		if (!gp_config__load(config, &cfg, err, sizeof(err))) {
			for (size_t i = 0; i < cfg.nprobes; i++)
				put_file(&s, cfg.probes[i].path);
			gp_config__free(&cfg);
		}
	}
	static const enum gp_var vars[] = {GP_VAR_INLINE, GP_VAR_INLINE_GROWTH, GP_VAR_MAP_VA,
					   GP_VAR_AGGREGATE, GP_VAR_DEFER, GP_VAR_HASH_CACHE};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		put_str(&s, gp_env_str(vars[i]));
	unsigned sm = 0;
	struct gp_nv_probes *ps = shim_probes_pipeline(&sm);
	for (size_t i = 0; ps && i < gp_nv_probes__object_count(ps); i++) {
		struct gp_map_set *set = gp_nv_probes__maps(ps, i);
		for (size_t j = 0; set && j < gp_map_set__count(set); j++) {
			struct gp_map_inst *mi = gp_map_set__map(set, j);
			uint64_t a[4] = {gp_map_inst__desc_addr(mi)};
			gp_map_inst__data_addrs(mi, a + 1);   /* a constant-key array lookup is one */
			put_str(&s, gp_map_inst__name(mi));
			gp_sha256_update(&s, a, sizeof(a));
		}
	}
	/* the other addresses the instrumented PTX holds as immediates: the words helper 14 and
	 * the clock helpers read. With map memory at driver-chosen addresses none of these need
	 * repeat: a cached kernel with another run's value addresses crashed PoCL under ASan. */
	uint64_t words[2] = {ps ? gp_nv_probes__pid_tgid_addr(ps) : 0, ps ? gp_nv_probes__clock_addr(ps) : 0};
	gp_sha256_update(&s, words, sizeof(words));
	CUdevice dev;
	int nsm = 0;
	if (SHIM_REAL(cuCtxGetDevice)(&dev) == CUDA_SUCCESS)
		SHIM_REAL(cuDeviceGetAttribute)(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	gp_sha256_update(&s, &nsm, sizeof(nsm));
	gp_sha256_final(&s, probe_set);

	Dl_info di;
	struct stat st;
	void *fn = (void *)SHIM_REAL(cuModuleLoadDataEx);
	if (fn && dladdr(fn, &di) && di.dli_fname && !stat(di.dli_fname, &st))
		snprintf(driver_id, sizeof(driver_id), "%s %lld %lld", di.dli_fname,
			 (long long)st.st_size, (long long)st.st_mtime);
	if (SHIM_REAL(cuDriverGetVersion)(&driver_version) != CUDA_SUCCESS)
		driver_version = 0;
}

static void init(void)
{
	if (!cubin_cache_enabled())
		return;
	char why[256] = "";
	if (cubin_cache_dir(dir, sizeof(dir), why, sizeof(why))) {
		shim_msg("cubin cache %s: %s; instrumented kernels are instrumented at every run",
			 dir[0] ? dir : "directory", why);
		return;
	}
	fingerprint();
	usable = 1;
}

int lazy_cache_key(const uint8_t module_hash[32], const char *kernel, unsigned sm,
		   unsigned nopts, const int *jit_ids, const uint64_t *jit_vals, struct cubin_key *k)
{
	pthread_once(&once, init);
	if (!usable)
		return -1;
	/* The cubin cache's key over (probe set, module, kernel) as its "PTX", with the driver
	 * and the JIT options as for a cubin: a remembered compile error depends on them. */
	size_t nlen = strlen(kernel);
	char *what = malloc(64 + nlen);
	if (!what)
		return -1;
	memcpy(what, probe_set, 32);
	memcpy(what + 32, module_hash, 32);
	memcpy(what + 64, kernel, nlen);
	char id[sizeof(driver_id) + 16];
	snprintf(id, sizeof(id), "%s lazy", driver_id);
	struct cubin_key_input in = {.ptx = what, .ptx_len = 64 + nlen, .sm = sm,
				     .driver_version = driver_version, .driver_id = id,
				     .nopts = nopts, .opt_ids = jit_ids, .opt_vals = jit_vals};
	cubin_key_make(&in, k);
	free(what);
	return 0;
}

void lazy_cache_path(const struct cubin_key *k, char *out, size_t len)
{
	cubin_cache_path(dir, k, out, len);
}

void lazy_entry_free(struct lazy_entry *e)
{
	free(e->ptx);
	free(e->failed);
	ptx_split_vars_free(&e->vars);
	memset(e, 0, sizeof(*e));
}

/* Entry bytes: "GPLAZY1\n", "sites S F\n", "vars N\n" and N names one a line, "failed\n" and one
 * line or "compiled\n", then "ptx\n" and the PTX, or "none\n" (no probe site); a NUL ends it. */
static const char MAGIC[] = "GPLAZY1\n";

static const char *line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *e = memchr(s, '\n', (size_t)(end - s));
	if (!e)
		return NULL;
	*n = (size_t)(e - s);
	*p = e + 1;
	return s;
}

int lazy_cache_get(const struct cubin_key *k, struct lazy_entry *e)
{
	memset(e, 0, sizeof(*e));
	void *data = NULL;
	size_t size = 0;
	int rc = cubin_cache_get(dir, k, &data, &size);
	if (rc)
		return rc;
	const char *p = data, *end = p + size;
	size_t n;
	const char *l;
	rc = -EBADMSG;
	if (size < sizeof(MAGIC) || end[-1] || memcmp(p, MAGIC, sizeof(MAGIC) - 1))
		goto out;
	p += sizeof(MAGIC) - 1;
	end--;   /* the NUL */
	if (!(l = line(&p, end, &n)) || sscanf(l, "sites %u %u", &e->sites, &e->functions) != 2)
		goto out;
	unsigned nv = 0;
	if (!(l = line(&p, end, &n)) || sscanf(l, "vars %u", &nv) != 1 || nv > (1u << 20))
		goto out;
	if (!(e->vars.names = calloc(nv ? nv : 1, sizeof(char *))))
		goto out;
	for (; e->vars.n < nv; e->vars.n++)
		if (!(l = line(&p, end, &n)) || !(e->vars.names[e->vars.n] = strndup(l, n)))
			goto out;
	if (!(l = line(&p, end, &n)))
		goto out;
	if (n == 6 && !memcmp(l, "failed", 6)) {
		if (!(l = line(&p, end, &n)) || !(e->failed = strndup(l, n)))
			goto out;
	} else if (n != 8 || memcmp(l, "compiled", 8)) {
		goto out;
	}
	if (!(l = line(&p, end, &n)))
		goto out;
	if (n == 3 && !memcmp(l, "ptx", 3)) {
		e->ptx_len = (size_t)(end - p);
		if (!(e->ptx = strndup(p, e->ptx_len)))
			goto out;
	} else if (n != 4 || memcmp(l, "none", 4)) {
		goto out;
	}
	rc = 0;
out:
	free(data);
	if (rc)
		lazy_entry_free(e);
	return rc;
}

int lazy_cache_put(const struct cubin_key *k, const struct lazy_entry *e)
{
	size_t size = sizeof(MAGIC) + 64 + (e->failed ? strlen(e->failed) : 0) + e->ptx_len + 32;
	for (unsigned i = 0; i < e->vars.n; i++)
		size += strlen(e->vars.names[i]) + 1;
	char *buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	size_t o = (size_t)snprintf(buf, size, "%ssites %u %u\nvars %u\n", MAGIC, e->sites,
				    e->functions, e->vars.n);
	for (unsigned i = 0; i < e->vars.n; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s\n", e->vars.names[i]);
	if (e->failed)
		o += (size_t)snprintf(buf + o, size - o, "failed\n%s\n", e->failed);
	else
		o += (size_t)snprintf(buf + o, size - o, "compiled\n");
	o += (size_t)snprintf(buf + o, size - o, e->ptx ? "ptx\n" : "none\n");
	if (e->ptx) {
		memcpy(buf + o, e->ptx, e->ptx_len);
		o += e->ptx_len;
	}
	buf[o++] = 0;
	int rc = cubin_cache_put(dir, k, buf, o);
	free(buf);
	return rc;
}
