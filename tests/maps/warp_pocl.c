/* bpf_gpu_warp_output's device code (maps/map_device.c) executed without a GPU: lowered to
 * SPIR-V and run on PoCL, whose emulated 32-lane warps (spirv/lower_warp.c) run the helper's
 * shuffles and votes exactly, with a consumer thread draining the ring while the kernel runs.
 *
 * Each warp of 128 blocks of 256 threads writes one record of a known pattern, by block % 4:
 * coalesced (base + 4 * gtid), strided (base + 28 * gtid), random (a hash of gtid: every lane's
 * value listed) and GP_WARP_VALUES (coalesced values, listed anyway); 1024 records, 172 KiB.
 *   lossless   blocks launched one at a time into a 4 KiB ring the host filled first: each
 *              launch's leaders must wait until the consumer, started 20 ms late, frees space;
 *              every record arrives exactly once with each lane's value as computed, no drop,
 *              and the producers' wait is counted (GP_RP_WAIT_NS > 0);
 *   lossy      (4 KiB, all blocks in one launch) drops, and delivered + dropped = 1024 exactly,
 *              the helper's -EAGAIN in the 32 lanes of each dropped record;
 *   sampled    map_extra 4 on a lossless 64 KiB ring: batches 0, 4, 8, ... kept, exactly 256
 *              records, the 1024 batches offered counted.
 * Why one block at a time: PoCL runs a work-group's threads one after another between
 * barriers, so the 8 warps of a block all reserve before any of them commits; a lossless ring
 * whose oldest record is such an uncommitted one waits on itself (until the give-up timeout)
 * when several blocks run at once and the consumer falls behind. A GPU's warps commit on their
 * own, and a lone block on PoCL always can (docs/event-streams.md). 
 * Exits 77 without an OpenCL device. */
#include "gpuprobe/warp.h"
#include "maps/map_device.h"
#include "maps/map_emit.h"
#include "maps/maps.h"
#include "maps/ring_modes.h"
#include "ptx-frontend/inline.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define NBLOCKS 128
#define NTHREADS (NBLOCKS * 256)
#define NWARPS (NTHREADS / 32)
#define BASE 0x7f0000001000ull
#define FILLER 1000   /* the host's records that fill the ring before a lossless launch */

static int a_alloc(void *u, size_t n, uint64_t *d) { return spirv_cl__alloc(u, n, d, NULL, 0); }
static void a_dev_free(void *u, uint64_t d) {}
static int a_host_alloc(void *u, size_t n, void **h)
{
	uint64_t d;
	int r = spirv_cl__alloc(u, n, &d, NULL, 0);
	*h = (void *)(uintptr_t)d;
	return r;
}
static void a_host_free(void *u, void *h) {}
static int a_host_dev_ptr(void *u, void *h, uint64_t *d)
{
	*d = (uint64_t)(uintptr_t)h;
	return 0;
}
static int a_to_dev(void *u, uint64_t d, const void *s, size_t n) { return spirv_cl__write(u, d, s, n, NULL, 0); }
static int a_from_dev(void *u, void *d, uint64_t s, size_t n) { return spirv_cl__read(u, s, d, n, NULL, 0); }

static uint64_t mix(uint64_t i) { return (i * 0x9E3779B1ull) >> 7; }

/* The value lane gtid outputs, and the flags its block passes. */
static uint64_t value_of(unsigned gtid)
{
	switch ((gtid / 256) % 4) {
	case 1: return BASE + 28ull * gtid;
	case 2: return mix(gtid);
	default: return BASE + 4ull * gtid;
	}
}

static void directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
}

/* gp_warp_pat(u64 out, u64 ring, u64 first): with block = first + ctaid.x,
 * out[gtid] = gpu_warp_output(ring, value_of(gtid), tag = block,
 *                             flags = block % 4 == 3 ? GP_WARP_VALUES : 0, mask = activemask). */
static ir_module *build(struct gp_maps_device *dev)
{
	ir_module *m = ir_module_new();
	directive(m, ".version 8.0");
	directive(m, ".target sm_75");
	directive(m, ".address_size 64");
	m->target = "sm_75";
	const char *output = gp_maps_helper_func(dev, m, 517);
	CHECK(output != NULL);
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *f = &t->func;
	f->is_entry = true;
	f->linkage = ".visible";
	f->name = "gp_warp_pat";
	f->has_params = true;
	f->nparams = 3;
	f->params = ir_alloc(m, 3 * sizeof(ir_decl));
	f->params[0] = (ir_decl){.space = ".param", .type = ".u64", .name = "gp_out", .count = -1};
	f->params[1] = (ir_decl){.space = ".param", .type = ".u64", .name = "gp_ring", .count = -1};
	f->params[2] = (ir_decl){.space = ".param", .type = ".u64", .name = "gp_first", .count = -1};
	f->has_body = true;
	ir_top_append(m, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 32));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", "%r", 16));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%p", 8));
	struct gp_emit e = {.m = m, .f = f};
	gp_em(&e, "ld.param.u64 %%rd1, [gp_out]");
	gp_em(&e, "ld.param.u64 %%rd5, [gp_ring]");
	gp_em(&e, "mov.u32 %%r1, %%tid.x");
	gp_em(&e, "mov.u32 %%r2, %%ctaid.x");
	gp_em(&e, "ld.param.u64 %%rd13, [gp_first]");
	gp_em(&e, "cvt.u32.u64 %%r7, %%rd13");
	gp_em(&e, "add.u32 %%r2, %%r2, %%r7");
	gp_em(&e, "mov.u32 %%r3, %%ntid.x");
	gp_em(&e, "mad.lo.u32 %%r4, %%r2, %%r3, %%r1");
	gp_em(&e, "cvt.u64.u32 %%rd3, %%r4");                 /* gtid */
	gp_em(&e, "and.b32 %%r5, %%r2, 3");                   /* pattern */
	gp_em(&e, "mul.lo.u64 %%rd6, %%rd3, 4");
	gp_em(&e, "setp.eq.u32 %%p1, %%r5, 1");
	gp_em(&e, "@%%p1 mul.lo.u64 %%rd6, %%rd3, 28");
	gp_em(&e, "add.u64 %%rd6, %%rd6, %llu", BASE);
	gp_em(&e, "mul.lo.u64 %%rd7, %%rd3, %llu", 0x9E3779B1ull);
	gp_em(&e, "shr.u64 %%rd7, %%rd7, 7");
	gp_em(&e, "setp.eq.u32 %%p1, %%r5, 2");
	gp_em(&e, "selp.b64 %%rd6, %%rd7, %%rd6, %%p1");      /* value */
	gp_em(&e, "cvt.u64.u32 %%rd8, %%r2");                 /* tag: the block */
	gp_em(&e, "setp.eq.u32 %%p1, %%r5, 3");
	gp_em(&e, "selp.b64 %%rd9, %d, 0, %%p1", GP_WARP_VALUES);
	gp_em(&e, "activemask.b32 %%r6");
	gp_em(&e, "cvt.u64.u32 %%rd10, %%r6");
	gp_em_call(&e, output, "%rd11", 5, (const char *const[]){"%rd5", "%rd6", "%rd8", "%rd9", "%rd10"});
	gp_em(&e, "mul.lo.u32 %%r9, %%r7, 256");           /* out indexed by this launch's gtid */
	gp_em(&e, "sub.u32 %%r8, %%r4, %%r9");
	gp_em(&e, "cvt.u64.u32 %%rd3, %%r8");
	gp_em(&e, "shl.b64 %%rd12, %%rd3, 3");
	gp_em(&e, "add.u64 %%rd12, %%rd1, %%rd12");
	gp_em(&e, "st.global.u64 [%%rd12], %%rd11");
	gp_em(&e, "ret");
	CHECK_EQ(e.failed, 0);
	return m;
}

struct seen {
	unsigned records, bad, listed, fillers, first;
	uint8_t once[NWARPS];
};

static int on_record(void *user, unsigned ring, const void *data, size_t size)
{
	struct seen *c = user;
	const struct gp_warp_record *r = data;
	if (size == FILLER) {
		c->fillers++;
		return 0;
	}
	c->records++;
	unsigned b = (unsigned)r->tag;   /* the logical block */
	int ok = size >= GP_WARP_REC_BYTES && r->mask == 0xffffffffu && b < NBLOCKS && r->warp < 8 &&
		 r->block == b - c->first && r->flags == (b % 4 == 3 ? GP_WARP_VALUES : 0) &&
		 size == GP_WARP_REC_BYTES + 8u * r->nvals;
	unsigned w = ok ? b * 8 + r->warp : 0;
	ok = ok && !c->once[w];
	/* the shape the helper must choose: listed for the random values and GP_WARP_VALUES */
	ok = ok && (r->nvals != 0) == (b % 4 >= 2);
	for (unsigned l = 0; ok && l < 32; l++)
		ok = gp_warp_record_value(r, l) == value_of(w * 32 + l);
	if (ok) {
		c->once[w] = 1;
		c->listed += r->nvals != 0;
	} else if (c->bad++ < 5) {
		fprintf(stderr, "bad record: %zu bytes, block %u warp %u mask %x nvals %u base %llx stride %d\n", size,
			r->block, r->warp, r->mask, r->nvals, (unsigned long long)r->base, r->stride);
	}
	return 0;
}

struct consumer {
	struct gp_map_inst *ring;
	struct seen *s;
	volatile int stop;
	unsigned got, delay_us;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;
	usleep(c->delay_us);
	while (!c->stop) {
		int n = gp_map_inst__ring_drain(c->ring, on_record, c->s);
		c->got += n > 0 ? (unsigned)n : 0;
		usleep(200);
	}
	int n = gp_map_inst__ring_drain(c->ring, on_record, c->s);
	c->got += n > 0 ? (unsigned)n : 0;
	return NULL;
}

static spirv_cl *cl;

/* Blocks [first, first + nblocks) in one launch over ring r with a consumer thread starting
 * delay_us after it; the helper's results into ret (this launch's threads). */
static int launch(struct gp_map_inst *r, struct seen *s, unsigned first, unsigned nblocks, unsigned delay_us,
		  uint64_t out, uint64_t *ret, unsigned *got)
{
	char err[512];
	s->first = first;
	struct consumer c = {.ring = r, .s = s, .delay_us = delay_us};
	pthread_t th;
	pthread_create(&th, NULL, consume, &c);
	uint64_t ring_addr = gp_map_inst__desc_addr(r), first64 = first;
	const unsigned grid[3] = {nblocks, 1, 1}, block[3] = {256, 1, 1};
	struct spirv_arg args[3] = {{&out, sizeof(out)}, {&ring_addr, sizeof(ring_addr)}, {&first64, 8}};
	int rc = spirv_cl__launch(cl, "gp_warp_pat", grid, block, args, 3, err, sizeof(err)) < 0 ||
		 spirv_cl__read(cl, out, ret, nblocks * 256 * 8, err, sizeof(err)) < 0;
	c.stop = 1;
	pthread_join(th, NULL);
	if (rc)
		printf("FAIL: run: %s\n", err);
	*got = c.got;
	return rc;
}

int main(void)
{
	char err[512];
	if (spirv_cl__open(&cl, err, sizeof(err)) < 0) {
		printf("SKIP: no OpenCL device: %s\n", err);
		return 77;
	}
	struct gp_map_allocator al = {
		.user = cl, .nsms = 1, .dev_alloc = a_alloc, .dev_free = a_dev_free, .host_alloc = a_host_alloc,
		.host_free = a_host_free, .host_dev_ptr = a_host_dev_ptr, .copy_to_dev = a_to_dev,
		.copy_from_dev = a_from_dev,
	};
	struct gp_map defs[3] = {
		{.name = "lossless", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096, .flags = GP_RINGBUF_LOSSLESS},
		{.name = "lossy", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096},
		{.name = "sampled", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 65536, .flags = GP_RINGBUF_LOSSLESS,
		 .map_extra = 4},
	};
	struct gp_map_set_opts so = {.alloc = &al};
	struct gp_map_set *set;
	if (gp_map_set__create(defs, 3, &so, &set, err, sizeof(err))) {
		printf("FAIL: %s\n", err);
		return 1;
	}
	struct gp_maps_device dev;
	CHECK_EQ(gp_maps_device__init_from_set(&dev, set), 0);
	ir_module *m = build(&dev);
	struct gp_inline_opts io = {.max_insns = 100000, .everything = 1};
	struct gp_inline_stats ist = {0};
	gp_inline_generated_calls(m, &io, &ist);
	uint32_t *words = NULL;
	size_t nwords = 0;
	if (spirv_lower_module(m, NULL, &words, &nwords, err, sizeof(err)) < 0 ||
	    spirv_cl__load(cl, words, nwords, err, sizeof(err)) < 0) {
		printf("FAIL: SPIR-V: %s\n", err);
		return 1;
	}
	uint64_t out;
	static uint64_t ret[NTHREADS];
	CHECK_EQ(spirv_cl__alloc(cl, sizeof(ret), &out, err, sizeof(err)), 0);
	static struct seen s;
	struct gp_ring_modes md;
	unsigned got;

	/* lossless: a block at a time into a ring the host filled */
	struct gp_map_inst *ll = gp_map_set__map(set, 0);
	memset(&s, 0, sizeof(s));
	unsigned ok = 0, fills = 0;
	for (unsigned b = 0; b < NBLOCKS; b++) {
		static uint8_t filler[FILLER];
		while (!gp_map_inst__ring_output(ll, 0, filler, sizeof(filler)))
			fills++;
		if (launch(ll, &s, b, 1, 20000, out, ret, &got))
			return 1;
		for (unsigned i = 0; i < 256; i++)
			ok += ret[i] == 0;
	}
	CHECK_EQ(gp_map_inst__ring_modes(ll, &md), 0);
	if (getenv("WARP_POCL_DEBUG")) {
		uint64_t st[8], cons;
		spirv_cl__read(cl, gp_map_inst__desc(ll)->data, st, sizeof(st), err, sizeof(err));
		spirv_cl__read(cl, gp_map_inst__desc(ll)->cons, &cons, 8, err, sizeof(err));
		fprintf(stderr, "head %llu drops %llu cons_seen %llu refreshed %llu wait %llu gave_up %llu cons %llu\n",
			(unsigned long long)st[0], (unsigned long long)st[1], (unsigned long long)st[2],
			(unsigned long long)st[3], (unsigned long long)st[4], (unsigned long long)st[7],
			(unsigned long long)cons);
	}
	printf("lossless: %u of %u warp records delivered (%u with listed values) behind %u host records, "
	       "%llu refused host fillers, producers waited %llu (clock units), helper ok in %u of %u lanes\n", s.records,
	       NWARPS, s.listed, s.fillers, (unsigned long long)md.drops, (unsigned long long)md.wait_ns, ok,
	       NTHREADS);
	CHECK_EQ(s.fillers, fills);
	CHECK_EQ(md.drops, NBLOCKS);   /* only the host's one refused filler per launch (ring full) */
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.records, NWARPS);
	CHECK_EQ(s.listed, NWARPS / 2);
	CHECK_EQ(md.gave_up, 0);
	CHECK(md.lossless && md.wait_ns > 0);
	CHECK_EQ(ok, NTHREADS);

	/* lossy: delivered + dropped = made, the helper's -EAGAIN per dropped warp's lanes */
	struct gp_map_inst *ly = gp_map_set__map(set, 1);
	memset(&s, 0, sizeof(s));
	if (launch(ly, &s, 0, NBLOCKS, 0, out, ret, &got))
		return 1;
	CHECK_EQ(gp_map_inst__ring_modes(ly, &md), 0);
	unsigned eagain = 0;
	ok = 0;
	for (unsigned i = 0; i < NTHREADS; i++) {
		ok += ret[i] == 0;
		eagain += ret[i] == (uint64_t)-11;
	}
	printf("lossy: %u delivered + %llu dropped of %u (helper: %u lanes ok, %u -EAGAIN)\n", s.records,
	       (unsigned long long)md.drops, NWARPS, ok, eagain);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.records + md.drops, NWARPS);
	CHECK_EQ(eagain, 32 * md.drops);
	CHECK_EQ(ok + eagain, NTHREADS);
	CHECK_EQ(md.wait_ns, 0);

	/* sampled 1 in 4: batches 0, 4, ... kept */
	struct gp_map_inst *sp = gp_map_set__map(set, 2);
	memset(&s, 0, sizeof(s));
	if (launch(sp, &s, 0, NBLOCKS, 0, out, ret, &got))
		return 1;
	CHECK_EQ(gp_map_inst__ring_modes(sp, &md), 0);
	ok = 0;
	for (unsigned i = 0; i < NTHREADS; i++)
		ok += ret[i] == 0;
	printf("sampled 1 in %u: %u records kept of %llu batches (%llu records) offered, %llu dropped\n",
	       md.sample_rate, s.records, (unsigned long long)md.batches, (unsigned long long)md.offered,
	       (unsigned long long)md.drops);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(md.sample_rate, 4);
	CHECK_EQ(md.batches, NWARPS);
	CHECK_EQ(md.offered, NWARPS);   /* one record per warp batch */
	CHECK_EQ(s.records, NWARPS / 4);
	CHECK_EQ(md.drops, 0);
	CHECK_EQ(ok, NTHREADS);

	free(words);
	ir_module_free(m);
	gp_maps_device__release(&dev);
	gp_map_set__free(set);
	spirv_cl__close(cl);
	CHECK_DONE();
}
