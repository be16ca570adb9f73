/* The forwarding table: one pointer per driver export, filled once from the real driver.
 *
 * Hot path: a wrapper reads its slot with an acquire load (a plain mov on x86-64) and tail-calls
 * it. Only the first call of the process (slot still NULL) goes to shim_resolve(), which loads
 * the real driver exactly once (pthread_once) and fills every slot. No lock, no allocation after.
 */
#ifndef GPUPROBE_SHIM_FORWARD_H
#define GPUPROBE_SHIM_FORWARD_H

#include "shim_fn.h"

extern void *shim_real_fn[SHIM_FN_COUNT];
extern const char *const shim_fn_names[SHIM_FN_COUNT];   /* sorted: bsearch-able */
extern void *const shim_fn_exports[SHIM_FN_COUNT];       /* our own wrapper of each name */

/* Load the real driver once; return the slot of id (NULL: no driver, or it lacks the name). */
void *shim_resolve(enum shim_fn_id id);

static inline void *shim_real_get(enum shim_fn_id id)
{
	void *p = __atomic_load_n(&shim_real_fn[id], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!p, 0))
		p = shim_resolve(id);
	return p;
}

#define SHIM_REAL(name) ((shim_fnty_##name *)shim_real_get(SHIM_FN_##name))

/* Forward the current call to the real driver's name as a tail call: "return real(args)", with
 * the first call of the process going through shim_first_<name> (generated, out of line). */
#define SHIM_TAILCALL(name, ...)                                                           \
	do {                                                                               \
		shim_fnty_##name *shim_fn_ = (shim_fnty_##name *)__atomic_load_n(          \
			&shim_real_fn[SHIM_FN_##name], __ATOMIC_ACQUIRE);                  \
		if (__builtin_expect(!shim_fn_, 0))                                        \
			return shim_first_##name(__VA_ARGS__);                             \
		return shim_fn_(__VA_ARGS__);                                              \
	} while (0)

/* What a call returns when it cannot be forwarded: CUDA_ERROR_NO_DEVICE from cuInit without a
 * driver, CUDA_ERROR_NOT_INITIALIZED from anything else without one, CUDA_ERROR_NOT_FOUND when the
 * driver lacks the name. */
CUresult shim_unavailable(enum shim_fn_id id);

/* Index of an export by name, or -1. */
int shim_fn_lookup(const char *name);

/* Handle of the real driver (NULL when none was found), after shim_resolve() ran. */
void *shim_driver_handle(void);

#endif
