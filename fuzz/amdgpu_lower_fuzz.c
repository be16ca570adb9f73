/* libFuzzer target for amdgpu/'s lowering to LLVM IR (LLVM 19's C API), as the HIP backend runs it
 * on whatever PTX an application loads: for any input the parser accepts, amdgpu_lower_ll gives
 * LLVM IR for amdgcn or refuses with a negative errno and one line, never a crash; kernels left
 * out come with names and reasons. LLVM's own fatal errors are caught (amdgpu/target.c) and come
 * back as such a line. Without LLVM's optimisation pipeline (no_opt: the lowering and the IR
 * verifier), which would only slow the search.
 * FUZZ_AMDGPU_STRICT=1 also stops on IR the verifier rejects ("internal error: the LLVM IR made is
 * invalid": a lowering that made invalid IR, which is reported as an error but is a bug). */
#include "amdgpu/amdgpu.h"
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void skipped(void *arg, const char *kernel, const char *why)
{
	(void)arg;
	if (!kernel || !kernel[0] || !why || !why[0]) {
		fprintf(stderr, "a kernel left out without a name or a reason\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (size > (16u << 10))
		return 0;
	char err[1024];
	ir_module *m = ptx_parse((const char *)data, size, err, sizeof(err));
	if (!m)
		return 0;
	struct amdgpu_options o = {.target = AMDGPU_TARGET_AMDGCN, .arch = "gfx942", .no_opt = 1, .skipped = skipped};
	char *ll = NULL;
	err[0] = 0;
	int r = amdgpu_lower_ll(m, &o, &ll, err, sizeof(err));
	if (r == 0) {
		if (!ll || !strstr(ll, "target triple = \"amdgcn-amd-amdhsa\"")) {
			fprintf(stderr, "lowered without LLVM IR for amdgcn\n");
			abort();
		}
	} else {
		if (r > 0 || ll || !err[0] || strchr(err, '\n')) {
			fprintf(stderr, "refused without a negative errno and one line: %d '%s'\n", r, err);
			abort();
		}
		const char *strict = getenv("FUZZ_AMDGPU_STRICT");
		if (strict && *strict == '1' && strstr(err, "the LLVM IR made is invalid")) {
			fprintf(stderr, "invalid LLVM IR made: %s\n", err);
			abort();
		}
	}
	free(ll);
	ir_module_free(m);
	return 0;
}
