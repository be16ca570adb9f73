/* The built-in tools (include/gpuprobe/tools) on a simulated GPU: each tool's real object is
 * run by the host interpreter (ebpf/interp.h) at the attach points a GPU would run it, for two
 * kernels of known shape, and what `gpuprobe run` prints of its maps is compared whole. The
 * device is this file: the contexts are filled as the instrumentation fills them
 * (include/gpuprobe/context.h), %activemask is the simulated warp's lanes, and time advances by
 * fixed steps, so every count and duration below is computable by hand (the comments do it).
 *
 *   vecAdd(float const*, float const*, float*, int) (_Z6vecAddPKfS0_Pfi): grid 2, block 48
 *   (warp 0 full, warp 1 16 lanes), n = 80; launched twice.
 *     bb0  7 insns (load 2, move 2, int 2, control 1)   every thread
 *     bb1  9 insns (load 4, move 1, int 1, fp32 1, store 1, atomic 1)   threads with i < n:
 *          block 0 all 48, block 1 its first 32 (one full warp); 2 global loads, 1 global
 *          store, 1 global atomic
 *     bb2  1 insn (control 1)   every thread
 *   oddEven(float*) (_Z7oddEvenPf): grid 1, block 64 (two full warps); launched once.
 *     bb0  4 insns (int 2, move 1, control 1)   every thread
 *     bb1  3 insns (fp32 2, control 1)          even threads: 16 lanes a warp
 *     bb2  2 insns (sfu 1, fp64 1)              odd threads: 16 lanes a warp
 *     bb3  1 insn (control 1)                   every thread
 *   Launch L (0, 1, 2) starts at 1,000,000 * (L + 1) ns; block b begins 10 * b ns later and ends
 *   1,000 + 10 * b ns after the launch's start. Host probes see cuLaunchKernel for vecAdd and
 *   cuLaunchKernelEx (256 bytes of shared memory) for oddEven.
 * usage: tools_sim_test TOOLS_DIR   (TOOLS_DIR: lib/gpuprobe-tools of the build) */
#include "maps/output.h"
#include "ebpf/interp.h"
#include "ebpf/object.h"
#include "gpuprobe/api.h"
#include "gpuprobe/context.h"
#include "maps/maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

/* ---- the simulated device --------------------------------------------------------------- */

struct bb {
	unsigned ninsns, ops[GP_OP_NCLASSES];
	int (*runs)(unsigned tid, unsigned i);   /* does thread tid (global index i) enter it */
	unsigned loads, stores, atomics;          /* global accesses in the block */
};
struct kernel {
	const char *mangled;
	unsigned grid, block;
	const struct bb *bbs;
	unsigned nbbs;
	unsigned api;                             /* the launch's driver function */
	unsigned smem;
};

static int all(unsigned tid, unsigned i) { (void)tid; (void)i; return 1; }
static int below_n(unsigned tid, unsigned i) { (void)tid; return i < 80; }
static int even(unsigned tid, unsigned i) { (void)i; return !(tid & 1); }
static int odd(unsigned tid, unsigned i) { (void)i; return tid & 1; }

#define OPS(...) {__VA_ARGS__}
static const struct bb vec_bbs[] = {
	{7, OPS([GP_OP_LOAD] = 2, [GP_OP_MOVE] = 2, [GP_OP_INT] = 2, [GP_OP_CONTROL] = 1), all, 0, 0, 0},
	{9, OPS([GP_OP_LOAD] = 4, [GP_OP_MOVE] = 1, [GP_OP_INT] = 1, [GP_OP_FP32] = 1,
		[GP_OP_STORE] = 1, [GP_OP_ATOMIC] = 1), below_n, 2, 1, 1},
	{1, OPS([GP_OP_CONTROL] = 1), all, 0, 0, 0},
};
static const struct bb odd_bbs[] = {
	{4, OPS([GP_OP_INT] = 2, [GP_OP_MOVE] = 1, [GP_OP_CONTROL] = 1), all, 0, 0, 0},
	{3, OPS([GP_OP_FP32] = 2, [GP_OP_CONTROL] = 1), even, 0, 0, 0},
	{2, OPS([GP_OP_SFU] = 1, [GP_OP_FP64] = 1), odd, 0, 0, 0},
	{1, OPS([GP_OP_CONTROL] = 1), all, 0, 0, 0},
};
static const struct kernel vec = {"_Z6vecAddPKfS0_Pfi", 2, 48, vec_bbs, 3, GP_API_cuLaunchKernel, 0};
static const struct kernel oddeven = {"_Z7oddEvenPf", 1, 64, odd_bbs, 4, GP_API_cuLaunchKernelEx, 256};

/* ---- one tool: its object, its maps, its programs run by the interpreter ------------------ */

struct tool {
	const char *name;
	struct gp_object *obj;
	struct gp_map *defs;
	size_t nmaps;
	void **states;            /* the interpreter's maps */
	uint64_t active_mask;     /* what bpf_get_active_mask returns */
	unsigned records;         /* ring records (memtrace) */
	struct gp_access_rec { uint64_t addr; uint32_t size; uint8_t dir, space; uint16_t pad;
			       uint32_t kernel, pad2; } first;
};

static uint64_t helper(void *user, int id, const uint64_t args[5], int *handled)
{
	(void)args;
	struct tool *t = user;
	if (id == 513) {   /* bpf_get_active_mask */
		*handled = 1;
		return t->active_mask;
	}
	return 0;
}

static void on_record(void *user, int map, const void *data, size_t size)
{
	(void)map;
	struct tool *t = user;
	if (!t->records++ && size == sizeof(t->first))
		memcpy(&t->first, data, size);
}

static int tool_open(struct tool *t, const char *dir, const char *name)
{
	char path[4096], err[512];
	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, name);
	memset(t, 0, sizeof(*t));
	t->name = name;
	if (gp_object__open_file(path, &t->obj, err, sizeof(err))) {
		fprintf(stderr, "FAIL open %s: %s\n", path, err);
		failures++;
		return -1;
	}
	t->nmaps = gp_object__map_count(t->obj);
	t->defs = calloc(t->nmaps + 1, sizeof(*t->defs));
	t->states = calloc(t->nmaps + 1, sizeof(*t->states));
	for (size_t i = 0; i < t->nmaps; i++)
		t->defs[i] = *gp_object__map(t->obj, i);
	return 0;
}

/* Run every program of t attached at `at` (and, for memory programs, whose filter takes
 * mem_bits) with ctx. */
static void run_at(struct tool *t, enum gp_attach_kind at, unsigned mem_bits, void *ctx,
		   uint32_t ctx_size)
{
	for (size_t i = 0; i < gp_object__program_count(t->obj); i++) {
		const struct gp_program *p = gp_object__program(t->obj, i);
		if (p->attach != at)
			continue;
		if (at == GP_ATTACH_MEM) {
			unsigned f = p->mem_filter;
			if (!(f & GP_MEM_ALL_SPACES))
				f |= GP_MEM_ALL_SPACES;
			if (!(f & GP_MEM_ALL_DIRS))
				f |= GP_MEM_ALL_DIRS;
			if ((f & mem_bits) != mem_bits)
				continue;
		}
		struct gp_interp_env env = {.maps = t->defs, .map_state = t->states, .nmaps = t->nmaps,
					    .helper = helper, .user = t, .on_record = on_record,
					    .ctx_size = ctx_size};
		uint64_t r0;
		char err[256];
		if (gp_interp_run(p->insns, p->ninsns, (uint64_t)(uintptr_t)ctx, 0, &env, &r0, err,
				  sizeof(err))) {
			fprintf(stderr, "FAIL %s %s: %s\n", t->name, p->name, err);
			failures++;
		}
	}
}

static void fill_thread(struct gp_thread_ids *th, const struct kernel *k, unsigned b, unsigned tid)
{
	memset(th, 0, sizeof(*th));
	th->block_idx[0] = b;
	th->thread_idx[0] = tid;
	th->sm_id = b;
	th->warp_id = tid / 32;
	th->lane_id = tid % 32;
	th->kernel_hash = gp_name_hash(k->mangled);
}

/* One launch of k, number `launch`, everything the device would run. */
static void launch(struct tool *t, const struct kernel *k, unsigned launch)
{
	uint64_t t0 = 1000000ull * (launch + 1);
	/* the host side first, as the driver call comes before the kernel runs */
	struct gp_host_ctx h = {.api_id = k->api, .nargs = 8, .kernel_hash = gp_name_hash(k->mangled)};
	h.api_hash = gp_name_hash(gp_api_name(k->api));
	uint64_t args[8] = {0x7000 + launch, k->grid, 1, 1, k->block, 1, 1, k->smem};
	memcpy(h.args, args, sizeof(args));
	run_at(t, GP_ATTACH_HOST_ENTRY, 0, &h, sizeof(h));
	for (unsigned b = 0; b < k->grid; b++) {
		struct gp_block_ctx bc = {.grid_dim = {k->grid, 1, 1}, .block_dim = {k->block, 1, 1}};
		fill_thread(&bc.thread, k, b, 0);
		bc.timestamp = t0 + 10 * b;
		run_at(t, GP_ATTACH_BLOCK_BEGIN, 0, &bc, sizeof(bc));
		for (unsigned tid = 0; tid < k->block; tid++) {
			struct gp_kernel_ctx kc = {.grid_dim = {k->grid, 1, 1}, .block_dim = {k->block, 1, 1}};
			fill_thread(&kc.thread, k, b, tid);
			kc.timestamp = t0 + 10 * b + 1;
			run_at(t, GP_ATTACH_KERNEL_ENTRY, 0, &kc, sizeof(kc));
		}
		/* warp by warp, block by block: the lanes that enter a basic block run it together */
		for (unsigned w = 0; w * 32 < k->block; w++) {
			for (unsigned j = 0; j < k->nbbs; j++) {
				const struct bb *bb = &k->bbs[j];
				uint64_t mask = 0;
				for (unsigned l = 0; l < 32 && w * 32 + l < k->block; l++)
					if (bb->runs(w * 32 + l, b * k->block + w * 32 + l))
						mask |= 1ull << l;
				t->active_mask = mask;
				for (unsigned l = 0; l < 32; l++) {
					if (!(mask >> l & 1))
						continue;
					unsigned tid = w * 32 + l, i = b * k->block + tid;
					struct gp_bb_ctx c = {.bb_index = j, .func_hash = gp_name_hash(k->mangled),
							      .ninsns = bb->ninsns};
					memcpy(c.op_count, bb->ops, sizeof(c.op_count));
					fill_thread(&c.thread, k, b, tid);
					run_at(t, GP_ATTACH_BASIC_BLOCK, 0, &c, sizeof(c));
					static const unsigned dirs[] = {GP_MEM_LOAD, GP_MEM_STORE, GP_MEM_ATOMIC};
					const unsigned n[] = {bb->loads, bb->stores, bb->atomics};
					for (unsigned d = 0; d < 3; d++)
						for (unsigned a = 0; a < n[d]; a++) {
							struct gp_mem_ctx m = {.addr = 0x10000000ull * (a + 1) + 4 * i,
									       .size = 4, .space = GP_SPACE_GLOBAL,
									       .dir = (uint8_t)(d + 1)};
							fill_thread(&m.thread, k, b, tid);
							run_at(t, GP_ATTACH_MEM, GP_MEM_GLOBAL | dirs[d], &m, sizeof(m));
						}
				}
			}
		}
		struct gp_block_ctx ec = bc;
		fill_thread(&ec.thread, k, b, k->block - 1);
		ec.timestamp = t0 + 1000 + 10 * b;
		run_at(t, GP_ATTACH_BLOCK_END, 0, &ec, sizeof(ec));
	}
}

static uint64_t zero_ms(void *user) { (void)user; return 0; }

/* The maps as `gpuprobe run` prints them at the end (text, or JSON). */
static char *print_maps(struct tool *t, int json)
{
	char err[256];
	struct gp_map_allocator *alloc = gp_map_allocator_host(4);
	struct gp_map_set_opts so = {.alloc = alloc};
	struct gp_map_set *set;
	if (gp_map_set__create(t->defs, t->nmaps, &so, &set, err, sizeof(err))) {
		fprintf(stderr, "FAIL maps of %s: %s\n", t->name, err);
		failures++;
		free(alloc);
		return strdup("");
	}
	for (size_t i = 0; i < t->nmaps; i++) {
		struct gp_map_inst *m = gp_map_set__find(set, t->defs[i].name);
		if (!m || !t->states[i] || t->defs[i].type == BPF_MAP_TYPE_RINGBUF)
			continue;
		uint8_t key[256], next[256];
		const void *prev = NULL;
		while (!gp_host_map_next_key(t->states[i], prev, next)) {
			memcpy(key, next, t->defs[i].key_size);
			void *v = gp_host_map_lookup(t->states[i], key);
			if (v && gp_map_inst__update(m, key, v, 0)) {
				fprintf(stderr, "FAIL %s: copy of %s\n", t->name, t->defs[i].name);
				failures++;
			}
			prev = key;
		}
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_output_opts oo = {.out = f, .json = json, .now_ms = zero_ms};
	struct gp_output *o;
	gp_output__open(&oo, &o);
	gp_output__add_kernel_name(o, vec.mangled);
	gp_output__add_kernel_name(o, oddeven.mangled);
	gp_output__add_set(o, set);
	gp_output__print_maps(o);
	gp_output__close(o);
	fclose(f);
	gp_map_set__free(set);
	free(alloc);
	return buf;
}

static void tool_close(struct tool *t)
{
	for (size_t i = 0; i < t->nmaps; i++)
		if (t->states[i])
			gp_host_map_free(t->states[i]);
	free(t->states);
	free(t->defs);
	gp_object__close(t->obj);
}

/* Run the tool over the three launches; compare what it prints. */
static void expect(const char *dir, const char *name, const char *want, const char *want_json)
{
	struct tool t;
	if (tool_open(&t, dir, name))
		return;
	launch(&t, &vec, 0);
	launch(&t, &vec, 1);
	launch(&t, &oddeven, 2);
	char *got = print_maps(&t, 0);
	if (strcmp(got, want)) {
		fprintf(stderr, "FAIL %s\n--- got:\n%s--- expected:\n%s---\n", name, got, want);
		failures++;
	}
	free(got);
	if (want_json) {
		got = print_maps(&t, 1);
		if (strcmp(got, want_json)) {
			fprintf(stderr, "FAIL %s --json\n--- got:\n%s--- expected:\n%s---\n", name, got,
				want_json);
			failures++;
		}
		free(got);
	}
	if (!strcmp(name, "memtrace")) {
		/* global accesses: per vecAdd launch 80 threads x 4 = 320; two launches */
		if (t.records != 640 || t.first.addr != 0x10000000 || t.first.size != 4 ||
		    t.first.dir != GP_DIR_LOAD || t.first.space != GP_SPACE_GLOBAL ||
		    t.first.kernel != gp_name_hash(vec.mangled)) {
			fprintf(stderr, "FAIL memtrace: %u records, the first 0x%" PRIx64 " size %u dir %u "
				"space %u kernel 0x%x\n", t.records, t.first.addr, t.first.size,
				t.first.dir, t.first.space, t.first.kernel);
			failures++;
		}
	}
	tool_close(&t);
}

#define VEC "vecAdd(float const*, float const*, float*, int)"
#define ODD "oddEven(float*)"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s TOOLS_DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	/* kcount: vecAdd 2 launches x 2 blocks x 48 threads; oddEven 1 x 1 x 64 */
	expect(dir, "kcount",
	       "@threads[" ODD "]: 64\n@threads[" VEC "]: 192\n"
	       "@blocks[" ODD "]: 1\n@blocks[" VEC "]: 4\n"
	       "@launches[" ODD "]: 1\n@launches[" VEC "]: 2\n",
	       "{\"type\":\"top\",\"name\":\"threads\",\"time\":0.0,\"data\":[{\"key\":\"" ODD "\",\"id\":3890441516,\"value\":64},{\"key\":\"" VEC "\",\"id\":2677925937,\"value\":192}]}\n"
	       "{\"type\":\"top\",\"name\":\"blocks\",\"time\":0.0,\"data\":[{\"key\":\"" ODD "\",\"id\":3890441516,\"value\":1},{\"key\":\"" VEC "\",\"id\":2677925937,\"value\":4}]}\n"
	       "{\"type\":\"top\",\"name\":\"launches\",\"time\":0.0,\"data\":[{\"key\":\"" ODD "\",\"id\":3890441516,\"value\":1},{\"key\":\"" VEC "\",\"id\":2677925937,\"value\":2}]}\n");
	/* bbcount: vecAdd per launch: bb0 96 threads, bb1 80, bb2 96 = 272 blocks; instructions
	 * 96*7 + 80*9 + 96*1 = 1488; two launches: 544, 2976. oddEven: 64 + 32 + 32 + 64 = 192
	 * blocks, 64*4 + 32*3 + 32*2 + 64*1 = 480 instructions */
	expect(dir, "bbcount",
	       "@basic_blocks[" ODD "]: 192\n@basic_blocks[" VEC "]: 544\n"
	       "@instructions[" ODD "]: 480\n@instructions[" VEC "]: 2976\n", NULL);
	/* instrcount is bbcount (an alias: the same object) */
	/* opcodes: vecAdd per launch: load 96*2 + 80*4 = 512, move 96*2 + 80 = 272, int 96*2 + 80
	 * = 272, control 96 + 96 = 192, fp32 80, store 80, atomic 80 (sum 1488); x2. oddEven: int
	 * 128, move 64, control 64 + 32 + 64 = 160, fp32 64, sfu 32, fp64 32 (sum 480) */
	expect(dir, "opcodes",
	       "@op_int[" ODD "]: 128\n@op_int[" VEC "]: 544\n"
	       "@op_fp32[" ODD "]: 64\n@op_fp32[" VEC "]: 160\n"
	       "@op_fp64[" ODD "]: 32\n"
	       "@op_sfu[" ODD "]: 32\n"
	       "@op_move[" ODD "]: 64\n@op_move[" VEC "]: 544\n"
	       "@op_load[" VEC "]: 1024\n"
	       "@op_store[" VEC "]: 160\n"
	       "@op_atomic[" VEC "]: 160\n"
	       "@op_control[" ODD "]: 160\n@op_control[" VEC "]: 384\n", NULL);
	/* divergence: vecAdd per launch: block 0 warp 0 (32 lanes) bb0-2: 3 full; warp 1 (16
	 * lanes) 3 x 16; block 1 warp 0: 3 full; warp 1 (i 80..95): bb0 and bb2 16 lanes, bb1 none.
	 * 11 warp-level executions, 6 full, 6*32 + 5*16 = 272 lanes; x2. oddEven: 2 warps x (bb0
	 * 32, bb1 16, bb2 16, bb3 32): 8 executions, 4 full, 192 lanes. @lanes: 16 lanes 5 + 5 + 4
	 * = 14, 32 lanes 6 + 6 + 4 = 16 */
	expect(dir, "divergence",
	       "@warp_blocks[" ODD "]: 8\n@warp_blocks[" VEC "]: 22\n"
	       "@active_lanes[" ODD "]: 192\n@active_lanes[" VEC "]: 544\n"
	       "@full_warps[" ODD "]: 4\n@full_warps[" VEC "]: 12\n"
	       "@lanes:\n"
	       "[16, 17) 14 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@       |\n"
	       "[17, 18)  0 |                                                    |\n"
	       "[18, 19)  0 |                                                    |\n"
	       "[19, 20)  0 |                                                    |\n"
	       "[20, 21)  0 |                                                    |\n"
	       "[21, 22)  0 |                                                    |\n"
	       "[22, 23)  0 |                                                    |\n"
	       "[23, 24)  0 |                                                    |\n"
	       "[24, 25)  0 |                                                    |\n"
	       "[25, 26)  0 |                                                    |\n"
	       "[26, 27)  0 |                                                    |\n"
	       "[27, 28)  0 |                                                    |\n"
	       "[28, 29)  0 |                                                    |\n"
	       "[29, 30)  0 |                                                    |\n"
	       "[30, 31)  0 |                                                    |\n"
	       "[31, 32)  0 |                                                    |\n"
	       "[32, 33) 16 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n", NULL);
	/* ktime: a launch runs from block 0's start (t0) to its last block's end (t0 + 1000 + 10 *
	 * (grid - 1)): vecAdd 1010 ns twice, oddEven 1000 ns; all three in [512, 1024) */
	expect(dir, "ktime",
	       "@launches[" ODD "]: 1\n@launches[" VEC "]: 2\n"
	       "@time_ns[" ODD "]: 1000\n@time_ns[" VEC "]: 2020\n"
	       "@launch_ns:\n"
	       "[512, 1K) 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n", NULL);
	/* launches (host probes): per kernel launches, grid blocks, grid x block threads, shared
	 * bytes; per driver function; block sizes 48, 48, 64; grid sizes 2, 2, 1 */
	expect(dir, "launches",
	       "@launches[" ODD "]: 1\n@launches[" VEC "]: 2\n"
	       "@blocks[" ODD "]: 1\n@blocks[" VEC "]: 4\n"
	       "@threads[" ODD "]: 64\n@threads[" VEC "]: 192\n"
	       "@smem_bytes[" ODD "]: 256\n"
	       "@calls[cuLaunchKernelEx]: 1\n@calls[cuLaunchKernel]: 2\n"
	       "@block_threads:\n"
	       "[32, 64)  2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
	       "[64, 128) 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
	       "@grid_blocks:\n"
	       "[1]    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
	       "[2, 4) 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n", NULL);
	/* memcount: vecAdd per launch 80 threads x (2 loads, 1 store, 1 atomic) */
	expect(dir, "memcount",
	       "@loads[" VEC "]: 320\n@stores[" VEC "]: 160\n@atomics[" VEC "]: 160\n", NULL);
	/* memtrace: its records (checked in expect), no map to print */
	expect(dir, "memtrace", "", NULL);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	else
		printf("ok: every tool on the simulated GPU, exact output\n");
	return failures ? 1 : 0;
}
