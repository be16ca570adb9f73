/* The probe runtime inside the application (probes.h). Set up lazily at the first module load
 * (a context is current then: the maps go into the application's context), never on the launch
 * path: launches of instrumented kernels are forwarded untouched. */
#include "shim/probes.h"
#include "shim/llvm_ptx.h"
#include "shim/own.h"
#include "shim/capture.h"
#include "shim/clock_sync.h"
#include "shim/copier.h"
#include "shim/cubin_cache.h"
#include "shim/fault.h"
#include "shim/jit_capture_load.h"
#include "shim/device_runtime.h"
#include "shim/jit_compile.h"
#include "shim/log.h"
#include "shim/probes_internal.h"
#include "shim/probes_host.h"
#include "shim/process.h"
#include "common/env.h"

#include "maps/config.h"
#include "maps/output.h"
#include "maps/snapshot.h"
#include "nvidia/probes.h"
#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/link.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int shim_probes_enabled;
/* What happens to the instrumented PTX before the driver loads it (GPUPROBE_PRECOMPILE):
 * - check (default): compiled once by the driver's own PTX JIT in the current context and
 *   unloaded: a compile error is known at load time, whatever lazy loading would defer; the
 *   application's load then finds the code in the driver's JIT cache. Whole-program code.
 * - link: compiled by the driver's JIT linker into a cubin, cached by us (no JIT at all on a
 *   hit). The linker compiles PTX as relocatable code: on the H200 that made SGEMM with the
 *   memory counter 19-26% slower than the driver's whole-program JIT, so it is not the default.
 * - 0: neither; the driver gets the PTX (the cuFuncLoad check after the load remains). */
enum { PRECOMPILE_NONE, PRECOMPILE_CHECK, PRECOMPILE_LINK };
static int precompile_mode;
/* GPUPROBE_TEST_FAULT (fault.h): compile gives the instrumented PTX a line no compiler accepts,
 * so that tests can watch the fallback to the original on a real driver; the other steps fail
 * where they happen below. */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct gp_map_allocator alloc;
static unsigned device_sm;
static struct gp_nv_probes *probes;
static struct gp_config cfg;
static int have_cfg;
static struct gp_output *output;
static FILE *output_file;
static int final_done;
static pthread_mutex_t final_lock = PTHREAD_MUTEX_INITIALIZER;

/* Kernel names by gp_name_hash, for tables keyed by kernel. Filled at module load. */
#define NAME_SLOTS 8192
static struct { uint32_t hash; char *name; } names[NAME_SLOTS];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void probes_env(void)
{
	/* common/env.c: secure_getenv (nothing in a setuid process), one line for a bad value */
	shim_probes_enabled = gp_env_str(GP_VAR_PROBES) || gp_env_str(GP_VAR_CONFIG);
	static const int modes[] = {PRECOMPILE_CHECK, PRECOMPILE_LINK, PRECOMPILE_NONE};
	precompile_mode = modes[gp_env_choice(GP_VAR_PRECOMPILE)];
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void remember_names(const char *ptx, size_t len)
{
	const char *end = ptx + len;
	pthread_mutex_lock(&names_lock);
	for (const char *p = ptx; p && p < end; p = memmem(p + 1, (size_t)(end - p - 1), ".entry", 6)) {
		if (strncmp(p, ".entry", 6))
			continue;
		const char *s = p + 6;
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		const char *e = s;
		while (e < end && *e != '(' && *e != ' ' && *e != '\n' && *e != '\t')
			e++;
		if (e == s)
			continue;
		uint32_t h = name_hash(s, (size_t)(e - s));
		for (unsigned i = 0; i < NAME_SLOTS; i++) {
			unsigned k = (h + i) % NAME_SLOTS;
			if (names[k].name && names[k].hash == h)
				break;
			if (!names[k].name) {
				names[k].hash = h;
				names[k].name = strndup(s, (size_t)(e - s));
				break;
			}
		}
	}
	pthread_mutex_unlock(&names_lock);
}

static const char *kernel_name(void *user, uint64_t id)
{
	uint32_t h = (uint32_t)id;
	const char *r = NULL;
	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < NAME_SLOTS; i++) {
		unsigned k = (h + i) % NAME_SLOTS;
		if (!names[k].name)
			break;
		if (names[k].hash == h) {
			r = names[k].name;
			break;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return r;
}

/* Every name seen so far, for the copier's snapshots (copier.h). */
static size_t all_names(struct gp_snap_name **out)
{
	size_t n = 0;
	pthread_mutex_lock(&names_lock);
	struct gp_snap_name *a = malloc(NAME_SLOTS * sizeof(*a));
	for (unsigned i = 0; a && i < NAME_SLOTS; i++)
		if (names[i].name)
			a[n++] = (struct gp_snap_name){names[i].hash, names[i].name};
	pthread_mutex_unlock(&names_lock);
	*out = a;
	return n;
}

static void warn(void *user, const char *line)
{
	shim_msg("%s", line);
}

static int check_probe(const char *path)
{
	char err[512];
	if (gp_config__check_file(path, "a probe object", err, sizeof(err))) {
		shim_msg("%s; not attached", err);
		return -1;
	}
	return 0;
}

/* In the child of a fork (process.c), first thing: the parent's probes, maps, output thread and
 * output file are the parent's. Nothing of them is touched (no unlock, close or free: the memory
 * is the child's copy, and a lock may be held by a thread that does not exist here); the child
 * starts over at its own first module load, as a process of its own. */
/* The application's context the maps live in: the final report from a thread of ours (a signal,
 * process.c) synchronises it, as the application's own thread would at exit. */
static CUcontext probes_ctx;
static int forked;          /* this process is the child of a fork of one with probes */
static int label_report;

static struct { struct gp_nv_probes *probes; struct gp_output *output; FILE *file;
		struct gp_config cfg; } parents;   /* kept reachable: never freed, never used */

static void forked_child(void)
{
	parents.probes = probes;
	parents.output = output;
	parents.file = output_file;
	parents.cfg = cfg;
	__asm__ volatile("" : : "m"(parents));   /* the stores stay: nothing else reads them */
	probes_ctx = NULL;
	forked = 1;
	label_report = 0;
	init_once = (pthread_once_t)PTHREAD_ONCE_INIT;
	pthread_mutex_init(&final_lock, NULL);
	pthread_mutex_init(&names_lock, NULL);
	probes = NULL;
	output = NULL;
	output_file = NULL;
	shim_copier_forked();
	have_cfg = 0;
	memset(&cfg, 0, sizeof(cfg));
	__atomic_store_n(&final_done, 0, __ATOMIC_RELEASE);
}

/* Where a first launch with probes spends its set-up, logged on the "probes:" line: the issue 6
 * target (a cached instrumented module's first launch within 10% of the plain one) is about
 * these few milliseconds. */
static void setup(void);

/* Probes disabled: give back what the set-up made, so that nothing of ours stays half made, and
 * from now on forward every module, function and launch as the shim does without probes. */
static void setup_failed(void)
{
	probes_alloc_fini();
	if (have_cfg)
		gp_config__free(&cfg);
	have_cfg = 0;
	__atomic_store_n(&shim_probes_enabled, 0, __ATOMIC_RELAXED);
}

/* The set-up runs wherever the first module load or launch happens: inside an application's
 * stream capture too (CUDA's lazy loading), so with capture relaxed (capture.h). */
static void init(void)
{
	struct shim_relaxed r;
	shim_relax(&r);
	setup();
	shim_unrelax(&r);
}

/* Without `gpuprobe run` (or when its segment cannot be made): this process prints, on
 * stderr or into GPUPROBE_JSON's file, with the formatter `gpuprobe` uses (maps/output.h): the
 * events as they come, the maps every -i N seconds and at exit. 0, or -1 after one line. */
static int open_output(void)
{
	char err[1024] = "";
	struct gp_output_opts oo = {.tick = shim_clock_tick, .clock = shim_clock_report};
	if (gp_output_opts__from_env(&oo, &output_file, err, sizeof(err)))
		shim_msg("%s; printing to stderr", err);
	if (have_cfg && !gp_env_str(GP_VAR_INTERVAL) && cfg.interval_s)
		oo.interval_ms = cfg.interval_s * 1000u;
	if (have_cfg && !gp_env_str(GP_VAR_TOP) && cfg.top_n)
		oo.top_n = cfg.top_n;
	if (have_cfg && !gp_env_str(GP_VAR_JSON) && cfg.json_path) {
		/* the same rules as GPUPROBE_JSON: the user's file, 0600, PATH.PID for a process
		 * other than the run's first */
		FILE *f = strcmp(cfg.json_path, "-")
			? gp_output_file_open("output.json ", cfg.json_path, NULL, 0, err, sizeof(err))
			: stdout;
		if (!f)
			shim_msg("%s; printing to stderr", err);
		if (f) {
			oo.out = f;
			oo.json = 1;
			if (f != stdout)
				output_file = f;
		}
	}
	/* The application's stdout stays the application's. */
	if (!oo.out)
		oo.out = stderr;
	oo.kernel_name = kernel_name;
	/* A text report on stderr from a process other than the run's application (a forked or
	 * exec'd child, a worker) says whose it is; JSON files start with a process record. */
	uint64_t run_pid = 0;
	gp_env_uint_get(GP_VAR_RUN_PID, &run_pid);
	label_report = !oo.json && (forked || (run_pid && (uint64_t)getppid() != run_pid));
	if (shim_fault(SHIM_FAULT_OUTPUT) || gp_output__open(&oo, &output)) {
		shim_msg("probes: output: cannot set it up%s; probes disabled",
			 shim_fault(SHIM_FAULT_OUTPUT) ? " (GPUPROBE_TEST_FAULT=output)" : "");
		output = NULL;
		if (output_file)
			fclose(output_file);
		output_file = NULL;
		return -1;
	}
	/* ring records by field where the objects' BTF types them (gp_output__add_types) */
	gp_output__add_types_list(output, gp_env_str(GP_VAR_PROBES));
	for (size_t i = 0; have_cfg && i < cfg.nprobes; i++)
		gp_output__add_types(output, cfg.probes[i].path);
	return 0;
}

static void setup(void)
{
	double t_start = now_ms();
	char err[1024] = "";
	CUcontext ctx = NULL;
	if (SHIM_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx) {
		shim_msg("probes: no current context at the first module load; probes disabled");
		setup_failed();
		return;
	}
	probes_ctx = ctx;
	if (probes_alloc_init(&alloc, ctx, &device_sm)) {
		shim_msg("probes: map memory: %s; probes disabled", probes_alloc_why());
		setup_failed();   /* the allocator gave its part back already */
		return;
	}
	double t_alloc = now_ms();
	if (shim_fault(SHIM_FAULT_CONFIG)) {
		shim_msg("probes: configuration: GPUPROBE_TEST_FAULT=config; probes disabled");
		setup_failed();
		return;
	}
	const char *cpath = gp_env_str(GP_VAR_CONFIG);
	if (cpath) {
		if (gp_config__load(cpath, &cfg, err, sizeof(err))) {
			shim_msg("%s; probes disabled", err);
			setup_failed();
			return;
		}
		have_cfg = 1;
	}
	/* Objects: the configuration's, then GPUPROBE_PROBES (colon-separated). */
	const char *paths[128];
	int idx[128];
	size_t n = 0;
	for (size_t i = 0; have_cfg && i < cfg.nprobes && n < 128; i++)
		if (!check_probe(cfg.probes[i].path)) {
			paths[n] = cfg.probes[i].path;
			idx[n++] = (int)i;
		}
	char *list = gp_env_str(GP_VAR_PROBES) ? strdup(gp_env_str(GP_VAR_PROBES)) : NULL;
	for (char *save = NULL, *t = list ? strtok_r(list, ":", &save) : NULL; t && n < 128;
	     t = strtok_r(NULL, ":", &save))
		if (!check_probe(t)) {
			paths[n] = t;
			idx[n++] = -1;
		}
	struct gp_nv_probes_opts o = {.alloc = &alloc, .cfg = have_cfg ? &cfg : NULL,
				      .skip_rejected = 1, .warn = warn, .no_warp_collectives = own_active()};
	double t_open = now_ms();
	int rc = n ? gp_nv_probes__open(paths, idx, n, &o, &probes, err, sizeof(err)) : -ENOENT;
	double t_opened = now_ms();
	free(list);
	if (!rc && shim_fault(SHIM_FAULT_OBJECTS)) {
		/* after the objects made their maps: every map must go back */
		snprintf(err, sizeof(err), "probes: objects: GPUPROBE_TEST_FAULT=objects");
		gp_nv_probes__close(probes);
		rc = -ECANCELED;
	}
	if (rc) {
		if (n)
			shim_msg("%s; probes disabled", err);
		probes = NULL;
		setup_failed();
		return;
	}
	/* Under `gpuprobe run` the maps go into a segment it reads and prints (copier.h); else
	 * this process prints them, with the same formatter (maps/output.h). */
	const char *segdir = gp_env_str(GP_VAR_SEGMENT_DIR);
	/* GPUPROBE_TEST_FAULT=output fails both ways out: the segment is not tried, and the
	 * in-process output below says why probes are off. */
	if (segdir && !shim_fault(SHIM_FAULT_OUTPUT) && shim_copier_open(segdir, forked, err, sizeof(err)))
		shim_msg("probes: %s; printing in the application's process", err);
	if (!shim_copier_active() && open_output()) {
		gp_nv_probes__close(probes);
		probes = NULL;
		setup_failed();
		return;
	}
	/* Before any instrumented kernel can run: device clock helpers read the offsets (once
	 * the output is up: a failed set-up has nothing of the clock's to give back). */
	shim_clock_start(ctx, &alloc, gp_nv_probes__clock_addr(probes));
	size_t nsets = gp_nv_probes__object_count(probes);
	if (shim_copier_active()) {
		static struct gp_map_set *sets[128];
		for (size_t i = 0; i < nsets && i < 128; i++)
			sets[i] = gp_nv_probes__maps(probes, i);
		shim_copier_start(sets, nsets < 128 ? nsets : 128, all_names);
	} else {
		for (size_t i = 0; i < nsets; i++)
			gp_output__add_set(output, gp_nv_probes__maps(probes, i));
		gp_output__start_thread(output, 0);
	}
	shim_process_watch(shim_probes_final, forked_child);
	double t_output = now_ms();
	shim_host_probes_init(probes, have_cfg ? &cfg : NULL);
	double t_end = now_ms();
	shim_log("probes: %zu objects, %zu device programs, maps on %u SMs in %.1f ms (map memory "
		 "%.1f, configuration %.1f, objects %.1f, output %.1f, host probes %.1f)", n,
		 gp_nv_probes__device_programs(probes), alloc.nsms, t_end - t_start,
		 t_alloc - t_start, t_open - t_alloc, t_opened - t_open, t_output - t_opened,
		 t_end - t_output);
}

/* --- the instrumented PTX compiled here and cached as a cubin (jit_compile.h, cubin_cache.h) */

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static char cache_dir[PATH_MAX];
static int cache_usable;
static char driver_id[PATH_MAX + 64];
static int driver_version;

static void cache_init(void)
{
	/* The driver's file, to key the cache on it beyond cuDriverGetVersion (which names only
	 * the CUDA version: two drivers of one CUDA version may compile differently). */
	Dl_info di;
	struct stat st;
	void *fn = (void *)SHIM_REAL(cuLinkComplete);
	if (fn && dladdr(fn, &di) && di.dli_fname && !stat(di.dli_fname, &st))
		snprintf(driver_id, sizeof(driver_id), "%s %lld %lld", di.dli_fname,
			 (long long)st.st_size, (long long)st.st_mtime);
	if (SHIM_REAL(cuDriverGetVersion)(&driver_version) != CUDA_SUCCESS)
		driver_version = 0;
	if (!cubin_cache_enabled())
		return;
	char why[256] = "";
	if (cubin_cache_dir(cache_dir, sizeof(cache_dir), why, sizeof(why)))
		shim_msg("cubin cache %s: %s; instrumented modules are compiled at every run",
			 cache_dir[0] ? cache_dir : "directory", why);
	else
		cache_usable = 1;
}

static int device_cc(CUdevice dev, unsigned *sm)
{
	int major = 0, minor = 0;
	if (SHIM_REAL(cuDeviceGetAttribute)(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					    dev) != CUDA_SUCCESS ||
	    SHIM_REAL(cuDeviceGetAttribute)(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
					    dev) != CUDA_SUCCESS)
		return -1;
	*sm = (unsigned)(major * 10 + minor);
	return 0;
}

/* A library is loaded into every context, present and future, of any device: a cubin for
 * this device serves them all only when every device has its compute capability. */
static int devices_all(unsigned sm)
{
	int n = 0;
	if (SHIM_REAL(cuDeviceGetCount)(&n) != CUDA_SUCCESS)
		return 0;
	for (int i = 0; i < n; i++) {
		CUdevice d;
		unsigned s;
		if (SHIM_REAL(cuDeviceGet)(&d, i) != CUDA_SUCCESS || device_cc(d, &s) || s != sm)
			return 0;
	}
	return 1;
}

/* A cache entry that records a compile error instead of a cubin (a cubin starts "\x7fELF"). */
static const char FAILED[] = "gpuprobe: compile error\n";
/* In check mode, one that records a successful check: the next run with the same key skips the
 * check (a second module load from the driver's JIT cache, about 25 ms on bench/overhead's
 * module on the H200) and lets the application's load compile or take the cached code. */
static const char CHECKED[] = "gpuprobe: checked\n";

static void compile_failed(const struct shim_module *m, const char *why)
{
	shim_msg("module %u: the instrumented PTX did not compile (%s); loaded the original without "
		 "probes", m->seq, why);
}

static void use_cubin(struct shim_image *img, void *cubin, size_t size)
{
	free(img->owned);
	img->owned = cubin;
	img->data = cubin;
	img->size = size;
	img->kind = MODULE_IMAGE_CUBIN;
}

/* The instrumented PTX (ptx, len) of module m: into img as a cubin from the cache or from our
 * compile (1); left to the driver's JIT, as PTX, when no context is current or the options
 * rule our compile out (0); or it does not compile (-1: one line says why, load the original). */
static int precompile(struct shim_image *img, const struct shim_module *m, const char *ptx,
		      size_t len)
{
	CUcontext ctx = NULL;
	CUdevice dev;
	unsigned sm = 0;
	if (precompile_mode == PRECOMPILE_NONE)
		return 0;
	if (SHIM_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx ||
	    SHIM_REAL(cuCtxGetDevice)(&dev) != CUDA_SUCCESS || device_cc(dev, &sm)) {
		shim_log("module %u: no current context: the driver compiles the instrumented PTX",
			 m->seq);
		return 0;
	}
	int library = !strncmp(img->api, "cuLibrary", 9);
	if (library && !devices_all(sm)) {
		shim_log("module %u: devices of several compute capabilities: the driver compiles "
			 "the instrumented PTX for each", m->seq);
		return 0;
	}
	struct jit_options o;
	if (jit_options_from_app(&o, img->jit_n, (const CUjit_option *)img->jit_opts,
				 img->jit_vals)) {
		shim_log("module %u: %u JIT options: left to the driver's JIT", m->seq, img->jit_n);
		return 0;
	}
	pthread_once(&cache_once, cache_init);
	char *faulty = NULL;
	if (shim_fault(SHIM_FAULT_COMPILE)) {
		static const char bad[] = "\n.gpuprobe_test_fault\n";
		faulty = malloc(len + sizeof(bad));
		if (!faulty)
			return 0;
		memcpy(faulty, ptx, len);
		memcpy(faulty + len, bad, sizeof(bad));
		ptx = faulty;
		len += sizeof(bad) - 1;
	}
	double t0 = now_ms();
	int cached = cache_usable && o.cacheable;
	struct cubin_key key;
	char path[PATH_MAX] = "";
	if (cached) {
		/* A check remembers only compile errors, and whole-program and relocatable
		 * compiles may disagree (register allocation): one key space per mode. */
		char id[sizeof(driver_id) + 16];
		snprintf(id, sizeof(id), "%s%s", driver_id,
			 precompile_mode == PRECOMPILE_CHECK ? " check" : "");
		struct cubin_key_input in = {.ptx = ptx, .ptx_len = len, .sm = sm,
					     .driver_version = driver_version, .driver_id = id,
					     .nopts = o.nkey, .opt_ids = o.key_id, .opt_vals = o.key_val};
		cubin_key_make(&in, &key);
		cubin_cache_path(cache_dir, &key, path, sizeof(path));
		void *cubin = NULL;
		size_t size = 0;
		int rc = cubin_cache_get(cache_dir, &key, &cubin, &size);
		if (rc == 0 && size > sizeof(FAILED) && !memcmp(cubin, FAILED, sizeof(FAILED) - 1) &&
		    !((char *)cubin)[size - 1]) {
			/* The compiler rejected this very PTX before: the same line, no JIT. */
			shim_log("module %u: compile error from the cache (%s)", m->seq, path);
			compile_failed(m, (const char *)cubin + sizeof(FAILED) - 1);
			free(cubin);
			free(faulty);
			return -1;
		}
		if (rc == 0 && precompile_mode == PRECOMPILE_CHECK) {
			int ok = size == sizeof(CHECKED) && !memcmp(cubin, CHECKED, sizeof(CHECKED));
			free(cubin);
			if (ok) {
				shim_log("module %u: compiled before (%s): the driver's JIT cache has "
					 "the code", m->seq, path);
				free(faulty);
				return 0;
			}
			rc = -ENOENT;   /* a check keeps no code: not an entry of this mode */
		}
		if (rc == 0) {
			shim_log("module %u: cubin from the cache (%s, %zu bytes, %.1f ms)", m->seq,
				 path, size, now_ms() - t0);
			use_cubin(img, cubin, size);
			free(faulty);
			return 1;
		}
		if (rc == -EPERM || rc == -EINVAL || rc == -ELOOP)   /* not ours: always said */
			shim_msg("module %u: cache entry %s %s: ignored, compiled again", m->seq, path,
				 rc == -EPERM ? "belongs to another user" : rc == -ELOOP
				 ? "is a symbolic link" : "is not a regular file");
		else if (rc != -ENOENT)
			shim_log("module %u: cache entry %s %s: compiled again", m->seq, path,
				 rc == -EBADMSG ? "is corrupt" : strerror(-rc));
	}
	struct jit_result r;
	/* A kernel that launches kernels loads only as a cubin linked with the device runtime */
	int check = precompile_mode == PRECOMPILE_CHECK && !ptx_uses_device_runtime(ptx);
	CUresult rc = check
		? jit_check_ptx(ptx, len, img->jit_n, (const CUjit_option *)img->jit_opts,
				img->jit_vals, &o, &r)
		: jit_compile_ptx(ptx, len, &o, &r);
	free(faulty);
	if (rc != CUDA_SUCCESS) {
		const char *name = NULL;
		shim_fnty_cuGetErrorName *gn = SHIM_REAL(cuGetErrorName);
		if (!gn || gn(rc, &name) != CUDA_SUCCESS)
			name = NULL;
		char why[sizeof(FAILED) + 600];
		int n = snprintf(why, sizeof(why), "%s", FAILED);
		if (name)
			snprintf(why + n, sizeof(why) - n, "%s%s%s", name, r.error[0] ? ": " : "", r.error);
		else
			snprintf(why + n, sizeof(why) - n, "CUDA error %d%s%s", (int)rc,
				 r.error[0] ? ": " : "", r.error);
		compile_failed(m, why + n);
		/* A rejection of the PTX itself repeats for the same key: remember it, so the next
		 * run skips the JIT (a large module takes seconds to fail). Anything else (out of
		 * memory, a driver hiccup) may not. */
		if (cached && rc == CUDA_ERROR_INVALID_PTX)
			cubin_cache_put(cache_dir, &key, why, strlen(why) + 1);
		return -1;
	}
	if (check) {
		if (cached)
			cubin_cache_put(cache_dir, &key, CHECKED, sizeof(CHECKED));
		shim_log("module %u: compiled in %.1f ms by the driver's JIT (sm_%u, checked; the load "
			 "takes the code from the driver's JIT cache)", m->seq, r.ms, sm);
		return 0;
	}
	char note[PATH_MAX + 64];
	if (!cubin_cache_enabled())
		snprintf(note, sizeof(note), "not cached (GPUPROBE_CACHE=0)");
	else if (!cache_usable)
		snprintf(note, sizeof(note), "not cached (no usable cache directory)");
	else if (!o.cacheable)
		snprintf(note, sizeof(note), "not cached (the JIT options pass symbol tables)");
	else {
		int w = cubin_cache_put(cache_dir, &key, r.cubin, r.size);
		if (w)
			snprintf(note, sizeof(note), "not cached (%s: %s)", path, strerror(-w));
		else
			snprintf(note, sizeof(note), "cached as %s", path);
	}
	shim_log("module %u: compiled in %.1f ms by the driver's JIT linker (sm_%u, cubin %zu "
		 "bytes); %s", m->seq, r.ms, sm, r.size, note);
	use_cubin(img, r.cubin, r.size);
	return 1;
}

static int transform(struct shim_image *img, const struct shim_module *m);

/* Instrumenting and the compile check make driver calls of ours: relaxed (capture.h). */
int shim_probes_transform(struct shim_image *img, const struct shim_module *m)
{
	if (!shim_probes_enabled || !img->data)
		return 0;
	struct shim_relaxed r;
	shim_relax(&r);
	int rc = transform(img, m);
	shim_unrelax(&r);
	return rc;
}

static int transform(struct shim_image *img, const struct shim_module *m)
{
	pthread_once(&init_once, init);
	if (!probes || __atomic_load_n(&final_done, __ATOMIC_ACQUIRE))
		return 0;
	char err[1024] = "";
	const char *ptx = NULL;
	size_t len = 0;
	void *payload = NULL;
	if (img->kind == MODULE_IMAGE_PTX) {
		ptx = img->data;
		len = strlen(ptx);
	} else if (img->kind == MODULE_IMAGE_FATBIN || img->kind == MODULE_IMAGE_WRAPPER) {
		struct fatbin *fb = NULL;
		if (fatbin__open_mem(img->data, img->size, &fb, err, sizeof(err))) {
			shim_msg("module %u: fatbin unreadable (%s); loaded without probes", m->seq, err);
			return 0;
		}
		const struct fatbin_entry *e = fatbin__best_ptx(fb, device_sm);
		if (!e && own_active())   /* gpuprobe's own driver runs a newer target's PTX as well */
			e = fatbin__lowest_portable_ptx(fb);
		if (!e) {
			fatbin__close(fb);
			shim_jit_no_ptx(img, m, device_sm);   /* a library's machine code, or rebuild */
			return 0;
		}
		size_t units = 0;   /* -rdc: every translation unit's PTX, linked (ptx-frontend/link.h) */
		char *text = NULL;
		int rc = fatbin__linked_ptx(fb, e, &text, &len, &units, err, sizeof(err));
		payload = text;
		fatbin__close(fb);
		if (rc) {
			shim_msg("module %u: PTX unreadable (%s); loaded without probes", m->seq, err);
			return 0;
		}
		ptx = payload;
	} else {
		if (!m->has_ptx)
			shim_jit_no_ptx(img, m, device_sm);   /* a cubin no JIT recorded (jit_capture.h) */
		return 0;
	}
	remember_names(ptx, len);
	char *out = NULL;
	size_t out_len = 0;
	struct gp_inst_stats st;
	double t0 = now_ms();
	int rc = shim_fault(SHIM_FAULT_INSTRUMENT)
		? (snprintf(err, sizeof(err), "GPUPROBE_TEST_FAULT=instrument"), -ECANCELED)
		: gp_nv_probes__instrument(probes, ptx, len, &out, &out_len, &st, err, sizeof(err));
	free(payload);
	if (rc) {
		shim_msg("module %u: not instrumented (%s); loaded unchanged", m->seq, err);
		return 0;
	}
	if (!out)
		return 0;
	shim_log("module %u: instrumented (%u probe sites in %u functions) in %.1f ms", m->seq,
		 st.sites, st.functions, now_ms() - t0);
	if (__builtin_expect(shim_llvm_enabled, 0)) {   /* GPUPROBE_LLVM_CACHE: probes, then LLVM */
		size_t n = 0;
		char *lowered = shim_llvm_lower(out, out_len, m->seq, "the instrumented PTX loaded as is", &n);
		if (lowered) {
			free(out);
			out = lowered;
			out_len = n;
		}
	}
	int c = precompile(img, m, out, out_len);
	if (c) {
		free(out);
		return c > 0;
	}
	free(img->owned);
	img->owned = out;
	img->data = out;
	img->size = out_len + 1;
	img->kind = MODULE_IMAGE_PTX;
	return 1;
}

struct gp_nv_probes *shim_probes_pipeline(unsigned *sm)
{
	if (!shim_probes_enabled)
		return NULL;
	pthread_once(&init_once, init);
	if (!probes || __atomic_load_n(&final_done, __ATOMIC_ACQUIRE))
		return NULL;
	*sm = device_sm;
	return probes;
}

void shim_probes_note_kernels(const char *ptx, size_t len)
{
	remember_names(ptx, len);
}

/* Why the last check of this thread failed beyond its CUDA error (a test fault), or "". */
static __thread char load_why[64];

void shim_probes_load_failed(const struct shim_module *m, int rc, int cubin)
{
	const char *name = NULL;
	shim_fnty_cuGetErrorName *gn = SHIM_REAL(cuGetErrorName);
	if (gn)
		gn((CUresult)rc, &name);
	shim_msg("module %u: the instrumented %s did not load (%s, CUDA error %d%s%s); loaded the "
		 "original without probes", m ? m->seq : 0, cubin ? "cubin" : "PTX",
		 name ? name : "?", rc, load_why[0] ? ": " : "", load_why);
	load_why[0] = 0;
}

static void unmatched_line(void *user, const char *text)
{
	(void)user;
	shim_msg("%s", text);
}

void shim_probes_final(void)
{
	if (!output && !shim_copier_active())
		return;
	pthread_mutex_lock(&final_lock);
	if (!final_done) {
		__atomic_store_n(&final_done, 1, __ATOMIC_RELEASE);
		/* Every kernel the application launched has finished before its context goes away
		 * or before exit handlers run after its last synchronisation. */
		CUcontext c = NULL, popped;
		SHIM_REAL(cuCtxGetCurrent)(&c);
		if (c) {
			SHIM_REAL(cuCtxSynchronize)();
		} else if (probes_ctx &&
			   SHIM_REAL(cuCtxPushCurrent_v2)(probes_ctx) == CUDA_SUCCESS) {
			SHIM_REAL(cuCtxSynchronize)();   /* a thread of ours: SIGTERM's report */
			SHIM_REAL(cuCtxPopCurrent_v2)(&popped);
		}
		shim_clock_check(1);   /* the last offset, for the report's drift */
		if (label_report)
			shim_msg("report of process %ld (parent %ld):", (long)getpid(), (long)getppid());
		gp_nv_probes__unmatched(probes, unmatched_line, NULL);
		if (output)
			gp_output__stop_thread(output, 1);
		else
			shim_copier_final();   /* gpuprobe run prints it (copier.h) */
		if (output_file)
			fflush(output_file);
		fflush(stderr);
	}
	pthread_mutex_unlock(&final_lock);
}

/* --- context teardown: the final report while the maps still exist ----------------------- */

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	if (__builtin_expect(shim_probes_enabled, 0))
		shim_probes_final();
	SHIM_TAILCALL(cuCtxDestroy_v2, ctx);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	if (__builtin_expect(shim_probes_enabled, 0))
		shim_probes_final();
	SHIM_TAILCALL(cuDevicePrimaryCtxRelease_v2, dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	if (__builtin_expect(shim_probes_enabled, 0))
		shim_probes_final();
	SHIM_TAILCALL(cuDevicePrimaryCtxReset_v2, dev);
}

/* --- instrumented modules load lazily: compile every kernel now, while the original can still
 * be loaded instead (CUDA's lazy loading defers the JIT to the first lookup or launch) -------- */

/* GPUPROBE_TEST_FAULT=load, function: the instrumented module loaded, but is taken as if its
 * load, or its first function's, had failed (it is unloaded; the original loads). */
static CUresult check_fault(void)
{
	load_why[0] = 0;
	if (!shim_fault(SHIM_FAULT_LOAD) && !shim_fault(SHIM_FAULT_FUNCTION))
		return CUDA_SUCCESS;
	int load = shim_fault(SHIM_FAULT_LOAD);
	snprintf(load_why, sizeof(load_why), "GPUPROBE_TEST_FAULT=%s", load ? "load" : "function");
	return load ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_NOT_FOUND;
}

static CUresult check_library(CUlibrary lib)
{
	CUresult fault = check_fault();
	if (fault != CUDA_SUCCESS) {
		SHIM_REAL(cuLibraryUnload)(lib);
		return fault;
	}
	CUcontext ctx = NULL;
	if (SHIM_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx)
		return CUDA_SUCCESS;   /* no context to load kernels into: left to the first use */
	unsigned n = 0;
	CUresult rc = SHIM_REAL(cuLibraryGetKernelCount)(&n, lib);
	CUkernel *ks = rc == CUDA_SUCCESS && n ? calloc(n, sizeof(*ks)) : NULL;
	if (rc == CUDA_SUCCESS && n && !ks)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS && n)
		rc = SHIM_REAL(cuLibraryEnumerateKernels)(ks, n, lib);
	/* cuKernelGetFunction alone may hand out a function still to be loaded: cuFuncLoad
	 * compiles it now (CUDA 12.4+ drivers have it). */
	shim_fnty_cuFuncLoad *load = SHIM_REAL(cuFuncLoad);
	for (unsigned i = 0; rc == CUDA_SUCCESS && i < n; i++) {
		CUfunction f;
		rc = SHIM_REAL(cuKernelGetFunction)(&f, ks[i]);
		if (rc == CUDA_SUCCESS && load)
			rc = load(f);
	}
	free(ks);
	if (rc != CUDA_SUCCESS)
		SHIM_REAL(cuLibraryUnload)(lib);
	return rc;
}

static CUresult check_module(CUmodule mod)
{
	CUresult fault = check_fault();
	if (fault != CUDA_SUCCESS) {
		SHIM_REAL(cuModuleUnload)(mod);
		return fault;
	}
	unsigned n = 0;
	shim_fnty_cuFuncLoad *load = SHIM_REAL(cuFuncLoad);
	CUresult rc = SHIM_REAL(cuModuleGetFunctionCount)(&n, mod);
	CUfunction *fs = rc == CUDA_SUCCESS && n && load ? calloc(n, sizeof(*fs)) : NULL;
	if (fs)
		rc = SHIM_REAL(cuModuleEnumerateFunctions)(fs, n, mod);
	for (unsigned i = 0; fs && rc == CUDA_SUCCESS && i < n; i++)
		rc = load(fs[i]);
	free(fs);
	if (rc != CUDA_SUCCESS)
		SHIM_REAL(cuModuleUnload)(mod);
	return rc;
}

/* The checks load and unload code of ours: relaxed (capture.h). */
CUresult shim_probes_check_library(CUlibrary lib)
{
	struct shim_relaxed r;
	shim_relax(&r);
	CUresult rc = check_library(lib);
	shim_unrelax(&r);
	return rc;
}

CUresult shim_probes_check_module(CUmodule mod)
{
	struct shim_relaxed r;
	shim_relax(&r);
	CUresult rc = check_module(mod);
	shim_unrelax(&r);
	return rc;
}
