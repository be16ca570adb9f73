/* Private to shim/lazy*.c. */
#ifndef GPUPROBE_SHIM_LAZY_INTERNAL_H
#define GPUPROBE_SHIM_LAZY_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "ptx-frontend/fatbin.h"
#include "ptx-frontend/split.h"
#include "shim/forward.h"
#include "shim/jit_compile.h"
#include "shim/registry.h"

/* A per-kernel module we loaded (unloaded with the application's module). */
struct lazy_split {
	CUmodule mod;
	struct lazy_split *next;
};

struct lazy_module {
	pthread_mutex_t lock;      /* the parse, the split list, dead */
	const struct shim_module *m;
	/* The PTX for this device, kept from the load until the module's parse (which has its
	 * own copy): the text (ptx, len), or, from a compressed fatbin entry, a copy of that entry
	 * (a fraction of the text's size) decompressed when first needed. */
	char *ptx;
	size_t len;
	void *packed;
	struct fatbin_entry packed_entry;
	unsigned sm;
	const void *handle;        /* the application's CUmodule or CUlibrary */
	int library;
	struct jit_options jit;    /* the application's JIT options, less its logs */
	struct ptx_split_src *src; /* parsed at the first split */
	uint8_t hash[32];          /* of the text, or of the compressed entry */
	int hashed;
	struct lazy_split *splits;
	int dead;                  /* unloaded by the application */
};

/* One kernel in one context: what its launches run. Never freed (launches read it unlocked). */
struct lazy_fn {
	CUcontext ctx;             /* NULL for a module's function (its context is its module's) */
	CUfunction inst;           /* the instrumented function; NULL: the original runs */
	CUfunction orig;           /* the original in this context (attributes) */
	int max_threads, max_dyn, static_smem, local, regs;
	int orig_threads, orig_regs, orig_local;
	int said;                  /* the limit line was printed */
	int disabled;              /* a launch failed: the original runs from now on */
	struct lazy_fn *next;      /* immutable once published */
};

struct lazy_kernel {
	pthread_mutex_t lock;      /* first-launch work (per kernel: kernels compile in parallel) */
	struct lazy_module *lm;
	const void *kernel;        /* the CUkernel, when the record is a library's */
	struct lazy_fn *fns;       /* atomic head */
};

/* GPUPROBE_PROBES/GPUPROBE_CONFIG set and GPUPROBE_LAZY not 0; sets shim_lazy_enabled. Safe to
 * call from any constructor. */
int shim_lazy_env(void);

static inline struct lazy_fn *lazy_find(struct lazy_kernel *lk, CUcontext ctx)
{
	for (struct lazy_fn *fn = __atomic_load_n(&lk->fns, __ATOMIC_ACQUIRE); fn; fn = fn->next)
		if (fn->ctx == ctx)
			return fn;
	return NULL;
}

/* The first launch of k's f in ctx: the work, then the published entry (NULL: out of memory). */
struct lazy_fn *lazy_first_launch(struct shim_kernel *k, CUfunction f, CUcontext ctx);

/* Read fn->inst's limits (and fn->orig's for the lines). */
void lazy_fn_limits(struct lazy_fn *fn);

#endif
