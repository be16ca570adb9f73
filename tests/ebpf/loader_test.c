/* The BPF object loader on real objects built by clang -target bpf from tests/ebpf/progs/:
 * exact map definitions, program sections, attach kinds and targets, relocations resolved to the
 * right map index/offset, subprograms appended (checked by running the programs on the host
 * interpreter), and one exact error line for each kind of bad object.
 * Usage: loader_test DIR-OF-OBJECTS */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/interp.h"
#include "ebpf/object.h"
#include "gpuprobe/gpuprobe.h"

static int failures, checks;
static const char *dir;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			failures++;                                        \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
		}                                                          \
	} while (0)

static char *path_of(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static struct gp_object *open_ok(const char *name)
{
	struct gp_object *o = NULL;
	char err[512];
	int rc = gp_object__open_file(path_of(name), &o, err, sizeof err);
	CHECK(rc == 0 && o, "%s: open failed: %d %s", name, rc, err);
	return rc ? NULL : o;
}

static const struct gp_program *prog_named(const struct gp_object *o, const char *name)
{
	for (size_t i = 0; i < gp_object__program_count(o); i++)
		if (strcmp(gp_object__program(o, i)->name, name) == 0)
			return gp_object__program(o, i);
	CHECK(0, "no program '%s'", name);
	return NULL;
}

static void check_map(const struct gp_object *o, size_t i, const char *name, uint32_t type, uint32_t ks,
		      uint32_t vs, uint32_t max, uint32_t flags)
{
	const struct gp_map *m = gp_object__map(o, i);
	CHECK(m != NULL, "map %zu missing", i);
	if (!m)
		return;
	CHECK(strcmp(m->name, name) == 0 && m->type == type && m->key_size == ks && m->value_size == vs &&
		      m->max_entries == max && m->flags == flags,
	      "map %zu: got %s type %u key %u value %u max %u flags %u, want %s %u %u %u %u %u", i, m->name, m->type,
	      m->key_size, m->value_size, m->max_entries, m->flags, name, type, ks, vs, max, flags);
}

static void check_prog(const struct gp_object *o, const char *name, const char *section, enum gp_attach_kind kind,
		       const char *target, unsigned filter, int after)
{
	const struct gp_program *p = prog_named(o, name);
	if (!p)
		return;
	CHECK(strcmp(p->section, section) == 0, "%s: section %s, want %s", name, p->section, section);
	CHECK(p->attach == kind, "%s: attach %d, want %d", name, p->attach, kind);
	CHECK((target == NULL && p->target == NULL) || (target && p->target && strcmp(p->target, target) == 0),
	      "%s: target %s, want %s", name, p->target ? p->target : "(null)", target ? target : "(null)");
	CHECK(p->mem_filter == filter, "%s: filter 0x%x, want 0x%x", name, p->mem_filter, filter);
	CHECK(p->barrier_after == after, "%s: barrier_after %d, want %d", name, p->barrier_after, after);
	CHECK(p->ninsns > 0 && p->insns, "%s: no instructions", name);
}

/* The set of map references (ld_imm64 with a pseudo source) a program holds, as "fd:I" or "val:I+OFF". */
static void map_refs(const struct gp_program *p, char *out, size_t cap)
{
	out[0] = '\0';
	size_t len = 0;
	for (size_t i = 0; p && i + 1 < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (in->src_reg == BPF_PSEUDO_MAP_FD)
			len += snprintf(out + len, cap - len, "%sfd:%d", len ? " " : "", in->imm);
		else if (in->src_reg == BPF_PSEUDO_MAP_VALUE)
			len += snprintf(out + len, cap - len, "%sval:%d+%d", len ? " " : "", in->imm, in[1].imm);
		i++;
	}
}

/* Running loaded programs on the host interpreter with persistent map state. */
struct host_run {
	struct gp_map defs[16];
	void *state[16];
	size_t nmaps;
	int records, last_map;
	size_t last_size;
	uint32_t last_u32;
	char printed[256];
};

static void on_record(void *user, int map_index, const void *data, size_t size)
{
	struct host_run *hr = user;
	hr->records++;
	hr->last_map = map_index;
	hr->last_size = size;
	hr->last_u32 = 0;
	memcpy(&hr->last_u32, data, size < 4 ? size : 4);
}

static void on_print(void *user, const char *line)
{
	struct host_run *hr = user;
	snprintf(hr->printed, sizeof hr->printed, "%s", line);
}

static void host_begin(struct host_run *hr, const struct gp_object *o)
{
	memset(hr, 0, sizeof *hr);
	hr->nmaps = gp_object__map_count(o);
	if (hr->nmaps > 16)
		hr->nmaps = 16;
	for (size_t i = 0; i < hr->nmaps; i++) {
		char err[256];
		hr->defs[i] = *gp_object__map(o, i);
		hr->state[i] = gp_host_map_create(&hr->defs[i], err, sizeof err);
		CHECK(hr->state[i] != NULL, "host map %zu: %s", i, err);
	}
}

static void host_end(struct host_run *hr)
{
	for (size_t i = 0; i < hr->nmaps; i++)
		gp_host_map_free(hr->state[i]);
}

static void run_prog(struct host_run *hr, const struct gp_program *p, void *ctx, uint32_t ctx_size, uint64_t *r0)
{
	if (!p)
		return;
	for (size_t i = 0; i < hr->nmaps; i++)
		if (!hr->state[i])
			return;
	struct gp_interp_env env = {
		.maps = hr->defs, .map_state = hr->state, .nmaps = hr->nmaps, .user = hr,
		.on_record = on_record, .on_print = on_print, .ctx_size = ctx_size,
	};
	char err[256];
	int rc = gp_interp_run(p->insns, p->ninsns, (uint64_t)(uintptr_t)ctx, 0, &env, r0, err, sizeof err);
	CHECK(rc == 0, "%s on the host interpreter: %s", p->name, err);
}

static void test_maps_object(void)
{
	struct gp_object *o = open_ok("maps.bpf.o");
	if (!o)
		return;
	CHECK(strcmp(gp_object__license(o), "Dual BSD/GPL") == 0, "license %s", gp_object__license(o));
	CHECK(gp_object__map_count(o) == 5, "maps: %zu, want 5", gp_object__map_count(o));
	check_map(o, 0, "calls", BPF_MAP_TYPE_HASH, 4, 8, 1024, 0);
	check_map(o, 1, "last_access", BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct gp_mem_ctx), 16, 0);
	check_map(o, 2, "events", BPF_MAP_TYPE_RINGBUF, 0, 0, 65536, 0);
	check_map(o, 3, "per_thread", GPUPROBE_MAP_TYPE_PERTHREAD_ARRAY, 4, 8, 1, 0);
	check_map(o, 4, "gpu_events", GPUPROBE_MAP_TYPE_GPU_RINGBUF, 4, 4, 256, 0);
	CHECK(gp_object__program_count(o) == 13, "programs: %zu, want 13", gp_object__program_count(o));
	check_prog(o, "count_entry", "gpu/entry/vecAdd*", GP_ATTACH_KERNEL_ENTRY, "vecAdd*", 0, 0);
	check_prog(o, "on_exit_", "gpu/exit/vecAdd*", GP_ATTACH_KERNEL_EXIT, "vecAdd*", 0, 0);
	check_prog(o, "on_store", "gpu/mem/global,store/sgemm*", GP_ATTACH_MEM, "sgemm*", GP_MEM_GLOBAL | GP_MEM_STORE, 0);
	check_prog(o, "on_any", "gpu/mem/all/", GP_ATTACH_MEM, NULL, GP_MEM_ALL_SPACES | GP_MEM_ALL_DIRS, 0);
	check_prog(o, "after_barrier", "gpu/barrier_after/reduce", GP_ATTACH_BARRIER, "reduce", 0, 1);
	check_prog(o, "before_barrier", "gpu/barrier/reduce", GP_ATTACH_BARRIER, "reduce", 0, 0);
	check_prog(o, "on_bb", "gpu/bb/", GP_ATTACH_BASIC_BLOCK, NULL, 0, 0);
	check_prog(o, "on_block_begin", "gpu/block_begin/k?", GP_ATTACH_BLOCK_BEGIN, "k?", 0, 0);
	check_prog(o, "on_block_end", "gpu/block_end/", GP_ATTACH_BLOCK_END, NULL, 0, 0);
	check_prog(o, "on_func_entry", "gpu/func_entry/_Z6helperi", GP_ATTACH_FUNC_ENTRY, "_Z6helperi", 0, 0);
	check_prog(o, "on_func_exit", "gpu/func_exit/_Z6helperi", GP_ATTACH_FUNC_EXIT, "_Z6helperi", 0, 0);
	check_prog(o, "on_launch", "host/entry/cuLaunchKernel", GP_ATTACH_HOST_ENTRY, "cuLaunchKernel", 0, 0);
	check_prog(o, "on_memcpy_exit", "host/exit/cuMemcpy*", GP_ATTACH_HOST_EXIT, "cuMemcpy*", 0, 0);

	char refs[256];
	struct { const char *prog, *want; } want_refs[] = {
		{ "count_entry", "fd:0 fd:0" }, { "on_store", "fd:1" }, { "on_any", "fd:2" },
		{ "after_barrier", "fd:3" }, { "on_bb", "fd:4" }, { "on_exit_", "" },
	};
	for (size_t i = 0; i < sizeof want_refs / sizeof want_refs[0]; i++) {
		map_refs(prog_named(o, want_refs[i].prog), refs, sizeof refs);
		CHECK(strcmp(refs, want_refs[i].want) == 0, "%s: map refs '%s', want '%s'", want_refs[i].prog, refs,
		      want_refs[i].want);
	}

	/* count_entry on the host: two runs for one kernel hash leave calls[hash] == 2. */
	struct host_run hr;
	host_begin(&hr, o);
	struct gp_kernel_ctx kctx = { .thread = { .kernel_hash = 0xabc } };
	uint64_t r0 = 1;
	run_prog(&hr, prog_named(o, "count_entry"), &kctx, sizeof kctx, &r0);
	run_prog(&hr, prog_named(o, "count_entry"), &kctx, sizeof kctx, &r0);
	uint32_t key = 0xabc;
	uint64_t *v = hr.state[0] ? gp_host_map_lookup(hr.state[0], &key) : NULL;
	CHECK(v && *v == 2, "calls[0xabc] = %llu after two runs, want 2", v ? (unsigned long long)*v : 0ull);
	CHECK(r0 == 0, "count_entry returned %llu", (unsigned long long)r0);
	/* on_bb sends its bb_index through the GPU ring buffer (perf_event_output on map 4). */
	struct gp_bb_ctx bctx = { .bb_index = 77 };
	run_prog(&hr, prog_named(o, "on_bb"), &bctx, sizeof bctx, &r0);
	CHECK(hr.records == 1 && hr.last_map == 4 && hr.last_size == 4 && hr.last_u32 == 77,
	      "on_bb: %d records, map %d, size %zu, value %u; want 1 record of 77 in map 4", hr.records, hr.last_map,
	      hr.last_size, hr.last_u32);
	host_end(&hr);
	gp_object__close(o);
}

static void test_globals(void)
{
	struct gp_object *o = open_ok("globals.bpf.o");
	if (!o)
		return;
	CHECK(gp_object__map_count(o) == 3, "maps: %zu, want 3", gp_object__map_count(o));
	check_map(o, 0, ".data", BPF_MAP_TYPE_ARRAY, 4, 12, 1, BPF_F_MMAPABLE);
	check_map(o, 1, ".rodata", BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_MMAPABLE | BPF_F_RDONLY_PROG);
	check_map(o, 2, ".bss", BPF_MAP_TYPE_ARRAY, 4, 24, 1, BPF_F_MMAPABLE);
	const struct gp_map *data = gp_object__map(o, 0), *ro = gp_object__map(o, 1), *bss = gp_object__map(o, 2);
	uint64_t counter;
	uint32_t scale, limits[4];
	memcpy(&counter, data->initial, 8);
	memcpy(&scale, (const uint8_t *)data->initial + 8, 4);
	memcpy(limits, ro->initial, 16);
	CHECK(data->initial_size == 12 && counter == 0x1122334455667788ull && scale == 3 && !data->readonly,
	      ".data initial: size %zu counter 0x%llx scale %u", data->initial_size, (unsigned long long)counter, scale);
	CHECK(ro->readonly && limits[0] == 10 && limits[1] == 20 && limits[2] == 30 && limits[3] == 40,
	      ".rodata initial: %u %u %u %u readonly %d", limits[0], limits[1], limits[2], limits[3], ro->readonly);
	static const uint8_t zeros[24];
	CHECK(bss->initial_size == 24 && memcmp(bss->initial, zeros, 24) == 0, ".bss initial not 24 zero bytes");
	/* seen (.bss+8), limits (.rodata+0), scale (.data+8), counter (.data+0), total (.bss+0) */
	char refs[256];
	const struct gp_program *p = prog_named(o, "use_globals");
	map_refs(p, refs, sizeof refs);
	CHECK(strcmp(refs, "val:2+8 val:1+0 val:0+8 val:0+0 val:2+0") == 0, "use_globals refs '%s'", refs);
	check_prog(o, "use_globals", "host/entry/cu*", GP_ATTACH_HOST_ENTRY, "cu*", 0, 0);

	struct host_run hr;
	host_begin(&hr, o);
	struct gp_host_ctx hctx = { .nargs = 2 };
	uint64_t r0 = 0;
	run_prog(&hr, p, &hctx, sizeof hctx, &r0);
	uint32_t k0 = 0;
	uint8_t *d = hr.state[0] ? gp_host_map_lookup(hr.state[0], &k0) : NULL;
	uint8_t *b = hr.state[2] ? gp_host_map_lookup(hr.state[2], &k0) : NULL;
	uint64_t c2 = 0, total = 0;
	uint32_t seen3 = 0;
	if (d && b) {
		memcpy(&c2, d, 8);
		memcpy(&total, b, 8);
		memcpy(&seen3, b + 8 + 12, 4);
	}
	CHECK(c2 == 0x1122334455667788ull + 30 && total == 90 && seen3 == 7,
	      "after a run: counter 0x%llx total %llu seen[3] %u; want counter+30, 90, 7", (unsigned long long)c2,
	      (unsigned long long)total, seen3);
	CHECK((uint32_t)r0 == (uint32_t)(90 + 0x1122334455667788ull + 30), "use_globals returned 0x%llx",
	      (unsigned long long)r0);
	host_end(&hr);
	gp_object__close(o);
}

static int count_exits(const struct gp_program *p)
{
	int n = 0;
	for (size_t i = 0; p && i < p->ninsns; i++)
		n += p->insns[i].code == (BPF_JMP | BPF_EXIT);
	return n;
}

static void test_subprograms(void)
{
	struct gp_object *o = open_ok("subprog.bpf.o");
	if (!o)
		return;
	CHECK(gp_object__map_count(o) == 0, "maps: %zu, want 0", gp_object__map_count(o));
	CHECK(gp_object__program_count(o) == 2, "programs: %zu, want 2 (.text functions are subprograms)",
	      gp_object__program_count(o));
	const struct gp_program *first = prog_named(o, "first"), *second = prog_named(o, "second");
	check_prog(o, "first", "host/entry/", GP_ATTACH_HOST_ENTRY, NULL, 0, 0);
	check_prog(o, "second", "host/exit/", GP_ATTACH_HOST_EXIT, NULL, 0, 0);
	/* first = first + sum_squares + square; second calls square directly and through
	 * sum_squares: each subprogram is appended once. */
	CHECK(count_exits(first) == 3 && count_exits(second) == 3, "exits: first %d second %d, want 3 and 3",
	      count_exits(first), count_exits(second));
	struct host_run hr;
	host_begin(&hr, o);
	struct gp_host_ctx hctx = { .args = { 3, 4, 100 } };
	uint64_t r0 = 0;
	run_prog(&hr, first, &hctx, sizeof hctx, &r0);
	CHECK(r0 == 25, "first(3, 4) = %llu, want 25", (unsigned long long)r0);
	run_prog(&hr, second, &hctx, sizeof hctx, &r0);
	CHECK(r0 == 114, "second(3, _, 100) = %llu, want 9 + 5 + 100", (unsigned long long)r0);
	host_end(&hr);
	gp_object__close(o);
}

static void test_bpftime(void)
{
	struct gp_object *o = open_ok("bpftime.bpf.o");
	if (!o)
		return;
	CHECK(gp_object__map_count(o) == 3, "maps: %zu, want 3", gp_object__map_count(o));
	check_map(o, 0, "start_time", 1502, 4, 8, 1, 0);
	check_map(o, 1, "rb", 1527, 4, 4, 16, 0);
	check_map(o, 2, ".rodata.str1.1", BPF_MAP_TYPE_ARRAY, 4, 5, 1, BPF_F_MMAPABLE | BPF_F_RDONLY_PROG);
	check_prog(o, "cuda__probe", "kprobe/_Z9vectorAddPKfS0_Pfi", GP_ATTACH_KERNEL_ENTRY, "_Z9vectorAddPKfS0_Pfi", 0, 0);
	check_prog(o, "cuda__retprobe", "kretprobe/_Z9vectorAddPKfS0_Pfi", GP_ATTACH_KERNEL_EXIT,
		   "_Z9vectorAddPKfS0_Pfi", 0, 0);
	char refs[256];
	map_refs(prog_named(o, "cuda__retprobe"), refs, sizeof refs);
	CHECK(strcmp(refs, "fd:0 fd:1 val:2+0") == 0, "cuda__retprobe refs '%s'", refs);
	/* On the host stand-ins (block 0, thread 0): the exit probe sends one 8-byte duration and
	 * prints "done". */
	struct host_run hr;
	host_begin(&hr, o);
	struct gp_kernel_ctx kctx = { 0 };
	uint64_t r0 = 1;
	run_prog(&hr, prog_named(o, "cuda__probe"), &kctx, sizeof kctx, &r0);
	run_prog(&hr, prog_named(o, "cuda__retprobe"), &kctx, sizeof kctx, &r0);
	CHECK(hr.records == 1 && hr.last_map == 1 && hr.last_size == 8, "records %d map %d size %zu", hr.records,
	      hr.last_map, hr.last_size);
	CHECK(strcmp(hr.printed, "done") == 0, "printed '%s', want 'done'", hr.printed);
	host_end(&hr);
	gp_object__close(o);
}

/* BPF_KPROBE reads argument 4 (int n) from pt_regs->cx: offset 88 of struct gp_bpftime_regs. */
static void test_bpftime_kprobe(void)
{
	struct gp_object *o = open_ok("bpftime_kprobe.bpf.o");
	if (!o)
		return;
	check_map(o, 0, "last_n", BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
	check_prog(o, "cuda__vector_add", "kprobe/_Z9vectorAddPKfS0_Pfi", GP_ATTACH_KERNEL_ENTRY, "_Z9vectorAddPKfS0_Pfi", 0, 0);
	check_prog(o, "cuda__vector_add_ret", "kretprobe/_Z9vectorAddPKfS0_Pfi", GP_ATTACH_KERNEL_EXIT,
		   "_Z9vectorAddPKfS0_Pfi", 0, 0);
	const struct gp_program *p = prog_named(o, "cuda__vector_add");
	bool reads_cx = false;
	for (size_t i = 0; p && i < p->ninsns; i++)
		if (p->insns[i].code == (BPF_LDX | BPF_MEM | BPF_DW) && p->insns[i].src_reg == 1 &&
		    p->insns[i].off == offsetof(struct gp_bpftime_regs, cx))
			reads_cx = true;
	CHECK(reads_cx, "cuda__vector_add does not read pt_regs->cx at offset %zu", offsetof(struct gp_bpftime_regs, cx));
	/* on the host with a regs-shaped context: last_n = argument 4 */
	struct host_run hr;
	host_begin(&hr, o);
	struct gp_bpftime_regs regs = { .di = 0x1000, .si = 0x2000, .dx = 0x3000, .cx = 4096 };
	uint64_t r0 = 1;
	run_prog(&hr, p, &regs, sizeof regs, &r0);
	uint32_t k0 = 0;
	uint64_t *v = hr.state[0] ? gp_host_map_lookup(hr.state[0], &k0) : NULL;
	CHECK(v && *v == 4096 && r0 == 0, "last_n = %llu, want 4096", v ? (unsigned long long)*v : 0ull);
	host_end(&hr);
	gp_object__close(o);
}

static void test_legacy(void)
{
	struct gp_object *o = open_ok("legacy.bpf.o");
	if (!o)
		return;
	CHECK(gp_object__map_count(o) == 2, "maps: %zu, want 2", gp_object__map_count(o));
	check_map(o, 0, "hits", BPF_MAP_TYPE_HASH, 4, 8, 128, 0);
	check_map(o, 1, "totals", BPF_MAP_TYPE_ARRAY, 4, 16, 2, 0);
	check_prog(o, "count", "host/entry/cuInit", GP_ATTACH_HOST_ENTRY, "cuInit", 0, 0);
	char refs[256];
	map_refs(prog_named(o, "count"), refs, sizeof refs);
	CHECK(strcmp(refs, "fd:0 fd:0 fd:1") == 0, "count refs '%s'", refs);
	struct host_run hr;
	host_begin(&hr, o);
	struct gp_host_ctx hctx = { .api_id = 5 };
	uint64_t r0;
	run_prog(&hr, prog_named(o, "count"), &hctx, sizeof hctx, &r0);
	run_prog(&hr, prog_named(o, "count"), &hctx, sizeof hctx, &r0);
	uint32_t k5 = 5, k1 = 1;
	uint64_t *hits = hr.state[0] ? gp_host_map_lookup(hr.state[0], &k5) : NULL;
	uint64_t *tot = hr.state[1] ? gp_host_map_lookup(hr.state[1], &k1) : NULL;
	CHECK(hits && *hits == 2, "hits[5] = %llu, want 2", hits ? (unsigned long long)*hits : 0ull);
	CHECK(tot && tot[0] == 0 && tot[1] == 4, "totals[1] = {%llu, %llu}, want {0, 4}",
	      tot ? (unsigned long long)tot[0] : 0ull, tot ? (unsigned long long)tot[1] : 0ull);
	host_end(&hr);
	gp_object__close(o);
}

/* ---- bad objects: one exact error line each ---------------------------------------------- */

static uint8_t *slurp(const char *name, size_t *size)
{
	FILE *f = fopen(path_of(name), "rb");
	CHECK(f != NULL, "%s: %s", name, strerror(errno));
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n);
	*size = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

static char last_err[512];   /* expect_error's last message */

static void expect_error(const void *data, size_t size, const char *name, int want_rc, const char *want)
{
	struct gp_object *o = NULL;
	char err[512] = "";
	int rc = gp_object__open_mem(data, size, name, &o, err, sizeof err);
	memcpy(last_err, err, sizeof(err));
	CHECK(rc == want_rc && o == NULL, "%s: rc %d, want %d (%s)", name, rc, want_rc, err);
	CHECK(strchr(err, '\n') == NULL, "%s: error is not one line: %s", name, err);
	if (want)
		CHECK(strcmp(err, want) == 0, "%s:\n   got  '%s'\n   want '%s'", name, err, want);
	else
		CHECK(strncmp(err, name, strlen(name)) == 0 && strlen(err) > strlen(name) + 2,
		      "%s: error '%s' does not name the object and a reason", name, err);
	gp_object__close(o);
}

static void expect_file_error(const char *file, const char *want_tail)
{
	size_t size;
	uint8_t *buf = slurp(file, &size);
	if (!buf)
		return;
	char want[512];
	snprintf(want, sizeof want, "%s: %s", file, want_tail);
	expect_error(buf, size, file, -EINVAL, want);
	free(buf);
}

/* Section header fields of an ELF64 image. */
static uint8_t *shdr(uint8_t *img, unsigned i)
{
	uint64_t shoff;
	uint16_t shentsize;
	memcpy(&shoff, img + 0x28, 8);
	memcpy(&shentsize, img + 0x3a, 2);
	return img + shoff + (uint64_t)i * shentsize;
}

static unsigned section_named(uint8_t *img, const char *name)
{
	uint16_t shnum, shstrndx;
	memcpy(&shnum, img + 0x3c, 2);
	memcpy(&shstrndx, img + 0x3e, 2);
	uint64_t stroff;
	memcpy(&stroff, shdr(img, shstrndx) + 24, 8);
	for (unsigned i = 1; i < shnum; i++) {
		uint32_t nm;
		memcpy(&nm, shdr(img, i), 4);
		if (strcmp((const char *)img + stroff + nm, name) == 0)
			return i;
	}
	CHECK(0, "no section %s", name);
	return 0;
}

static uint64_t sh_u64(uint8_t *img, unsigned i, unsigned off)
{
	uint64_t v;
	memcpy(&v, shdr(img, i) + off, 8);
	return v;
}

static void test_bad_objects(void)
{
	const char text[] = "#!/bin/sh\necho this is a shell script, not a BPF object, padded to be long enough\n";
	expect_error(text, sizeof text - 1, "script.sh", -EINVAL, "script.sh: not an ELF file");
	expect_error("hi", 2, "tiny", -EINVAL, "tiny: not an ELF file (2 bytes)");
	expect_error(NULL, 0, "empty", -EINVAL, "empty: not an ELF file (0 bytes)");

	expect_file_error("no_programs.bpf.o", "no programs (functions in a SEC(\"gpu/...\") section)");
	expect_file_error("bad_section.bpf.o",
			  "program 'not_for_gpus': unknown attach point in section 'xdp' (expected gpu/entry, gpu/exit,"
			  " gpu/block_begin, gpu/block_end, gpu/func_entry, gpu/func_exit, gpu/mem, gpu/barrier,"
			  " gpu/barrier_after, gpu/bb, host/entry, host/exit, kprobe or kretprobe, then /<glob>)");
	expect_file_error("bad_filter.bpf.o",
			  "program 'oops': unknown memory filter 'vecAdd' (use global, shared, local, generic, load,"
			  " store, atomic, plain, async, matrix or all, e.g. gpu/mem/global,store/<kernel>)");
	expect_file_error("bad_static.bpf.o",
			  "libbpf cannot open it: sec 'gpu/entry/k': program 'hidden' is static and not supported");
	expect_file_error("bad_maptype.bpf.o",
			  "map 'jmp': type 3 is not supported (array, hash, per-CPU and LRU variants, ringbuf, perf"
			  " event array, bpftime's 1501-1504, 1512, 1513 and 1527)");
	expect_file_error("bad_extern.bpf.o", "libbpf cannot open it: failed to find BTF for extern 'gpu_count' [5]"
			  " section: -2");

	size_t size;
	uint8_t *orig = slurp("globals.bpf.o", &size);
	if (!orig)
		return;
	uint8_t *img = malloc(size);
	char want[512];

	/* truncated in the middle of its section data */
	expect_error(orig, 600, "truncated.o", -EINVAL, NULL);

	/* not for BPF */
	memcpy(img, orig, size);
	img[0x12] = 62;
	expect_error(img, size, "x86.o", -EINVAL,
		     "x86.o: not a BPF object (ELF machine 62, expected 247): build it with clang -target bpf");

	unsigned rel = section_named(orig, ".relhost/entry/cu*");
	unsigned code = section_named(orig, "host/entry/cu*");
	unsigned symtab = section_named(orig, ".symtab");
	uint64_t rel_off = sh_u64(orig, rel, 24), code_size = sh_u64(orig, code, 32);
	uint64_t nsyms = sh_u64(orig, symtab, 32) / 24;

	/* relocation naming a symbol that does not exist */
	memcpy(img, orig, size);
	uint32_t bad_sym = 0xffffff;
	memcpy(img + rel_off + 8 + 4, &bad_sym, 4);
	snprintf(want, sizeof want, "badsym.o: symbol 16777215 out of range (%llu symbols)", (unsigned long long)nsyms);
	expect_error(img, size, "badsym.o", -EINVAL, want);

	/* relocation of a type BPF code does not use */
	memcpy(img, orig, size);
	uint32_t type = 5;
	memcpy(img + rel_off + 8, &type, 4);
	expect_error(img, size, "badtype.o", -EINVAL,
		     "badtype.o: relocation 0 of '.relhost/entry/cu*': type 5 not supported in code");

	/* relocation at a byte offset that is no instruction */
	memcpy(img, orig, size);
	uint64_t off3 = 3;
	memcpy(img + rel_off, &off3, 8);
	expect_error(img, size, "badoff.o", -EINVAL,
		     "badoff.o: relocation 0 of '.relhost/entry/cu*': offset 3 is not an instruction of 'host/entry/cu*'");

	/* map relocation moved onto an instruction that is not ld_imm64 */
	memcpy(img, orig, size);
	uint64_t off0 = 0;
	memcpy(img + rel_off, &off0, 8);
	expect_error(img, size, "notld.o", -EINVAL,
		     "notld.o: program 'use_globals': 64-bit relocation against 'seen' is not on a complete ld_imm64"
		     " (section 'host/entry/cu*', insn 0)");

	/* hostile sizes: a code section larger than the file, a function larger than its section */
	memcpy(img, orig, size);
	uint64_t huge = 0x7ffffffffff8ull;
	memcpy(shdr(img, code) + 32, &huge, 8);
	expect_error(img, size, "hugesec.o", -EINVAL, "hugesec.o: section 'host/entry/cu*': data unreadable (truncated object?)");

	memcpy(img, orig, size);
	uint64_t symoff = sh_u64(orig, symtab, 24);
	for (uint64_t i = 1; i < nsyms; i++) {
		uint8_t *sym = img + symoff + i * 24;
		uint16_t shndx;
		memcpy(&shndx, sym + 6, 2);
		if ((sym[4] & 0xf) == 2 /* STT_FUNC */ && shndx == code) {
			uint64_t big = 1u << 20;
			memcpy(sym + 16, &big, 8);
		}
	}
	snprintf(want, sizeof want, "hugefn.o: function 'use_globals': offset 0 size 1048576 outside section"
		 " 'host/entry/cu*' (%llu bytes)", (unsigned long long)code_size);
	expect_error(img, size, "hugefn.o", -EINVAL, want);

	/* hostile names reach messages escaped (issue 12): an ESC in a section name (refused as
	 * not printable), a C1 control byte (0x9b, CSI on 8-bit terminals) in one that passes */
	uint16_t shstrndx;
	memcpy(&shstrndx, orig + 0x3e, 2);
	uint32_t name_off;
	memcpy(&name_off, shdr(orig, code), 4);
	uint8_t *name_at = img + sh_u64(orig, shstrndx, 24) + name_off;
	memcpy(img, orig, size);
	name_at[0] = 0x1b;
	expect_error(img, size, "esc.o", -EINVAL,
		     "esc.o: program 'use_globals' in section '\\x1bost/entry/cu*': names must be printable");
	memcpy(img, orig, size);
	name_at[0] = 0x9b;
	expect_error(img, size, "csi.o", -EINVAL, NULL);
	CHECK(strstr(last_err, "'\\x9bost/entry/cu*'") != NULL, "csi.o: the name is not escaped: %s", last_err);

	/* corrupted BTF (found by fuzzing: Debian 12's libbpf crashes or hangs on these) */
	free(orig);
	orig = slurp("maps.bpf.o", &size);
	img = realloc(img, size);
	unsigned btf = section_named(orig, ".BTF");
	uint64_t btf_off = sh_u64(orig, btf, 24);
	uint32_t hdr_len, type_off, type_len;
	memcpy(&hdr_len, orig + btf_off + 4, 4);
	memcpy(&type_off, orig + btf_off + 8, 4);
	memcpy(&type_len, orig + btf_off + 12, 4);
	uint8_t *types = orig + btf_off + hdr_len + type_off;
	memcpy(img, orig, size);
	uint32_t bad_name = 0xffffff;
	memcpy(img + (types - orig), &bad_name, 4);
	expect_error(img, size, "btfname.o", -EINVAL, "btfname.o: BTF type 1: name offset 16777215 outside the string section");
	/* the first pointer type made to point at itself: a cycle */
	uint32_t pos = 0, id = 0, ptr_at = 0, ptr_id = 0;
	while (pos + 12 <= type_len && !ptr_id) {
		uint32_t info;
		memcpy(&info, types + pos + 4, 4);
		uint32_t kind = (info >> 24) & 0x1f, vlen = info & 0xffff, extra = 0;
		id++;
		if (kind == 1 || kind == 14 || kind == 17) extra = 4;
		else if (kind == 3) extra = 12;
		else if (kind == 4 || kind == 5 || kind == 15 || kind == 19) extra = 12 * vlen;
		else if (kind == 6 || kind == 13) extra = 8 * vlen;
		if (kind == 2) {
			ptr_at = pos;
			ptr_id = id;
		}
		pos += 12 + extra;
	}
	CHECK(ptr_id != 0, "no pointer type in maps.bpf.o's BTF");
	memcpy(img, orig, size);
	memcpy(img + (types - orig) + ptr_at + 8, &ptr_id, 4);
	snprintf(want, sizeof want, "btfcycle.o: BTF type %u: reference chain longer than 64 (a cycle?)", ptr_id);
	expect_error(img, size, "btfcycle.o", -EINVAL, want);
	memcpy(img, orig, size);
	uint32_t big = 0x7fffffff;
	memcpy(img + (types - orig) + ptr_at + 8, &big, 4);
	expect_error(img, size, "btfref.o", -EINVAL, NULL);
	memcpy(img, orig, size);
	memcpy(img + btf_off + 12, &big, 4);
	expect_error(img, size, "btfhdr.o", -EINVAL, NULL);

	/* a missing file */
	struct gp_object *o = NULL;
	char err[512];
	int rc = gp_object__open_file(path_of("does-not-exist.bpf.o"), &o, err, sizeof err);
	snprintf(want, sizeof want, "%s: No such file or directory", path_of("does-not-exist.bpf.o"));
	CHECK(rc == -ENOENT && strcmp(err, want) == 0, "missing file: %d %s", rc, err);
	free(img);
	free(orig);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: loader_test DIR-OF-OBJECTS\n");
		return 2;
	}
	dir = argv[1];
	test_maps_object();
	test_globals();
	test_subprograms();
	test_bpftime();
	test_legacy();
	test_bpftime_kprobe();
	test_bad_objects();
	printf("loader: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
