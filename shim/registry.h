/* What the shim knows about each module and kernel handle the driver gave out.
 *
 * Two maps keyed by handle value (CUmodule/CUlibrary, and CUfunction/CUkernel: a launch may be
 * given either). Written at load and lookup time, read at launch time: reads take no lock and
 * allocate nothing. Records are never freed (a handle may be read concurrently with its module's
 * unload); a re-used handle value simply gets its record replaced.
 */
#ifndef GPUPROBE_SHIM_REGISTRY_H
#define GPUPROBE_SHIM_REGISTRY_H

#include <stddef.h>

struct shim_module {
	unsigned seq;              /* 1, 2, ... in load order (names dump files and log lines) */
	const char *api;           /* the call that loaded it, e.g. "cuModuleLoadDataEx" */
	const char *origin;        /* file path, or NULL for an image in memory */
	const void *caller;        /* where the loading call returns to (in the loader's library) */
	int has_ptx;               /* some PTX the driver could JIT (ours to instrument later) */
	int jit_ptx;               /* a cubin whose PTX a JIT compiler's run recorded (jit_capture.h) */
	unsigned kernels;          /* kernel count, when known from the image */
	/* Set when the module's kernels are instrumented one at a time at their first launch
	 * (lazy.h); the module itself was loaded exactly as the application gave it. */
	struct lazy_module *lazy;
};

struct shim_kernel {
	const struct shim_module *module;   /* NULL when the shim never saw the module load */
	const char *name;
	int has_ptx;
	int launched;              /* set (atomically) at the first launch */
	struct lazy_kernel *lazy;  /* module->lazy's kernels: what runs instead, per context */
};

enum registry_kind { REGISTRY_MODULES, REGISTRY_KERNELS, REGISTRY_LINKS };

/* Record value for handle (replacing an earlier one). 0, or -ENOMEM. */
int registry_put(enum registry_kind kind, const void *handle, void *value);

/* The record of handle, or NULL. Lock-free. */
void *registry_get(enum registry_kind kind, const void *handle);

#endif
