/* One-liners (ebpf/oneliner.h) without a GPU: each is compiled, opened as a BPF object, verified
 * for its attach point (every map changed only by atomic add: the sharded fast path), and run on
 * the host interpreter over synthetic grids, memory accesses and driver calls; the maps must hold
 * exactly what the same arithmetic gives in C. The mistakes give their exact one-line messages. */
#include "ebpf/interp.h"
#include "ebpf/object.h"
#include "ebpf/oneliner.h"
#include "ebpf/verifier.h"
#include "gpuprobe/api.h"
#include "gpuprobe/context.h"
#include "gpuprobe/output.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

struct run {
	struct gp_object *obj;
	struct gp_map maps[64];
	void *state[64];
	size_t nmaps;
};

/* Compile, open, verify every program, create the maps. */
static int open_src(const char *src, struct run *r)
{
	char err[512] = "";
	void *elf;
	size_t size;
	memset(r, 0, sizeof *r);
	if (gp_oneliner_compile(src, &elf, &size, err, sizeof err)) {
		printf("FAIL compile %s: %s\n", src, err);
		failures++;
		return -1;
	}
	int rc = gp_object__open_mem(elf, size, "one-liner", &r->obj, err, sizeof err);
	free(elf);
	if (rc) {
		printf("FAIL open %s: %s\n", src, err);
		failures++;
		return -1;
	}
	r->nmaps = gp_object__map_count(r->obj);
	for (size_t i = 0; i < r->nmaps; i++) {
		r->maps[i] = *gp_object__map(r->obj, i);
		r->state[i] = gp_host_map_create(&r->maps[i], err, sizeof err);
	}
	static char log[1 << 16];
	for (size_t p = 0; p < gp_object__program_count(r->obj); p++) {
		const struct gp_program *prog = gp_object__program(r->obj, p);
		uint8_t atomic[64] = {0};
		struct gp_verify_opts o = {.attach = prog->attach, .maps = r->maps, .nmaps = r->nmaps,
					   .ctx_size = gp_program__ctx_size(prog), .log = log,
					   .log_size = sizeof log, .map_atomic_only = atomic};
		int vr = gp_verify(prog->insns, prog->ninsns, &o);
		CHECK(!vr, "verify %s (%s): %s", src, prog->section, log);
		for (size_t m = 0; m < r->nmaps; m++) {
			/* a map this program uses is changed only by atomic adds */
			int used = 0;
			for (size_t k = 0; k < prog->ninsns; k++)
				used |= prog->insns[k].code == (BPF_LD | BPF_DW | BPF_IMM) &&
					prog->insns[k].src_reg == BPF_PSEUDO_MAP_FD && (size_t)prog->insns[k].imm == m;
			/* (a filter the verifier proves false leaves the statements unexplored: stack 0) */
			CHECK(!used || atomic[m] || !o.stack_depth, "%s: map %s is not summable", src, r->maps[m].name);
		}
	}
	return 0;
}

static void close_run(struct run *r)
{
	for (size_t i = 0; i < r->nmaps; i++)
		gp_host_map_free(r->state[i]);
	gp_object__close(r->obj);
}

static void run_prog(struct run *r, size_t p, void *ctx)
{
	const struct gp_program *prog = gp_object__program(r->obj, p);
	struct gp_interp_env env = {.maps = r->maps, .map_state = r->state, .nmaps = r->nmaps,
				    .ctx_size = gp_program__ctx_size(prog)};
	uint64_t ret;
	char err[256];
	int rc = gp_interp_run(prog->insns, prog->ninsns, (uint64_t)(uintptr_t)ctx, 0, &env, &ret, err, sizeof err);
	CHECK(!rc, "run %s: %s", prog->section, err);
}

static int map_index(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->nmaps; i++)
		if (!strcmp(r->maps[i].name, name))
			return (int)i;
	printf("FAIL no map %s\n", name);
	failures++;
	return -1;
}

static uint64_t get(struct run *r, const char *name, const void *key)
{
	int i = map_index(r, name);
	if (i < 0)
		return 0;
	uint64_t *v = gp_host_map_lookup(r->state[i], key);
	return v ? *v : 0;
}

static uint64_t get32(struct run *r, const char *name, uint32_t key) { return get(r, name, &key); }
static uint64_t get64(struct run *r, const char *name, uint64_t key) { return get(r, name, &key); }

static size_t nkeys(struct run *r, const char *name)
{
	int i = map_index(r, name);
	uint8_t k[64], next[64];
	size_t n = 0;
	if (i < 0)
		return 0;
	for (void *at = NULL; !gp_host_map_next_key(r->state[i], at, next); at = k, n++)
		memcpy(k, next, sizeof k);
	return n;
}

/* ---- kernel entry over grids ------------------------------------------------------------- */

#define KA 0x1111u
#define KB 0x2222u

static void fill_ids(struct gp_thread_ids *t, uint32_t kernel, uint32_t b, uint32_t th)
{
	memset(t, 0, sizeof *t);
	t->kernel_hash = kernel;
	t->block_idx[0] = b;
	t->thread_idx[0] = th;
	t->sm_id = b % 4;
	t->warp_id = th / 32;
	t->lane_id = th % 32;
}

/* Every thread of kernel A (4 x 48) and kernel B (3 x 20) at gpu/entry. */
static void grid(struct run *r, size_t prog)
{
	static const struct {
		uint32_t k, nb, nt;
	} ks[] = {{KA, 4, 48}, {KB, 3, 20}};
	for (size_t i = 0; i < 2; i++)
		for (uint32_t b = 0; b < ks[i].nb; b++)
			for (uint32_t t = 0; t < ks[i].nt; t++) {
				struct gp_kernel_ctx c = {.grid_dim = {ks[i].nb, 1, 1}, .block_dim = {ks[i].nt, 1, 1},
							  .timestamp = 1000 + t};
				fill_ids(&c.thread, ks[i].k, b, t);
				run_prog(r, prog, &c);
			}
}

static void test_count(void)
{
	struct run r;
	if (open_src("gpu/entry/* { @[kernel] = count(); @threads = count(); }", &r))
		return;
	grid(&r, 0);
	CHECK(get32(&r, "count", KA) == 192, "@count[A] = %llu", (unsigned long long)get32(&r, "count", KA));
	CHECK(get32(&r, "count", KB) == 60, "@count[B] = %llu", (unsigned long long)get32(&r, "count", KB));
	CHECK(nkeys(&r, "count") == 2, "two kernels");
	CHECK(get32(&r, "threads", 0) == 252, "@threads = %llu", (unsigned long long)get32(&r, "threads", 0));
	CHECK(r.maps[map_index(&r, "count")].print_as == GP_PRINT_KERNEL, "kernel keys print as names");
	CHECK(r.maps[map_index(&r, "count")].type == BPF_MAP_TYPE_HASH, "keyed: hash");
	CHECK(r.maps[map_index(&r, "threads")].type == BPF_MAP_TYPE_ARRAY, "no key: array");
	close_run(&r);
	printf("ok   count by kernel, count without key\n");
}

/* Expressions: the one-liner's sum over both grids equals C's (unsigned 64-bit, C precedence). */
#pragma GCC diagnostic ignored "-Wparentheses"
#define EXPRS(X)                                                                                  \
	X(thread * 2 + 1)                                                                         \
	X(block << 3 | lane)                                                                      \
	X(thread / 3 % 5)                                                                         \
	X(!(thread & 1))                                                                          \
	X(thread > 10 && block != 2 || sm == 3)                                                   \
	X(-thread + 100000)                                                                       \
	X(~thread ^ 0x123456789abc)                                                               \
	X((thread + block) * (sm + 1) - warp)                                                     \
	X(thread >= 5 == 1)                                                                       \
	X(0xffffffffffff / (thread + 1))                                                          \
	X(thread <= block * 10 + 3)                                                               \
	X(1 + 2 * 3 - 4 / 2 % 3 << 2 >> 1)                                                        \
	X(thread < 8 ^ block & 1 | lane > 30)                                                     \
	X(thread * 0x100000000 + block)                                                           \
	X(!thread || !block)                                                                      \
	X(lane - warp * 3)                                                                        \
	X(thread % (block + 1))                                                                   \
	X(thread != 7 && (block == 1 || block == 3) && lane < 40)                                   \
	X(thread - (block - (sm - (lane - (warp + thread * (block + (lane ^ (thread | 1)))))))) \
	X(thread * (block * (sm * (lane * (thread + (block + (1 + (thread + 0x100000000))))))))

static void test_exprs(void)
{
	static const struct {
		const char *text;
	} exprs[] = {
#define TEXT(e) {#e},
		EXPRS(TEXT)
#undef TEXT
	};
	uint64_t want[sizeof exprs / sizeof exprs[0]] = {0};
	static const struct {
		uint32_t nb, nt;
	} ks[] = {{4, 48}, {3, 20}};
	for (size_t i = 0; i < 2; i++)
		for (uint64_t block = 0; block < ks[i].nb; block++)
			for (uint64_t thread = 0; thread < ks[i].nt; thread++) {
				uint64_t sm = block % 4, warp = thread / 32, lane = thread % 32;
				size_t n = 0;
#define SUM(e) want[n++] += (uint64_t)(e);
				EXPRS(SUM)
#undef SUM
				(void)sm, (void)warp, (void)lane;
			}
	for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
		char src[512];
		struct run r;
		snprintf(src, sizeof src, "gpu/entry/* { @v = sum(%s) }", exprs[i].text);
		if (open_src(src, &r))
			continue;
		grid(&r, 0);
		uint64_t got = get32(&r, "v", 0);
		CHECK(got == want[i], "sum(%s) = %llu, C says %llu", exprs[i].text, (unsigned long long)got,
		      (unsigned long long)want[i]);
		close_run(&r);
	}
	printf("ok   %zu expressions agree with C\n", sizeof exprs / sizeof exprs[0]);
}

static void test_filters(void)
{
	struct run r;
	/* a '/' before '{' ends the filter; the ones before divide */
	if (open_src("gpu/entry/* /thread / 2 / 3 == 1 && block < 2/ { @f[kernel] = count(); @s = sum(lane) } "
		     "gpu/entry/*/ /!(sm == 1)/{ @g = count() }", &r))
		return;
	for (size_t p = 0; p < 2; p++)
		grid(&r, p);
	uint64_t fa = 0, fb = 0, s = 0, g = 0;
	static const struct {
		uint32_t k, nb, nt;
	} ks[] = {{KA, 4, 48}, {KB, 3, 20}};
	for (size_t i = 0; i < 2; i++)
		for (uint32_t b = 0; b < ks[i].nb; b++)
			for (uint32_t t = 0; t < ks[i].nt; t++) {
				if (t / 2 / 3 == 1 && b < 2) {
					*(ks[i].k == KA ? &fa : &fb) += 1;
					s += t % 32;
				}
				g += b % 4 != 1;
			}
	CHECK(get32(&r, "f", KA) == fa && get32(&r, "f", KB) == fb, "filtered counts %llu %llu, want %llu %llu",
	      (unsigned long long)get32(&r, "f", KA), (unsigned long long)get32(&r, "f", KB),
	      (unsigned long long)fa, (unsigned long long)fb);
	CHECK(get32(&r, "s", 0) == s, "filtered sum %llu, want %llu", (unsigned long long)get32(&r, "s", 0),
	      (unsigned long long)s);
	CHECK(get32(&r, "g", 0) == g, "second probe %llu, want %llu", (unsigned long long)get32(&r, "g", 0),
	      (unsigned long long)g);
	close_run(&r);
	printf("ok   filters (division inside, two probes on one attach point)\n");
}

/* ---- memory accesses: sum, hist, lhist --------------------------------------------------- */

static void test_mem(void)
{
	struct run r;
	if (open_src("gpu/mem/global/* { @bytes[kernel] = sum(size); @sizes = hist(size); "
		     "@lines = lhist(addr % 1024, 0, 1024, 256); @clamped = lhist(addr, 100, 300, 50); "
		     "@late = sum(time > 0) }", &r))
		return;
	CHECK(r.maps[map_index(&r, "sizes")].print_as == GP_PRINT_LOG2, "hist prints as a log2 histogram");
	CHECK(r.maps[map_index(&r, "lines")].print_as == GP_PRINT_LINEAR &&
	      r.maps[map_index(&r, "lines")].print_step == 256, "lhist prints as a linear histogram, step 256");
	static const uint32_t sizes[] = {1, 2, 4, 8, 16, 4, 4, 0};
	uint64_t bytes = 0, hist[65] = {0}, lines[4] = {0}, clamped[8] = {0}, n = 0;
	for (uint64_t i = 0; i < 400; i++) {
		struct gp_mem_ctx c = {.addr = i * 4 + 3, .size = sizes[i % 8], .space = GP_SPACE_GLOBAL,
				       .dir = GP_DIR_LOAD};
		fill_ids(&c.thread, KA, (uint32_t)(i / 64), (uint32_t)(i % 64));
		run_prog(&r, 0, &c);
		bytes += c.size;
		hist[gp_log2_bucket(c.size)]++;
		lines[(c.addr % 1024) / 256]++;
		uint64_t a = c.addr < 100 ? 100 : c.addr > 299 ? 299 : c.addr;
		clamped[a / 50]++;
		n++;
	}
	CHECK(get32(&r, "bytes", KA) == bytes, "@bytes %llu, want %llu", (unsigned long long)get32(&r, "bytes", KA),
	      (unsigned long long)bytes);
	for (uint32_t b = 0; b < 65; b++)
		CHECK(get32(&r, "sizes", b) == hist[b], "@sizes bucket %u: %llu, want %llu", b,
		      (unsigned long long)get32(&r, "sizes", b), (unsigned long long)hist[b]);
	for (uint32_t b = 0; b < 4; b++)
		CHECK(get32(&r, "lines", b) == lines[b], "@lines bucket %u: %llu, want %llu", b,
		      (unsigned long long)get32(&r, "lines", b), (unsigned long long)lines[b]);
	for (uint32_t b = 0; b < 8; b++)
		CHECK(get32(&r, "clamped", b) == clamped[b], "@clamped bucket %u: %llu, want %llu", b,
		      (unsigned long long)get32(&r, "clamped", b), (unsigned long long)clamped[b]);
	CHECK(clamped[2] == 25 + 12 && clamped[5] == 13 + 325, "clamping puts the outside into the edges");
	CHECK(get32(&r, "late", 0) == n, "time (helper) is nonzero at every access");
	close_run(&r);
	printf("ok   gpu/mem: sum(size) by kernel, hist(size), lhist with clamping, time\n");
}

/* ---- several keys, block begin ----------------------------------------------------------- */

static void test_keys(void)
{
	struct run r;
	if (open_src("gpu/block_begin/* { @b[kernel, block_x, block_y] = count(); @blocks[block] = count() }", &r))
		return;
	for (uint32_t y = 0; y < 2; y++)
		for (uint32_t x = 0; x < 3; x++)
			for (int rep = 0; rep < (int)(x + 1); rep++) {
				struct gp_block_ctx c = {.grid_dim = {3, 2, 1}};
				fill_ids(&c.thread, KB, x, 0);
				c.thread.block_idx[1] = y;
				run_prog(&r, 0, &c);
			}
	CHECK(r.maps[map_index(&r, "b")].key_size == 24, "three keys: 24 bytes");
	CHECK(r.maps[map_index(&r, "b")].print_as == GP_PRINT_TUPLE, "several keys print as tuples");
	for (uint64_t y = 0; y < 2; y++)
		for (uint64_t x = 0; x < 3; x++) {
			struct { uint32_t kernel, pad; uint64_t x, y; } k = {KB, 0, x, y};   /* C's layout */
			CHECK(get(&r, "b", &k) == x + 1, "@b[B, %llu, %llu] = %llu", (unsigned long long)x,
			      (unsigned long long)y, (unsigned long long)get(&r, "b", &k));
			CHECK(get64(&r, "blocks", x) == 2 * (x + 1), "@blocks[%llu]", (unsigned long long)x);
		}
	CHECK(nkeys(&r, "b") == 6, "six keys");
	CHECK(r.maps[map_index(&r, "blocks")].print_as == GP_PRINT_BY_NAME, "integer keys print as counts");
	close_run(&r);
	printf("ok   @b[kernel, block_x, block_y], @blocks[block] at gpu/block_begin\n");
}

/* ---- host probes ------------------------------------------------------------------------- */

static void test_host(void)
{
	struct run r;
	if (open_src("host/entry/cuLaunchKernel* { @launches[api] = count(); "
		     "@threads = sum(arg1 * arg2 * arg3 * arg4 * arg5 * arg6) } "
		     "host/exit/cu* /result != 0/ { @failed[api] = count() }", &r))
		return;
	CHECK(r.maps[map_index(&r, "launches")].print_as == GP_PRINT_API, "api keys print as names");
	for (int i = 0; i < 3; i++) {
		struct gp_host_ctx c = {.api_id = GP_API_cuLaunchKernel, .nargs = 11,
					.args = {0x1000, 4, 2, 1, 32, (uint64_t)i + 1, 1, 0}};
		run_prog(&r, 0, &c);
		c.result = i == 1 ? 700 : 0;
		run_prog(&r, 1, &c);
	}
	CHECK(get32(&r, "launches", GP_API_cuLaunchKernel) == 3, "3 launches");
	CHECK(get32(&r, "threads", 0) == 4 * 2 * 32 * (1 + 2 + 3), "threads %llu",
	      (unsigned long long)get32(&r, "threads", 0));
	CHECK(get32(&r, "failed", GP_API_cuLaunchKernel) == 1 && nkeys(&r, "failed") == 1, "one failed call");
	close_run(&r);
	printf("ok   host/entry and host/exit: @[api], sum(args), filter on result\n");
}

/* ---- mistakes: one line, the column, what was expected ----------------------------------- */

static void test_errors(void)
{
	static const struct {
		const char *src, *msg;
	} cases[] = {
		{"", "column 1: empty program: expected an attach point such as gpu/entry/*"},
		{"gpu/entry/*", "column 12: expected '{' after the attach point (or a /filter/ before it), got the end"},
		{"gpu/entry/* { @[kernel] = count() ", "column 35: expected ';' or '}' after a statement, got the end"},
		{"gpu/entry/* { }", "column 15: empty probe: expected a statement such as @[kernel] = count()"},
		{"gpu/entry/* { @[kernel] = cnt(); }", "column 27: expected count(), sum(), hist() or lhist() after '=', got 'cnt'"},
		{"gpu/entry/* { @[kernel] = count(1); }", "column 33: expected ')': count() takes no argument, got number 1"},
		{"gpu/entry/* { @[kernel] count(); }", "column 25: expected '=' after the map, got 'count'"},
		{"gpu/entry/* { @[kernel = count(); }", "column 24: expected ',' or ']' after a key, got '='"},
		{"gpu/entry/* { kernel = count(); }", "column 15: expected '@map = ...' (a statement) or '}', got 'kernel'"},
		{"gpu/entry/* { @x = sum(); }", "column 24: expected a value to aggregate, got ')'"},
		{"gpu/entry/* { @x = sum(thread +); }", "column 32: expected a number, a builtin or '(', got ')'"},
		{"gpu/entry/* { @x = sum((thread); }", "column 32: expected ')', got ';'"},
		{"gpu/entry/* { @x = sum(addr); }", "column 24: 'addr' is available at gpu/mem only (this probe is gpu/entry/*)"},
		{"host/entry/cuLaunchKernel { @x[kernel] = count(); }",
		 "column 32: 'kernel' is available at GPU attach points (gpu/...) only (this probe is host/entry/cuLaunchKernel)"},
		{"gpu/entry/* { @x = sum(arg0); }",
		 "column 24: 'arg0' is available at host/entry, host/exit and gpu/func_entry only (this probe is gpu/entry/*)"},
		{"gpu/entry/* { @x = sum(pid); }", "column 24: 'pid' is available at host/entry and host/exit only (this probe is gpu/entry/*)"},
		{"gpu/entry/* { @x = sum(threads); }",
		 "column 24: unknown name 'threads' (builtins: kernel, block, block_x/y/z, thread, thread_x/y/z, sm, warp, "
		 "lane, time, addr, size, space, dir, line, bb, insns, barrier, api, pid, tid, arg0-arg7, result, retval)"},
		{"gpu/entry/* { @x = sum(thread()); }", "column 24: 'thread' is a builtin, not a function"},
		{"gpu/entry/* { @x = sum(99999999999999999999); }", "column 24: number larger than 2^64-1"},
		{"gpu/entry/* { @x = sum(12ab); }", "column 26: unexpected 'a' in a number"},
		{"gpu/entry/* { @x = sum(thread $ 2); }", "column 31: unexpected '$'"},
		{"gpu/entry/* { @h[kernel] = hist(thread); }", "column 15: hist() maps take no key: @h = hist(...)"},
		{"gpu/entry/* { @l = lhist(thread, 0, 100); }", "column 40: expected ',' and lhist()'s step, got ')'"},
		{"gpu/entry/* { @l = lhist(thread, 10, 10, 1); }", "column 32: lhist(): max must be more than min"},
		{"gpu/entry/* { @l = lhist(thread, 0, 100, 0); }", "column 32: lhist(): step must be 1 or more"},
		{"gpu/entry/* { @l = lhist(thread, 0, 100000, 1); }", "column 32: lhist(): more than 1000 buckets ((max - min) / step)"},
		{"gpu/entry/* { @l = lhist(thread, -1, 10, 1); }", "column 34: lhist(): min must be 0 or more"},
		{"gpu/entry/* { @l = lhist(thread, x, 10, 1); }", "column 34: expected a number for lhist()'s min, got 'x'"},
		{"gpu/entry/* { @x = count(); @x = sum(thread); }",
		 "column 29: @x is used differently before (column 15): one map, one aggregation with the same keys"},
		{"gpu/entry/* { @[kernel] = count(); } gpu/exit/* { @[block] = count(); }",
		 "column 51: @count is used differently before (column 15): one map, one aggregation with the same keys"},
		{"gpu/entry/* { @kernel_blocks[block] = count(); }",
		 "column 15: @kernel_blocks: a map named with 'kernel', 'lhist_' or ending in 'hist' prints by its name, "
		 "and its keys are not that: choose another name"},
		{"gpu/entyr/* { @x = count(); }", NULL},   /* the loader's own message: checked below */
		{"kprobe/vecAdd { @x = count(); }",
		 "column 1: 'kprobe/vecAdd': one-liners attach at gpu/... and host/... points (bpftime's kprobe/uprobe "
		 "forms: gpu/entry, gpu/exit, host/entry/cuAPI)"},
		{"gpu/mem/globl/* { @x = count(); }", NULL},
		{"gpu/entry/* /thread == 1 { @x = count(); }", "column 26: expected '/' to end the filter, got '{'"},
		{"gpu/entry/* { @x = count(); } }", "column 31: expected an attach point (e.g. gpu/entry/*), got '}'"},
		{"\"gpu/entry/void scale<512>* { @x = count(); }", "column 1: expected '\"' to end the quoted attach point"},
		{"gpu/entry/* {\n  @x = count();\n  @y = sum(addr)\n}",
		 "line 3, column 12: 'addr' is available at gpu/mem only (this probe is gpu/entry/*)"},
		{"gpu/entry/* { @x = sum(((((((((((((((((((((((((((((((((thread))))))))))))))))))))))))))))))))); }",
		 "column 56: expression nested deeper than 32 levels"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[512] = "";
		void *elf = NULL;
		size_t size;
		int rc = gp_oneliner_compile(cases[i].src, &elf, &size, err, sizeof err);
		free(elf);
		CHECK(rc == -EINVAL, "'%s' compiles (rc %d)", cases[i].src, rc);
		if (cases[i].msg)
			CHECK(!strcmp(err, cases[i].msg), "'%s':\n  got:  %s\n  want: %s", cases[i].src, err, cases[i].msg);
		else
			CHECK(!strncmp(err, "column 1: ", 10) && !strchr(err, '\n'), "'%s': %s", cases[i].src, err);
	}
	printf("ok   %zu mistakes, one line each with the column\n", sizeof cases / sizeof cases[0]);
}

/* The same one-liner gives the same bytes (the object's file is named by them: cache hits). */
static void test_stable(void)
{
	const char *src = "gpu/bb/* { @insns[kernel] = sum(insns) } gpu/barrier/* { @b = count() }";
	void *a, *b;
	size_t na, nb;
	char err[256];
	if (gp_oneliner_compile(src, &a, &na, err, sizeof err) || gp_oneliner_compile(src, &b, &nb, err, sizeof err)) {
		CHECK(0, "%s: %s", src, err);
		return;
	}
	CHECK(na == nb && !memcmp(a, b, na), "two compiles differ");
	/* a quoted attach point keeps its blanks; ';' between probes */
	struct run q;
	if (!open_src("\"gpu/entry/void scale<512>*\" { @n = count() }; gpu/exit/* { @m = count() }", &q)) {
		CHECK(!strcmp(gp_object__program(q.obj, 0)->section, "gpu/entry/void scale<512>*") &&
		      !strcmp(gp_object__program(q.obj, 0)->target, "void scale<512>*"), "quoted attach point");
		close_run(&q);
	}
	free(a);
	free(b);
	struct run r;
	if (!open_src(src, &r)) {
		CHECK(gp_object__program_count(r.obj) == 2, "two programs");
		close_run(&r);
	}
	printf("ok   the same one-liner, the same object\n");
}

/* Mutated one-liners never crash the compiler, and whatever compiles verifies: the compiler
 * emits no program the verifier would reject (deterministic, ONELINER_MUTATIONS of them). */
static void test_mutations(void)
{
	static const char *const seeds[] = {
		"gpu/entry/* /thread % 2 == 0 && block < 3/ { @[kernel] = count(); @s = sum(lane * 2) }",
		"gpu/mem/global,load/* { @b[kernel, size] = sum(size); @h = hist(addr); @l = lhist(size, 0, 64, 8) }",
		"host/entry/cuLaunchKernel* /arg1 > 1 || !arg2/ { @a[api] = count() } host/exit/cu* { @r = hist(result) }",
		"gpu/bb/* { @i[kernel] = sum(insns); @t = sum(time / 1000 - (bb << 2)) } gpu/barrier/* { @x = count() }",
	};
	static const char alphabet[] = "@[](){}/;,=+-*%&|^~!<>0123456789xabkl_ \"";
	const char *env = getenv("ONELINER_MUTATIONS");
	unsigned long count = env ? strtoul(env, NULL, 10) : 2000, compiled = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned long i = 0; i < count; i++) {
		char src[512];
		snprintf(src, sizeof src, "%s", seeds[i % 4]);
		for (int e = 0, edits = 1 + (int)(i % 4); e < edits; e++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t len = strlen(src), at = (size_t)(x >> 8) % (len + 1);
			char c = alphabet[(x >> 40) % (sizeof alphabet - 1)];
			switch ((x >> 32) % 3) {
			case 0:   /* replace */
				if (at < len)
					src[at] = c;
				break;
			case 1:   /* delete */
				if (at < len)
					memmove(src + at, src + at + 1, len - at);
				break;
			default:  /* insert */
				if (len + 1 < sizeof src) {
					memmove(src + at + 1, src + at, len - at + 1);
					src[at] = c;
				}
			}
		}
		char err[512] = "";
		void *elf = NULL;
		size_t size;
		int rc = gp_oneliner_compile(src, &elf, &size, err, sizeof err);
		free(elf);
		if (rc) {
			CHECK(rc == -EINVAL && err[0] && !strchr(err, '\n'), "'%s': rc %d, '%s'", src, rc, err);
			continue;
		}
		compiled++;
		struct run r;
		if (!open_src(src, &r))   /* verifies every program */
			close_run(&r);
	}
	printf("ok   %lu mutated one-liners: no crash, %lu compiled and verified\n", count, compiled);
}

int main(void)
{
	test_count();
	test_exprs();
	test_filters();
	test_mem();
	test_keys();
	test_host();
	test_errors();
	test_stable();
	test_mutations();
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures != 0;
}
