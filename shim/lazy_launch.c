/* The launch side of per-kernel instrumentation (lazy.h): which function a launch runs. After a
 * kernel's first launch in a context this is a lock-free hash lookup, a short list walk and a few
 * comparisons; nothing is allocated. */
#include "shim/lazy.h"
#include "shim/launch_window.h"
#include "shim/lazy_internal.h"
#include "shim/log.h"

/* The entry of the application's handle f in the current context, without doing any work. */
static struct lazy_fn *entry_of(const void *f, struct shim_kernel **kout)
{
	struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	if (!k || !k->lazy)
		return NULL;
	CUcontext ctx = NULL;
	if (k->lazy->lm->library && SHIM_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS)
		return NULL;
	if (kout)
		*kout = k;
	return lazy_find(k->lazy, ctx);
}

CUfunction shim_lazy_pick(CUfunction f, unsigned block, unsigned smem)
{
	struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	if (!k || !k->lazy)
		return f;
	/* A library's kernel runs in whatever context is current; a module's function in its
	 * module's. */
	CUcontext ctx = NULL;
	if (k->lazy->lm->library && SHIM_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS)
		return f;
	struct lazy_fn *fn = lazy_find(k->lazy, ctx);
	if (__builtin_expect(!fn, 0) && !(fn = lazy_first_launch(k, f, ctx)))
		return f;
	if (!fn->inst || __atomic_load_n(&fn->disabled, __ATOMIC_RELAXED))
		return f;
	if (!shim_launch_window_take(f))   /* --launch-skip/--launch-count (launch_window.h) */
		return f;
	if (block > (unsigned)fn->max_threads) {
		if (!__atomic_exchange_n(&fn->said, 1, __ATOMIC_RELAXED))
			shim_msg("kernel %s: probes skipped: needs %d registers/thread, block of %u "
				 "threads allows %d (the original: %d registers/thread, %d threads); "
				 "such launches run the original", k->name, fn->regs, block,
				 fn->max_threads, fn->orig_regs, fn->orig_threads);
		return f;
	}
	if (smem > (unsigned)fn->max_dyn) {
		if (!__atomic_exchange_n(&fn->said, 1, __ATOMIC_RELAXED))
			shim_msg("kernel %s: probes skipped: needs %u bytes of dynamic shared memory, "
				 "the instrumented kernel allows %d beside its %d static bytes; such "
				 "launches run the original", k->name, smem, fn->max_dyn,
				 fn->static_smem);
		return f;
	}
	return fn->inst;
}

int shim_lazy_failed(CUfunction f, CUfunction used, CUresult rc)
{
	/* COOPERATIVE_LAUNCH_TOO_LARGE: the application sized a cooperative grid by the original's
	 * occupancy, which the instrumented function's registers may lower. The handle and
	 * context errors: a library's kernel in a new context that has a destroyed one's address
	 * (our function died with that context). */
	return used != f && (rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
			     rc == CUDA_ERROR_INVALID_VALUE || rc == CUDA_ERROR_OUT_OF_MEMORY ||
			     rc == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ||
			     rc == CUDA_ERROR_INVALID_HANDLE || rc == CUDA_ERROR_INVALID_CONTEXT ||
			     rc == CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

void shim_lazy_retried(CUfunction f, CUresult first, CUresult again)
{
	if (again != CUDA_SUCCESS)
		return;   /* the original fails too: the application's own error, probes stay */
	struct shim_kernel *k = NULL;
	struct lazy_fn *fn = entry_of(f, &k);
	if (!fn || __atomic_exchange_n(&fn->disabled, 1, __ATOMIC_RELAXED))
		return;
	shim_msg("kernel %s: probes skipped: the instrumented kernel's launch failed (%s; it needs "
		 "%d registers/thread and %d bytes of local memory per thread, the original %d and "
		 "%d); launched the original, which runs without probes from now on", k->name,
		 shim_err_name(first), fn->regs, fn->local, fn->orig_regs, fn->orig_local);
}

void shim_lazy_func_attribute(const void *f, CUfunction_attribute attr, int value)
{
	struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	if (!k || !k->lazy)
		return;
	/* Every context's instrumented function (a library's kernel attribute is per device; the
	 * few contexts of one process share it). */
	for (struct lazy_fn *fn = __atomic_load_n(&k->lazy->fns, __ATOMIC_ACQUIRE); fn; fn = fn->next)
		if (fn->inst) {
			SHIM_REAL(cuFuncSetAttribute)(fn->inst, attr, value);
			lazy_fn_limits(fn);
		}
}

void shim_lazy_cache_config(const void *f, CUfunc_cache config)
{
	struct shim_kernel *k = registry_get(REGISTRY_KERNELS, f);
	if (!k || !k->lazy)
		return;
	for (struct lazy_fn *fn = __atomic_load_n(&k->lazy->fns, __ATOMIC_ACQUIRE); fn; fn = fn->next)
		if (fn->inst)
			SHIM_REAL(cuFuncSetCacheConfig)(fn->inst, config);
}
