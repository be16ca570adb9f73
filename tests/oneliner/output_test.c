/* How one-liners' maps print (include/gpuprobe/output.h), whole, text and JSON: a map without a
 * key ("@n: 5", gp_no_key_t), several keys as a tuple with kernel and API members by name,
 * kernel and API keys, hist and lhist. The maps live on the host allocator, filled from here. */
#include "maps/output.h"
#include "ebpf/object.h"
#include "ebpf/oneliner.h"
#include "gpuprobe/api.h"
#include "gpuprobe/context.h"
#include "maps/maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static struct gp_map_allocator *alloc;

static void expect_str(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want)) {
		printf("FAIL %s\n--- got:\n%s--- expected:\n%s---\n", what, got, want);
		failures++;
	} else {
		printf("ok   %s\n", what);
	}
}

static uint64_t zero_ms(void *user) { (void)user; return 0; }

static char *print_all(struct gp_map_set *set, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_output_opts oo = {.out = f, .json = json, .now_ms = zero_ms};
	struct gp_output *o;
	gp_output__open(&oo, &o);
	gp_output__add_kernel_name(o, "_Z6vecAddPKfS0_Pfi");
	gp_output__add_kernel_name(o, "_Z7oddEvenPf");
	gp_output__add_set(o, set);
	gp_output__print_maps(o);
	gp_output__close(o);
	fclose(f);
	return buf;
}

static void put(struct gp_map_set *set, const char *map, const void *key, uint64_t v)
{
	if (gp_map_inst__update(gp_map_set__find(set, map), key, &v, 0)) {
		printf("FAIL update %s\n", map);
		failures++;
	}
}

int main(void)
{
	alloc = gp_map_allocator_host(4);
	const char *src = "gpu/entry/* { @n = count(); @b[kernel, block] = count(); @t = hist(thread); "
			  "@l = lhist(thread, 0, 100, 25); @k[kernel] = sum(thread) } "
			  "host/entry/cu* { @calls[api, tid] = count(); @a[api] = count() }";
	char err[512];
	void *elf;
	size_t size;
	struct gp_object *obj;
	if (gp_oneliner_compile(src, &elf, &size, err, sizeof err) ||
	    gp_object__open_mem(elf, size, "one-liner", &obj, err, sizeof err)) {
		printf("FAIL %s\n", err);
		return 1;
	}
	free(elf);
	size_t n = gp_object__map_count(obj);
	struct gp_map *defs = calloc(n, sizeof *defs);
	for (size_t i = 0; i < n; i++)
		defs[i] = *gp_object__map(obj, i);
	struct gp_map_set_opts so = {.alloc = alloc};
	struct gp_map_set *set;
	if (gp_map_set__create(defs, n, &so, &set, err, sizeof err)) {
		printf("FAIL maps: %s\n", err);
		return 1;
	}
	uint32_t vec = gp_name_hash("_Z6vecAddPKfS0_Pfi"), odd = gp_name_hash("_Z7oddEvenPf"), zero = 0;
	put(set, "n", &zero, 5);
	struct { uint32_t kernel, pad; uint64_t block; } b1 = {vec, 0, 3}, b2 = {odd, 0, 0}, b3 = {777, 0, 9};
	put(set, "b", &b1, 128);
	put(set, "b", &b2, 64);
	put(set, "b", &b3, 1);
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t bucket = k;
		put(set, "t", &bucket, k + 1);
		put(set, "l", &bucket, 10 * (k + 1));
	}
	put(set, "k", &vec, 4096);
	struct { uint32_t api, pad; uint64_t tid; } c1 = {GP_API_cuLaunchKernel, 0, 4242}, c2 = {GP_API_cuMemcpyHtoD, 0, 4243};
	put(set, "calls", &c1, 2);
	put(set, "calls", &c2, 7);
	uint32_t api = GP_API_cuCtxSynchronize;
	put(set, "a", &api, 3);
	char *text = print_all(set, 0);
	expect_str("one-liner maps, text", text,
		   "@n: 5\n"
		   "@b[kernel#777, 9]: 1\n"
		   "@b[oddEven(float*), 0]: 64\n"
		   "@b[vecAdd(float const*, float const*, float*, int), 3]: 128\n"
		   "@t:\n"
		   "[0]    1 |@@@@@@@@@@@@@                                       |\n"
		   "[1]    2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		   "[2, 4) 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@             |\n"
		   "[4, 8) 4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		   "@l:\n"
		   "[0, 25)   10 |@@@@@@@@@@@@@                                       |\n"
		   "[25, 50)  20 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		   "[50, 75)  30 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@             |\n"
		   "[75, 100) 40 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		   "@k[vecAdd(float const*, float const*, float*, int)]: 4096\n"
		   "@calls[cuLaunchKernel, 4242]: 2\n"
		   "@calls[cuMemcpyHtoD, 4243]: 7\n"
		   "@a[cuCtxSynchronize]: 3\n");
	free(text);
	char *json = print_all(set, 1);
	expect_str("one-liner maps, JSON", json,
		   "{\"type\":\"map\",\"name\":\"n\",\"time\":0.0,\"data\":5}\n"
		   "{\"type\":\"map\",\"name\":\"b\",\"time\":0.0,\"data\":{\"kernel#777, 9\":1,\"oddEven(float*), 0\":64,\"vecAdd(float const*, float const*, float*, int), 3\":128}}\n"
		   "{\"type\":\"hist\",\"name\":\"t\",\"time\":0.0,\"data\":[{\"min\":0,\"max\":0,\"count\":1},{\"min\":1,\"max\":1,\"count\":2},{\"min\":2,\"max\":3,\"count\":3},{\"min\":4,\"max\":7,\"count\":4}]}\n"
		   "{\"type\":\"hist\",\"name\":\"l\",\"time\":0.0,\"data\":[{\"min\":0,\"max\":24,\"count\":10},{\"min\":25,\"max\":49,\"count\":20},{\"min\":50,\"max\":74,\"count\":30},{\"min\":75,\"max\":99,\"count\":40}]}\n"
		   "{\"type\":\"top\",\"name\":\"k\",\"time\":0.0,\"data\":[{\"key\":\"vecAdd(float const*, float const*, float*, int)\",\"id\":2677925937,\"value\":4096}]}\n"
		   "{\"type\":\"map\",\"name\":\"calls\",\"time\":0.0,\"data\":{\"cuLaunchKernel, 4242\":2,\"cuMemcpyHtoD, 4243\":7}}\n"
		   "{\"type\":\"top\",\"name\":\"a\",\"time\":0.0,\"data\":[{\"key\":\"cuCtxSynchronize\",\"id\":4,\"value\":3}]}\n");
	free(json);
	gp_map_set__free(set);
	free(defs);
	gp_object__close(obj);
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures != 0;
}
