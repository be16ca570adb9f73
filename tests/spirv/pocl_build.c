/* Builds SPIR-V modules on the OpenCL device (PoCL: llvm-spirv -r, then clBuildProgram), one
 * line per module: validation says a module is well formed, this says the consumer takes it
 * (every builtin it needs exists in the device's kernel library).
 * usage: spirv_pocl_build MODULE.spv...   exit 1 if any fails, 77 without an OpenCL device */
#include "spirv/runtime.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char err[1024];
	spirv_cl *cl;
	if (spirv_cl__open(&cl, err, sizeof(err)) < 0) {
		printf("SKIP: %s\n", err);
		return 77;
	}
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		long n = -1;
		uint32_t *w = NULL;
		if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
			w = malloc((size_t)n);
			if (fread(w, 1, (size_t)n, f) != (size_t)n)
				n = -1;
		}
		if (f)
			fclose(f);
		int r = n > 0 ? spirv_cl__load(cl, w, (size_t)n / 4, err, sizeof(err)) : (snprintf(err, sizeof(err), "cannot read it"), -1);
		printf("%s %s%s%s\n", r ? "FAIL" : "BUILT", argv[i], r ? ": " : "", r ? err : "");
		bad |= r != 0;
		free(w);
	}
	spirv_cl__close(cl);
	return bad;
}
