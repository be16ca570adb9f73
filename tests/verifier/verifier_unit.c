/* Verifier unit tests at the instruction level: each case is assembled (ebpf/asm.h syntax) or
 * written as raw instructions where an assembler cannot express the defect (unknown opcodes,
 * jumps into ld_imm64), verified, and checked for the exact return code, the exact reason (the
 * last line of the log) and, for rejections, the exact "N: (op) insn" line before it.
 * Map references: "lddw %rD, 0x4d41500000000000" + i loads map i (BPF_PSEUDO_MAP_FD). */
#include "ebpf/asm.h"
#include "ebpf/verifier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_TAG 0x4d41500000000000ULL

static int failures, cases;
static char logbuf[1 << 20];

static const struct gp_map test_maps[] = {
	{.name = "m0", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16, .max_entries = 1},
	{.name = "m1", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1},
	{.name = "m2", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 64},
	{.name = "m3", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1},
	{.name = "ring", .type = BPF_MAP_TYPE_RINGBUF, .key_size = 0, .value_size = 0, .max_entries = 4096},
};
#define NMAPS (sizeof(test_maps) / sizeof(test_maps[0]))

static void patch_maps(struct bpf_insn *insns, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		uint64_t v = (uint32_t)insns[i].imm | ((uint64_t)(uint32_t)insns[i + 1].imm << 32);
		if ((v & ~0xffffULL) == MAP_TAG) {
			insns[i].src_reg = BPF_PSEUDO_MAP_FD;
			insns[i].imm = (int32_t)(v & 0xffff);
			insns[i + 1].imm = 0;
		}
		i++;
	}
}

static const char *last_line(char *log, int which)
{
	/* which = 0: the last line; 1: the one before */
	size_t len = strlen(log);
	while (len && log[len - 1] == '\n')
		log[--len] = 0;
	char *end = log + len;
	for (int k = 0; k <= which; k++) {
		char *p = end;
		while (p > log && p[-1] != '\n')
			p--;
		if (k == which) {
			static char out[2048];
			snprintf(out, sizeof(out), "%.*s", (int)(end - p), p);
			return out;
		}
		if (p == log)
			return "";
		end = p - 1;
	}
	return "";
}

struct tcase {
	const char *name;
	const char *text;                 /* assembly, or NULL for raw */
	const struct bpf_insn *raw;
	size_t nraw;
	enum gp_attach_kind attach;
	int ret;                          /* expected return code */
	const char *reason;               /* expected last log line (NULL: not checked) */
	const char *insn;                 /* expected "N: (op) ..." line (NULL: not checked) */
	unsigned long max_insns;
	int expect_stack;                 /* >= 0: expected stack_depth */
	const char *atomic_only;          /* expected map_atomic_only as "10.." (NULL: not checked) */
	unsigned max_states;
	const char *additive;             /* "yes", "yes, after a first run" (hash maps), or the
	                                     reason it is not (NULL: not checked) */
};

static void run(const struct tcase *t)
{
	cases++;
	struct bpf_insn *insns = NULL;
	size_t n = 0;
	char err[256];
	if (t->text) {
		if (bpf_asm(t->text, &insns, &n, err, sizeof(err))) {
			printf("FAIL %s: does not assemble: %s\n", t->name, err);
			failures++;
			return;
		}
		patch_maps(insns, n);
	} else {
		insns = malloc(sizeof(*insns) * (t->nraw ? t->nraw : 1));
		if (t->nraw)
			memcpy(insns, t->raw, sizeof(*insns) * t->nraw);
		n = t->nraw;
	}
	uint8_t atomic_only[NMAPS];
	struct gp_verify_opts o = {0};
	o.attach = t->attach;
	o.maps = test_maps;
	o.nmaps = NMAPS;
	o.ctx_size = t->attach == GP_ATTACH_NONE ? 64 : gp_attach_ctx_size(t->attach);
	o.log = logbuf;
	o.log_size = sizeof(logbuf);
	o.max_insns = t->max_insns;
	o.max_states = t->max_states;
	o.map_atomic_only = atomic_only;
	int r = gp_verify(insns, n, &o);
	int ok = r == t->ret;
	char reason[2048], insn[2048];
	snprintf(reason, sizeof(reason), "%s", last_line(logbuf, 0));
	snprintf(insn, sizeof(insn), "%s", last_line(logbuf, 1));
	/* a reason ending in "*": the reason starts with the rest (helper lists grow) */
	size_t rl = t->reason ? strlen(t->reason) : 0;
	if (t->reason && rl && t->reason[rl - 1] == '*' ? strncmp(reason, t->reason, rl - 1)
							: t->reason && strcmp(reason, t->reason))
		ok = 0;
	if (t->insn && strcmp(insn, t->insn))
		ok = 0;
	if (t->expect_stack >= 0 && (unsigned)t->expect_stack != o.stack_depth)
		ok = 0;
	char ao[NMAPS + 1];
	for (size_t i = 0; i < NMAPS; i++)
		ao[i] = atomic_only[i] ? '1' : '0';
	ao[NMAPS] = 0;
	if (t->atomic_only && strcmp(ao, t->atomic_only))
		ok = 0;
	const char *add = o.additive == 2 ? "yes, after a first run" : o.additive ? "yes" : o.additive_why;
	if (t->additive && strcmp(add, t->additive)) {
		ok = 0;
		printf("  additive: '%s' (want '%s')\n", add, t->additive);
	}
	if (!ok) {
		failures++;
		printf("FAIL %s: ret %d (want %d)\n  insn:   '%s'\n  want:   '%s'\n  reason: '%s'\n  want:   '%s'\n"
		       "  stack %u (want %d) atomic_only %s (want %s)\n",
		       t->name, r, t->ret, insn, t->insn ? t->insn : "-", reason, t->reason ? t->reason : "-",
		       o.stack_depth, t->expect_stack, ao, t->atomic_only ? t->atomic_only : "-");
	} else {
		printf("PASS %s: %s\n", t->name, r ? reason : "verified");
	}
	free(insns);
}

#define I(c, d, s, o, i) {.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)}
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define MOV0 I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0)

static const struct bpf_insn raw_unknown[] = {MOV0, I(BPF_ALU64 | 0xe0 | BPF_K, 0, 0, 0, 1), EXIT};
static const struct bpf_insn raw_reserved[] = {I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 1, 1), EXIT};
static const struct bpf_insn raw_jmp_range[] = {MOV0, I(BPF_JMP | BPF_JA, 0, 0, 5, 0), EXIT};
static const struct bpf_insn raw_jmp_lddw[] = {
	MOV0, I(BPF_JMP | BPF_JA, 0, 0, 1, 0), I(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 7), I(0, 0, 0, 0, 0), EXIT};
static const struct bpf_insn raw_fallthrough[] = {MOV0, I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1)};
static const struct bpf_insn raw_lddw_cut[] = {MOV0, EXIT, I(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 7)};
static const struct bpf_insn raw_bad_reg[] = {I(BPF_ALU64 | BPF_MOV | BPF_K, 11, 0, 0, 0), EXIT};
static const struct bpf_insn raw_map_fd[] = {I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 9), I(0, 0, 0, 0, 0), MOV0, EXIT};
static const struct bpf_insn raw_ld_abs[] = {I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), EXIT};

#define RAW(a) .raw = a, .nraw = sizeof(a) / sizeof(a[0])
#define E GP_ATTACH_KERNEL_ENTRY

/* An array counter for the additive cases: KEY loads r2 from the context (one instruction), the
 * key & 0 goes to the stack, m1 is looked up, and a non-null value gets USE (one instruction,
 * insn 10) with r1 = 1. */
#define ADD_COUNT(KEY, USE) \
	KEY "and %r2, 0\nstxw [%r10-4], %r2\nmov %r2, %r10\nadd %r2, -4\n" \
	"lddw %r1, 0x4d41500000000001\ncall 1\njeq %r0, 0, +2\nmov %r1, 1\n" USE "mov %r0, 0\nexit\n"

/* r1 = the hash m2, r2 = its 8-byte key 0 at fp-8 (5 instructions) */
#define HASH_KEY "stdw [%r10-8], 0\nmov %r2, %r10\nadd %r2, -8\nlddw %r1, 0x4d41500000000002\n"

/* lookup of map M with key 0 on the stack; r0 = value or null */
#define LOOKUP(m) \
	"stw [%r10-4], 0\n" \
	"mov %r2, %r10\n" \
	"add %r2, -4\n" \
	"lddw %r1, 0x4d4150000000000" #m "\n" \
	"call 1\n"

/* update of the hash m2 (8-byte key 0, value 1) with flags set by F (r6: a context word), then
 * lookup and atomic add */
#define NOEXIST_COUNT(F) \
	"ldxw %r6, [%r1+0]\nstdw [%r10-16], 1\nstdw [%r10-8], 0\nmov %r2, %r10\nadd %r2, -8\n" \
	"mov %r3, %r10\nadd %r3, -16\nlddw %r1, 0x4d41500000000002\n" F "call 2\n" \
	"mov %r2, %r10\nadd %r2, -8\nlddw %r1, 0x4d41500000000002\ncall 1\n" \
	"jeq %r0, 0, +2\nmov %r1, 1\nlock add [%r0+0], %r1\nmov %r0, 0\nexit\n"

static const struct tcase tests[] = {
	/* malformed programs: -EINVAL, found before any path is explored */
	{"empty", NULL, .raw = NULL, .nraw = 0, .attach = E, .ret = -EINVAL,
	 .reason = "empty program: no instructions", .expect_stack = -1},
	{"unknown_opcode", NULL, RAW(raw_unknown), .attach = E, .ret = -EINVAL, .reason = "unknown opcode e7",
	 .insn = "1: (e7) (invalid)", .expect_stack = -1},
	{"legacy_ld_abs", NULL, RAW(raw_ld_abs), .attach = E, .ret = -EINVAL, .reason = "unknown opcode 20",
	 .expect_stack = -1},
	{"reserved_fields", NULL, RAW(raw_reserved), .attach = E, .ret = -EINVAL,
	 .reason = "BPF_ALU uses reserved fields", .insn = "0: (07) r0 += 1", .expect_stack = -1},
	{"bad_register", NULL, RAW(raw_bad_reg), .attach = E, .ret = -EINVAL, .reason = "R11 is invalid",
	 .expect_stack = -1},
	{"jump_out_of_range", NULL, RAW(raw_jmp_range), .attach = E, .ret = -EINVAL,
	 .reason = "jump out of range from insn 1 to 7", .insn = "1: (05) goto pc+5", .expect_stack = -1},
	{"jump_into_lddw", NULL, RAW(raw_jmp_lddw), .attach = E, .ret = -EINVAL,
	 .reason = "jump into the middle of ldimm64 insn 2", .insn = "1: (05) goto pc+1", .expect_stack = -1},
	{"fall_through_end", NULL, RAW(raw_fallthrough), .attach = E, .ret = -EINVAL,
	 .reason = "last insn is not an exit or jmp", .insn = "1: (07) r0 += 1", .expect_stack = -1},
	{"lddw_truncated", NULL, RAW(raw_lddw_cut), .attach = E, .ret = -EINVAL,
	 .reason = "invalid bpf_ld_imm64 insn: the second half is missing", .expect_stack = -1},
	{"map_fd_invalid", NULL, RAW(raw_map_fd), .attach = E, .ret = -EINVAL,
	 .reason = "fd 9 is not pointing to valid bpf_map (5 maps)", .expect_stack = -1},

	/* registers and stack */
	{"uninit_register", "mov %r0, %r5\nexit\n", .attach = E, .ret = -EACCES, .reason = "R5 !read_ok",
	 .insn = "0: (bf) r0 = r5", .expect_stack = -1},
	{"uninit_r0_at_exit", "exit\n", .attach = E, .ret = -EACCES, .reason = "R0 !read_ok",
	 .insn = "0: (95) exit", .expect_stack = -1},
	{"uninit_stack", "ldxdw %r0, [%r10-8]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid read from stack off -8+0 size 8", .insn = "0: (79) r0 = *(u64 *)(r10 -8)",
	 .expect_stack = -1},
	{"stack_below_frame", "stdw [%r10-520], 1\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid write to stack R10 off=-520 size=8", .expect_stack = -1},
	{"stack_above_fp", "stw [%r10-2], 1\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid write to stack R10 off=-2 size=4", .expect_stack = -1},
	{"stack_misaligned", "stdw [%r10-12], 1\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "misaligned stack access off=-12 size=8", .expect_stack = -1},
	{"frame_pointer_write", "mov %r10, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "frame pointer is read only", .expect_stack = -1},
	{"spill_fill_pointer", "stxdw [%r10-8], %r1\nldxdw %r2, [%r10-8]\nldxw %r0, [%r2+8]\nexit\n", .attach = E,
	 .ret = 0, .expect_stack = 8},
	{"partial_fill_of_pointer", "stxdw [%r10-8], %r1\nldxw %r0, [%r10-8]\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "invalid size of register fill", .expect_stack = -1},
	{"variable_stack_read_ok", "ldxw %r2, [%r1+8]\nstdw [%r10-16], 1\nstdw [%r10-8], 2\nand %r2, 1\nlsh %r2, 3\n"
	 "mov %r3, %r10\nadd %r3, %r2\nldxdw %r0, [%r3-16]\nexit\n", .attach = E, .ret = 0, .expect_stack = 16},
	{"variable_stack_read_uninit", "ldxw %r2, [%r1+8]\nstdw [%r10-16], 1\nand %r2, 1\nlsh %r2, 3\n"
	 "mov %r3, %r10\nadd %r3, %r2\nldxdw %r0, [%r3-16]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid variable-offset read from stack R3 off=[-16, -8] size=8: byte at -8 is not initialized",
	 .expect_stack = -1},

	/* context */
	{"ctx_out_of_bounds", "ldxdw %r0, [%r1+88]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid bpf_context access off=88 size=8 (ctx size 88)", .expect_stack = -1},
	{"ctx_negative", "ldxw %r0, [%r1-4]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid bpf_context access off=-4 size=4 (ctx size 88)", .expect_stack = -1},
	{"ctx_misaligned", "ldxdw %r0, [%r1+4]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "misaligned context access off=4 size=8", .expect_stack = -1},
	{"ctx_write", "stw [%r1+8], 0\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "cannot write into ctx: the context is read-only (off=8 size=4)", .insn = "0: (62) *(u32 *)(r1 +8) = 0",
	 .expect_stack = -1},
	{"ctx_atomic", "mov %r2, 1\nlock add [%r1+8], %r2\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "cannot write into ctx: the context is read-only (atomic)", .expect_stack = -1},
	{"ctx_variable_offset", "ldxw %r2, [%r1+8]\nand %r2, 8\nadd %r1, %r2\nldxdw %r0, [%r1+0]\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "variable ctx access var_off=(0; 0x8) disallowed", .expect_stack = -1},

	/* pointers */
	{"ptr_arith_32bit", "add32 %r1, 8\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R1 32-bit pointer arithmetic prohibited", .expect_stack = -1},
	{"ptr_plus_ptr", "mov %r2, %r10\nadd %r2, %r1\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R2 pointer += pointer prohibited", .expect_stack = -1},
	{"ptr_arith_or_null", LOOKUP(0) "add %r0, 8\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R0 pointer arithmetic on map_value_or_null prohibited, null-check it first", .expect_stack = -1},
	{"ptr_copy_32bit", "mov32 %r0, %r1\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R1 partial copy of pointer", .expect_stack = -1},
	{"return_pointer", "mov %r0, %r10\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R0 leaks addr as return value", .expect_stack = -1},

	/* maps */
	{"lookup_no_null_check", LOOKUP(0) "ldxdw %r0, [%r0+0]\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R0 invalid mem access 'map_value_or_null'", .insn = "6: (79) r0 = *(u64 *)(r0 +0)", .expect_stack = -1},
	{"null_check_32bit_is_not_one", LOOKUP(0) "jeq32 %r0, 0, +1\nldxdw %r0, [%r0+8]\nmov %r0, 0\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "R0 invalid mem access 'map_value_or_null'", .expect_stack = -1},
	{"lookup_null_checked", LOOKUP(0) "jeq %r0, 0, +1\nldxdw %r0, [%r0+8]\nexit\n", .attach = E, .ret = 0,
	 .expect_stack = 8},
	{"map_value_masked_index_ok", "mov %r6, %r1\n" LOOKUP(0) "jeq %r0, 0, +5\nldxw %r2, [%r6+8]\nand %r2, 1\nlsh %r2, 3\n"
	 "add %r0, %r2\nldxdw %r0, [%r0+0]\nexit\n", .attach = E, .ret = 0, .expect_stack = 8},
	{"map_value_range_checked_ok", "mov %r6, %r1\n" LOOKUP(0) "mov %r7, %r0\nmov %r0, 0\njeq %r7, 0, +6\nldxw %r2, [%r6+8]\n"
	 "jgt %r2, 1, +4\nlsh %r2, 3\nadd %r7, %r2\nldxdw %r0, [%r7+0]\nexit\nexit\n", .attach = E, .ret = 0, .expect_stack = 8},
	{"map_value_negative_index", "mov %r6, %r1\n" LOOKUP(0) "jeq %r0, 0, +5\nldxw %r2, [%r6+8]\nand %r2, 1\nsub %r0, %r2\n"
	 "ldxb %r0, [%r0+0]\nexit\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R0 min value is negative, either use unsigned index or do a if (index >=0) check.", .expect_stack = -1},
	{"map_value_pointer_leak_atomic", LOOKUP(1) "jeq %r0, 0, +2\nlock add [%r0+0], %r10\nmov %r0, 0\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "R10 leaks addr into mem", .expect_stack = -1},
	{"helper_arg_type", "mov %r1, 0\nmov %r2, %r10\ncall 1\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R1 type=scalar expected=map_ptr", .insn = "2: (85) call bpf_map_lookup_elem#1", .expect_stack = -1},
	{"helper_key_uninit", "mov %r2, %r10\nadd %r2, -8\nlddw %r1, 0x4d41500000000002\ncall 1\nmov %r0, 0\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "invalid read from stack off -8+0 size 8", .expect_stack = -1},
	{"helper_unknown", "call 9999\nexit\n", .attach = E, .ret = -EACCES, .reason = "invalid func unknown#9999; GPU helpers: bpf_map_lookup_elem, bpf_map_update_elem, *",
	 .insn = "0: (85) call unknown#9999", .expect_stack = -1},
	{"helper_wrong_map_type", "stw [%r10-4], 0\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, 0x4d41500000000004\ncall 1\nmov %r0, 0\nexit\n",
	 .attach = E, .ret = -EACCES, .reason = "cannot pass map_type 27 into func bpf_map_lookup_elem#1", .expect_stack = -1},
	{"helper_linux_not_on_gpu", "call 16\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "bpf_get_current_comm is not available on the GPU; GPU helpers: bpf_map_lookup_elem, *",
	 .insn = "0: (85) call bpf_get_current_comm#16", .expect_stack = -1},
	{"helper_linux_not_on_host", "call 16\nexit\n", .attach = GP_ATTACH_HOST_ENTRY, .ret = -EACCES,
	 .reason = "bpf_get_current_comm is not available in host probes; host helpers: bpf_map_lookup_elem, *",
	 .expect_stack = -1},
	{"helper_device_on_host", "call 509\nexit\n", .attach = GP_ATTACH_HOST_EXIT, .ret = -EACCES,
	 .reason = "helper bpf_get_sm_id#509 runs only on the GPU: not allowed at a host attach point; host helpers: bpf_map_lookup_elem, *", .expect_stack = -1},
	{"helper_device_on_device", "call 509\nexit\n", .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = 0},
	{"callx_constant", "mov %r2, 509\ncall %r2\nexit\n", .attach = E, .ret = 0, .expect_stack = 0},
	{"callx_unknown", "ldxw %r2, [%r1+8]\ncall %r2\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "callx R2: the helper id must be a known constant", .expect_stack = -1},
	{"atomic_only_report",
	 /* m0: only atomic add (with and without fetch); m1: atomic add and a plain store;
	  * m2: map_update_elem; m3: atomic xor; ring: untouched */
	 LOOKUP(0) "jeq %r0, 0, +4\nmov %r1, 1\nlock add [%r0+0], %r1\nlock fetch add [%r0+8], %r1\nldxdw %r2, [%r0+0]\n"
	 LOOKUP(1) "jeq %r0, 0, +3\nmov %r1, 1\nlock add [%r0+0], %r1\nstdw [%r0+0], 0\n"
	 "stdw [%r10-16], 0\nmov %r2, %r10\nadd %r2, -16\nmov %r3, %r2\nlddw %r1, 0x4d41500000000002\nmov %r4, 0\ncall 2\n"
	 LOOKUP(3) "jeq %r0, 0, +2\nmov %r1, 1\nlock xor [%r0+0], %r1\n"
	 "mov %r0, 0\nexit\n", .attach = E, .ret = 0, .expect_stack = 16, .atomic_only = "10000"},

	/* Additive programs (gp_verify_opts.additive, ebpf/verifier_additive.c): an array counter
	 * keyed by ctx->dir (byte 13 of gp_mem_ctx) is; each way out of it says its first reason */
	{"additive_dir_counter", ADD_COUNT("ldxb %r2, [%r1+13]\n", "lock add [%r0+0], %r1\n"),
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1, .additive = "yes"},
	{"additive_no_addr", ADD_COUNT("ldxdw %r2, [%r1+0]\n", "lock add [%r0+0], %r1\n"),
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1,
	 .additive = "insn 0: reads context bytes 0-7, which change from one run to the next"},
	{"additive_no_fetch", ADD_COUNT("ldxb %r2, [%r1+13]\n", "lock fetch add [%r0+0], %r1\n"),
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1,
	 .additive = "insn 10: an atomic operation other than add without fetch"},
	{"additive_no_value_read", ADD_COUNT("ldxb %r2, [%r1+13]\n", "ldxdw %r1, [%r0+0]\n"),
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1, .additive = "insn 10: reads a map value"},
	{"additive_no_value_store", ADD_COUNT("ldxb %r2, [%r1+13]\n", "stxdw [%r0+0], %r1\n"),
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1, .additive = "insn 10: a store outside the stack"},
	/* hash maps (additive 2): one key of one map, looked up and inserted with BPF_NOEXIST */
	{"additive_hash_lookup", HASH_KEY "call 1\nmov %r0, 0\nexit\n", .attach = GP_ATTACH_MEM, .ret = 0,
	 .expect_stack = -1, .additive = "yes, after a first run"},
	{"additive_hash_count", NOEXIST_COUNT("mov %r4, 1\n"), .attach = E, .ret = 0, .expect_stack = -1,
	 .additive = "yes, after a first run"},
	{"additive_hash_update_any", NOEXIST_COUNT("mov %r4, 0\n"), .attach = E, .ret = 0, .expect_stack = -1,
	 .additive = "insn 10: an update whose flags are not a known BPF_NOEXIST"},
	{"additive_hash_two_keys", HASH_KEY "call 1\nstdw [%r10-16], 0\nmov %r2, %r10\nadd %r2, -16\n"
	 "lddw %r1, 0x4d41500000000002\ncall 1\nmov %r0, 0\nexit\n", .attach = GP_ATTACH_MEM, .ret = 0,
	 .expect_stack = -1, .additive = "insn 11: a second hash map or key (one key of one hash map is additive)"},
	{"additive_hash_key_changed", HASH_KEY "call 1\n" HASH_KEY "call 1\nmov %r0, 0\nexit\n",
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1,
	 .additive = "insn 6: changes the hash key after its first use (insn 5)"},
	{"additive_hash_update_result", "stdw [%r10-16], 0\n" HASH_KEY "mov %r3, %r10\nadd %r3, -16\nmov %r4, 1\n"
	 "call 2\nmov %r6, %r0\nmov %r0, %r6\nexit\n", .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1,
	 .additive = "yes, after a first run"},   /* its result: the same in runs 2..N */
	{"additive_hash_loop", "mov %r6, 0\nadd %r6, 1\njlt %r6, 3, -2\n" HASH_KEY "call 1\nmov %r0, 0\nexit\n",
	 .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1, .additive = "a loop in a program that uses a hash map"},
	{"additive_no_other_helper", "call 509\nexit\n", .attach = GP_ATTACH_MEM, .ret = 0, .expect_stack = -1,
	 .additive = "insn 0: calls bpf_get_sm_id (only map lookups and hash inserts are additive)"},
	{"additive_no_timestamp", "ldxdw %r0, [%r1+56]\nmov %r0, 0\nexit\n", .attach = GP_ATTACH_BARRIER,
	 .ret = 0, .expect_stack = -1,
	 .additive = "insn 0: reads context bytes 56-63, which change from one run to the next"},
	{"additive_barrier_line_block_idx", "ldxw %r0, [%r1+8]\nldxw %r0, [%r1+16]\nmov %r0, 0\nexit\n",
	 .attach = GP_ATTACH_BARRIER, .ret = 0, .expect_stack = -1, .additive = "yes"},
	{"additive_host_never", "mov %r0, 0\nexit\n", .attach = GP_ATTACH_HOST_ENTRY, .ret = 0,
	 .expect_stack = -1, .additive = "the attach point has no device sites"},

	/* the counting idiom on the hash m2: insert with flags F on a miss, then atomic add; only a
	 * known BPF_NOEXIST keeps the map summable, on every path (r4 is made precise: the path
	 * with BPF_ANY must not be pruned against the one with BPF_NOEXIST) */
	{"atomic_only_noexist", NOEXIST_COUNT("mov %r4, 1\n"), .attach = E, .ret = 0, .expect_stack = 16,
	 .atomic_only = "00100"},
	{"atomic_only_update_any", NOEXIST_COUNT("mov %r4, 0\n"), .attach = E, .ret = 0, .expect_stack = 16,
	 .atomic_only = "00000"},
	{"atomic_only_flags_unknown", NOEXIST_COUNT("mov %r4, %r6\n"), .attach = E, .ret = 0, .expect_stack = 16,
	 .atomic_only = "00000"},
	{"atomic_only_flags_by_path", NOEXIST_COUNT("mov %r4, 1\njeq %r6, 0, +1\nmov %r4, 0\n"), .attach = E,
	 .ret = 0, .expect_stack = 16, .atomic_only = "00000"},
	{"atomic_only_flags_by_path2", NOEXIST_COUNT("mov %r4, 0\njeq %r6, 0, +1\nmov %r4, 1\n"), .attach = E,
	 .ret = 0, .expect_stack = 16, .atomic_only = "00000"},

	{"helper_u64_out_ok", "mov %r1, %r10\nadd %r1, -8\nmov %r2, %r10\nadd %r2, -16\nmov %r3, %r10\nadd %r3, -24\n"
	 "call 505\nldxdw %r0, [%r10-24]\nexit\n", .attach = E, .ret = 0, .expect_stack = 24},
	{"helper_u64_out_misaligned", "mov %r1, %r10\nadd %r1, -12\nmov %r2, %r10\nadd %r2, -16\nmov %r3, %r10\nadd %r3, -24\n"
	 "call 505\nexit\n", .attach = E, .ret = -EACCES, .reason = "R1 misaligned u64 output pointer (off=-12)",
	 .expect_stack = -1},

	/* ring buffer references */
	{"ringbuf_ok", "lddw %r1, 0x4d41500000000004\nmov %r2, 16\nmov %r3, 0\ncall 131\njeq %r0, 0, +5\n"
	 "stdw [%r0+8], 7\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit\n", .attach = E, .ret = 0, .expect_stack = 0},
	{"ringbuf_oob", "lddw %r1, 0x4d41500000000004\nmov %r2, 16\nmov %r3, 0\ncall 131\njeq %r0, 0, +5\n"
	 "stdw [%r0+16], 7\nmov %r1, %r0\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid access to mem, mem_size=16 off=16 size=8", .expect_stack = -1},
	{"ringbuf_double_submit", "lddw %r1, 0x4d41500000000004\nmov %r2, 16\nmov %r3, 0\ncall 131\njeq %r0, 0, +7\n"
	 "mov %r6, %r0\nmov %r1, %r6\nmov %r2, 0\ncall 132\nmov %r1, %r6\nmov %r2, 0\ncall 132\nmov %r0, 0\nexit\n", .attach = E,
	 .ret = -EACCES, .reason = "R1 reference has been released: the ring-buffer record was submitted at insn 9", .expect_stack = -1},
	{"ringbuf_variable_size", "ldxw %r2, [%r1+8]\nlddw %r1, 0x4d41500000000004\nmov %r3, 0\ncall 131\nmov %r0, 0\nexit\n",
	 .attach = E, .ret = -EACCES, .reason = "R2 is not a known constant: the record size must be constant", .expect_stack = -1},

	/* BPF-to-BPF calls */
	{"call_preserves_r6", "mov %r6, %r1\ncall local f\nldxw %r0, [%r6+8]\nexit\nf:\nmov %r6, 5\nstdw [%r10-8], 1\nmov %r0, 1\nexit\n",
	 .attach = E, .ret = 0, .expect_stack = 8},
	{"call_clobbers_r1", "call local f\nmov %r0, %r1\nexit\nf:\nmov %r0, 1\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R1 !read_ok", .insn = "1: (bf) r0 = r1", .expect_stack = -1},
	{"call_returns_stack_ptr", "call local f\nmov %r0, 0\nexit\nf:\nmov %r0, %r10\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "cannot return stack pointer to the caller", .expect_stack = -1},
	{"call_stack_depth", "stdw [%r10-16], 1\ncall local f\nexit\nf:\nstdw [%r10-24], 1\nmov %r0, 1\nexit\n", .attach = E,
	 .ret = 0, .expect_stack = 40},
	{"call_leaks_callee_stack", "mov %r1, %r10\nadd %r1, -8\ncall local f\nldxdw %r2, [%r10-8]\nldxdw %r0, [%r2+0]\nexit\n"
	 "f:\nmov %r2, %r10\nstxdw [%r1+0], %r2\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "cannot spill pointers to stack into stack frame of the caller", .expect_stack = -1},
	{"call_too_deep", "call local f\nexit\nf:\ncall local f\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "recursive call: func#1 calls itself and does not stop within 8 frames", .expect_stack = -1},

	{"call_chain_too_deep", "call local f1\nexit\nf1:\ncall local f2\nexit\nf2:\ncall local f3\nexit\nf3:\n"
	 "call local f4\nexit\nf4:\ncall local f5\nexit\nf5:\ncall local f6\nexit\nf6:\ncall local f7\nexit\nf7:\n"
	 "call local f8\nexit\nf8:\nmov %r0, 0\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "the call stack of 9 frames is too deep", .expect_stack = -1},
	{"mutual_recursion", "call local ping\nexit\nping:\ncall local pong\nexit\npong:\ncall local ping\nexit\n",
	 .attach = E, .ret = -EACCES,
	 .reason = "recursive call: func#2 calls itself through func#2 -> func#1 -> func#2 and does not stop within 8 frames",
	 .insn = "2: (85) call pc+1", .expect_stack = -1},
	/* Linux requires r0 only at the main program's exit: a void subprogram returns without it */
	{"subprog_exit_without_r0", "call local f\nmov %r0, 0\nexit\nf:\nmov %r1, 1\nexit\n", .attach = E, .ret = 0,
	 .expect_stack = 0},
	{"subprog_r0_unset_then_read", "call local f\nexit\nf:\nmov %r1, 1\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "R0 !read_ok", .insn = "1: (95) exit", .expect_stack = -1},

	/* a bound checked on the 32-bit subregister holds after zero extension (w = w, <<32 >>32,
	 * & 0xffffffff) and sign extension (<<32 s>>32), as Linux's 32-bit bounds: the range, not
	 * only the known bits (index <= 12, byte 3 after it: 16 bytes fit; with <= 15: 19 do not) */
#define B32(check, ext) "mov %r6, %r1\n" LOOKUP(0) "jeq %r0, 0, out\nldxdw %r2, [%r6+80]\n" check ext \
	"add %r0, %r2\nldxb %r0, [%r0+3]\nexit\nzero:\nmov %r0, 0\nout:\nexit\n"
	{"bound32_mov32", B32("jgt32 %r2, 12, zero\n", "mov32 %r2, %r2\n"), .attach = E, .ret = 0, .expect_stack = 8},
	{"bound32_shifts", B32("jgt32 %r2, 12, zero\n", "lsh %r2, 32\nrsh %r2, 32\n"), .attach = E, .ret = 0,
	 .expect_stack = 8},
	{"bound32_and_mask", B32("jgt32 %r2, 12, zero\n", "lddw %r3, 0xffffffff\nand %r2, %r3\n"), .attach = E,
	 .ret = 0, .expect_stack = 8},
	{"bound32_signed", B32("jslt32 %r2, 0, zero\njsgt32 %r2, 12, zero\n", "lsh %r2, 32\narsh %r2, 32\n"),
	 .attach = E, .ret = 0, .expect_stack = 8},
	{"bound32_lower_bound", B32("jlt32 %r2, 4, zero\njgt32 %r2, 12, zero\n", "mov32 %r2, %r2\nsub %r2, 4\n"),
	 .attach = E, .ret = 0, .expect_stack = 8},
	{"bound32_too_big", B32("jgt32 %r2, 13, zero\n", "mov32 %r2, %r2\n"), .attach = E, .ret = -EACCES,
	 .reason = "R0 max value is outside of the allowed memory range: off=3+[0, 13] size=1, map value size 16",
	 .expect_stack = -1},
	{"bound32_upper_half_unknown", B32("jgt32 %r2, 12, zero\n", ""), .attach = E, .ret = -EACCES,
	 .reason = "R0 math between map_value pointer and register with unbounded min value is not allowed",
	 .expect_stack = -1},
#undef B32

	/* arithmetic */
	{"div_by_maybe_zero", "ldxw %r2, [%r1+8]\nmov %r0, 10\ndiv %r0, %r2\nmod %r0, %r2\nexit\n", .attach = E, .ret = 0,
	 .expect_stack = 0},
	{"div_by_zero_constant", "mov %r0, 10\ndiv %r0, 0\nexit\n", .attach = E, .ret = 0, .expect_stack = 0},

	/* precision: a value that differs at a join must stop pruning once a later check depends on
	 * it (the first path explored is the safe one; the second must still be rejected) */
	{"precise_via_register", "mov %r6, %r1\nldxw %r2, [%r6+8]\njgt %r2, 7, big\nmov %r7, 8\nja join\nbig:\nmov %r7, 100\njoin:\n"
	 LOOKUP(0) "jeq %r0, 0, out\nadd %r0, %r7\nldxdw %r0, [%r0+0]\nout:\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid access to map value, value_size=16 off=100 size=8", .expect_stack = -1},
	{"precise_via_stack_spill", "mov %r6, %r1\nldxw %r2, [%r6+8]\njgt %r2, 7, big\nstdw [%r10-16], 8\nja join\nbig:\n"
	 "stdw [%r10-16], 100\njoin:\n" LOOKUP(0) "jeq %r0, 0, out\nldxdw %r3, [%r10-16]\nadd %r0, %r3\nldxdw %r0, [%r0+0]\nout:\nexit\n",
	 .attach = E, .ret = -EACCES, .reason = "invalid access to map value, value_size=16 off=100 size=8", .expect_stack = -1},
	{"precise_via_decided_branch", "ldxw %r2, [%r1+8]\njgt %r2, 7, big\nmov %r3, 0\nja join\nbig:\nmov %r3, 1\njoin:\n"
	 "mov %r0, 0\njeq %r3, 0, out\nldxdw %r0, [%r10-8]\nout:\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid read from stack off -8+0 size 8", .expect_stack = -1},
	{"precise_via_copy", "mov %r6, %r1\nldxw %r2, [%r6+8]\njgt %r2, 7, big\nmov %r3, 8\nja join\nbig:\nmov %r3, 100\njoin:\n"
	 "mov %r7, %r3\n" LOOKUP(0) "jeq %r0, 0, out\nadd %r0, %r7\nldxdw %r0, [%r0+0]\nout:\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "invalid access to map value, value_size=16 off=100 size=8", .expect_stack = -1},
	{"precise_across_call", "mov %r6, %r1\nldxw %r2, [%r6+8]\njgt %r2, 7, big\nmov %r7, 8\nja join\nbig:\nmov %r7, 100\njoin:\n"
	 "call local f\n" LOOKUP(0) "jeq %r0, 0, out\nadd %r0, %r7\nldxdw %r0, [%r0+0]\nout:\nexit\nf:\nmov %r0, 0\nexit\n",
	 .attach = E, .ret = -EACCES, .reason = "invalid access to map value, value_size=16 off=100 size=8", .expect_stack = -1},
	{"imprecise_accumulator_prunes", "mov %r6, %r1\nmov %r9, 0\nldxw %r2, [%r6+8]\njgt %r2, 7, +1\nadd %r9, 1\n"
	 "ldxw %r2, [%r6+12]\njgt %r2, 7, +1\nadd %r9, 1\nldxw %r2, [%r6+16]\njgt %r2, 7, +1\nadd %r9, 1\nmov %r0, %r9\nexit\n",
	 .attach = E, .ret = 0, .expect_stack = 0},

	/* loops */
	{"bounded_loop", "mov %r0, 0\nmov %r2, 0\nL:\nadd %r0, %r2\nadd %r2, 1\njlt %r2, 100, L\nexit\n", .attach = E,
	 .ret = 0, .expect_stack = 0},
	{"bounded_loop_budget", "mov %r0, 0\nmov %r2, 0\nL:\nadd %r0, %r2\nadd %r2, 1\njlt %r2, 100000, L\nexit\n",
	 .attach = E, .ret = -E2BIG, .max_insns = 1000,
	 .reason = "program too complex: processed 1000 insns (limit 1000) (loop not provably bounded)", .expect_stack = -1},
	{"bounded_loop_state_limit", "mov %r0, 0\nmov %r2, 0\nL:\nadd %r0, %r2\nadd %r2, 1\njlt %r2, 100, L\nexit\n",
	 .attach = E, .ret = -E2BIG, .max_states = 10,
	 .reason = "program too complex: more than 10 states kept (loop not provably bounded?)", .expect_stack = -1},
	{"self_loop", "mov %r0, 0\nL:\nja L\n", .attach = E, .ret = -EACCES,
	 .reason = "infinite loop detected at insn 1 (loop not provably bounded)", .expect_stack = -1},
	{"loop_unchanged_state", "mov %r0, 0\nL:\ncall 512\njne %r0, 7, L\nexit\n", .attach = E, .ret = -EACCES,
	 .reason = "infinite loop detected at insn 1 (loop not provably bounded)", .expect_stack = -1},
	{"loop_counter_unbounded", "ldxw %r6, [%r1+8]\nmov %r0, 0\nmov %r7, 0\nL:\nadd %r7, 1\njlt %r7, %r6, L\nexit\n",
	 .attach = E, .ret = -E2BIG, .max_insns = 20000,
	 .reason = "program too complex: processed 20000 insns (limit 20000) (loop not provably bounded)", .expect_stack = -1},
	{"loop_counter_masked_ok", "ldxw %r6, [%r1+8]\nand %r6, 15\nmov %r0, 0\nmov %r7, 0\nL:\nadd %r7, 1\njlt %r7, %r6, L\nexit\n",
	 .attach = E, .ret = 0, .expect_stack = 0},
};

/* -v: the log lists every instruction explored, with the state at each path's start. */
static void verbose_log(void)
{
	cases++;
	struct bpf_insn *insns;
	size_t n;
	char err[128];
	bpf_asm("mov %r0, 0\nldxw %r2, [%r1+8]\njgt %r2, 3, +1\nmov %r0, 1\nexit\n", &insns, &n, err, sizeof(err));
	struct gp_verify_opts o = {.attach = E, .ctx_size = gp_attach_ctx_size(E), .log = logbuf,
				   .log_size = sizeof(logbuf), .log_level = 1};
	int r = gp_verify(insns, n, &o);
	const char *want[] = {"func#0 @0: R1=ctx(off=0) R10=fp0\n", "0: (b7) r0 = 0\n",
			      "1: (61) r2 = *(u32 *)(r1 +8)\n", "2: (25) if r2 > 0x3 goto pc+1\n",
			      "from 2 to 4: R0=0 R1=ctx(off=0) R2=scalar(smin=4,smax=4294967295,umin=4,umax=4294967295,var_off=(0; 0xffffffff)) R10=fp0\n",
			      "4: safe\n", /* r0 differs (0, 1) but only its type matters at exit */
			      "processed 6 insns (limit 1000000), 2 states stored, stack depth 0\n"};
	int ok = r == 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(logbuf, want[i])) {
			printf("FAIL verbose_log: missing '%s'", want[i]);
			ok = 0;
		}
	if (ok)
		printf("PASS verbose_log\n");
	else
		failures++, printf("log was:\n%s", logbuf);
	free(insns);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		run(&tests[i]);
	verbose_log();
	printf("%d of %d verifier unit cases pass\n", cases - failures, cases);
	return failures ? 1 : 0;
}
