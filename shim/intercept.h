/* Shared by the interception files (intercept_*.c). */
#ifndef GPUPROBE_SHIM_INTERCEPT_H
#define GPUPROBE_SHIM_INTERCEPT_H

#include "shim/forward.h"
#include "shim/registry.h"

/* Nonzero when launches must be looked at (GPUPROBE_LOG today; probes later). Read relaxed. */
extern int shim_launch_watch;

/* Record the kernel handle (CUfunction, or a CUkernel when is_kernel) of module m under name. */
void shim_kernel_record(const void *handle, const struct shim_module *m, const char *name,
			int is_kernel);

/* First-launch bookkeeping; called only when shim_launch_watch is set. */
void shim_launch_slow(const void *f, const char *api);

static inline void shim_launch_seen(const void *f, const char *api)
{
	if (__builtin_expect(__atomic_load_n(&shim_launch_watch, __ATOMIC_RELAXED), 0))
		shim_launch_slow(f, api);
}

#endif
