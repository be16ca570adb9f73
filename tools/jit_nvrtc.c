/* build/lib/libnvrtc.so.13: NVRTC, with the PTX of every cubin it compiles recorded (issue 16).
 *
 * `gpuprobe run` puts build/lib first on LD_LIBRARY_PATH, so a program (CuPy, PyTorch's jiterator,
 * anything that loads NVRTC by name) gets this library, which forwards every export to the real
 * libnvrtc.so.13 (tools/jit_forward.h: GPUPROBE_REAL_NVRTC, else LD_LIBRARY_PATH, else
 * /usr/local/cuda/lib64 ...). nvrtcCompileProgram calls the real one; when it compiled to a cubin
 * (-arch=sm_XX), the program's PTX (NVRTC keeps it beside the cubin) is recorded under the
 * cubin's SHA-256 with the options (shim/jit_capture.h), so the shim instruments that PTX when
 * the application loads the cubin. Recording never changes a result; a failure says one line
 * under GPUPROBE_LOG=1. */
#include "tools/jit_forward.h"
#include "shim/jit_capture.h"

#include <nvrtc.h>
#include <pthread.h>
#include <stdint.h>

/* Every export of libnvrtc.so.13 (CUDA 13.0) but the ones defined in C below. */
#define NVRTC_FORWARDED(X)                                                                  \
	X(__nvrtcCPEx) X(nvrtcAddNameExpression) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) \
	X(nvrtcGetCUBIN) X(nvrtcGetCUBINSize) X(nvrtcGetLTOIR) X(nvrtcGetLTOIRSize)            \
	X(nvrtcGetLoweredName) X(nvrtcGetNumSupportedArchs) X(nvrtcGetOptiXIR)                \
	X(nvrtcGetOptiXIRSize) X(nvrtcGetPCHCreateStatus) X(nvrtcGetPCHHeapSize)             \
	X(nvrtcGetPCHHeapSizeRequired) X(nvrtcGetPTX) X(nvrtcGetPTXSize)                     \
	X(nvrtcGetProgramLog) X(nvrtcGetProgramLogSize) X(nvrtcGetSupportedArchs)            \
	X(nvrtcSetFlowCallback) X(nvrtcSetPCHHeapSize) X(nvrtcVersion)

NVRTC_FORWARDED(JIT_TRAMPOLINE)

static nvrtcResult (*real_compile)(nvrtcProgram, int, const char *const *);
static const char *(*real_error_string)(nvrtcResult);
static void *real;
static char real_path[PATH_MAX];

static int fallback(void)
{
	return NVRTC_ERROR_INTERNAL_ERROR;
}

__attribute__((constructor)) static void nvrtc_init(void)
{
	real = jit_open_real("libnvrtc.so.13", GP_VAR_REAL_NVRTC, (void *)nvrtc_init, real_path,
			     sizeof(real_path));
#define RESOLVE(name)                                                                       \
	jit_real_##name = real ? dlsym(real, #name) : NULL;                                 \
	if (!jit_real_##name)                                                               \
		jit_real_##name = (void *)fallback;
	NVRTC_FORWARDED(RESOLVE)
#undef RESOLVE
	if (real) {
		real_compile = (nvrtcResult (*)(nvrtcProgram, int, const char *const *))dlsym(
			real, "nvrtcCompileProgram");
		real_error_string = (const char *(*)(nvrtcResult))dlsym(real, "nvrtcGetErrorString");
	}
}

const char *nvrtcGetErrorString(nvrtcResult result)
{
	return real_error_string ? real_error_string(result)
				 : "NVRTC_ERROR_INTERNAL_ERROR (gpuprobe: no real libnvrtc.so.13)";
}

static void say(const char *what, const char *why)
{
	if (gp_env_flag(GP_VAR_LOG))
		fprintf(stderr, "gpuprobe: libnvrtc: %s%s%s\n", what, why ? ": " : "", why ? why : "");
}

/* After a successful compile: the cubin (when there is one) and its PTX, recorded. */
static void record(nvrtcProgram prog, int n, const char *const *opts)
{
	typedef nvrtcResult (*size_fn)(nvrtcProgram, size_t *);
	typedef nvrtcResult (*get_fn)(nvrtcProgram, char *);
	size_t csize = 0, psize = 0;
	if (((size_fn)jit_real_nvrtcGetCUBINSize)(prog, &csize) != NVRTC_SUCCESS || !csize)
		return;   /* PTX (compute_XX) or LTO-IR: the application loads no cubin of ours */
	if (((size_fn)jit_real_nvrtcGetPTXSize)(prog, &psize) != NVRTC_SUCCESS || psize < 2) {
		say("a cubin without PTX", "not recorded");
		return;
	}
	char *cubin = malloc(csize), *ptx = malloc(psize + 1);
	struct jit_record r = {0};
	if (cubin && ptx &&
	    ((get_fn)jit_real_nvrtcGetCUBIN)(prog, cubin) == NVRTC_SUCCESS &&
	    ((get_fn)jit_real_nvrtcGetPTX)(prog, ptx) == NVRTC_SUCCESS) {
		ptx[psize] = 0;
		jit_capture_parse_opts(n, opts, &r);
		snprintf(r.source, sizeof(r.source), "nvrtc");
		r.ptx = ptx;
		r.ptx_len = strlen(ptx);
		ptx = NULL;
		uint8_t h[32];
		char why[512];
		jit_capture_hash(cubin, csize, h);
		if (jit_capture_put(h, &r, why, sizeof(why)))
			say("not recorded", why);
	}
	jit_record_free(&r);
	free(cubin);
	free(ptx);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
	if (!real_compile)
		return NVRTC_ERROR_INTERNAL_ERROR;
	nvrtcResult rc = real_compile(prog, numOptions, options);
	if (rc == NVRTC_SUCCESS)
		record(prog, numOptions, options);
	return rc;
}
