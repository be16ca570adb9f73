/* eBPF lowered into the IR, run through SPIR-V on PoCL: the modules tests/lower builds for the
 * GPU (lower-gpu/conformance.ptx: the 313 bpf_conformance programs, thread i runs program i;
 * lower-gpu/helpers.ptx: self-checking programs for the GPU helpers) are lowered to SPIR-V and
 * launched exactly as tests/gpu/lower_run.c launches them on NVIDIA: gp_conformance(out, count)
 * over blocks of 128 threads; each thread's r0 must equal the manifest's expected value.
 * usage: spirv_ebpf_modules MODULE.ptx MANIFEST */
#include "ptx-frontend/ir.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: spirv_ebpf_modules MODULE.ptx MANIFEST\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	FILE *mf = fopen(argv[2], "r");
	if (!f || !mf) {
		printf("SKIP: %s or %s is missing (build target lower_gpu_inputs; it needs the bpf_conformance corpus)\n",
		       argv[1], argv[2]);
		return 77;
	}
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *ptx = malloc((size_t)len + 1);
	if (fread(ptx, 1, (size_t)len, f) != (size_t)len)
		return 2;
	ptx[len] = 0;
	fclose(f);
	char names[4096][64];
	unsigned long long expected[4096];
	unsigned n = 0;
	char line[1024];
	while (fgets(line, sizeof(line), mf) && n < 4096) {
		unsigned idx;
		if (sscanf(line, "run %u %63s %llx", &idx, names[n], &expected[n]) == 3 && idx == n)
			n++;
	}
	fclose(mf);
	char err[1024];
	spirv_cl *cl;
	if (spirv_cl__open(&cl, err, sizeof(err)) < 0) {
		printf("SKIP: %s\n", err);
		return 77;
	}
	ir_module *m = ptx_parse(ptx, (size_t)len, err, sizeof(err));
	free(ptx);
	if (!m) {
		printf("FAIL parse: %s\n", err);
		return 1;
	}
	uint32_t *w;
	size_t nw;
	int r = spirv_lower_module(m, NULL, &w, &nw, err, sizeof(err));
	ir_module_free(m);
	if (r < 0) {
		printf("FAIL lowering to SPIR-V: %s\n", err);
		return 1;
	}
	if ((r = spirv_cl__load(cl, w, nw, err, sizeof(err))) < 0) {
		printf("FAIL build on %s: %s\n", spirv_cl__device_name(cl), err);
		return 1;
	}
	free(w);
	unsigned long long *host = malloc(n * sizeof(*host));
	for (unsigned i = 0; i < n; i++)
		host[i] = 0xdeadbeefcafef00dull; /* left there by a thread that never stored */
	uint64_t out;
	unsigned count = n, block = 128;
	if (spirv_cl__alloc(cl, n * sizeof(*host), &out, err, sizeof(err)) < 0 ||
	    spirv_cl__write(cl, out, host, n * sizeof(*host), err, sizeof(err)) < 0) {
		printf("FAIL memory: %s\n", err);
		return 1;
	}
	struct spirv_arg args[2] = {{&out, 8}, {&count, 4}};
	const unsigned grid[3] = {(count + block - 1) / block, 1, 1}, blk[3] = {block, 1, 1};
	if (spirv_cl__launch(cl, "gp_conformance", grid, blk, args, 2, err, sizeof(err)) < 0 ||
	    spirv_cl__read(cl, out, host, n * sizeof(*host), err, sizeof(err)) < 0) {
		printf("FAIL launch: %s\n", err);
		return 1;
	}
	unsigned pass = 0, fail = 0;
	for (unsigned i = 0; i < n; i++) {
		if (host[i] == expected[i]) {
			pass++;
			continue;
		}
		if (fail++ < 50)
			printf("FAIL %s: r0 = 0x%llx, expected 0x%llx\n", names[i], host[i], expected[i]);
	}
	printf("%s on %s through SPIR-V: %u passed / %u failed\n", argv[1], spirv_cl__device_name(cl), pass, fail);
	free(host);
	spirv_cl__close(cl);
	return fail ? 1 : 0;
}
