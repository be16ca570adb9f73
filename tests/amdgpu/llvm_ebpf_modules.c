/* tests/lower's eBPF modules (the 313 bpf_conformance programs, the helper checks) lowered through
 * amdgpu/'s LLVM lowering with the nvptx64 target; LLVM's PTX parsed back by our frontend and run
 * through spirv/ on PoCL (tests/spirv/ebpf_modules.c, compiled here with its ptx_parse routed
 * through LLVM first). Every thread's r0 must equal the manifest's value. */
#include <stddef.h>

#include "amdgpu/amdgpu.h"

static struct ir_module *llvm_then_parse(const char *text, size_t len, char *err, size_t errlen);

#define ptx_parse llvm_then_parse
#include "../spirv/ebpf_modules.c"
#undef ptx_parse

ir_module *ptx_parse(const char *text, size_t len, char *err, size_t errlen);

static struct ir_module *llvm_then_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char *out = NULL;
	size_t n = 0;
	char e[1024];
	if (amdgpu_ptx_roundtrip(text, len, &out, &n, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "LLVM lowering: %s", e);
		return NULL;
	}
	ir_module *m = ptx_parse(out, n, err, errlen);
	free(out);
	return m;
}
