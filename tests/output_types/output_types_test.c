/* Typed output (include/gpuprobe/output.h): the key type a probe declares decides how its map
 * prints, read from the object's BTF; the old name rules still decide where no type does. The
 * objects are real clang output (typed.bpf.c, and examples' probes as they ship); the maps live on
 * the host allocator and are filled from here; the output is compared whole, text and JSON.
 * usage: output_types_test TYPED.bpf.o MEM_TRACE.bpf.o INSN_COUNT.bpf.o */
#include "maps/output.h"
#include "ebpf/object.h"
#include "gpuprobe/api.h"
#include "gpuprobe/context.h"
#include "maps/maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect_str(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want)) {
		fprintf(stderr, "FAIL %s\n--- got:\n%s--- expected:\n%s---\n", what, got, want);
		failures++;
	}
}

static void expect_int(const char *what, long long got, long long want)
{
	if (got != want) {
		fprintf(stderr, "FAIL %s: %lld, expected %lld\n", what, got, want);
		failures++;
	}
}

struct loaded {
	struct gp_object *obj;
	struct gp_map *defs;
	struct gp_map_set *set;
};

static struct gp_map_allocator *alloc;

static int load(const char *path, struct loaded *l)
{
	char err[512];
	if (gp_object__open_file(path, &l->obj, err, sizeof(err))) {
		fprintf(stderr, "FAIL open %s: %s\n", path, err);
		return -1;
	}
	size_t n = gp_object__map_count(l->obj);
	l->defs = calloc(n, sizeof(*l->defs));
	for (size_t i = 0; i < n; i++)
		l->defs[i] = *gp_object__map(l->obj, i);
	struct gp_map_set_opts so = {.alloc = alloc};
	if (gp_map_set__create(l->defs, n, &so, &l->set, err, sizeof(err))) {
		fprintf(stderr, "FAIL maps of %s: %s\n", path, err);
		return -1;
	}
	return 0;
}

static void unload(struct loaded *l)
{
	gp_map_set__free(l->set);
	free(l->defs);
	gp_object__close(l->obj);
}

static uint32_t print_as(struct loaded *l, const char *map)
{
	for (size_t i = 0; i < gp_object__map_count(l->obj); i++)
		if (!strcmp(gp_object__map(l->obj, i)->name, map))
			return gp_object__map(l->obj, i)->print_as;
	return 99;
}

static void put(struct loaded *l, const char *map, uint32_t key, uint64_t v)
{
	if (gp_map_inst__update(gp_map_set__find(l->set, map), &key, &v, 0)) {
		fprintf(stderr, "FAIL update %s[%u]\n", map, key);
		failures++;
	}
}

static uint64_t zero_ms(void *user) { (void)user; return 0; }

/* Everything the output prints for the set, text or JSON. */
static char *print_all(struct loaded *l, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_output_opts oo = {.out = f, .json = json, .now_ms = zero_ms};
	struct gp_output *o;
	gp_output__open(&oo, &o);
	gp_output__add_kernel_name(o, "_Z6vecAddPKfS0_Pfi");
	gp_output__add_kernel_name(o, "_Z7oddEvenPf");
	gp_output__add_set(o, l->set);
	gp_output__print_maps(o);
	gp_output__close(o);
	fclose(f);
	return buf;
}

static void typed(const char *path)
{
	struct loaded l;
	if (load(path, &l)) {
		failures++;
		return;
	}
	expect_int("threads", print_as(&l, "threads"), GP_PRINT_KERNEL);
	expect_int("blocks", print_as(&l, "blocks"), GP_PRINT_KERNEL);
	expect_int("calls", print_as(&l, "calls"), GP_PRINT_API);
	expect_int("latency", print_as(&l, "latency"), GP_PRINT_LOG2);
	expect_int("width", print_as(&l, "width"), GP_PRINT_LINEAR);
	expect_int("size_hist", print_as(&l, "size_hist"), GP_PRINT_KERNEL);
	expect_int("old_hist", print_as(&l, "old_hist"), GP_PRINT_BY_NAME);
	expect_int("sizes", print_as(&l, "sizes"), GP_PRINT_BY_NAME);
	uint32_t vec = gp_name_hash("_Z6vecAddPKfS0_Pfi"), odd = gp_name_hash("_Z7oddEvenPf");
	put(&l, "threads", vec, 50000);
	put(&l, "threads", odd, 1024);
	put(&l, "threads", 12345, 7);                 /* a kernel never seen */
	put(&l, "blocks", vec, 196);
	put(&l, "calls", GP_API_cuLaunchKernel, 3);
	put(&l, "calls", GP_API_cuMemcpyHtoD, 2);
	put(&l, "calls", 999, 1);                     /* an id not in the list */
	put(&l, "latency", 0, 1);
	put(&l, "latency", 3, 4);
	put(&l, "width", 0, 2);
	put(&l, "width", 2, 5);
	put(&l, "size_hist", odd, 9);
	put(&l, "old_hist", 2, 6);
	put(&l, "sizes", 4, 8);
	char *text = print_all(&l, 0);
	expect_str("typed maps, text", text,
		   "@threads[kernel#12345]: 7\n"
		   "@threads[oddEven(float*)]: 1024\n"
		   "@threads[vecAdd(float const*, float const*, float*, int)]: 50000\n"
		   "@calls[api#999]: 1\n"
		   "@calls[cuMemcpyHtoD]: 2\n"
		   "@calls[cuLaunchKernel]: 3\n"
		   "@blocks[vecAdd(float const*, float const*, float*, int)]: 196\n"
		   "@latency:\n"
		   "[0]    1 |@@@@@@@@@@@@@                                       |\n"
		   "[1]    0 |                                                    |\n"
		   "[2, 4) 0 |                                                    |\n"
		   "[4, 8) 4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		   "@width:\n"
		   "[0, 10)  2 |@@@@@@@@@@@@@@@@@@@@                                |\n"
		   "[10, 20) 0 |                                                    |\n"
		   "[20, 30) 5 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		   "@size_hist[oddEven(float*)]: 9\n"
		   "@old_hist:\n"
		   "[2, 4) 6 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		   "@sizes[4]: 8\n");
	free(text);
	char *json = print_all(&l, 1);
	expect_str("typed maps, JSON", json,
		   "{\"type\":\"top\",\"name\":\"threads\",\"time\":0.0,\"data\":[{\"key\":\"kernel#12345\",\"id\":12345,\"value\":7},{\"key\":\"oddEven(float*)\",\"id\":3890441516,\"value\":1024},{\"key\":\"vecAdd(float const*, float const*, float*, int)\",\"id\":2677925937,\"value\":50000}]}\n"
		   "{\"type\":\"top\",\"name\":\"calls\",\"time\":0.0,\"data\":[{\"key\":\"api#999\",\"id\":999,\"value\":1},{\"key\":\"cuMemcpyHtoD\",\"id\":8,\"value\":2},{\"key\":\"cuLaunchKernel\",\"id\":1,\"value\":3}]}\n"
		   "{\"type\":\"top\",\"name\":\"blocks\",\"time\":0.0,\"data\":[{\"key\":\"vecAdd(float const*, float const*, float*, int)\",\"id\":2677925937,\"value\":196}]}\n"
		   "{\"type\":\"hist\",\"name\":\"latency\",\"time\":0.0,\"data\":[{\"min\":0,\"max\":0,\"count\":1},{\"min\":1,\"max\":1,\"count\":0},{\"min\":2,\"max\":3,\"count\":0},{\"min\":4,\"max\":7,\"count\":4}]}\n"
		   "{\"type\":\"hist\",\"name\":\"width\",\"time\":0.0,\"data\":[{\"min\":0,\"max\":9,\"count\":2},{\"min\":10,\"max\":19,\"count\":0},{\"min\":20,\"max\":29,\"count\":5}]}\n"
		   "{\"type\":\"top\",\"name\":\"size_hist\",\"time\":0.0,\"data\":[{\"key\":\"oddEven(float*)\",\"id\":3890441516,\"value\":9}]}\n"
		   "{\"type\":\"hist\",\"name\":\"old_hist\",\"time\":0.0,\"data\":[{\"min\":2,\"max\":3,\"count\":6}]}\n"
		   "{\"type\":\"map\",\"name\":\"sizes\",\"time\":0.0,\"data\":{\"4\":8}}\n");
	free(json);
	unload(&l);
}

/* examples' kernel counters, as they ship: keyed by ctx->thread.kernel_hash, they print the
 * kernels' names (by their gp_kernel_id_t keys; by their names too, before those types). */
static void example(const char *path, const char *maps[], size_t nmaps, const char *want)
{
	struct loaded l;
	if (load(path, &l)) {
		failures++;
		return;
	}
	uint32_t vec = gp_name_hash("_Z6vecAddPKfS0_Pfi"), odd = gp_name_hash("_Z7oddEvenPf");
	for (size_t i = 0; i < nmaps; i++) {
		expect_int(maps[i], print_as(&l, maps[i]), GP_PRINT_KERNEL);
		put(&l, maps[i], vec, 100 + i);
		put(&l, maps[i], odd, 10 + i);
	}
	char *text = print_all(&l, 0);
	expect_str(path, text, want);
	free(text);
	unload(&l);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s TYPED.bpf.o MEM_TRACE.bpf.o INSN_COUNT.bpf.o\n", argv[0]);
		return 2;
	}
	alloc = gp_map_allocator_host(4);
	typed(argv[1]);
	const char *mem[] = {"loads_by_kernel", "stores_by_kernel"}, *insn[] = {"insns_by_kernel"};
	example(argv[2], mem, 2,
		"@loads_by_kernel[oddEven(float*)]: 10\n"
		"@loads_by_kernel[vecAdd(float const*, float const*, float*, int)]: 100\n"
		"@stores_by_kernel[oddEven(float*)]: 11\n"
		"@stores_by_kernel[vecAdd(float const*, float const*, float*, int)]: 101\n");
	example(argv[3], insn, 1,
		"@insns_by_kernel[oddEven(float*)]: 10\n"
		"@insns_by_kernel[vecAdd(float const*, float const*, float*, int)]: 100\n");
	free(alloc);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	else
		printf("ok\n");
	return failures ? 1 : 0;
}
