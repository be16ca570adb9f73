/* tests/spirv's per-instruction conformance suite through amdgpu/'s LLVM lowering: each case's
 * PTX is lowered to LLVM IR for nvptx64-nvidia-cuda, LLVM's NVPTX backend makes PTX of it, and
 * that PTX runs on the chosen backend of tests/spirv/conformance.c:
 *   opencl (CI, PoCL): parsed by our frontend and lowered through spirv/ (the round trip)
 *   cuda   (the GPU):  loaded by NVIDIA's driver (tests/gpu/amdgpu.sh)
 * Same usage and output as spirv_conformance. The harness is tests/spirv/conformance.c itself,
 * compiled here with its PTX entry points (ptx_parse for opencl, cuModuleLoadData for cuda)
 * routed through the LLVM lowering first, so both suites always share cases and checks. */
#include <dlfcn.h>
#include <stddef.h>

#include "amdgpu/amdgpu.h"

static struct ir_module *llvm_then_parse(const char *text, size_t len, char *err, size_t errlen);
static void *llvm_dlsym(void *lib, const char *name);

#define ptx_parse llvm_then_parse
#define dlsym llvm_dlsym
#include "../spirv/conformance.c"
#undef ptx_parse
#undef dlsym

ir_module *ptx_parse(const char *text, size_t len, char *err, size_t errlen);

/* The LLVM error, or the PTX that LLVM made, as the harness reports failures: one line. Kernels
 * the lowering leaves out are missing from that PTX, as spirv/ leaves them out of its module: a
 * case that launches one fails at its launch, the others run (isolate_kernels). */
static char *via_llvm(const char *text, size_t len, char *err, size_t errlen)
{
	char *out = NULL;
	size_t n = 0;
	char e[1024];
	ir_module *m = ptx_parse(text, len, e, sizeof(e));
	struct amdgpu_options o = {.target = AMDGPU_TARGET_NVPTX};
	const char *arch = getenv("GPUPROBE_LLVM_ARCH");
	if (arch && *arch)
		o.arch = arch;
	int r = m ? amdgpu_lower_ptx(m, &o, &out, &n, e, sizeof(e)) : -EINVAL;
	ir_module_free(m);
	if (r < 0) {
		snprintf(err, errlen, "LLVM lowering: %s", e);
		return NULL;
	}
	if (getenv("AMDGPU_TEST_DUMP"))
		fprintf(stderr, "---- LLVM's PTX\n%s\n", out);
	return out;
}

static struct ir_module *llvm_then_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char *out = via_llvm(text, len, err, errlen);
	if (!out)
		return NULL;
	ir_module *m = ptx_parse(out, strlen(out), err, errlen);
	free(out);
	return m;
}

static CUresult (*real_module_load)(void **, const void *);
static CUresult llvm_module_load(void **mod, const void *image)
{
	char err[1024];
	char *out = via_llvm(image, strlen(image), err, sizeof(err));
	if (!out) {
		fprintf(stderr, "%s\n", err);
		return 218; /* CUDA_ERROR_INVALID_PTX */
	}
	CUresult r = real_module_load(mod, out);
	free(out);
	return r;
}

static void *llvm_dlsym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (p && !strcmp(name, "cuModuleLoadData")) {
		real_module_load = (CUresult(*)(void **, const void *))p;
		return (void *)llvm_module_load;
	}
	return p;
}
