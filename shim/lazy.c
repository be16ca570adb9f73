/* Kernels instrumented at their first launch (lazy.h): the module's kept PTX, and the first-launch
 * work of one kernel in one context (split, instrument, bind, compile, compare with the original).
 * The launch-time choice between the two functions is lazy_launch.c. */
#include "shim/lazy.h"
#include "common/env.h"
#include "shim/capture.h"
#include "shim/fault.h"
#include "shim/lazy_cache.h"
#include "shim/lazy_internal.h"
#include "shim/jit_compile.h"
#include "shim/log.h"
#include "shim/probes.h"
#include "shim/sha256.h"

#include "nvidia/probes.h"
#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int shim_lazy_enabled;

int shim_lazy_env(void)
{
	/* common/env.c: nothing in a setuid process, one line for a bad value */
	/* GPUPROBE_LLVM_CACHE (llvm_ptx.c) lowers whole instrumented modules: none per kernel */
	shim_lazy_enabled = (gp_env_str(GP_VAR_PROBES) || gp_env_str(GP_VAR_CONFIG)) &&
			    gp_env_flag(GP_VAR_LAZY) && !gp_env_str(GP_VAR_LLVM_CACHE);
	return shim_lazy_enabled;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- at load --------------------------------------------------------------------------------- */

/* The PTX of img for this device: a malloc'd copy (the application may free its image after the
 * load), or NULL. From a compressed fatbin entry, also a copy of the entry in *packed (its payload
 * copied, the entry in *pe pointing at it). */
static char *device_ptx(const struct shim_image *img, unsigned sm, size_t *len, void **packed,
			struct fatbin_entry *pe)
{
	char err[256];
	*packed = NULL;
	if (img->kind == MODULE_IMAGE_PTX) {
		*len = strlen(img->data);
		return strndup(img->data, *len);
	}
	if (img->kind != MODULE_IMAGE_FATBIN && img->kind != MODULE_IMAGE_WRAPPER)
		return NULL;
	struct fatbin *fb = NULL;
	if (fatbin__open_mem(img->data, img->size, &fb, err, sizeof(err)))
		return NULL;
	const struct fatbin_entry *e = fatbin__best_ptx(fb, sm);
	char *payload = NULL;
	size_t units = 0;   /* -rdc: every translation unit's PTX, linked (ptx-frontend/link.h) */
	int rc = e ? fatbin__linked_ptx(fb, e, &payload, len, &units, err, sizeof(err)) : -1;
	if (!rc && units == 1 && e->compression != FATBIN_COMPRESS_NONE && (*packed = malloc(e->payload_size))) {
		memcpy(*packed, e->payload, e->payload_size);
		*pe = *e;
		pe->payload = *packed;
		pe->options = pe->source_name = NULL;
		pe->options_len = pe->source_name_len = 0;
	}
	fatbin__close(fb);
	if (rc)
		return NULL;
	return payload;
}

/* The module's key: SHA-256 of its PTX, or of the compressed entry it came from (the same
 * text decompresses from the same bytes; 28 KB instead of 1.1 MB for the 1,000-kernel module, 8 ms
 * of SHA-256 saved at every cached first launch). */
static void module_hash(struct lazy_module *lm)
{
	struct gp_sha256 s;
	gp_sha256_init(&s);
	if (lm->packed) {
		const struct fatbin_entry *e = &lm->packed_entry;
		uint64_t head[3] = {e->compression, e->payload_size, e->uncompressed_size};
		gp_sha256_update(&s, "packed", 6);
		gp_sha256_update(&s, head, sizeof(head));
		gp_sha256_update(&s, e->payload, e->payload_size);
	} else {
		gp_sha256_update(&s, "text", 4);
		gp_sha256_update(&s, lm->ptx, lm->len);
	}
	gp_sha256_final(&s, lm->hash);
	lm->hashed = 1;
}

int shim_lazy_prepare(const struct shim_image *img, struct shim_module *m)
{
	unsigned sm = 0;
	if (!shim_lazy_enabled || !img->data || !shim_probes_pipeline(&sm))
		return 0;
	size_t len = 0;
	void *packed = NULL;
	struct fatbin_entry pe;
	char *ptx = device_ptx(img, sm, &len, &packed, &pe);
	if (!ptx)
		return 0;   /* no PTX for this device: the whole-module path says so */
	char why[256];
	struct lazy_module *lm = calloc(1, sizeof(*lm));
	if (!lm) {
		free(ptx);
		free(packed);
		return 0;
	}
	if (ptx_split_precheck(ptx, len, why, sizeof(why))) {
		shim_log("module %u: kernels not split (%s): the whole module is instrumented now",
			 m->seq, why);
		goto whole;
	}
	/* The options stay with the module for every kernel's load; values that point at the
	 * application's data (symbol tables) may be gone by then. */
	if (jit_options_from_app(&lm->jit, img->jit_n, (const CUjit_option *)img->jit_opts,
				 img->jit_vals) || !lm->jit.cacheable) {
		shim_log("module %u: JIT options that point at the application's data: the whole "
			 "module is instrumented now", m->seq);
		goto whole;
	}
	pthread_mutex_init(&lm->lock, NULL);
	lm->m = m;
	lm->sm = sm;
	shim_probes_note_kernels(ptx, len);
	if (packed) {
		/* Kept compressed: decompressed again only for a kernel not in the cache. */
		lm->packed = packed;
		lm->packed_entry = pe;
		free(ptx);
		module_hash(lm);
	} else {
		lm->ptx = ptx;
		lm->len = len;
	}
	m->lazy = lm;
	return 1;
whole:
	free(ptx);
	free(packed);
	free(lm);
	return 0;
}

void shim_lazy_loaded(struct shim_module *m, const void *handle, int library, CUresult rc)
{
	struct lazy_module *lm = m ? m->lazy : NULL;
	if (!lm)
		return;
	if (rc != CUDA_SUCCESS) {
		m->lazy = NULL;
		free(lm->ptx);
		free(lm->packed);
		free(lm);
		return;
	}
	lm->handle = handle;
	lm->library = library;
	shim_log("module %u: %u kernels, each instrumented at its first launch", m->seq, m->kernels);
}

void shim_lazy_unload(const void *handle)
{
	struct shim_module *m = registry_get(REGISTRY_MODULES, handle);
	struct lazy_module *lm = m ? m->lazy : NULL;
	if (!lm || lm->handle != handle)
		return;
	struct shim_relaxed relaxed;
	shim_relax(&relaxed);
	pthread_mutex_lock(&lm->lock);
	lm->dead = 1;
	for (struct lazy_split *s = lm->splits, *next; s; s = next) {
		next = s->next;
		SHIM_REAL(cuModuleUnload)(s->mod);
		free(s);
	}
	lm->splits = NULL;
	/* The kept text and its parse: no kernel of a dead module is launched again. */
	ptx_split_src_free(lm->src);
	lm->src = NULL;
	pthread_mutex_unlock(&lm->lock);
	shim_unrelax(&relaxed);
}

void shim_lazy_kernel_init(struct shim_kernel *k, const void *handle, int is_kernel)
{
	if (!k->module || !k->module->lazy || !k->name)
		return;
	struct lazy_kernel *lk = calloc(1, sizeof(*lk));
	if (!lk)
		return;   /* then launched as the original, without probes */
	pthread_mutex_init(&lk->lock, NULL);
	lk->lm = k->module->lazy;
	lk->kernel = is_kernel ? handle : NULL;
	k->lazy = lk;
}

/* ---- the first launch in a context ----------------------------------------------------------- */

struct steps {
	double parse, instrument, compile, load;
};

/* The instrumented split PTX of k: from the cache, or split and instrumented now (then cached).
 * 0 with e filled (e->ptx NULL: no probe site), -1 with why. */
static int instrumented(struct lazy_module *lm, const char *kernel, struct lazy_entry *e,
			struct cubin_key *key, int *have_key, int *from_cache, struct steps *t,
			char *why, size_t whylen)
{
	double t0 = now_ms();
	pthread_mutex_lock(&lm->lock);
	if (lm->dead) {
		pthread_mutex_unlock(&lm->lock);
		snprintf(why, whylen, "its module was unloaded");
		return -1;
	}
	if (!lm->hashed)
		module_hash(lm);
	pthread_mutex_unlock(&lm->lock);
	/* A test fault (GPUPROBE_TEST_FAULT) must meet the step it names: no cache then. */
	*have_key = !shim_faults && !lazy_cache_key(lm->hash, kernel, lm->sm, lm->jit.nkey,
						    lm->jit.key_id, lm->jit.key_val, key);
	if (*have_key && lazy_cache_get(key, e) == 0) {
		*from_cache = 1;
		unsigned sm = 0;
		gp_nv_probes__note_kernel(shim_probes_pipeline(&sm), kernel);   /* the report at exit */
		t->parse = now_ms() - t0;
		return 0;
	}
	/* Parse once per module, under its lock; split without it (the parse is only read). */
	pthread_mutex_lock(&lm->lock);
	if (!lm->src && !lm->dead) {
		char perr[256] = "";
		if (!lm->ptx && lm->packed &&
		    fatbin__entry_data(&lm->packed_entry, (void **)&lm->ptx, &lm->len, perr,
				       sizeof(perr))) {
			pthread_mutex_unlock(&lm->lock);
			snprintf(why, whylen, "PTX not decompressed: %s", perr);
			return -1;
		}
		lm->src = ptx_split_src_new(lm->ptx, lm->len, perr, sizeof(perr));
		if (!lm->src) {
			pthread_mutex_unlock(&lm->lock);
			snprintf(why, whylen, "PTX does not parse: %s", perr);
			return -1;
		}
		/* The parse keeps its own copy of the text. */
		free(lm->ptx);
		lm->ptx = NULL;
		if (lm->packed) {
			free(lm->packed);
			lm->packed = NULL;
		}
	}
	struct ptx_split_src *src = lm->src;
	pthread_mutex_unlock(&lm->lock);
	if (!src) {
		snprintf(why, whylen, "its module was unloaded");
		return -1;
	}
	char *split = NULL;
	size_t split_len = 0;
	if (ptx_split_kernel(src, kernel, &split, &split_len, &e->vars, why, whylen))
		return -1;
	double t1 = now_ms();
	t->parse = t1 - t0;
	unsigned sm = 0;
	struct gp_nv_probes *ps = shim_probes_pipeline(&sm);
	struct gp_inst_stats st = {0};
	char err[512] = "";
	int rc = !ps ? (snprintf(err, sizeof(err), "probes are disabled"), -1)
		: shim_fault(SHIM_FAULT_INSTRUMENT)
		? (snprintf(err, sizeof(err), "GPUPROBE_TEST_FAULT=instrument"), -1)
		: gp_nv_probes__instrument(ps, split, split_len, &e->ptx, &e->ptx_len, &st, err,
					   sizeof(err));
	free(split);
	t->instrument = now_ms() - t1;
	if (rc) {
		snprintf(why, whylen, "%s", err);
		lazy_entry_free(e);
		return -1;
	}
	e->sites = st.sites;
	e->functions = st.functions;
	if (*have_key)
		lazy_cache_put(key, e);
	return 0;
}

static int resolve_var(void *user, const char *name, uint64_t *addr)
{
	const struct lazy_module *lm = user;
	CUdeviceptr d = 0;
	size_t bytes = 0;
	CUresult rc = lm->library
		? SHIM_REAL(cuLibraryGetGlobal)(&d, &bytes, (CUlibrary)lm->handle, name)
		: SHIM_REAL(cuModuleGetGlobal_v2)(&d, &bytes, (CUmodule)lm->handle, name);
	*addr = d;
	return rc == CUDA_SUCCESS && d ? 0 : -1;
}

static int attr(CUfunction f, CUfunction_attribute a)
{
	int v = 0;
	if (SHIM_REAL(cuFuncGetAttribute)(&v, a, f) != CUDA_SUCCESS)
		return -1;
	return v;
}

/* What the application set on its function, the instrumented one gets too (then read back:
 * a setting it cannot take, such as more dynamic shared memory than is left beside a larger
 * static size, shows in its own attributes). */
static const CUfunction_attribute settable[] = {
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
	CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
	CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
	CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
	CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
	CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
	CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
};

static void copy_attributes(CUfunction orig, CUfunction inst)
{
	for (size_t i = 0; i < sizeof(settable) / sizeof(settable[0]); i++) {
		int o = attr(orig, settable[i]), n = attr(inst, settable[i]);
		if (o >= 0 && o != n)
			SHIM_REAL(cuFuncSetAttribute)(inst, settable[i], o);
	}
}

void lazy_fn_limits(struct lazy_fn *fn)
{
	fn->max_threads = attr(fn->inst, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	fn->max_dyn = attr(fn->inst, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
	fn->regs = attr(fn->inst, CU_FUNC_ATTRIBUTE_NUM_REGS);
	fn->static_smem = attr(fn->inst, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
	fn->local = attr(fn->inst, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
	if (fn->orig) {
		fn->orig_regs = attr(fn->orig, CU_FUNC_ATTRIBUTE_NUM_REGS);
		fn->orig_threads = attr(fn->orig, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
		fn->orig_local = attr(fn->orig, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
	}
	/* Unknown limits (an attribute the driver would not tell) never stop a launch. */
	if (fn->max_threads < 0)
		fn->max_threads = 1 << 30;
	if (fn->max_dyn < 0)
		fn->max_dyn = 1 << 30;
}

/* The split module's table of the original module's variable addresses (ptx_split_bind_table),
 * written before any launch, through a non-blocking stream of our own (never the legacy stream,
 * which a capturing stream of the application would have to synchronise with: capture.h). */
static CUresult fill_bind_table(CUmodule mod, const uint64_t *addrs, unsigned n)
{
	CUdeviceptr d = 0;
	size_t bytes = 0;
	CUstream st = NULL;
	CUresult rc = SHIM_REAL(cuModuleGetGlobal_v2)(&d, &bytes, mod, PTX_SPLIT_BIND_TABLE);
	if (rc == CUDA_SUCCESS && bytes < (size_t)n * sizeof(*addrs))
		rc = CUDA_ERROR_INVALID_IMAGE;
	if (rc == CUDA_SUCCESS)
		rc = SHIM_REAL(cuStreamCreate)(&st, CU_STREAM_NON_BLOCKING);
	if (rc == CUDA_SUCCESS)
		rc = SHIM_REAL(cuMemcpyHtoDAsync_v2)(d, addrs, (size_t)n * sizeof(*addrs), st);
	if (rc == CUDA_SUCCESS)
		rc = SHIM_REAL(cuStreamSynchronize)(st);
	if (st)
		SHIM_REAL(cuStreamDestroy_v2)(st);
	return rc;
}

/* Bind, compile and load the instrumented kernel into fn (fn->inst stays NULL on failure, with
 * one line). */
static void load_instrumented(struct shim_kernel *k, struct lazy_fn *fn, struct lazy_entry *e,
			      const struct cubin_key *key, int have_key, struct steps *t)
{
	struct lazy_module *lm = k->lazy->lm;
	char why[512] = "";
	double t0 = now_ms();
	char *bound = NULL;
	size_t bound_len = 0;
	uint64_t *addrs = calloc(e->vars.n ? e->vars.n : 1, sizeof(*addrs));
	if (!addrs) {
		shim_msg("kernel %s (module %u): not instrumented (out of memory); runs without probes",
			 k->name, lm->m->seq);
		return;
	}
	if (ptx_split_bind_table(e->ptx, e->ptx_len, &e->vars, resolve_var, lm, &bound, &bound_len,
				 addrs, why, sizeof(why))) {
		free(addrs);
		shim_msg("kernel %s (module %u): not instrumented (%s); runs without probes",
			 k->name, lm->m->seq, why);
		return;
	}
	if (shim_fault(SHIM_FAULT_COMPILE)) {
		/* A line no compiler accepts (GPUPROBE_TEST_FAULT=compile). */
		static const char bad[] = "\n.gpuprobe_test_fault\n";
		char *faulty = realloc(bound, bound_len + sizeof(bad));
		if (faulty) {
			memcpy(faulty + bound_len, bad, sizeof(bad));
			bound = faulty;
			bound_len += sizeof(bad) - 1;
		}
	}
	if (shim_dump_dir) {
		/* module-NNNN-kHHHHHHHH.ptx: HHHHHHHH the kernel's name hash (kernel_hash). */
		uint32_t h = 2166136261u;
		for (const char *p = k->name; *p; p++)
			h = (h ^ (uint8_t)*p) * 16777619u;
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "-k%08x", h);
		shim_image_dump(lm->m, suffix, bound, bound_len);
	}
	double t1 = now_ms();
	CUmodule mod = NULL;
	CUfunction inst = NULL;
	const char *step = "compile";
	CUresult rc = jit_load_module(bound, &lm->jit, &mod, why, sizeof(why));
	free(bound);
	if (rc == CUDA_SUCCESS && shim_fault(SHIM_FAULT_LOAD)) {
		/* GPUPROBE_TEST_FAULT=load, function: taken as if the load, or the function's, had
		 * failed. */
		rc = CUDA_ERROR_INVALID_IMAGE;
		snprintf(why, sizeof(why), "GPUPROBE_TEST_FAULT=load");
		step = "load";
	}
	if (rc == CUDA_SUCCESS && e->vars.n && (rc = fill_bind_table(mod, addrs, e->vars.n))) {
		step = "load";
		snprintf(why, sizeof(why), "writing its table of variable addresses");
	}
	free(addrs);
	if (rc == CUDA_SUCCESS)
		rc = SHIM_REAL(cuModuleGetFunction)(&inst, mod, k->name);
	if (rc == CUDA_SUCCESS && shim_fault(SHIM_FAULT_FUNCTION)) {
		rc = CUDA_ERROR_NOT_FOUND;
		snprintf(why, sizeof(why), "GPUPROBE_TEST_FAULT=function");
		step = "load";
	}
	shim_fnty_cuFuncLoad *fl = SHIM_REAL(cuFuncLoad);
	if (rc == CUDA_SUCCESS && fl)
		rc = fl(inst);   /* lazy loading would defer a compile error to the launch */
	double t2 = now_ms();
	t->compile = t2 - t1;
	if (rc != CUDA_SUCCESS) {
		if (mod)
			SHIM_REAL(cuModuleUnload)(mod);
		char line[700];
		snprintf(line, sizeof(line), "%s%s%s", shim_err_name(rc), why[0] ? ": " : "", why);
		shim_msg("kernel %s (module %u): the instrumented kernel did not %s (%s); runs "
			 "without probes", k->name, lm->m->seq, step, line);
		/* A rejection of the PTX repeats for the same key: remembered, the next run skips
		 * the compile. */
		if (have_key && rc == CUDA_ERROR_INVALID_PTX && !shim_faults &&
		    (e->failed = strdup(line)))
			lazy_cache_put(key, e);
		return;
	}
	struct lazy_split *s = calloc(1, sizeof(*s));
	pthread_mutex_lock(&lm->lock);
	if (lm->dead || !s) {
		pthread_mutex_unlock(&lm->lock);
		free(s);
		SHIM_REAL(cuModuleUnload)(mod);
		return;
	}
	s->mod = mod;
	s->next = lm->splits;
	lm->splits = s;
	pthread_mutex_unlock(&lm->lock);
	if (fn->orig)
		copy_attributes(fn->orig, inst);
	fn->inst = inst;
	lazy_fn_limits(fn);
	t->load = (now_ms() - t2) + (t1 - t0);
}

struct lazy_fn *lazy_first_launch(struct shim_kernel *k, CUfunction f, CUcontext ctx)
{
	struct lazy_kernel *lk = k->lazy;
	pthread_mutex_lock(&lk->lock);
	struct lazy_fn *fn = lazy_find(lk, ctx);
	if (fn) {   /* another thread did it meanwhile */
		pthread_mutex_unlock(&lk->lock);
		return fn;
	}
	fn = calloc(1, sizeof(*fn));
	if (!fn) {
		pthread_mutex_unlock(&lk->lock);
		return NULL;
	}
	fn->ctx = ctx;
	/* The original function in this context, for its attributes. */
	if (lk->kernel && (const void *)f == lk->kernel) {
		if (SHIM_REAL(cuKernelGetFunction)(&fn->orig, (CUkernel)f) != CUDA_SUCCESS)
			fn->orig = NULL;
	} else {
		fn->orig = f;
	}
	/* Our loads must not break a stream capture of the application's (global capture mode
	 * forbids module loads in every thread): relaxed for their duration (capture.h). */
	struct shim_relaxed relaxed;
	shim_relax(&relaxed);

	double t0 = now_ms();
	struct steps t = {0};
	struct lazy_entry e = {0};
	struct cubin_key key;
	int have_key = 0, from_cache = 0;
	char why[512] = "";
	if (instrumented(lk->lm, k->name, &e, &key, &have_key, &from_cache, &t, why, sizeof(why))) {
		shim_msg("kernel %s (module %u): not instrumented (%s); runs without probes", k->name,
			 lk->lm->m->seq, why);
	} else if (e.failed) {
		shim_msg("kernel %s (module %u): the instrumented kernel did not compile (%s); runs "
			 "without probes", k->name, lk->lm->m->seq, e.failed);
	} else if (!e.ptx) {
		shim_log("kernel %s (module %u): no probe site; runs as it is", k->name,
			 lk->lm->m->seq);
	} else {
		load_instrumented(k, fn, &e, &key, have_key, &t);
	}
	if (fn->inst && shim_log_enabled) {
		char path[4200] = "";
		if (have_key)
			lazy_cache_path(&key, path, sizeof(path));
		shim_msg("kernel %s (module %u): first launch with probes in %.1f ms: parse %.1f, "
			 "instrument %.1f, compile %.1f, load %.1f ms; %u probe sites in %u functions; "
			 "%d registers/thread (original %d), %d bytes local (original %d); %s%s%s",
			 k->name, lk->lm->m->seq, now_ms() - t0, t.parse, t.instrument, t.compile,
			 t.load, e.sites, e.functions, fn->regs, fn->orig_regs, fn->local,
			 fn->orig_local,
			 from_cache ? "instrumented PTX from the cache" :
			 have_key ? "instrumented now, cached" : "instrumented now, not cached",
			 path[0] ? " as " : "", path);
	}
	lazy_entry_free(&e);
	shim_unrelax(&relaxed);
	/* Published complete: launches read the list without the lock. */
	fn->next = lk->fns;
	__atomic_store_n(&lk->fns, fn, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lk->lock);
	return fn;
}
