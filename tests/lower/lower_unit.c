/* Unit tests of the eBPF lowering: the shape of the IR it builds (functions, hooks, subprograms),
 * its exact error lines, and ptxas accepting a module that uses every feature (sm_75, sm_90).
 * usage: lower_unit [PTXAS]  (the ptxas part is skipped when PTXAS is missing). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ebpf/lower.h"

static int failures;

#define CHECK(cond, ...)                                             \
	do {                                                         \
		if (!(cond)) {                                       \
			failures++;                                  \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);  \
			printf(__VA_ARGS__);                         \
			printf("\n");                                \
		}                                                    \
	} while (0)

#define I(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOVK(d, v) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)

/* Lower insns alone into a fresh module; return the error line ("" on success). */
static const char *lower_err(const struct bpf_insn *insns, size_t n, const struct gp_lower_opts *o)
{
	static char err[256];
	ir_module *m = ir_module_new();
	int rc = gp_lower_program(m, insns, n, "t", o, err, sizeof(err));
	if (!rc)
		err[0] = 0;
	else if (!err[0])
		snprintf(err, sizeof(err), "(rc %d without a message)", rc);
	ir_module_free(m);
	return err;
}

static void expect_err(const struct bpf_insn *insns, size_t n, const struct gp_lower_opts *o,
		       const char *want)
{
	const char *got = lower_err(insns, n, o);
	CHECK(!strcmp(got, want), "error \"%s\", expected \"%s\"", got, want);
}

static void test_errors(void)
{
	struct bpf_insn ja_out[] = {I(BPF_JMP | BPF_JA, 0, 0, 5, 0)};
	expect_err(ja_out, 1, NULL, "insn 0: jump to 6, outside the program (0..0)");
	struct bpf_insn helper[] = {CALL(9999), EXIT};
	expect_err(helper, 2, NULL, "insn 0: unknown helper 9999");
	struct bpf_insn lookup[] = {CALL(1), EXIT};
	expect_err(lookup, 2, NULL, "insn 0: helper map_lookup_elem (1) needs the maps runtime, which was not given");
	struct bpf_insn mapref[] = {I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 3), I(0, 0, 0, 0, 0), EXIT};
	expect_err(mapref, 3, NULL, "insn 0: lddw of map 3, but no map runtime was given");
	struct bpf_insn falls[] = {MOVK(0, 0)};
	expect_err(falls, 1, NULL, "insn 0: the last instruction of the program falls through past its end");
	struct bpf_insn badop[] = {I(0xff, 0, 0, 0, 0), EXIT};
	expect_err(badop, 2, NULL, "insn 0: unknown opcode 0xff");
	struct bpf_insn r10[] = {MOVK(10, 0), EXIT};
	expect_err(r10, 2, NULL, "insn 0: r10 is read-only");
	struct bpf_insn into_lddw[] = {I(BPF_JMP | BPF_JA, 0, 0, 1, 0), I(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1),
				       I(0, 0, 0, 0, 0), EXIT};
	expect_err(into_lddw, 4, NULL, "insn 0: jump into the middle of lddw at 1");
	struct bpf_insn half[] = {I(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1)};
	expect_err(half, 1, NULL, "insn 0: lddw without its second half");
	struct bpf_insn badswap[] = {I(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 24), EXIT};
	expect_err(badswap, 2, NULL, "insn 0: byte swap width 24 (16, 32 or 64)");
	struct bpf_insn kfunc[] = {I(BPF_JMP | BPF_CALL, 0, 2, 0, 7), EXIT};
	expect_err(kfunc, 2, NULL, "insn 0: call with source 2 (kfuncs are not supported)");
	struct bpf_insn leave[] = {I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), I(BPF_JMP | BPF_JA, 0, 0, 1, 0),
				   EXIT, MOVK(0, 1), EXIT};
	expect_err(leave, 5, NULL, "insn 1: jump to 3 leaves the subprogram");
	struct bpf_insn absld[] = {I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), EXIT};
	expect_err(absld, 2, NULL, "insn 0: legacy packet access (ld_abs/ld_ind) has no packet on the GPU");
	struct bpf_insn ok[] = {MOVK(0, 1), EXIT};
	struct gp_lower_opts bad_prefix = {.prefix = "a-b"};
	expect_err(ok, 2, &bad_prefix, "insn 0: bad prefix \"a-b\" (letters, digits, '_', '$' only)");
	struct gp_lower_opts six = {.nargs = 6};
	expect_err(ok, 2, &six, "insn 0: nargs 6: at most 5 arguments (r1..r5)");
	expect_err(ok, 2, NULL, "");
	ir_module *m = ir_module_new();
	char err[256];
	CHECK(gp_lower_program(m, ok, 2, "twice", NULL, err, sizeof(err)) == 0, "first: %s", err);
	int rc = gp_lower_program(m, ok, 2, "twice", NULL, err, sizeof(err));
	CHECK(rc == -EEXIST && !strcmp(err, "insn 0: function twice is already in the module"),
	      "second lowering under one name: rc %d, \"%s\"", rc, err);
	ir_module_free(m);
}

/* Hooks of the maps runtime: record what the lowering asked for. */
struct hook_log {
	int map_index, value_form, off, calls;
	int helpers[8], nhelpers;
	int helper_added;
};

static int map_ref(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
		   int value_form, int32_t off)
{
	struct hook_log *h = user;
	h->map_index = map_index;
	h->value_form = value_form;
	h->off = off;
	h->calls++;
	ir_stmt_append(f, ir_insn_new(m, "mov", ".u64", 2, (ir_operand[]){ir_reg(m, dst), ir_sym(m, "test_map")}));
	return 0;
}

static const char *helper_fn(void *user, ir_module *m, int id)
{
	struct hook_log *h = user;
	if (h->nhelpers < 8)
		h->helpers[h->nhelpers++] = id;
	if (!h->helper_added++) {
		/* a trivial device implementation: returns its first argument */
		ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
		t->text = ".func (.param .b64 r) test_helper(.param .b64 a1, .param .b64 a2, .param .b64 a3,"
			  " .param .b64 a4, .param .b64 a5)\n{\n\t.reg .b64 %x;\n\tld.param.u64 %x, [a1];\n"
			  "\tst.param.b64 [r], %x;\n\tret;\n}";
		ir_top_append(m, t);
	}
	return "test_helper";
}

static void add_directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = text;
	ir_top_append(m, t);
}

/* Every feature in one program: ALU32/64 incl. division corners, byte swaps, movsx, sign
 * loads, atomics on stack and through r1, every jump, gotol, a subprogram calling exit, GPU
 * helpers, callx, maps through the hooks. */
static const struct bpf_insn everything[] = {
	/* 0 */ I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),
	I(BPF_ALU64 | BPF_DIV | BPF_X, 0, 6, 0, 0),
	I(BPF_ALU64 | BPF_MOD | BPF_X, 0, 6, 1, 0),
	I(BPF_ALU | BPF_DIV | BPF_X, 0, 6, 1, 0),
	I(BPF_ALU | BPF_MOD | BPF_K, 0, 0, 1, -1),
	I(BPF_ALU | BPF_LSH | BPF_X, 0, 6, 0, 0),
	I(BPF_ALU64 | BPF_ARSH | BPF_X, 0, 6, 0, 0),
	I(BPF_ALU | BPF_END | BPF_TO_BE, 0, 0, 0, 16),
	I(BPF_ALU64 | BPF_END, 0, 0, 0, 64),
	I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 0, 16, 0),
	/* 10 */ I(BPF_ALU | BPF_MOV | BPF_X, 2, 0, 8, 0),
	I(BPF_LDX | 0x80 | BPF_H, 3, 1, 3, 0),               /* ldxsh, misaligned check */
	I(BPF_STX | BPF_MEM | BPF_DW, 10, 3, -8, 0),
	I(BPF_STX | 0xc0 | BPF_DW, 10, 3, -8, BPF_ADD | 1),   /* fetch add on the stack */
	I(BPF_STX | 0xc0 | BPF_W, 1, 3, 4, 0xf1),            /* cmpxchg32 through r1 */
	I(BPF_STX | 0xc0 | BPF_DW, 1, 3, 0, 0xa0),           /* xor, no fetch */
	I(BPF_JMP32 | BPF_JSGT | BPF_K, 3, 0, 1, -5),
	I(BPF_JMP | BPF_JSET | BPF_X, 3, 2, 0, 0),
	I(BPF_JMP32 | BPF_JA, 0, 0, 0, 0),                    /* gotol +0 */
	CALL(505),
	/* 20 */ CALL(502),
	CALL(513),
	I(BPF_JMP | BPF_CALL | BPF_X, 4, 0, 0, 0),            /* callx r4 */
	I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_VALUE, 0, 2),
	I(0, 0, 0, 0, 12),
	CALL(1),
	I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),     /* -> 28 */
	EXIT,
	/* 28: subprogram */ I(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1, 0),
	CALL(507),
	/* 30 */ I(BPF_ST | BPF_MEM | BPF_B, 10, 0, -1, 0x1ff),
	I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 10, 0, 0),
	I(BPF_STX | 0xc0 | BPF_DW, 0, 10, -8, 0x100),        /* load-acquire */
	I(BPF_STX | 0xc0 | BPF_W, 10, 0, -16, 0x110),        /* store-release */
	EXIT,
};

static void test_structure_and_ptxas(const char *ptxas)
{
	ir_module *m = ir_module_new();
	add_directive(m, ".version 7.8");
	add_directive(m, ".target sm_75");
	add_directive(m, ".address_size 64");
	add_directive(m, ".global .align 8 .b8 test_map[64];");
	struct hook_log h = {0};
	struct gp_lower_opts o = {.emit_map_ref = map_ref, .helper_func = helper_fn, .user = &h,
				  .prefix = "__gp7_", .pid_tgid = 0x100000002ull,
				  .clock_addr = 0x600000002000ull};   /* ptxas sees the clock words' loads */
	char err[256];
	size_t n = sizeof(everything) / sizeof(everything[0]);
	int rc = gp_lower_program(m, everything, n, "probe_all", &o, err, sizeof(err));
	CHECK(rc == 0, "lowering everything failed: %s", err);
	CHECK(h.calls == 1 && h.map_index == 2 && h.value_form == 1 && h.off == 12,
	      "map hook got calls %d map %d value_form %d off %d", h.calls, h.map_index, h.value_form, h.off);
	CHECK(h.nhelpers >= 1 && h.helpers[0] == 1, "helper hook not asked for map_lookup_elem first");

	ir_func *main_f = ir_module_find_func(m, "probe_all");
	ir_func *sub = ir_module_find_func(m, "probe_all__sub28");
	CHECK(main_f && main_f->has_body && main_f->nrets == 1 && main_f->nparams == 1,
	      "main .func missing or wrong signature");
	CHECK(sub && sub->has_body && sub->nparams == 6, "subprogram .func missing or without its exit flag");
	/* order: prototype of the subprogram, its body, then main */
	int seen_proto = 0, order_ok = 0;
	for (ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC)
			continue;
		if (!strcmp(t->func.name, "probe_all__sub28") && !t->func.has_body)
			seen_proto = 1;
		if (!strcmp(t->func.name, "probe_all") && seen_proto)
			order_ok = 1;
	}
	CHECK(order_ok, "subprogram prototype does not precede main");

	size_t len;
	char *text = ptx_print(m, &len);
	CHECK(strstr(text, "%globaltimer") && strstr(text, "activemask.b32") && strstr(text, "%tid.z"),
	      "GPU helpers not lowered to special registers");
	CHECK(strstr(text, "isspacep.local") && strstr(text, "atom.cas.b32"), "atomics through r1 not guarded");
	CHECK(strstr(text, "call.uni \t(__gp7_cret), test_helper"), "map helper call missing:\n%s", text);
	CHECK(strstr(text, "0x100000002") != NULL, "pid_tgid value missing");
	CHECK(!strstr(text, "trap"), "lowering emitted a trap");
	CHECK(strstr(text, "ld.local.u64 \t%__gp7_r0, [__gp7_stack+504];\n\tmembar.gl;") &&
	      strstr(text, "membar.gl;\n\tst.local.u32 \t[__gp7_stack+496], %__gp7_r0;"),
	      "load-acquire / store-release not fenced on the right side");
	CHECK(strstr(text, "st.local.u8 \t[__gp7_stack+511], 0xff") != NULL,
	      "stb [r10-1] not a .local store of the immediate truncated to 8 bits");

	if (ptxas && access(ptxas, X_OK) == 0) {
		char path[] = "/tmp/lower_unit_XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		fwrite(text, 1, len, f);
		fclose(f);
		for (int k = 0; k < 2; k++) {
			const char *sm = k ? "sm_90" : "sm_75";
			char cmd[4400];
			snprintf(cmd, sizeof(cmd), "%s -arch=%s %s -o %s.cubin", ptxas, sm, path, path);
			int st = system(cmd);
			CHECK(st == 0, "ptxas %s rejected the lowered module (kept in %s)", sm, path);
			if (st == 0) {
				snprintf(cmd, sizeof(cmd), "%s.cubin", path);
				unlink(cmd);
			}
		}
		if (!failures)
			unlink(path);
	} else {
		printf("note: no ptxas at %s, PTX not compiled\n", ptxas ? ptxas : "(none)");
	}
	free(text);
	ir_module_free(m);
}

/* A smaller stack from the verifier: the array and r10 follow it; r10-relative accesses inside it
 * are .local, others stay generic. */
static void test_stack_size(void)
{
	struct bpf_insn prog[] = {
		I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -16, 7),
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -16, 0),
		I(BPF_LDX | BPF_MEM | BPF_W, 1, 10, -3, 0),   /* misaligned: generic, checked */
		EXIT,
	};
	ir_module *m = ir_module_new();
	struct gp_lower_opts o = {.stack_size = 13};
	char err[256];
	int rc = gp_lower_program(m, prog, 4, "small", &o, err, sizeof(err));
	CHECK(rc == 0, "small stack: %s", err);
	size_t len;
	char *text = ptx_print(m, &len);
	CHECK(strstr(text, ".local .align 8 .b8 \t__gp_stack[16];") != NULL, "stack array not 16 bytes:\n%s", text);
	CHECK(strstr(text, "add.u64 \t%__gp_r10, %__gp_t0, 0x10;") != NULL, "r10 not at the top of 16 bytes");
	CHECK(strstr(text, "st.local.u64 \t[__gp_stack], 0x7;") != NULL, "stdw [r10-16] not .local");
	CHECK(strstr(text, "ld.local.u64 \t%__gp_r0, [__gp_stack];") != NULL, "ldxdw [r10-16] not .local");
	CHECK(strstr(text, "ld.u8 \t%__gp_t2, [%__gp_t1];") != NULL, "misaligned ldxw [r10-3] has no byte path");
	free(text);
	ir_module_free(m);
	/* no r10 anywhere: no stack array at all */
	struct bpf_insn ok[] = {MOVK(0, 1), EXIT};
	m = ir_module_new();
	CHECK(gp_lower_program(m, ok, 2, "nostack", NULL, err, sizeof(err)) == 0, "nostack: %s", err);
	text = ptx_print(m, &len);
	CHECK(!strstr(text, "__gp_stack") && !strstr(text, "cvta"), "stack made for a program without r10:\n%s", text);
	free(text);
	ir_module_free(m);
	/* assume_aligned drops the check of plain accesses, not of helper out-pointers */
	struct bpf_insn outs[] = {
		I(BPF_LDX | BPF_MEM | BPF_W, 0, 1, 2, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0), I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, -13),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 1, 0, 0), I(BPF_ALU64 | BPF_MOV | BPF_X, 3, 1, 0, 0),
		CALL(505), EXIT,
	};
	struct gp_lower_opts al = {.assume_aligned = 1};
	m = ir_module_new();
	CHECK(gp_lower_program(m, outs, 7, "outs", &al, err, sizeof(err)) == 0, "outs: %s", err);
	text = ptx_print(m, &len);
	CHECK(strstr(text, "ld.u32 \t%__gp_r0, [%__gp_r1+2];") != NULL, "assume_aligned load still checked:\n%s", text);
	CHECK(strstr(text, "st.u8 \t[%__gp_t1], %__gp_t2;") != NULL, "helper out-pointer store lost its byte path");
	free(text);
	ir_module_free(m);
	struct gp_lower_opts big = {.stack_size = 513};
	expect_err(ok, 2, &big, "insn 0: stack_size 513: the ISA's stack is 512 bytes");
}

/* Random instruction streams (fixed seed): the lowering must answer each with 0 or one error
 * line, never crash; every program it accepts goes into one module that ptxas must compile. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static void test_random(const char *ptxas)
{
	static const uint8_t codes[] = {
		0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77,
		0x7f, 0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0xd7, 0xdc, 0xd4,
		0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74,
		0x7c, 0x84, 0x94, 0x9c, 0xa4, 0xac, 0xb4, 0xbc, 0xc4, 0xcc,
		0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, 0x55, 0x5d, 0x65, 0x6d, 0x75, 0x7d,
		0xa5, 0xad, 0xb5, 0xbd, 0xc5, 0xcd, 0xd5, 0xdd, 0x06, 0x16, 0x1e, 0x26, 0x66, 0xd6, 0xde,
		0x85, 0x95, 0x18, 0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91, 0x62, 0x6a, 0x72, 0x7a,
		0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb, 0xff, 0x20, 0x8d};
	static const int32_t imms[] = {0, 1, -1, 7, 16, 32, 64, 31, 63, 0x7fffffff, (int32_t)0x80000000,
				       5, 502, 505, 507, 511, 513, 14, 1, 0x1, 0x41, 0xa1, 0xe1, 0xf1, 0x51};
	static const int16_t offs[] = {0, 0, 0, 1, -8, -16, 8, 16, 32, -1, 2};
	ir_module *mod = ir_module_new();
	add_directive(mod, ".version 7.8");
	add_directive(mod, ".target sm_75");
	add_directive(mod, ".address_size 64");
	unsigned accepted = 0, rejected = 0;
	for (int iter = 0; iter < 2000; iter++) {
		struct bpf_insn prog[24];
		size_t n = 2 + rnd() % 22;
		for (size_t i = 0; i < n; i++) {
			struct bpf_insn *in = &prog[i];
			in->code = codes[rnd() % sizeof(codes)];
			in->dst_reg = rnd() % 10;   /* r10 is read-only, but a store's base */
			if ((in->code & 7) == BPF_ST || (in->code & 7) == BPF_STX)
				in->dst_reg = rnd() % 2 ? 10 : in->dst_reg;
			in->src_reg = rnd() % 11;
			in->off = offs[rnd() % (sizeof(offs) / sizeof(offs[0]))];
			in->imm = imms[rnd() % (sizeof(imms) / sizeof(imms[0]))];
			if (in->code == 0x85)          /* call: helper or local */
				in->src_reg = rnd() % 4 ? 0 : 1;
			if ((in->code & 7) == BPF_ALU || (in->code & 7) == BPF_ALU64) {
				uint8_t op = in->code & 0xf0;
				in->off = op == BPF_DIV || op == BPF_MOD ? (int16_t)(rnd() % 2)
					  : op == BPF_MOV && (in->code & BPF_X) ? (int16_t[]){0, 8, 16, 32}[rnd() % 4]
					  : 0;
				if (op == BPF_END)
					in->imm = 16 << (rnd() % 3);
			}
			if ((in->code & 7) == 5 || (in->code & 7) == 6)   /* keep jumps mostly inside */
				in->off = (int16_t)(rnd() % n) - (int16_t)i - 1;
		}
		prog[n - 1] = EXIT;
		char err[256] = "";
		ir_module *scratch = ir_module_new();
		int rc = gp_lower_program(scratch, prog, n, "r", NULL, err, sizeof(err));
		ir_module_free(scratch);
		if (rc) {
			CHECK(rc < 0 && !strncmp(err, "insn ", 5) && !strchr(err, '\n'),
			      "random program %d: rc %d, error \"%s\"", iter, rc, err);
			rejected++;
			continue;
		}
		struct gp_lower_opts o = {.prefix = ir_strfmt(mod, "__r%d_", iter)};
		rc = gp_lower_program(mod, prog, n, ir_strfmt(mod, "rand_%d", iter), &o, err, sizeof(err));
		CHECK(rc == 0, "random program %d lowered once but not twice: %s", iter, err);
		accepted++;
	}
	CHECK(accepted > 100 && rejected > 100, "random programs: %u accepted, %u rejected", accepted, rejected);
	if (ptxas && access(ptxas, X_OK) == 0) {
		/* .func without callers are dropped by ptxas: make every one visible */
		for (ir_top *t = mod->first; t; t = t->next)
			if (t->kind == IR_TOP_FUNC && t->func.has_body && !strncmp(t->func.name, "rand_", 5) &&
			    !strstr(t->func.name, "__sub"))
				t->func.linkage = ".visible";
		size_t len;
		char *text = ptx_print(mod, &len);
		char path[] = "/tmp/lower_random_XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		fwrite(text, 1, len, f);
		fclose(f);
		char cmd[4400];
		snprintf(cmd, sizeof(cmd), "%s -arch=sm_90 %s -o %s.cubin", ptxas, path, path);
		int st = system(cmd);
		CHECK(st == 0, "ptxas rejected the %u random programs the lowering accepted (kept in %s)", accepted, path);
		if (st == 0) {
			unlink(path);
			snprintf(cmd, sizeof(cmd), "%s.cubin", path);
			unlink(cmd);
		}
		free(text);
	}
	printf("random programs: %u lowered (compiled by ptxas), %u rejected with one error line\n",
	       accepted, rejected);
	ir_module_free(mod);
}

/* A folded constant-key lookup (emit_map_lookup): the flags the hook returns decide the code of
 * the counter after it (ebpf/lower_plan.c): the key's stack slot is a register, the atomic through
 * the value is global (no isspacep), a uniform address gives a plain red (ptxas aggregates it),
 * a non-null one drops the null test; without flags the match.any aggregation and the test stay. */
static int lookup_flags;
static int fold_lookup(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
		       uint32_t key)
{
	if (key != 0)
		return -ENOTSUP;
	ir_stmt_append(f, ir_insn_new(m, "mov", ".u64", 2, (ir_operand[]){ir_reg(m, dst), ir_int(4096)}));
	return lookup_flags;
}

static void test_folded_counter(void)
{
	const struct bpf_insn prog[] = {
		MOVK(1, 0),
		I(BPF_STX | BPF_MEM | BPF_W, 10, 1, -4, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 0), I(0, 0, 0, 0, 0),
		CALL(1),
		I(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		MOVK(1, 1),
		I(BPF_STX | 0xc0 | BPF_DW, 0, 1, 0, BPF_ADD),
		MOVK(0, 0),
		EXIT,
	};
	struct hook_log h = {0};
	for (int flags = 0; flags <= GP_LOWER_WARP_UNIFORM + GP_LOWER_NONNULL; flags++) {
		lookup_flags = flags;
		ir_module *m = ir_module_new();
		struct gp_lower_opts o = {.emit_map_ref = map_ref, .helper_func = helper_fn,
					  .emit_map_lookup = fold_lookup, .user = &h, .warp_aggregate = 1,
					  .stack_size = 8};
		char err[256];
		int rc = gp_lower_program(m, prog, sizeof(prog) / sizeof(prog[0]), "count", &o, err, sizeof(err));
		CHECK(rc == 0, "flags %d: %s", flags, err);
		size_t len;
		char *text = ptx_print(m, &len);
		bool uniform = flags & GP_LOWER_WARP_UNIFORM, nonnull = flags & GP_LOWER_NONNULL;
		CHECK(strstr(text, "mov.u64 \t%__gp_r0, 4096;") && !strstr(text, "call"),
		      "flags %d: the lookup did not fold:\n%s", flags, text);
		CHECK(!strstr(text, ".local") && !strstr(text, "cvta.local") && !strstr(text, "%__gp_r10") &&
		      strstr(text, "bfi.b64 \t%__gp_s0, %__gp_r1, %__gp_s0, 0x20, 0x20;"),
		      "flags %d: the key's slot is not a register, or r10 exists:\n%s", flags, text);
		CHECK(!strstr(text, "isspacep") && strstr(text, "cvta.to.global.u64 \t%__gp_t1, %__gp_t1;"),
		      "flags %d: the atomic through a map value is not global:\n%s", flags, text);
		CHECK(!strstr(text, "match.any") == uniform, "flags %d: match.any %s:\n%s", flags,
		      uniform ? "for a uniform address" : "missing", text);
		CHECK(!uniform || strstr(text, "red.global.add.u64 \t[%__gp_t1], 0x1;"),
		      "flags %d: no plain red of 1:\n%s", flags, text);
		CHECK(!strstr(text, "setp.eq.u64 \t%__gp_p0, %__gp_r0, 0x0;") == nonnull,
		      "flags %d: null test %s:\n%s", flags, nonnull ? "kept" : "dropped", text);
		free(text);
		ir_module_free(m);
	}
	/* r10 used as a value (a pointer written through): the frame stays a .local array */
	const struct bpf_insn esc[] = {
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8),
		I(BPF_ST | BPF_MEM | BPF_DW, 2, 0, 0, 5),
		I(BPF_LDX | BPF_MEM | BPF_DW, 0, 10, -8, 0),
		EXIT,
	};
	ir_module *m = ir_module_new();
	char err[256];
	CHECK(gp_lower_program(m, esc, 5, "esc", NULL, err, sizeof(err)) == 0, "esc: %s", err);
	size_t len;
	char *text = ptx_print(m, &len);
	CHECK(strstr(text, ".local .align 8 .b8 \t__gp_stack[512];") && !strstr(text, "%__gp_s<"),
	      "escaping r10 did not keep the .local frame:\n%s", text);
	free(text);
	ir_module_free(m);
}

/* opts->site_mask: the warp helpers every entering lane reaches once (before the first jump)
 * match over the function's .b32 mask parameter; one after a jump takes its own activemask.
 * opts->pid_tgid_addr: get_current_pid_tgid loads the word there (no pid immediate). */
static void test_site_mask_and_pid_word(void)
{
	const struct bpf_insn prog[] = {
		MOVK(1, 7),
		CALL(515),                                     /* prefix: the site's mask */
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0),
		CALL(14),
		I(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 2, 0),      /* ends the prefix */
		MOVK(1, 3),
		CALL(516),                                     /* after a jump: activemask */
		MOVK(0, 0),
		EXIT,
	};
	for (int on = 0; on <= 1; on++) {
		ir_module *m = ir_module_new();
		struct gp_lower_opts o = {.site_mask = on, .pid_tgid = 0x1234000001234ull,
					  .pid_tgid_addr = on ? 0x600000001000ull : 0};
		char err[256];
		int rc = gp_lower_program(m, prog, sizeof(prog) / sizeof(prog[0]), "warp", &o, err, sizeof(err));
		CHECK(rc == 0, "site_mask %d: %s", on, err);
		size_t len;
		char *text = ptx_print(m, &len);
		const char *first = strstr(text, "match.any.sync.b64"), *second = first ? strstr(first + 1, "match.any.sync.b64") : NULL;
		CHECK(first && second && !strstr(second + 1, "match.any.sync.b64"), "site_mask %d: two matches expected:\n%s", on, text);
		if (on) {
			CHECK(strstr(text, ".param .b32 \t__gp_wm\n") && strstr(text, "ld.param.b32 \t%__gp_wm, [__gp_wm];"),
			      "no mask parameter read:\n%s", text);
			CHECK(first && !strncmp(first, "match.any.sync.b64 \t%__gp_w5, %__gp_r1, %__gp_wm;", 48) &&
			      strstr(text, "bar.warp.sync \t%__gp_wm;\n\tmatch.any.sync.b64 \t%__gp_w5, %__gp_r1, %__gp_wm;"),
			      "the first helper does not meet and match over the site's mask:\n%s", text);
			CHECK(strstr(text, "mov.u64 \t%__gp_t0, 0x600000001000;\n\tld.global.nc.u64 \t%__gp_r0, [%__gp_t0];") &&
			      !strstr(text, "0x1234000001234"), "pid_tgid is not loaded from its word:\n%s", text);
		} else {
			CHECK(!strstr(text, "%__gp_wm") && first && !strncmp(first, "match.any.sync.b64 \t%__gp_w5, %__gp_r1, %__gp_w4;", 48),
			      "without site_mask the first helper must use activemask:\n%s", text);
			CHECK(strstr(text, "mov.b64 \t%__gp_r0, 0x1234000001234;"), "no pid_tgid immediate:\n%s", text);
		}
		CHECK(second && !strncmp(second, "match.any.sync.b64 \t%__gp_w5, %__gp_r1, %__gp_w4;", 48) &&
		      strstr(text, "activemask.b32 \t%__gp_w4;\n\tmatch.any.sync.b64 \t%__gp_w5, %__gp_r1, %__gp_w4;"),
		      "site_mask %d: the helper after the jump must take its own activemask:\n%s", on, text);
		free(text);
		ir_module_free(m);
	}
}

/* opts->clock_addr (docs/architecture.md "One clock"): ktime_get_ns adds the word at +0 to %globaltimer,
 * get_globaltimer the word at +8, so a device time stamp lands on the host clock the host
 * helper of the same id reads; without an address both stay %globaltimer itself. */
static void test_clock_word(void)
{
	const struct bpf_insn prog[] = {
		CALL(5),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 0, 0, 0),
		CALL(502),
		I(BPF_ALU64 | BPF_SUB | BPF_X, 0, 6, 0, 0),
		EXIT,
	};
	for (int on = 0; on <= 1; on++) {
		ir_module *m = ir_module_new();
		struct gp_lower_opts o = {.clock_addr = on ? 0x600000002000ull : 0};
		char err[256];
		int rc = gp_lower_program(m, prog, sizeof(prog) / sizeof(prog[0]), "clk", &o, err, sizeof(err));
		CHECK(rc == 0, "clock_addr %d: %s", on, err);
		size_t len;
		char *text = ptx_print(m, &len);
		const char *ktime = "mov.u64 \t%__gp_r0, %globaltimer;\n\tmov.u64 \t%__gp_t0, 0x600000002000;\n"
				    "\tld.global.nc.u64 \t%__gp_t0, [%__gp_t0];\n\tadd.s64 \t%__gp_r0, %__gp_r0, %__gp_t0;";
		const char *real = "mov.u64 \t%__gp_r0, %globaltimer;\n\tmov.u64 \t%__gp_t0, 0x600000002008;\n"
				   "\tld.global.nc.u64 \t%__gp_t0, [%__gp_t0];\n\tadd.s64 \t%__gp_r0, %__gp_r0, %__gp_t0;";
		if (on) {
			CHECK(strstr(text, ktime) && strstr(text, real),
			      "ktime_get_ns / get_globaltimer do not add their offset words:\n%s", text);
		} else {
			const char *a = strstr(text, "%globaltimer"), *b = a ? strstr(a + 1, "%globaltimer") : NULL;
			CHECK(a && b && !strstr(text, "ld.global") && !strstr(text, "add.s64"),
			      "without clock_addr both helpers must be %%globaltimer alone:\n%s", text);
		}
		free(text);
		ir_module_free(m);
	}
}

int main(int argc, char **argv)
{
	test_clock_word();
	test_errors();
	test_stack_size();
	test_folded_counter();
	test_site_mask_and_pid_word();
	test_structure_and_ptxas(argc > 1 ? argv[1] : NULL);
	test_random(argc > 1 ? argv[1] : NULL);
	if (failures) {
		printf("lower_unit: %d failures\n", failures);
		return 1;
	}
	printf("lower_unit: all checks passed\n");
	return 0;
}
