/* The HIP backend (amdgpu/backend_hip.c) up to the HIP calls, over tests/amdgpu/fake_hip.c: open
 * without a runtime (one clear error), device information, memory and copies and fills with exact
 * values, events and times, a program built from PTX (in this process through amdgpu/, or in a
 * child `gpuprobe ptx amdgpu` as the shim does it: AMDGPU_TEST_CHILD builds) and loaded as a code
 * object for the architecture and code-object version the runtime wants, kernels found or not,
 * a launch with its grid, block and arguments.
 * usage: amdgpu_hip_backend FAKE_LIBAMDHIP64 LOGFILE */
#include "amdgpu/backend_hip.h"
#include "ptx-frontend/ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); fails++; } } while (0)

static const char *ptx =
	".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry scale(.param .u64 p, .param .u32 k)\n{\n"
	"\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [p];\n\tld.param.u32 %r1, [k];\n\tmov.u32 %r2, %tid.x;\n"
	"\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tld.global.u32 %r3, [%rd3];\n"
	"\tmul.lo.u32 %r4, %r3, %r1;\n\tst.global.u32 [%rd3], %r4;\n\tret;\n}\n";

static int log_has(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

#ifdef GPUPROBE_BK_BUILD_STRUCT
/* gp_bk_build.skipped: the kernels left out (the last one's name and why) */
static void note_left_out(void *arg, const char *kernel, const char *why)
{
	struct left { int n; char kernel[64], why[256]; } *l = arg;
	l->n++;
	snprintf(l->kernel, sizeof(l->kernel), "%s", kernel);
	snprintf(l->why, sizeof(l->why), "%s", why);
}
#endif

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *fake = argv[1], *logp = argv[2];
	char err[1024];
	gp_bk *b = NULL;
	const struct gp_bk_ops *ops = &gp_bk_hip;

	setenv("GPUPROBE_HIP_LIB", "/nonexistent/libamdhip64.so", 1);
	int r = ops->open(&b, err, sizeof(err));
	CHECK(r == -ENODEV && strstr(err, "no HIP runtime (/nonexistent/libamdhip64.so cannot be opened"),
	      "open without HIP: %d %s", r, err);
	printf("no runtime: %s\n", err);

	setenv("GPUPROBE_HIP_LIB", fake, 1);
	setenv("FAKE_HIP_LOG", logp, 1);
	remove(logp);
	setenv("GPUPROBE_HIP_ARCH", "gfx908", 1);
	r = ops->open(&b, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "gfx908"), "an architecture not lowered: %d %s", r, err);

	const char *ver = getenv("FAKE_HIP_VERSION");
	unsigned cov = ver && atoi(ver) < 60000000 ? 4 : 5;
	setenv("GPUPROBE_HIP_ARCH", "gfx942:sramecc+:xnack-", 1);
	r = ops->open(&b, err, sizeof(err));
	CHECK(r == 0, "open: %s", err);
	if (r)
		return 1;
	struct gp_bk_info in;
	ops->info(b, &in);
	char route[64];
	snprintf(route, sizeof(route), "LLVM 19 gfx942 code object v%u", cov);
	CHECK(!strcmp(in.backend, "hip") && !strcmp(in.name, "Fake AMD GPU") && !strcmp(in.route, route) &&
	      in.global_mem == (uint64_t)64 << 30 && in.max_wg_size == 1024, "info: %s %s %s", in.backend, in.name, in.route);
	printf("device: %s, %s\n", in.name, in.route);

	gp_bk_queue *q;
	CHECK(ops->queue_create(b, &q, err, sizeof(err)) == 0, "queue: %s", err);
	uint64_t dev, host;
	CHECK(ops->mem_alloc(b, 64, GP_BK_MEM_DEVICE, &dev, err, sizeof(err)) == 0, "alloc: %s", err);
	CHECK(ops->mem_alloc(b, 64, GP_BK_MEM_HOST, &host, err, sizeof(err)) == 0, "host alloc: %s", err);
	CHECK(log_has(logp, "hipHostMalloc 64 flags 2"), "host memory is not mapped");
	uint32_t v[16], back[16];
	for (int i = 0; i < 16; i++)
		v[i] = 1000u + (uint32_t)i;
	CHECK(ops->copy(b, q, dev, (uint64_t)(uintptr_t)v, sizeof(v), 1, err, sizeof(err)) == 0, "copy: %s", err);
	uint32_t pat = 0xabcd1234u;
	CHECK(ops->fill(b, q, dev + 16, &pat, 4, 8, err, sizeof(err)) == 0, "fill: %s", err);
	CHECK(ops->copy(b, q, host, dev, sizeof(v), 0, err, sizeof(err)) == 0, "copy: %s", err);
	CHECK(ops->queue_finish(b, q, err, sizeof(err)) == 0, "finish: %s", err);
	memcpy(back, (void *)(uintptr_t)host, sizeof(back));
	CHECK(back[0] == 1000 && back[3] == 1003 && back[4] == 0xabcd1234u && back[5] == 0xabcd1234u && back[6] == 1006 &&
	      back[15] == 1015, "copies and fills: %u %u %u %u %u", back[0], back[3], back[4], back[5], back[6]);
	CHECK(log_has(logp, "hipMemcpyAsync 64 kind 4") && log_has(logp, "hipMemsetD32Async 2"), "copy/fill calls");
	CHECK(ops->fill(b, q, dev, &pat, 3, 9, err, sizeof(err)) == -EINVAL, "a 3-byte pattern is refused");

	gp_bk_event *e1, *e2;
	CHECK(ops->event_record(b, q, &e1, err, sizeof(err)) == 0 && ops->event_record(b, q, &e2, err, sizeof(err)) == 0, "events");
	uint64_t t1 = 0, t2 = 0;
	CHECK(ops->event_query(b, e1) == 1 && ops->event_wait(b, e2, err, sizeof(err)) == 0, "event state");
	CHECK(ops->event_time(b, e1, &t1) == 0 && ops->event_time(b, e2, &t2) == 0 && t2 > t1, "times %llu %llu",
	      (unsigned long long)t1, (unsigned long long)t2);
	CHECK(ops->queue_wait(b, q, e1, err, sizeof(err)) == 0 && log_has(logp, "hipStreamWaitEvent"), "queue wait");
	ops->event_release(b, e1);
	ops->event_release(b, e2);

	ir_module *m = ptx_parse(ptx, strlen(ptx), err, sizeof(err));
	CHECK(m, "parse: %s", err);
	gp_bk_prog *p = NULL;
#ifdef GPUPROBE_BK_BUILD_STRUCT
	struct gp_bk_build bo_ = {.dyn_shared = 256}, *bo = &bo_;
#else
	unsigned bo = 256;
#endif
	r = ops->program_build(b, m, bo, &p, err, sizeof(err));
	CHECK(r == 0, "build: %s", err);
	if (r == 0) {
		char want[96];
		snprintf(want, sizeof(want), "AMDGPU code object, ABI version %u, flags 0x", cov == 4 ? 2 : 3);
		CHECK(log_has(logp, want) && log_has(logp, "1 kernel(s), first scale"), "the code object hipModuleLoadData got");
		gp_bk_kernel *k = NULL;
		CHECK(ops->kernel_create(b, p, "nope", &k, err, sizeof(err)) == -ENOENT && strstr(err, "no kernel nope"),
		      "a kernel that is not there: %s", err);
		CHECK(ops->kernel_create(b, p, "scale", &k, err, sizeof(err)) == 0, "kernel: %s", err);
		uint32_t kk = 3;
		struct gp_bk_arg args[2] = {{&dev, 8}, {&kk, 4}};
		unsigned grid[3] = {4, 2, 1}, block[3] = {64, 1, 1};
		CHECK(ops->launch(b, q, k, grid, block, args, 2, err, sizeof(err)) == 0, "launch: %s", err);
		char l[128];
		snprintf(l, sizeof(l), "launch scale grid 4 2 1 block 64 1 1 shared 256 first-arg 0x%llx", (unsigned long long)dev);
		CHECK(log_has(logp, l), "the launch the runtime saw (%s)", l);
		ops->kernel_release(b, k);
		ops->program_release(b, p);
	}
	/* a module that does not lower (istypep of a texture reference: .texref is not lowered): one
	 * line naming the instruction and its line */
	char bad[2048];
	const char *line = "\tmul.lo.u32 %r4, %r3, %r1;";
	const char *at = strstr(ptx, line);
	snprintf(bad, sizeof(bad), "%.*s\t{\n\t.reg .pred %%q;\n\tistypep.texref %%q, %%rd3;\n\t}\n%s%s", (int)(at - ptx), ptx, line,
		 at + strlen(line));
	ir_module *m2 = ptx_parse(bad, strlen(bad), err, sizeof(err));
	CHECK(m2, "parse: %s", err);
	if (m2) {
		r = ops->program_build(b, m2, bo, &p, err, sizeof(err));
		CHECK(r < 0 && err[0] >= '1' && err[0] <= '9' && strstr(err, ": cannot lower `istypep.texref` to LLVM IR"), "a module that does not lower: %d %s", r, err);
		printf("not lowered: %s\n", err);
		ir_module_free(m2);
	}
#ifdef GPUPROBE_BK_BUILD_STRUCT
	/* the same kernel beside scale in one module: only it is left out, told by name and why
	 * (gp_bk_build.skipped, as the shim hears it), and scale is in the code object */
	char both[4096];
	const char *head = ".visible .entry scale";
	snprintf(both, sizeof(both), "%s.visible .entry texref_k%s", ptx, strstr(bad, head) + strlen(head));
	ir_module *m3 = ptx_parse(both, strlen(both), err, sizeof(err));
	CHECK(m3, "parse: %s", err);
	if (m3) {
		struct left { int n; char kernel[64], why[256]; } left = {0};
		bo_.skipped = note_left_out;
		bo_.skipped_arg = &left;
		remove(logp);
		r = ops->program_build(b, m3, bo, &p, err, sizeof(err));
		CHECK(r == 0, "a module with one kernel that does not lower: %s", err);
		CHECK(left.n == 1 && !strcmp(left.kernel, "texref_k") && strstr(left.why, ": cannot lower `istypep.texref` to LLVM IR"),
		      "kernels left out: %d, %s: %s", left.n, left.kernel, left.why);
		CHECK(log_has(logp, "1 kernel(s), first scale"), "the code object holds scale alone");
		printf("left out: %s: %s\n", left.kernel, left.why);
		if (r == 0)
			ops->program_release(b, p);
		bo_.skipped = NULL;
		ir_module_free(m3);
	}
#endif
	ir_module_free(m);
	ops->mem_free(b, dev);
	ops->mem_free(b, host);
	CHECK(log_has(logp, "hipFree") && log_has(logp, "hipHostFree"), "frees");
	ops->queue_destroy(b, q);
	ops->close(b);
	printf("%s\n", fails ? "FAILED" : "hip backend: all checks pass");
	return fails ? 1 : 0;
}
