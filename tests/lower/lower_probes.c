/* The whole device path for probes written in C: open the object (ebpf/object.h), verify each
 * program (ebpf/verifier.h), create its maps (maps/), lower every verified program with the maps
 * runtime's hooks (emit_map_ref, helper_func, puts_func) and the verifier's stack depth, and have
 * ptxas compile the module for sm_75 and sm_90.
 *
 * usage: lower_probes PTXAS OBJ.bpf.o... [--all-verify]
 * With --all-verify every program must verify (our own probes); otherwise rejected programs are
 * listed and skipped (objects made to test rejections). Every verified program must lower, and
 * the module must compile. Objects that do not open are listed and skipped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebpf/lower.h"
#include "ebpf/object.h"
#include "ebpf/verifier.h"
#include "maps/map_device.h"
#include "maps/maps.h"

static int ptxas_compile(const char *ptxas, const char *ptx, size_t len, const char *sm)
{
	char path[] = "/tmp/lower_probes_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	fwrite(ptx, 1, len, f);
	fclose(f);
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "%s -arch=%s %s -o %s.cubin", ptxas, sm, path, path);
	int st = system(cmd);
	if (st == 0) {
		snprintf(cmd, sizeof(cmd), "%s.cubin", path);
		unlink(cmd);
		unlink(path);
	} else {
		fprintf(stderr, "lower_probes: ptxas %s failed; PTX kept in %s\n", sm, path);
	}
	return st;
}

static void directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = text;
	ir_top_append(m, t);
}

static const char *last_line(char *log)
{
	size_t n = strlen(log);
	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	char *nl = strrchr(log, '\n');
	return nl ? nl + 1 : log;
}

/* Returns the number of failures for this object. */
static int lower_object(const char *ptxas, const char *path, int all_verify, unsigned *nlowered)
{
	struct gp_object *obj;
	char err[512];
	if (gp_object__open_file(path, &obj, err, sizeof(err))) {
		printf("skip object %s: %s\n", path, err);
		return 0;
	}
	int failures = 0;
	size_t nmaps = gp_object__map_count(obj), nprogs = gp_object__program_count(obj);
	struct gp_map *defs = calloc(nmaps + 1, sizeof(*defs));
	uint8_t *atomic_only = calloc(nmaps + 1, 1), *prog_atomic = calloc(nmaps + 1, 1);
	unsigned *stack = calloc(nprogs + 1, sizeof(*stack));
	int *verified = calloc(nprogs + 1, sizeof(*verified));
	for (size_t i = 0; i < nmaps; i++)
		defs[i] = *gp_object__map(obj, i);
	for (size_t i = 0; i < nmaps; i++)
		atomic_only[i] = 1;
	static char log[1 << 16];
	for (size_t p = 0; p < nprogs; p++) {
		const struct gp_program *prog = gp_object__program(obj, p);
		struct gp_verify_opts vo = {.attach = prog->attach, .maps = defs, .nmaps = nmaps,
					    .ctx_size = gp_attach_ctx_size(prog->attach),
					    .log = log, .log_size = sizeof(log),
					    .map_atomic_only = prog_atomic};
		log[0] = 0;
		int rc = gp_verify(prog->insns, prog->ninsns, &vo);
		if (rc) {
			printf("%s %s/%s: %s\n", all_verify ? "FAIL verify" : "not verified", path, prog->name,
			       last_line(log));
			failures += all_verify;
			for (size_t i = 0; i < nmaps; i++)
				atomic_only[i] = 0;
			continue;
		}
		verified[p] = 1;
		stack[p] = vo.stack_depth;
		for (size_t i = 0; i < nmaps; i++)
			atomic_only[i] &= prog_atomic[i];
	}
	struct gp_map_allocator *alloc = gp_map_allocator_host(4);
	struct gp_map_set_opts so = {.alloc = alloc, .atomic_only = atomic_only};
	struct gp_map_set *set = NULL;
	struct gp_maps_device dev = {0};
	if (gp_map_set__create(defs, nmaps, &so, &set, err, sizeof(err)) ||
	    gp_maps_device__init_from_set(&dev, set)) {
		printf("FAIL maps %s: %s\n", path, err);
		failures++;
		goto out;
	}
	ir_module *m = ir_module_new();
	directive(m, ".version 7.8");
	directive(m, ".target sm_75");
	directive(m, ".address_size 64");
	const char *puts_fn = gp_maps_puts_func(&dev, m);
	unsigned lowered = 0;
	for (size_t p = 0; p < nprogs; p++) {
		if (!verified[p])
			continue;
		const struct gp_program *prog = gp_object__program(obj, p);
		struct gp_lower_opts lo = {.emit_map_ref = gp_maps_emit_map_ref, .helper_func = gp_maps_helper_func,
					   .puts_func = puts_fn, .user = &dev,
					   .prefix = ir_strfmt(m, "__gp%zu_", p), .stack_size = stack[p],
					   .assume_aligned = 1};
		const char *fn = ir_strfmt(m, "probe_%zu", p);
		if (gp_lower_program(m, prog->insns, prog->ninsns, fn, &lo, err, sizeof(err))) {
			printf("FAIL lower %s/%s: %s\n", path, prog->name, err);
			failures++;
			continue;
		}
		printf("ok %s/%s: %zu insns, stack %u, lowered into %s\n", path, prog->name, prog->ninsns,
		       stack[p], fn);
		lowered++;
	}
	if (lowered) {
		size_t len;
		char *ptx = ptx_print(m, &len);
		const char *keep = getenv("GP_LOWER_KEEP");   /* a directory: keep each module's PTX */
		if (keep) {
			const char *base = strrchr(path, '/');
			char out[4096];
			snprintf(out, sizeof(out), "%s/%s.ptx", keep, base ? base + 1 : path);
			FILE *f = fopen(out, "w");
			if (f) {
				fwrite(ptx, 1, len, f);
				fclose(f);
			}
		}
		for (int k = 0; k < 2; k++)
			if (ptxas_compile(ptxas, ptx, len, k ? "sm_90" : "sm_75")) {
				printf("FAIL ptxas %s %s\n", k ? "sm_90" : "sm_75", path);
				failures++;
			}
		free(ptx);
	}
	*nlowered += lowered;
	ir_module_free(m);
	gp_maps_device__release(&dev);
out:
	if (set)
		gp_map_set__free(set);
	free(alloc);
	free(defs);
	free(atomic_only);
	free(prog_atomic);
	free(stack);
	free(verified);
	gp_object__close(obj);
	return failures;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PTXAS OBJ.bpf.o... [--all-verify]\n", argv[0]);
		return 2;
	}
	const char *ptxas = argv[1];
	if (access(ptxas, X_OK)) {
		printf("SKIP: no ptxas at %s\n", ptxas);
		return 77;
	}
	int all_verify = 0, failures = 0;
	for (int i = 2; i < argc; i++)
		all_verify |= !strcmp(argv[i], "--all-verify");
	unsigned lowered = 0;
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--all-verify"))
			failures += lower_object(ptxas, argv[i], all_verify, &lowered);
	printf("lower_probes: %u programs lowered and compiled, %d failures\n", lowered, failures);
	return failures || !lowered ? 1 : 0;
}
