/* The ring's device code executed without a GPU: the helpers of maps/map_device.c for an sm_75
 * module (the per-warp reservation: activemask, match.any, the leader's CAS, shfl.sync) lowered
 * to SPIR-V and run on PoCL, whose work-groups run on several CPU threads at once and race on
 * the ring's head; spirv/ emulates each 32-lane warp exactly. The maps live in OpenCL shared
 * virtual memory, read by the host's consumer (maps/map_ring.c) between launches. The helpers
 * are inlined into the kernel (ptx-frontend/inline.c), as the probe pipeline does.
 *
 * Every thread outputs gtid repeated, 8, 16 or 24 bytes by lane % 3 (three groups of sizes in
 * each warp), into one 4 KiB ring (%smid is 0 there), in 8 rounds drained in between: small
 * rounds that fit and big ones (32 blocks of 256) that overflow, so batches start anywhere and
 * are split around a PAD at the ring's end, and the
 * first leader that finds the ring full rereads the host's position (the refresh). Checked
 * exactly each round: every record intact and seen once, the helper's successes = the records
 * delivered, delivered + drops = made (no drop in the small rounds). Exits 77 without an OpenCL device. */
#include "maps/map_device.h"
#include "maps/map_emit.h"
#include "maps/maps.h"
#include "ptx-frontend/inline.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>

#define NBLOCKS 32
#define NTHREADS (NBLOCKS * 256)

static int a_alloc(void *u, size_t n, uint64_t *d) { return spirv_cl__alloc(u, n, d, NULL, 0); }
static void a_dev_free(void *u, uint64_t d) {}
/* SVM on a CPU device is host memory: the consumer reads it in place, as CUDA host-mapped memory */
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

static ir_top *directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
	return t;
}

/* gp_ring_mixed(u64 out): out[gtid] = ringbuf_output(ring, {gtid x3}, 8 * (1 + lane % 3), 0). */
static ir_module *build(struct gp_maps_device *dev)
{
	ir_module *m = ir_module_new();
	directive(m, ".version 8.0");
	directive(m, ".target sm_75");
	directive(m, ".address_size 64");
	m->target = "sm_75";
	const char *output = gp_maps_helper_func(dev, m, 130);
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *f = &t->func;
	f->is_entry = true;
	f->linkage = ".visible";
	f->name = "gp_ring_mixed";
	f->has_params = true;
	f->nparams = 1;
	f->params = ir_alloc(m, sizeof(ir_decl));
	f->params[0] = (ir_decl){.space = ".param", .type = ".u64", .name = "gp_out", .count = -1};
	f->has_body = true;
	ir_top_append(m, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 32));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", "%r", 16));
	ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
	d->decl = (ir_decl){.space = ".local", .align = 8, .type = ".b8", .name = "gp_stk", .count = -1, .dims = "[32]"};
	ir_stmt_append(f, d);
	struct gp_emit e = {.m = m, .f = f};
	gp_em(&e, "ld.param.u64 %%rd1, [gp_out]");
	gp_em(&e, "mov.u64 %%rd2, gp_stk");
	gp_em(&e, "cvta.local.u64 %%rd2, %%rd2");
	gp_em(&e, "mov.u32 %%r1, %%tid.x");
	gp_em(&e, "mov.u32 %%r2, %%ctaid.x");
	gp_em(&e, "mov.u32 %%r3, %%ntid.x");
	gp_em(&e, "mad.lo.u32 %%r4, %%r2, %%r3, %%r1");
	gp_em(&e, "cvt.u64.u32 %%rd3, %%r4");
	gp_em(&e, "st.u64 [%%rd2], %%rd3");
	gp_em(&e, "st.u64 [%%rd2+8], %%rd3");
	gp_em(&e, "st.u64 [%%rd2+16], %%rd3");
	gp_em(&e, "and.b32 %%r5, %%r1, 31");
	gp_em(&e, "rem.u32 %%r5, %%r5, 3");
	gp_em(&e, "add.u32 %%r5, %%r5, 1");
	gp_em(&e, "shl.b32 %%r5, %%r5, 3");
	gp_em(&e, "cvt.u64.u32 %%rd4, %%r5");
	gp_em(&e, "mov.u64 %%rd5, %llu", (unsigned long long)dev->desc_addrs[0]);
	gp_em(&e, "mov.u64 %%rd6, 0");
	gp_em_call(&e, output, "%rd7", 5, (const char *const[]){"%rd5", "%rd2", "%rd4", "%rd6", "%rd6"});
	gp_em(&e, "shl.b64 %%rd8, %%rd3, 3");
	gp_em(&e, "add.u64 %%rd8, %%rd1, %%rd8");
	gp_em(&e, "st.global.u64 [%%rd8], %%rd7");
	gp_em(&e, "ret");
	CHECK_EQ(e.failed, 0);
	return m;
}

struct seen { unsigned records, bad; uint8_t once[NTHREADS]; };

static int on_record(void *user, unsigned ring, const void *data, size_t size)
{
	struct seen *c = user;
	uint64_t w[3] = {0, 0, 0};
	memcpy(w, data, size < 24 ? size : 24);
	c->records++;
	uint64_t t = w[0];
	int ok = t < NTHREADS && size == 8 * (1 + (t % 32) % 3) && !c->once[t];
	for (size_t i = 1; ok && i < size / 8; i++)
		ok = w[i] == t;
	if (ok)
		c->once[t] = 1;
	else if (c->bad++ < 5)
		fprintf(stderr, "bad record: size %zu, words %llx %llx %llx\n", size, (unsigned long long)w[0],
			(unsigned long long)w[1], (unsigned long long)w[2]);
	return 0;
}

int main(void)
{
	spirv_cl *cl;
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
	struct gp_map def = {.name = "trace", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096};
	struct gp_map_set_opts so = {.alloc = &al};
	struct gp_map_set *set;
	if (gp_map_set__create(&def, 1, &so, &set, err, sizeof(err))) {
		printf("FAIL: %s\n", err);
		return 1;
	}
	struct gp_map_inst *ring = gp_map_set__map(set, 0);
	CHECK_EQ(gp_map_inst__desc(ring)->capacity, 4096);
	struct gp_maps_device dev;
	CHECK_EQ(gp_maps_device__init_from_set(&dev, set), 0);
	ir_module *m = build(&dev);
	/* Inlined into the kernel as the probe pipeline does. Left as calls, the emulated warp
	 * collectives inside the helper raced between work-groups running at once on PoCL (records
	 * claimed that no lane wrote, drops not counted), while the same code inlined, or run one
	 * work-group at a time (POCL_CPU_MAX_CU_COUNT=1), was exact: a limit of the emulation. */
	struct gp_inline_opts io = {.max_insns = 100000, .everything = 1};
	struct gp_inline_stats ist = {0};
	gp_inline_generated_calls(m, &io, &ist);
	CHECK_EQ(ist.kept, 0);
	CHECK(ist.inlined >= 1);
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
	uint64_t delivered_all = 0;
	/* Small rounds (one block of 64..160 threads: they fit) move the start of the next big one
	 * (32 blocks of 256: they fill the ring and drop) to a different place every time. */
	static const unsigned rounds[][2] = {{1, 128}, {NBLOCKS, 256}, {1, 96}, {NBLOCKS, 256},
					     {1, 160}, {NBLOCKS, 256}, {1, 64}, {NBLOCKS, 256}};
	for (int round = 0; round < (int)(sizeof(rounds) / sizeof(rounds[0])); round++) {
		const unsigned made = rounds[round][0] * rounds[round][1], big = rounds[round][0] > 1;
		memset(&s, 0, sizeof(s));
		uint64_t drops0 = gp_map_inst__ring_drops(ring);
		/* OpenCL gives kernels no clock (spirv/ counts %globaltimer reads per thread): a reread
		 * time 20 us "in the future" makes the ring's first full leader reread the host's
		 * position, as a real GPU does 10 us after the last reread. */
		uint64_t stale = (uint64_t)-20000;
		CHECK_EQ(spirv_cl__write(cl, gp_map_inst__desc(ring)->data + GP_RP_REFRESHED, &stale, 8, err,
					 sizeof(err)), 0);
		const unsigned grid[3] = {rounds[round][0], 1, 1}, block[3] = {rounds[round][1], 1, 1};
		struct spirv_arg arg = {&out, sizeof(out)};
		if (spirv_cl__launch(cl, "gp_ring_mixed", grid, block, &arg, 1, err, sizeof(err)) < 0 ||
		    spirv_cl__read(cl, out, ret, sizeof(ret), err, sizeof(err)) < 0) {
			printf("FAIL: run: %s\n", err);
			return 1;
		}
		unsigned ok = 0, eagain = 0;
		for (unsigned i = 0; i < made; i++) {
			ok += ret[i] == 0;
			eagain += ret[i] == (uint64_t)-11;
		}
		int got = gp_map_inst__ring_drain(ring, on_record, &s);
		uint64_t lost = gp_map_inst__ring_drops(ring) - drops0;
		printf("round %d: %d delivered, %llu dropped, of %u (helper: %u ok, %u -EAGAIN)\n", round, got,
		       (unsigned long long)lost, made, ok, eagain);
		CHECK_EQ(s.bad, 0);
		CHECK_EQ(got, ok);
		CHECK_EQ(s.records, ok);
		CHECK_EQ(ok + eagain, made);
		CHECK_EQ(got + lost, made);
		CHECK(got > 0 && (big ? lost > 0 : lost == 0));
		delivered_all += (uint64_t)got;
	}
	/* the ring's bytes went round several times: batches started everywhere, wrapped */
	CHECK(delivered_all * 16 > 3 * 4096);
	free(words);
	ir_module_free(m);
	gp_maps_device__release(&dev);
	gp_map_set__free(set);
	spirv_cl__close(cl);
	CHECK_DONE();
}
