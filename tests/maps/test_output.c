/* gpuprobe run's output, checked exactly: counts, log2 and linear histograms, kernel tables with
 * demangled names, top-N truncation, summed copies, global data, ring events, printk lines, lost
 * counts, periodic prints, and the same in JSON. Maps live on the host allocator. */
#include "maps/output.h"
#include "maps/maps.h"
#include "check.h"

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdlib.h>

static struct gp_map_allocator *alloc4;
static uint64_t fake_ms;

static uint64_t fake_clock(void *user) { return fake_ms; }

static const char *names(void *user, uint64_t id)
{
	switch (id) {
	case 1: return "_Z6vecAddPKfS0_Pfi";
	case 2: return "plain_kernel";
	}
	return NULL;
}

static struct gp_map_set *make_set(void)
{
	struct gp_map defs[] = {
		{.name = "counts", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 16},
		{.name = "lat_hist", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 65},
		{.name = "x_lhist_10", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 8},
		{.name = "launches_by_kernel", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 8},
		{.name = "events", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 14},
		{.name = ".bss", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16, .max_entries = 1},
		{.name = ".rodata", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1, .readonly = 1},
		{.name = "per_sm", .type = BPF_MAP_TYPE_PERCPU_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 2},
		{.name = "names", .type = BPF_MAP_TYPE_HASH, .key_size = 12, .value_size = 16, .max_entries = 4},
	};
	uint8_t atomic_only[9] = {[0] = 1};
	struct gp_map_set_opts so = {.alloc = alloc4, .atomic_only = atomic_only};
	struct gp_map_set *set = NULL;
	char err[256];
	CHECK_EQ(gp_map_set__create(defs, 9, &so, &set, err, sizeof(err)), 0);

	struct gp_map_inst *counts = gp_map_set__find(set, "counts");
	uint64_t v;
	v = 5, gp_map_inst__update(counts, &(uint32_t){1}, &v, 0);
	v = 100, gp_map_inst__update(counts, &(uint32_t){2}, &v, 0);
	v = 7, gp_map_inst__update(counts, &(uint32_t){3}, &v, 0);
	/* the device's SM 2 adds 3 to key 1: the sum prints */
	uint64_t *p = gp_map_inst__value_ptr(counts, &(uint32_t){1}, 2);
	if (p)
		*p += 3;
	struct gp_map_inst *h = gp_map_set__find(set, "lat_hist");
	v = 1, gp_map_inst__update(h, &(uint32_t){0}, &v, 0);
	v = 3, gp_map_inst__update(h, &(uint32_t){2}, &v, 0);
	v = 6, gp_map_inst__update(h, &(uint32_t){3}, &v, 0);
	v = 12, gp_map_inst__update(h, &(uint32_t){11}, &v, 0);
	struct gp_map_inst *l = gp_map_set__find(set, "x_lhist_10");
	v = 2, gp_map_inst__update(l, &(uint32_t){1}, &v, 0);
	v = 4, gp_map_inst__update(l, &(uint32_t){3}, &v, 0);
	struct gp_map_inst *k = gp_map_set__find(set, "launches_by_kernel");
	v = 4, gp_map_inst__update(k, &(uint64_t){1}, &v, 0);
	v = 9, gp_map_inst__update(k, &(uint64_t){2}, &v, 0);
	v = 1, gp_map_inst__update(k, &(uint64_t){3}, &v, 0);
	uint64_t bss[2] = {0, 42};
	gp_map_inst__update(gp_map_set__find(set, ".bss"), &(uint32_t){0}, bss, 0);
	struct gp_map_inst *pc = gp_map_set__find(set, "per_sm");
	uint32_t *c1 = gp_map_inst__value_ptr(pc, &(uint32_t){1}, 1), *c3 = gp_map_inst__value_ptr(pc, &(uint32_t){1}, 3);
	if (c1 && c3)
		*c1 = 2, *c3 = 5;
	uint64_t nv[2] = {1, 2};
	gp_map_inst__update(gp_map_set__find(set, "names"), "cuda\0\0\0\0\0\0\0", nv, 0);
	return set;
}

static void emit_events(struct gp_map_set *set)
{
	struct gp_map_inst *ev = gp_map_set__find(set, "events");
	uint64_t rec[2] = {1, 255};
	gp_map_inst__ring_output(ev, 3, rec, 16);
	gp_map_inst__ring_output(ev, 0, "abc", 3);
	for (int i = 0; i < 200; i++)   /* ring 1 holds 4096 bytes: 4096/24 = 170 fit, 30 lost */
		gp_map_inst__ring_output(ev, 1, rec, 16);
	uint8_t pk[64] = {0};
	const char *fmt = "block %d took %u ns\n";
	uint32_t len = (uint32_t)strlen(fmt) + 1, nargs = 3;
	uint64_t args[3] = {7, 1500, 0};
	memcpy(pk, &len, 4);
	memcpy(pk + 4, &nargs, 4);
	memcpy(pk + 8, args, 24);
	memcpy(pk + 32, fmt, len);
	gp_map_inst__ring_output(gp_map_set__printk(set), 0, pk, 32 + len);
}

static char *run(int json, unsigned top_n, int periodic)
{
	struct gp_map_set *set = make_set();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_output_opts o = {.out = f, .json = json, .top_n = top_n, .kernel_name = names,
				   .now_ms = fake_clock, .interval_ms = periodic ? 2000 : 0};
	struct gp_output *out;
	fake_ms = 1000;
	CHECK_EQ(gp_output__open(&o, &out), 0);
	gp_output__add_set(out, set);
	emit_events(set);
	int n = gp_output__poll(out);
	CHECK_EQ(n, 173);   /* 2 + 170 events and 1 printk line */
	if (periodic) {
		struct gp_map_inst *ev = gp_map_set__find(set, "events");
		gp_map_inst__ring_drain(ev, NULL, NULL);
		fake_ms = 3500;
		gp_output__poll(out);
	} else {
		/* keep the output short: drop ring 1's records before printing */
		gp_output__print_final(out);
	}
	gp_output__close(out);
	fclose(f);
	gp_map_set__free(set);
	return buf;
}

/* The lines of s that do not start with "@events[ring 1]" (170 identical records). */
static char *without_ring1(char *s)
{
	char *o = s, *r = s;
	while (*r) {
		char *nl = strchr(r, '\n');
		size_t n = nl ? (size_t)(nl - r + 1) : strlen(r);
		char saved = r[n];
		r[n] = 0;   /* look at this line only */
		bool keep = strncmp(r, "@events[ring 1]", 15) && !strstr(r, "\"ring\":1,");
		r[n] = saved;
		if (keep) {
			memmove(o, r, n);
			o += n;
		}
		r += n;
	}
	*o = 0;
	return s;
}

static const char *text_expected =
	"block 7 took 1500 ns\n"
	"@events[ring 0]: 0x0000000000636261\n"
	"@events[ring 3]: 0x0000000000000001 0x00000000000000ff\n"
	"@counts[3]: 7\n"
	"@counts[1]: 8\n"
	"@counts[2]: 100\n"
	"@lat_hist:\n"
	"[0]         1 |@@@@                                                |\n"
	"[1]         0 |                                                    |\n"
	"[2, 4)      3 |@@@@@@@@@@@@@                                       |\n"
	"[4, 8)      6 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
	"[8, 16)     0 |                                                    |\n"
	"[16, 32)    0 |                                                    |\n"
	"[32, 64)    0 |                                                    |\n"
	"[64, 128)   0 |                                                    |\n"
	"[128, 256)  0 |                                                    |\n"
	"[256, 512)  0 |                                                    |\n"
	"[512, 1K)   0 |                                                    |\n"
	"[1K, 2K)   12 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
	"@x_lhist_10:\n"
	"[10, 20) 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
	"[20, 30) 0 |                                                    |\n"
	"[30, 40) 4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
	"@launches_by_kernel[kernel#3]: 1\n"
	"@launches_by_kernel[vecAdd(float const*, float const*, float*, int)]: 4\n"
	"@launches_by_kernel[plain_kernel]: 9\n"
	"@.bss: (0, 42)\n"
	"@per_sm[1]: 7\n"
	"@names[cuda]: (1, 2)\n"
	"@events: 30 lost\n";

static const char *json_expected =
	"{\"type\":\"printk\",\"text\":\"block 7 took 1500 ns\"}\n"
	"{\"type\":\"event\",\"map\":\"events\",\"ring\":0,\"data\":\"616263\"}\n"
	"{\"type\":\"event\",\"map\":\"events\",\"ring\":3,\"data\":\"0100000000000000ff00000000000000\"}\n"
	"{\"type\":\"map\",\"name\":\"counts\",\"time\":0.0,\"data\":{\"3\":7,\"1\":8,\"2\":100}}\n"
	"{\"type\":\"hist\",\"name\":\"lat_hist\",\"time\":0.0,\"data\":[{\"min\":0,\"max\":0,\"count\":1},"
	"{\"min\":1,\"max\":1,\"count\":0},{\"min\":2,\"max\":3,\"count\":3},{\"min\":4,\"max\":7,\"count\":6},"
	"{\"min\":8,\"max\":15,\"count\":0},{\"min\":16,\"max\":31,\"count\":0},{\"min\":32,\"max\":63,\"count\":0},"
	"{\"min\":64,\"max\":127,\"count\":0},{\"min\":128,\"max\":255,\"count\":0},{\"min\":256,\"max\":511,\"count\":0},"
	"{\"min\":512,\"max\":1023,\"count\":0},{\"min\":1024,\"max\":2047,\"count\":12}]}\n"
	"{\"type\":\"hist\",\"name\":\"x_lhist_10\",\"time\":0.0,\"data\":[{\"min\":10,\"max\":19,\"count\":2},"
	"{\"min\":20,\"max\":29,\"count\":0},{\"min\":30,\"max\":39,\"count\":4}]}\n"
	"{\"type\":\"top\",\"name\":\"launches_by_kernel\",\"time\":0.0,\"data\":[{\"key\":\"kernel#3\",\"id\":3,\"value\":1},"
	"{\"key\":\"vecAdd(float const*, float const*, float*, int)\",\"id\":1,\"value\":4},"
	"{\"key\":\"plain_kernel\",\"id\":2,\"value\":9}]}\n"
	"{\"type\":\"map\",\"name\":\".bss\",\"time\":0.0,\"data\":[0,42]}\n"
	"{\"type\":\"map\",\"name\":\"per_sm\",\"time\":0.0,\"data\":{\"1\":7}}\n"
	"{\"type\":\"map\",\"name\":\"names\",\"time\":0.0,\"data\":{\"cuda\":[1,2]}}\n"
	"{\"type\":\"lost\",\"map\":\"events\",\"count\":30}\n";

int main(void)
{
	alloc4 = gp_map_allocator_host(4);
	char *t = run(0, 0, 0);
	CHECK_STR(without_ring1(t), text_expected);
	free(t);
	char *j = run(1, 0, 0);
	if (getenv("GP_DEBUG")) fputs(j, stderr);
	CHECK_STR(without_ring1(j), json_expected);
	free(j);

	/* top 2: the two largest, largest last, with a header saying so */
	char *top = run(0, 2, 0);
	CHECK(strstr(top, "@counts: top 2 of 3\n@counts[1]: 8\n@counts[2]: 100\n") != NULL);
	CHECK(strstr(top, "@launches_by_kernel: top 2 of 3\n@launches_by_kernel[vecAdd(") != NULL);
	free(top);

	/* -i 2: at 3.5 s (2.5 s after the start) the maps print once, headed by the time */
	char *per = run(0, 0, 1);
	CHECK(strstr(per, "--- 2.5s ---\n@counts[3]: 7\n") != NULL);
	CHECK(strstr(per, "lost") == NULL);   /* lost counts only at exit */
	free(per);

	/* the polling thread prints what arrives, and the final report when stopped */
	{
		struct gp_map_set *set = make_set();
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct gp_output_opts o = {.out = f, .kernel_name = names};
		struct gp_output *out;
		CHECK_EQ(gp_output__open(&o, &out), 0);
		gp_output__add_set(out, set);
		CHECK_EQ(gp_output__start_thread(out, 5), 0);
		emit_events(set);
		gp_output__stop_thread(out, 1);
		gp_output__close(out);
		fclose(f);
		CHECK(strstr(buf, "block 7 took 1500 ns\n") != NULL);
		CHECK(strstr(buf, "@counts[2]: 100\n@lat_hist:\n") != NULL);
		CHECK(strstr(buf, "@events: 30 lost\n") != NULL);
		free(buf);
		gp_map_set__free(set);
	}

	/* kernel names by gp_name_hash, when the callback does not know them */
	{
		struct gp_map_set *set = make_set();
		struct gp_map_inst *k = gp_map_set__find(set, "launches_by_kernel");
		uint64_t h = 2166136261u, v = 5;
		for (const char *p = "_Z4tinyv"; *p; p++)
			h = ((h ^ (uint8_t)*p) * 16777619u) & 0xffffffffu;
		gp_map_inst__update(k, &h, &v, 0);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct gp_output_opts o = {.out = f};
		struct gp_output *out;
		gp_output__open(&o, &out);
		gp_output__add_set(out, set);
		for (int i = 0; i < 100; i++) {   /* grows the table past its first size */
			char nm[32];
			snprintf(nm, sizeof(nm), "_Z6kernelILi%dEEvv", i);
			CHECK_EQ(gp_output__add_kernel_name(out, nm), 0);
		}
		CHECK_EQ(gp_output__add_kernel_name(out, "_Z4tinyv"), 0);
		gp_output__print_maps(out);
		gp_output__close(out);
		fclose(f);
		CHECK(strstr(buf, "@launches_by_kernel[tiny()]: 5\n") != NULL);
		CHECK(strstr(buf, "@launches_by_kernel[kernel#1]: 4\n") != NULL);
		free(buf);
		gp_map_set__free(set);
	}

	/* options from the environment */
	struct gp_output_opts eo = {0};
	FILE *opened;
	char err[256];
	setenv("GPUPROBE_INTERVAL", "3", 1);
	setenv("GPUPROBE_JSON", "-", 1);
	setenv("GPUPROBE_TOP", "7", 1);
	CHECK_EQ(gp_output_opts__from_env(&eo, &opened, err, sizeof(err)), 0);
	CHECK_EQ(eo.interval_ms, 3000);
	CHECK_EQ(eo.json, 1);
	CHECK_EQ(eo.top_n, 7);
	CHECK(opened == NULL);
	setenv("GPUPROBE_INTERVAL", "5s", 1);
	CHECK_EQ(gp_output_opts__from_env(&eo, &opened, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "GPUPROBE_INTERVAL=5s: expected a whole number from 0 to 86400");
	unsetenv("GPUPROBE_INTERVAL");
	setenv("GPUPROBE_JSON", "/nonexistent-dir/x.jsonl", 1);
	CHECK_EQ(gp_output_opts__from_env(&eo, &opened, err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "GPUPROBE_JSON=/nonexistent-dir/x.jsonl: cannot write it: No such file or directory");
	char jpath[] = "/tmp/gp_out_XXXXXX";
	int jfd = mkstemp(jpath);
	close(jfd);
	setenv("GPUPROBE_JSON", jpath, 1);
	CHECK_EQ(gp_output_opts__from_env(&eo, &opened, err, sizeof(err)), 0);
	CHECK(opened != NULL && eo.out == opened);
	if (opened)
		fclose(opened);
	unlink(jpath);

	char *d = gp_output_demangle("_ZN2ns6kernelILi4EEEvPf");
	CHECK_STR(d, "void ns::kernel<4>(float*)");
	free(d);
	d = gp_output_demangle("_Zbroken");
	CHECK_STR(d, "_Zbroken");
	free(d);
	free(alloc4);
	CHECK_DONE();
}
