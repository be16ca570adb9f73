/* The host interpreter's guarantees, one program each (assembled with ebpf/asm.c): every memory
 * access outside the program's regions stops it with an error naming the instruction, the step
 * limit ends endless loops, frames are separate and bounded, read-only memory stays read-only,
 * and the host helpers (maps, ring buffer, trace_printk, overrides) do what Linux's do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"
#include "ebpf/interp.h"

static int failures, checks;

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

struct prog {
	struct bpf_insn *insns;
	size_t n;
};

static struct prog assemble(const char *text)
{
	struct prog p = { 0 };
	char err[256];
	int rc = bpf_asm(text, &p.insns, &p.n, err, sizeof err);
	CHECK(rc == 0, "assembling: %s", err);
	return p;
}

/* ld_imm64 at insn idx becomes a reference to map `map` (value form: + off). */
static void map_ref(struct prog *p, size_t idx, int map, int value_form, int32_t off)
{
	p->insns[idx].src_reg = value_form ? BPF_PSEUDO_MAP_VALUE : BPF_PSEUDO_MAP_FD;
	p->insns[idx].imm = map;
	p->insns[idx + 1].imm = value_form ? off : 0;
}

static int run(struct prog *p, uint64_t r1, uint64_t r2, const struct gp_interp_env *env, uint64_t *r0, char *err,
	       size_t errlen)
{
	return gp_interp_run(p->insns, p->n, r1, r2, env, r0, err, errlen);
}

/* The error line must name the instruction and contain `want`. */
static void expect_fault(const char *text, int want_rc, const char *want, const struct gp_interp_env *env,
			 uint64_t r1, uint64_t r2)
{
	struct prog p = assemble(text);
	char err[256] = "";
	uint64_t r0 = 0;
	int rc = run(&p, r1, r2, env, &r0, err, sizeof err);
	CHECK(rc == want_rc && strstr(err, want) != NULL && strncmp(err, "insn ", 5) == 0,
	      "'%s': rc %d err '%s', want %d with '%s'", text, rc, err, want_rc, want);
	free(p.insns);
}

static uint64_t expect_ok(struct prog *p, uint64_t r1, uint64_t r2, const struct gp_interp_env *env)
{
	char err[256] = "";
	uint64_t r0 = 0;
	int rc = run(p, r1, r2, env, &r0, err, sizeof err);
	CHECK(rc == 0, "run failed: %s", err);
	return r0;
}

static void test_bounds(void)
{
	struct gp_interp_env env = { 0 };
	/* stack: [r10-512, r10) only */
	expect_fault("ldxdw %r0, [%r10-520]\nexit", -EFAULT, "read of 8 bytes", &env, 0, 0);
	expect_fault("ldxdw %r0, [%r10+0]\nexit", -EFAULT, "read of 8 bytes", &env, 0, 0);
	expect_fault("ldxw %r0, [%r10-2]\nexit", -EFAULT, "read of 4 bytes", &env, 0, 0);
	/* an address made up by the program */
	expect_fault("lddw %r1, 0x1000\nldxb %r0, [%r1]\nexit", -EFAULT, "insn 2: read of 1 bytes at 0x1000", &env, 0, 0);
	expect_fault("mov %r1, 0\nstb [%r1+0], 1\nexit", -EFAULT, "write of 1 bytes at 0x0", &env, 0, 0);
	/* the context: exactly ctx_size bytes, read-only unless ctx_writable */
	uint8_t ctx[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct gp_interp_env cenv = { .ctx_size = 16 };
	uint64_t c = (uint64_t)(uintptr_t)ctx;
	expect_fault("ldxdw %r0, [%r1+9]\nexit", -EFAULT, "read of 8 bytes", &cenv, c, 0);
	expect_fault("stb [%r1+0], 7\nexit", -EFAULT, "write of 1 bytes", &cenv, c, 0);
	expect_fault("mov %r2, 1\nlock add [%r1+0], %r2\nexit", -EFAULT, "atomic access of 8 bytes", &cenv, c, 0);
	struct prog p = assemble("ldxdw %r0, [%r1+8]\nexit");
	CHECK(expect_ok(&p, c, 0, &cenv) == 0x100f0e0d0c0b0a09ull, "ctx read");
	free(p.insns);
	cenv.ctx_writable = 1;
	p = assemble("stb [%r1+15], 99\nldxb %r0, [%r1+15]\nexit");
	CHECK(expect_ok(&p, c, 0, &cenv) == 99 && ctx[15] == 99, "writable ctx");
	free(p.insns);
	/* the corpus convention: r1/r2 = memory and its length */
	expect_fault("ldxh %r0, [%r1+15]\nexit", -EFAULT, "read of 2 bytes", &env, c, 16);
}

static void test_limits(void)
{
	struct gp_interp_env env = { .max_steps = 1000 };
	expect_fault("ja -1\nexit", -E2BIG, "insn 0: step limit of 1000 instructions reached", &env, 0, 0);
	expect_fault("call local f\nexit\nf:\ncall local f\nexit", -E2BIG, "call depth above 8 frames", &env, 0, 0);
	/* 7 nested calls are fine */
	struct prog p = assemble("mov %r0, 0\ncall local f\nexit\n"
				 "f:\nadd %r0, 1\njge %r0, 7, done\ncall local f\ndone:\nexit");
	CHECK(expect_ok(&p, 0, 0, &env) == 7, "7 nested frames");
	free(p.insns);
	/* malformed programs never run */
	struct bpf_insn bad[2] = { { .code = 0xff }, { .code = BPF_JMP | BPF_EXIT } };
	char err[256];
	uint64_t r0;
	int rc = gp_interp_run(bad, 2, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "insn 0 (code 0xff): unknown ALU operation 0xf0") == 0, "bad opcode: %d %s", rc,
	      err);
	rc = gp_interp_run(bad, 0, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "empty program") == 0, "empty: %d %s", rc, err);
	struct bpf_insn w10[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 10 }, { .code = BPF_JMP | BPF_EXIT } };
	rc = gp_interp_run(w10, 2, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strstr(err, "r10 is read-only"), "write r10: %d %s", rc, err);
	p = assemble("lock fetch add [%r10-8], %r10\nexit");
	rc = gp_interp_run(p.insns, p.n, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strstr(err, "r10 is read-only"), "fetch into r10: %d %s", rc, err);
	free(p.insns);
	p = assemble("ja +5\nexit");
	rc = gp_interp_run(p.insns, p.n, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strstr(err, "jump out of range to 6"), "jump out: %d %s", rc, err);
	free(p.insns);
	p = assemble("mov %r0, 1");
	rc = gp_interp_run(p.insns, p.n, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strstr(err, "fell off the end"), "fall off: %d %s", rc, err);
	free(p.insns);
}

static void test_frames(void)
{
	struct gp_interp_env env = { 0 };
	/* the callee has its own stack at r10, and can read its caller's through a pointer */
	struct prog p = assemble("stdw [%r10-8], 1\nmov %r1, %r10\nadd %r1, -8\nmov %r6, 66\ncall local f\n"
				 "ldxdw %r2, [%r10-8]\nlsh %r0, 8\nor %r0, %r2\nlsh %r6, 16\nor %r0, %r6\nexit\n"
				 "f:\nstdw [%r10-8], 2\nldxdw %r0, [%r1]\nldxdw %r3, [%r10-8]\nlsh %r3, 4\nor %r0, %r3\n"
				 "mov %r6, 0\nexit");
	/* r0 = (1 | 2 << 4) << 8 | 1 | 66 << 16 */
	uint64_t r0 = expect_ok(&p, 0, 0, &env);
	CHECK(r0 == ((0x21ull << 8) | 1 | (66ull << 16)), "frames: 0x%llx", (unsigned long long)r0);
	free(p.insns);
	/* a pointer into a returned callee's frame is no longer valid */
	expect_fault("call local f\nldxdw %r0, [%r0]\nexit\nf:\nstdw [%r10-8], 5\nmov %r0, %r10\nadd %r0, -8\nexit",
		     -EFAULT, "insn 1: read of 8 bytes", &env, 0, 0);
}

struct capture {
	char line[256];
	int records, last_map;
	uint8_t rec[64];
	size_t rec_size;
};

static void on_print(void *user, const char *line)
{
	snprintf(((struct capture *)user)->line, 256, "%s", line);
}

static void on_record(void *user, int map, const void *data, size_t size)
{
	struct capture *c = user;
	c->records++;
	c->last_map = map;
	c->rec_size = size;
	memcpy(c->rec, data, size < sizeof c->rec ? size : sizeof c->rec);
}

static uint64_t override(void *user, int id, const uint64_t args[5], int *handled)
{
	if (id == 1000) {
		*handled = 1;
		return args[0] + 41;
	}
	return 0;
}

static void test_helpers(void)
{
	struct capture cap = { 0 };
	struct gp_interp_env env = { .user = &cap, .on_print = on_print, .on_record = on_record, .helper = override };
	/* trace_printk: format in memory; a fourth conversion has no argument */
	char mem[64] = "x=%d y=%llx s=%s %% u=%u\n";
	strcpy(mem + 40, "hi");
	struct prog p = assemble("mov %r6, %r1\nmov %r2, 26\nmov %r3, -5\nmov %r4, 0xabc\nmov %r5, %r6\nadd %r5, 40\n"
				 "call 6\nexit");
	uint64_t r0 = expect_ok(&p, (uint64_t)(uintptr_t)mem, sizeof mem, &env);
	CHECK(cap.line[0] == '\0' && r0 == (uint64_t)-EINVAL, "printk with 4 conversions: line '%s' r0 %lld", cap.line,
	      (long long)r0);
	free(p.insns);
	/* four conversions, three arguments: -EINVAL as in Linux; three conversions print */
	strcpy(mem, "x=%d y=%llx s=%s\n");
	cap.line[0] = '\0';
	p = assemble("mov %r6, %r1\nmov %r2, 18\nmov %r3, -5\nmov %r4, 0xabc\nmov %r5, %r6\nadd %r5, 40\ncall 6\nexit");
	r0 = expect_ok(&p, (uint64_t)(uintptr_t)mem, sizeof mem, &env);
	CHECK(strcmp(cap.line, "x=-5 y=abc s=hi") == 0 && r0 == 15, "printk line '%s' r0 %llu", cap.line,
	      (unsigned long long)r0);
	free(p.insns);
	/* a format size beyond its memory faults */
	expect_fault("mov %r2, 65\ncall 6\nexit", -EFAULT, "helper 6: argument 1: 65 bytes", &env,
		     (uint64_t)(uintptr_t)mem, sizeof mem);
	/* override and unknown helpers */
	p = assemble("mov %r1, 1\ncall 1000\nexit");
	CHECK(expect_ok(&p, 0, 0, &env) == 42, "override");
	free(p.insns);
	struct gp_interp_env plain = { 0 };
	expect_fault("call 1000\nexit", -EINVAL, "insn 0: unknown helper 1000", &plain, 0, 0);
	/* callx takes the helper id from a register; the GPU exit helper ends the program with r0 = 0 */
	p = assemble("mov %r1, 2\nmov %r2, 1000\ncall %r2\nexit");
	CHECK(expect_ok(&p, 0, 0, &env) == 43, "callx");
	free(p.insns);
	p = assemble("mov %r0, 9\ncall 507\nmov %r0, 5\nexit");
	CHECK(expect_ok(&p, 0, 0, &env) == 0, "exit helper");
	free(p.insns);
}

static void test_maps(void)
{
	struct capture cap = { 0 };
	struct gp_map defs[4] = {
		{ .name = "h", .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 2 },
		{ .name = ".rodata", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1,
		  .initial = "\x2a\0\0\0\0\0\0\0", .initial_size = 8, .readonly = 1 },
		{ .name = "rb", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096 },
		{ .name = "a", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 4 },
	};
	void *state[4] = { 0 };
	struct gp_interp_env env = { .maps = defs, .map_state = state, .nmaps = 4, .user = &cap, .on_record = on_record };
	/* update(h, key = r1, value = r2, flags = r3, which starts as 0: BPF_ANY) -> r0 */
	struct prog p = assemble("stxw [%r10-4], %r1\nstxdw [%r10-16], %r2\nmov %r4, %r3\nlddw %r1, 0\nmov %r2, %r10\n"
				 "add %r2, -4\nmov %r3, %r10\nadd %r3, -16\ncall 2\nexit");
	map_ref(&p, 3, 0, 0, 0);
	CHECK(expect_ok(&p, 1, 10, &env) == 0, "update k1");
	CHECK(expect_ok(&p, 2, 20, &env) == 0, "update k2");
	CHECK((int64_t)expect_ok(&p, 3, 30, &env) == -E2BIG, "update k3 in a full map");
	uint64_t r0 = 0;
	char err[256];
	/* flags in r3 of the caller -> r4: NOEXIST on an existing key */
	p.insns[2] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = BPF_NOEXIST };
	run(&p, 1, 12, &env, &r0, err, sizeof err);
	CHECK((int64_t)r0 == -EEXIST, "NOEXIST on existing: %lld", (long long)r0);
	p.insns[2].imm = BPF_EXIST;
	run(&p, 1, 13, &env, &r0, err, sizeof err);
	CHECK(r0 == 0, "EXIST on existing: %lld", (long long)r0);
	free(p.insns);
	/* lookup(h, key=r1) -> *value, or -1 when absent; reading past the value faults */
	p = assemble("stxw [%r10-4], %r1\nlddw %r1, 0\nmov %r2, %r10\nadd %r2, -4\ncall 1\njeq %r0, 0, none\n"
		     "ldxdw %r0, [%r0]\nexit\nnone:\nmov %r0, -1\nexit");
	map_ref(&p, 1, 0, 0, 0);
	CHECK(expect_ok(&p, 1, 0, &env) == 13, "lookup k1");
	CHECK(expect_ok(&p, 2, 0, &env) == 20, "lookup k2");
	CHECK(expect_ok(&p, 7, 0, &env) == (uint64_t)-1, "lookup absent");
	free(p.insns);
	uint32_t k1 = 1, k9 = 9;
	CHECK(gp_host_map_delete(state[0], &k1) == 0 && gp_host_map_delete(state[0], &k1) == -ENOENT &&
		      gp_host_map_lookup(state[0], &k1) == NULL,
	      "delete");
	uint64_t v9 = 99;
	CHECK(gp_host_map_update(state[0], &k9, &v9, BPF_ANY) == 0, "reuse a deleted slot");
	uint32_t next, iter_count = 0;
	for (int rc = gp_host_map_next_key(state[0], NULL, &next); rc == 0;
	     rc = gp_host_map_next_key(state[0], &next, &next))
		iter_count++;
	CHECK(iter_count == 2, "iteration saw %u keys, want 2", iter_count);
	p = assemble("stw [%r10-4], 2\nlddw %r1, 0\nmov %r2, %r10\nadd %r2, -4\ncall 1\njeq %r0, 0, +1\n"
		     "ldxdw %r0, [%r0+8]\nexit");
	map_ref(&p, 1, 0, 0, 0);
	int rc = run(&p, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EFAULT && strstr(err, "insn 7: read of 8 bytes"), "read past a map value: %d %s", rc, err);
	free(p.insns);
	/* a map handle is not memory */
	p = assemble("lddw %r1, 0\nldxdw %r0, [%r1]\nexit");
	map_ref(&p, 0, 0, 0, 0);
	rc = run(&p, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EFAULT && strstr(err, "insn 2: read"), "deref map handle: %d %s", rc, err);
	free(p.insns);
	/* global data: .rodata reads its initial value and cannot be written */
	p = assemble("lddw %r1, 0\nldxdw %r0, [%r1]\nexit");
	map_ref(&p, 0, 1, 1, 0);
	CHECK(expect_ok(&p, 0, 0, &env) == 42, "rodata read");
	free(p.insns);
	p = assemble("lddw %r1, 0\nstdw [%r1], 1\nexit");
	map_ref(&p, 0, 1, 1, 0);
	rc = run(&p, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EFAULT && strstr(err, "insn 2: write of 8 bytes"), "rodata write: %d %s", rc, err);
	free(p.insns);
	p = assemble("lddw %r1, 0\nexit");
	map_ref(&p, 0, 1, 1, 9);
	rc = run(&p, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EINVAL && strstr(err, "offset 9 beyond the 8 bytes"), "value offset out of range: %d %s", rc, err);
	free(p.insns);
	/* ring buffer: reserve 16, fill, submit -> one 16-byte record; writing past it faults */
	p = assemble("lddw %r1, 0\nmov %r2, 16\nmov %r3, 0\ncall 131\njeq %r0, 0, fail\nstdw [%r0+8], 0x77\n"
		     "mov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 1\nexit\nfail:\nmov %r0, 0\nexit");
	map_ref(&p, 0, 2, 0, 0);
	CHECK(expect_ok(&p, 0, 0, &env) == 1 && cap.records == 1 && cap.last_map == 2 && cap.rec_size == 16 &&
		      cap.rec[8] == 0x77,
	      "ringbuf submit: %d records, map %d, size %zu", cap.records, cap.last_map, cap.rec_size);
	free(p.insns);
	p = assemble("lddw %r1, 0\nmov %r2, 16\nmov %r3, 0\ncall 131\njeq %r0, 0, +3\nstdw [%r0+16], 1\n"
		     "mov %r1, %r0\ncall 133\nexit");
	map_ref(&p, 0, 2, 0, 0);
	rc = run(&p, 0, 0, &env, &r0, err, sizeof err);
	CHECK(rc == -EFAULT && strstr(err, "insn 6: write of 8 bytes"), "write past a reservation: %d %s", rc, err);
	free(p.insns);
	/* ringbuf_output without a callback keeps records in the map */
	struct gp_interp_env quiet = { .maps = defs, .map_state = state, .nmaps = 4 };
	p = assemble("stdw [%r10-8], 0x1234\nlddw %r1, 0\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 8\nmov %r4, 0\n"
		     "call 130\nexit");
	map_ref(&p, 1, 2, 0, 0);
	CHECK(expect_ok(&p, 0, 0, &quiet) == 0 && expect_ok(&p, 0, 0, &quiet) == 0, "ringbuf_output");
	free(p.insns);
	CHECK(gp_host_ringbuf_consume(state[2], NULL, NULL) == 2, "two records kept in the ring");
	for (int i = 0; i < 4; i++)
		gp_host_map_free(state[i]);
	/* map definitions the host cannot hold get a clear error */
	struct gp_map huge = { .name = "huge", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 1u << 20,
			       .max_entries = 1u << 20 };
	CHECK(gp_host_map_create(&huge, err, sizeof err) == NULL &&
		      strcmp(err, "map 'huge': 1099511627776 bytes is too large for the host") == 0,
	      "huge map: %s", err);
	struct gp_map lpm = { .name = "lpm", .type = BPF_MAP_TYPE_LPM_TRIE, .key_size = 8, .value_size = 8, .max_entries = 4 };
	CHECK(gp_host_map_create(&lpm, err, sizeof err) == NULL &&
		      strcmp(err, "map 'lpm': type 11 not supported by the host interpreter") == 0,
	      "lpm map: %s", err);
}

/* The conformance-file reader and the assembler on awkward text (regressions from fuzzing). */
static void test_reader(void)
{
	struct bpf_conformance_case c;
	char err[256];
	/* a last line ending in '\r' without '\n' once looped forever */
	CHECK(bpf_conformance_parse("-- asm\nmov %r0, 1\r\nexit\r", &c, err, sizeof err) == 0 && c.asm_text &&
		      strcmp(c.asm_text, "mov %r0, 1\nexit\n") == 0,
	      "CR line endings: %s", err);
	bpf_conformance_free(&c);
	/* errors echo input on one printable line */
	int rc = bpf_conformance_parse("-- result\n0x12zz\nmore\n", &c, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "-- result: expected one number, got '0x12zz?more'") == 0, "bad result: %s", err);
	rc = bpf_conformance_parse("-- asm\nexit\n-- bogus\n", &c, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "line 3: unknown section '-- bogus'") == 0, "bad section: %s", err);
	rc = bpf_conformance_parse("-- raw\n95 00 00 00\n", &c, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "-- raw: 4 bytes is not a whole number of 8-byte instructions") == 0, "raw: %s",
	      err);
	struct bpf_insn *insns;
	size_t n;
	rc = bpf_asm("mov %r0, 1\nfoo\001bar %r1\n", &insns, &n, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "line 2: unknown mnemonic 'foo?bar'") == 0, "control char: %s", err);
	rc = bpf_asm("  # only a comment\n\n", &insns, &n, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "line 1: no instructions") == 0, "empty: %s", err);
	rc = bpf_asm("a:\na:\nexit", &insns, &n, err, sizeof err);
	CHECK(rc == -EINVAL && strcmp(err, "line 2: label 'a' defined twice") == 0, "twice: %s", err);
	/* encodings the corpus relies on */
	rc = bpf_asm("lddw %r3, 0x1122334455667788\nja32 end\ncall local end\ncall %r4\nend:\nlock fetch xor32 [%r10-4], %r2\n"
		     "ldxsh %r1, [%r2-2]\nexit",
		     &insns, &n, err, sizeof err);
	CHECK(rc == 0 && n == 8, "encodings: %s", err);
	if (rc == 0 && n == 8) {
		CHECK(insns[0].code == 0x18 && insns[0].dst_reg == 3 && (uint32_t)insns[0].imm == 0x55667788u &&
			      insns[1].imm == 0x11223344,
		      "lddw");
		CHECK(insns[2].code == 0x06 && insns[2].off == 0 && insns[2].imm == 2, "ja32: code 0x%02x imm %d",
		      insns[2].code, insns[2].imm);
		CHECK(insns[3].code == 0x85 && insns[3].src_reg == BPF_PSEUDO_CALL && insns[3].imm == 1, "call local");
		CHECK(insns[4].code == 0x8d && insns[4].dst_reg == 4 && insns[4].imm == 0, "callx");
		CHECK(insns[5].code == 0xc3 && insns[5].imm == (BPF_XOR | BPF_FETCH) && insns[5].off == -4, "lock fetch xor32");
		CHECK(insns[6].code == 0x89 && insns[6].off == -2 && insns[6].src_reg == 2, "ldxsh: code 0x%02x", insns[6].code);
		free(insns);
	}
}

int main(void)
{
	test_reader();
	test_bounds();
	test_limits();
	test_frames();
	test_helpers();
	test_maps();
	printf("interp: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
