/* Compiling instrumented PTX to a cubin ourselves, with the driver's JIT linker (cuLinkCreate,
 * cuLinkAddData, cuLinkComplete), before the driver sees the module: a compile error is then
 * known at load time, whatever CUDA's lazy loading would have deferred, and the cubin can be
 * cached (cubin_cache.h). Needs a current context (the target is its device). */
#ifndef GPUPROBE_SHIM_JIT_COMPILE_H
#define GPUPROBE_SHIM_JIT_COMPILE_H

#include "shim/forward.h"

#include <stddef.h>
#include <stdint.h>

#define JIT_MAX_OPTIONS 64

/* The application's JIT options, sorted for our compile: what reaches cuLinkCreate (its own
 * log buffers and outputs replaced by ours) and what reaches the cache key (the options that
 * change code, with their values). */
struct jit_options {
	unsigned n;
	CUjit_option opt[JIT_MAX_OPTIONS];
	void *val[JIT_MAX_OPTIONS];
	unsigned nkey;
	int key_id[JIT_MAX_OPTIONS];
	uint64_t key_val[JIT_MAX_OPTIONS];
	int cacheable;       /* 0: an option passes pointers (symbol tables) a key cannot cover */
};

/* Sort the application's options (n may be 0, opts/vals NULL). 0, or -E2BIG when there are
 * too many (then compile nothing: the driver gets the PTX as today). */
int jit_options_from_app(struct jit_options *o, unsigned n, const CUjit_option *opts,
			 void *const *vals);

struct jit_result {
	void *cubin;         /* malloc'd copy; NULL on failure */
	size_t size;
	double ms;           /* wall time of the compile */
	CUresult rc;
	char error[512];     /* on failure: the first error line of the compiler's log */
};

/* Compile len bytes of NUL-terminated PTX for the current context's device. CUDA_SUCCESS and
 * r->cubin, or the driver's error with r->error filled. */
CUresult jit_compile_ptx(const char *ptx, size_t len, const struct jit_options *o,
			 struct jit_result *r);

/* Compile-check len bytes of NUL-terminated PTX with the driver's own PTX JIT (whole-program code,
 * as the application's load will get): load it as a module of the current context with exactly
 * the application's options (app_n, app_opts, app_vals: so that the load that follows finds the
 * code in the driver's JIT cache), load every function (lazy loading would defer errors), unload.
 * On an error, compile once more with o and our log buffers for the compiler's message in
 * r->error. No cubin: r->cubin stays NULL. */
CUresult jit_check_ptx(const char *ptx, size_t len, unsigned app_n, const CUjit_option *app_opts,
		       void *const *app_vals, const struct jit_options *o, struct jit_result *r);

/* Load len bytes of NUL-terminated PTX as a module of the current context with o's options and
 * our log buffers (the per-kernel modules of lazy.c): CUDA_SUCCESS and *mod, or the driver's error
 * with the compiler's first error line in error. The functions are not loaded yet (lazy loading
 * may defer the JIT to cuFuncLoad: jit_load_function). */
CUresult jit_load_module(const char *ptx, const struct jit_options *o, CUmodule *mod, char *error,
			 size_t errlen);

/* The line a compiler log names its (first) error in: the first line saying "error" or "fatal",
 * else the first non-empty line; runs of blanks squeezed. "" for an empty log. */
void jit_first_error(const char *log, char *out, size_t len);

#endif
