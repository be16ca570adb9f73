/* jit_compile.h: the driver's JIT linker on one PTX input. The real driver's entry points are
 * called directly (not the shim's interceptors: this is no application link). */
#include "shim/jit_compile.h"
#include "shim/device_runtime.h"
#include "common/env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum opt_class {
	OPT_DROP,        /* an output or log of the application's call: ours replace them */
	OPT_CODE,        /* a scalar that may change the code: passed on, part of the key */
	OPT_OPAQUE,      /* passed on, but its value points at data: no caching */
};

static enum opt_class classify(CUjit_option o)
{
	switch ((int)o) {
	case CU_JIT_WALL_TIME:
	case CU_JIT_INFO_LOG_BUFFER:
	case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
	case CU_JIT_ERROR_LOG_BUFFER:
	case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
	case CU_JIT_LOG_VERBOSE:
		return OPT_DROP;
	case CU_JIT_GLOBAL_SYMBOL_NAMES:
	case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
	case CU_JIT_REFERENCED_KERNEL_NAMES:
	case CU_JIT_REFERENCED_VARIABLE_NAMES:
		return OPT_OPAQUE;
	default:
		/* Every other option of CUDA 13 takes a scalar. One of a later CUDA is unknown
		 * here: pass it on, but do not trust a key to cover it. */
		return (int)o < CU_JIT_NUM_OPTIONS ? OPT_CODE : OPT_OPAQUE;
	}
}

/* Our log buffers take the first four slots. */
#define OWN_OPTIONS 4

int jit_options_from_app(struct jit_options *o, unsigned n, const CUjit_option *opts,
			 void *const *vals)
{
	memset(o, 0, sizeof(*o));
	o->cacheable = 1;
	o->n = OWN_OPTIONS;
	for (unsigned i = 0; opts && vals && i < n; i++) {
		enum opt_class c = classify(opts[i]);
		if (c == OPT_DROP)
			continue;
		if (o->n == JIT_MAX_OPTIONS)
			return -E2BIG;
		o->opt[o->n] = opts[i];
		o->val[o->n++] = vals[i];
		if (c == OPT_OPAQUE) {
			o->cacheable = 0;
			continue;
		}
		/* The driver reads these values as 32-bit ints, unsigneds or floats (in the
		 * pointer's low bits): the low 32 bits are the whole value. TARGET_FROM_CUCONTEXT
		 * ignores its value. */
		o->key_id[o->nkey] = (int)opts[i];
		o->key_val[o->nkey++] = opts[i] == CU_JIT_TARGET_FROM_CUCONTEXT
						? 0 : (uint32_t)(uintptr_t)vals[i];
	}
	return 0;
}

void jit_first_error(const char *log, char *out, size_t len)
{
	const char *pick = NULL, *first = NULL;
	for (const char *l = log; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *s = l;
		while (s < l + n && isspace((unsigned char)*s))
			s++;
		if (s < l + n) {
			if (!first)
				first = s;
			if (memmem(s, (size_t)(l + n - s), "error", 5) ||
			    memmem(s, (size_t)(l + n - s), "fatal", 5)) {
				pick = s;
				break;
			}
		}
		l = e ? e + 1 : l + n;
	}
	if (!pick)
		pick = first;
	size_t o = 0;
	for (const char *s = pick; s && *s && *s != '\n' && o + 1 < len; s++) {
		int blank = isspace((unsigned char)*s);
		if (blank && (o == 0 || out[o - 1] == ' '))
			continue;
		out[o++] = blank ? ' ' : *s;
	}
	while (o && out[o - 1] == ' ')
		o--;
	if (len)
		out[o] = 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define LOG_BYTES 16384

/* o's options into opt/val, with our error and info logs (LOG_BYTES each) in the four slots
 * jit_options_from_app keeps for them. */
static void options_with_logs(const struct jit_options *o, CUjit_option *opt, void **val,
			      char *error_log, char *info_log)
{
	memcpy(opt, o->opt, sizeof(o->opt));
	memcpy(val, o->val, sizeof(o->val));
	opt[0] = CU_JIT_ERROR_LOG_BUFFER;
	val[0] = error_log;
	opt[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	val[1] = (void *)(uintptr_t)(LOG_BYTES - 1);
	opt[2] = CU_JIT_INFO_LOG_BUFFER;
	val[2] = info_log;
	opt[3] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
	val[3] = (void *)(uintptr_t)(LOG_BYTES - 1);
}

/* Where a PTX needs the device runtime and it cannot be linked: CUDA_ERROR_NOT_FOUND with the
 * reason in r->error (said before anything is compiled); else CUDA_SUCCESS. */
static CUresult device_runtime_missing(struct jit_result *r)
{
	const char *named = gp_env_str(GP_VAR_CUDADEVRT);
	if (shim_device_runtime_library() && SHIM_REAL(cuLinkAddFile_v2))
		return CUDA_SUCCESS;
	if (!SHIM_REAL(cuLinkAddFile_v2))
		snprintf(r->error, sizeof(r->error), "it launches kernels (dynamic parallelism), and "
			 "this driver has no cuLinkAddFile_v2 to link it with CUDA's libcudadevrt.a");
	else if (!named)
		snprintf(r->error, sizeof(r->error), "it launches kernels (dynamic parallelism), "
			 "which compile with probes only linked with CUDA's device runtime: off unless "
			 "GPUPROBE_CUDADEVRT=auto or =PATH/libcudadevrt.a (experimental: "
			 "docs/guide.md)");
	else if (strcmp(named, "auto"))
		snprintf(r->error, sizeof(r->error), "it launches kernels (dynamic parallelism), and "
			 "GPUPROBE_CUDADEVRT=%s, the device runtime to link it with, cannot be read",
			 named);
	else
		snprintf(r->error, sizeof(r->error), "it launches kernels (dynamic parallelism), and "
			 "GPUPROBE_CUDADEVRT=auto found CUDA's libcudadevrt.a in none of CUDA_HOME, "
			 "CUDA_PATH, /usr/local/cuda");
	return CUDA_ERROR_NOT_FOUND;
}

CUresult jit_compile_ptx(const char *ptx, size_t len, const struct jit_options *o,
			 struct jit_result *r)
{
	memset(r, 0, sizeof(*r));
	shim_fnty_cuLinkCreate_v2 *create = SHIM_REAL(cuLinkCreate_v2);
	shim_fnty_cuLinkAddData_v2 *add = SHIM_REAL(cuLinkAddData_v2);
	shim_fnty_cuLinkComplete *complete = SHIM_REAL(cuLinkComplete);
	shim_fnty_cuLinkDestroy *destroy = SHIM_REAL(cuLinkDestroy);
	if (!create || !add || !complete || !destroy) {
		r->rc = CUDA_ERROR_NOT_FOUND;
		strcpy(r->error, "the driver has no JIT linker (cuLinkCreate_v2)");
		return r->rc;
	}
	int devrt = ptx_uses_device_runtime(ptx);
	if (devrt && (r->rc = device_runtime_missing(r)) != CUDA_SUCCESS)
		return r->rc;
	char *error_log = calloc(1, LOG_BYTES), *info_log = calloc(1, LOG_BYTES);
	if (!error_log || !info_log) {
		free(error_log);
		free(info_log);
		r->rc = CUDA_ERROR_OUT_OF_MEMORY;
		strcpy(r->error, "out of memory");
		return r->rc;
	}
	/* A private copy: the driver writes the log sizes (and some outputs) back. */
	CUjit_option opt[JIT_MAX_OPTIONS];
	void *val[JIT_MAX_OPTIONS];
	options_with_logs(o, opt, val, error_log, info_log);

	double t0 = now_ms();
	CUlinkState state = NULL;
	void *cubin = NULL;
	size_t size = 0;
	CUresult rc = create(o->n, opt, val, &state);
	if (rc == CUDA_SUCCESS)
		rc = add(state, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, "gpuprobe-instrumented.ptx",
			 0, NULL, NULL);
	if (rc == CUDA_SUCCESS && devrt) {
		const char *lib = shim_device_runtime_library();
		rc = SHIM_REAL(cuLinkAddFile_v2)(state, CU_JIT_INPUT_LIBRARY, lib, 0, NULL, NULL);
		if (rc != CUDA_SUCCESS)
			snprintf(r->error, sizeof(r->error), "linking the device runtime %s failed", lib);
	}
	if (rc == CUDA_SUCCESS)
		rc = complete(state, &cubin, &size);
	if (rc == CUDA_SUCCESS && (!cubin || !size))
		rc = CUDA_ERROR_INVALID_IMAGE;
	if (rc == CUDA_SUCCESS) {
		r->cubin = malloc(size);
		if (r->cubin) {
			memcpy(r->cubin, cubin, size);
			r->size = size;
		} else {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (state)
		destroy(state);
	r->ms = now_ms() - t0;
	r->rc = rc;
	if (rc != CUDA_SUCCESS && !r->error[0]) {
		error_log[LOG_BYTES - 1] = 0;
		jit_first_error(error_log, r->error, sizeof(r->error));
	}
	free(error_log);
	free(info_log);
	return rc;
}

/* Load, force every function, unload: CUDA_SUCCESS when the module compiles and loads. */
static CUresult load_all(const char *ptx, unsigned n, CUjit_option *opt, void **val)
{
	CUmodule mod = NULL;
	CUresult rc = SHIM_REAL(cuModuleLoadDataEx)(&mod, ptx, n, opt, val);
	if (rc != CUDA_SUCCESS)
		return rc;
	unsigned count = 0;
	shim_fnty_cuFuncLoad *load = SHIM_REAL(cuFuncLoad);
	if (load && SHIM_REAL(cuModuleGetFunctionCount)(&count, mod) == CUDA_SUCCESS && count) {
		CUfunction *fs = calloc(count, sizeof(*fs));
		if (fs && SHIM_REAL(cuModuleEnumerateFunctions)(fs, count, mod) == CUDA_SUCCESS)
			for (unsigned i = 0; rc == CUDA_SUCCESS && i < count; i++)
				rc = load(fs[i]);
		free(fs);
	}
	SHIM_REAL(cuModuleUnload)(mod);
	return rc;
}

CUresult jit_check_ptx(const char *ptx, size_t len, unsigned app_n, const CUjit_option *app_opts,
		       void *const *app_vals, const struct jit_options *o, struct jit_result *r)
{
	memset(r, 0, sizeof(*r));
	(void)len;
	if (!SHIM_REAL(cuModuleLoadDataEx) || !SHIM_REAL(cuModuleUnload)) {
		r->rc = CUDA_ERROR_NOT_FOUND;
		strcpy(r->error, "the driver has no cuModuleLoadDataEx");
		return r->rc;
	}
	/* The application's arrays as it gave them (the driver may write outputs back into its
	 * values, as the application's own load will again). */
	CUjit_option opt[JIT_MAX_OPTIONS];
	void *val[JIT_MAX_OPTIONS];
	unsigned n = app_n < JIT_MAX_OPTIONS ? app_n : JIT_MAX_OPTIONS;
	for (unsigned i = 0; i < n; i++) {
		opt[i] = app_opts[i];
		val[i] = app_vals ? app_vals[i] : NULL;
	}
	double t0 = now_ms();
	CUresult rc = load_all(ptx, n, opt, val);
	r->ms = now_ms() - t0;
	r->rc = rc;
	if (rc == CUDA_SUCCESS)
		return rc;
	/* Again with our logs, for the compiler's words. */
	char *error_log = calloc(2, LOG_BYTES);   /* the error log, then the info log */
	if (!error_log)
		return rc;
	options_with_logs(o, opt, val, error_log, error_log + LOG_BYTES);
	CUresult again = load_all(ptx, o->n, opt, val);
	error_log[LOG_BYTES - 1] = 0;
	if (again != CUDA_SUCCESS)
		jit_first_error(error_log, r->error, sizeof(r->error));
	free(error_log);
	return rc;
}

CUresult jit_load_module(const char *ptx, const struct jit_options *o, CUmodule *mod, char *error,
			 size_t errlen)
{
	if (errlen)
		error[0] = 0;
	if (ptx_uses_device_runtime(ptx)) {
		/* linked with the device runtime into a cubin first: a module of PTX alone cannot
		 * resolve its functions */
		struct jit_result r;
		CUresult rc = jit_compile_ptx(ptx, strlen(ptx), o, &r);
		if (rc == CUDA_SUCCESS)
			rc = SHIM_REAL(cuModuleLoadData)(mod, r.cubin);
		else
			snprintf(error, errlen, "%s", r.error);
		free(r.cubin);
		return rc;
	}
	shim_fnty_cuModuleLoadDataEx *load = SHIM_REAL(cuModuleLoadDataEx);
	if (!load) {
		snprintf(error, errlen, "the driver has no cuModuleLoadDataEx");
		return CUDA_ERROR_NOT_FOUND;
	}
	char *logs = calloc(2, LOG_BYTES);   /* the error log, then the info log */
	if (!logs) {
		snprintf(error, errlen, "out of memory");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	CUjit_option opt[JIT_MAX_OPTIONS];
	void *val[JIT_MAX_OPTIONS];
	options_with_logs(o, opt, val, logs, logs + LOG_BYTES);
	CUresult rc = load(mod, ptx, o->n, opt, val);
	logs[LOG_BYTES - 1] = 0;
	if (rc != CUDA_SUCCESS)
		jit_first_error(logs, error, errlen);
	free(logs);
	return rc;
}
