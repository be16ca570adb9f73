/* Unit tests of the SPIR-V emitter and lowering, on IR built by hand through the IR
 * constructors (the way probes reach the backend), and of the Level Zero path's error. */
#include "ptx-frontend/ir.h"
#include "spirv/emit.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("PASS " __VA_ARGS__);                                               \
		} else {                                                                           \
			printf("FAIL " __VA_ARGS__);                                               \
			failures++;                                                                \
		}                                                                                  \
		printf("\n");                                                                      \
	} while (0)

static void test_emitter_dedup(void)
{
	spv_emitter e;
	spv_emitter_init(&e);
	uint32_t i32a = spv_t_int(&e, 32), i32b = spv_t_int(&e, 32), i64 = spv_t_int(&e, 64);
	CHECK(i32a == i32b && i32a != i64, "emitter: one id per type");
	uint32_t p1 = spv_t_ptr(&e, SpvStorageClassCrossWorkgroup, i32a);
	uint32_t p2 = spv_t_ptr(&e, SpvStorageClassCrossWorkgroup, i32b);
	uint32_t p3 = spv_t_ptr(&e, SpvStorageClassWorkgroup, i32a);
	CHECK(p1 == p2 && p1 != p3, "emitter: pointer types keyed by storage class and pointee");
	uint32_t c1 = spv_c_int(&e, 32, 7), c2 = spv_c_int(&e, 32, 7), c3 = spv_c_int(&e, 64, 7);
	CHECK(c1 == c2 && c1 != c3, "emitter: constants keyed by type and value");
	CHECK(spv_c_int(&e, 32, 0x100000007ull) == c1, "emitter: constants truncated to their width");
	spv_capability(&e, SpvCapabilityKernel);
	spv_capability(&e, SpvCapabilityKernel);
	CHECK(e.caps.n == 2 + 2, "emitter: a capability is declared once (Int64, then Kernel twice: %zu words)", e.caps.n);
	size_t n;
	uint32_t *w = spv_emitter_finish(&e, &n);
	CHECK(w[0] == SpvMagicNumber && w[3] == e.next_id, "emitter: header with magic and id bound");
	free(w);
	spv_emitter_fini(&e);
}

/* A kernel k(.param .u64 p) { .reg ...; ld.param; atom.global.add.u32; ret; } built by hand. */
static ir_module *hand_module(const char *extra_opcode, const char *extra_mods)
{
	ir_module *m = ir_module_new();
	m->address_size = 64;
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *f = &t->func;
	f->is_entry = true;
	f->name = "k";
	f->has_params = f->has_body = true;
	f->params = ir_alloc(m, sizeof(ir_decl));
	f->params[0] = (ir_decl){.space = ".param", .type = ".u64", .name = "p", .count = -1};
	f->nparams = 1;
	ir_top_append(m, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 3));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", "%r", 3));
	ir_stmt_append(f, ir_insn_new(m, "ld", ".param.u64", 2, (ir_operand[]){ir_reg(m, "%rd1"), ir_addr(m, "p", 0)}));
	ir_stmt_append(f, ir_insn_new(m, "mov", ".u32", 2, (ir_operand[]){ir_reg(m, "%r1"), ir_reg(m, "%tid.x")}));
	ir_stmt_append(f, ir_insn_new(m, "atom", ".global.add.u32", 3,
				      (ir_operand[]){ir_reg(m, "%r2"), ir_addr(m, "%rd1", 4), ir_reg(m, "%r1")}));
	if (extra_opcode) {
		ir_stmt *s = ir_insn_new(m, extra_opcode, extra_mods, 2, (ir_operand[]){ir_reg(m, "%r1"), ir_reg(m, "%r2")});
		s->line = 42;
		ir_stmt_append(f, s);
	}
	ir_stmt_append(f, ir_insn_new(m, "ret", "", 0, NULL));
	return m;
}

static void count_note(void *arg, const char *func, const char *note)
{
	(void)func;
	(void)note;
	(*(unsigned *)arg)++;
}

static void test_hand_built_ir(void)
{
	ir_module *m = hand_module(NULL, NULL);
	uint32_t *w;
	size_t n;
	char err[512];
	int r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r == 0, "lowering a hand-built kernel (validated): %s", r ? err : "ok");
	if (!r) {
		char *text = spirv_disassemble(w, n);
		CHECK(strstr(text, "OpEntryPoint Kernel") && strstr(text, "OpAtomicIAdd") &&
			      strstr(text, "BuiltIn LocalInvocationId") && strstr(text, "OpMemoryModel Physical64 OpenCL"),
		      "the module has the entry point, the atomic, the builtin and Physical64/OpenCL");
		free(text);
		free(w);
	}
	ir_module_free(m);

	m = hand_module("wgmma", ".mma_async.sync.aligned.m64n8k16.f32.bf16.bf16");
	r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r == -ENOTSUP && !strcmp(err, "42: cannot lower `wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16` to "
					     "SPIR-V: tensor-core instructions have no SPIR-V equivalent"),
	      "an unsupported instruction names itself and its line: %s", err);
	ir_module_free(m);

	m = hand_module("frobnicate", ".u32");
	r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r == -ENOTSUP && !strcmp(err, "42: cannot lower `frobnicate.u32` to SPIR-V: no SPIR-V lowering for this instruction"),
	      "an unknown instruction: %s", err);
	ir_module_free(m);
}

static void test_validator_rejects(void)
{
	/* a header and OpCapability Kernel only: no memory model */
	uint32_t words[] = {SpvMagicNumber, 0x00010000, 0, 10, 0, (2u << 16) | SpvOpCapability, SpvCapabilityKernel};
	char err[512];
	int r = spirv_validate(words, sizeof(words) / 4, err, sizeof(err));
	CHECK(r == -EINVAL && !strncmp(err, "SPIR-V validation failed: ", 26) && !strchr(err, '\n'),
	      "the validator's complaint comes back on one line: %s", err);
}

static void test_level_zero(void)
{
	ir_module *m = hand_module(NULL, NULL);
	uint32_t *w;
	size_t n;
	char err[512];
	if (spirv_lower_module(m, NULL, &w, &n, err, sizeof(err)) < 0) {
		CHECK(0, "level zero: lowering failed: %s", err);
		ir_module_free(m);
		return;
	}
	int r = spirv_ze__check_module(w, n, "k", err, sizeof(err));
	/* Debian has no Level Zero driver: one clear error. With one, the module must load. */
	CHECK(r == 0 || (r == -ENODEV && !strncmp(err, "no Level Zero driver", 20)),
	      "level zero: loads the module or says there is no driver: %s", r ? err : "loaded");
	free(w);
	ir_module_free(m);
}

/* A PTX file of the tests, parsed (NULL, with a failed check, when it cannot be). */
static ir_module *parse_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL, "%s opens", path);
	if (!f)
		return NULL;
	static char text[1 << 16];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	char err[512];
	ir_module *m = ptx_parse(text, len, err, sizeof(err));
	CHECK(m != NULL, "%s parses%s%s", path, m ? "" : ": ", m ? "" : err);
	return m;
}

/* A module whose lowering has a note (a warp collective part of a block may not reach): the note
 * callback hears it, and lowered without options (as most callers do) the note goes nowhere and the
 * module still lowers. */
static void test_notes_without_options(const char *path)
{
	char err[512];
	ir_module *m = parse_file(path);
	if (!m)
		return;
	unsigned notes = 0;
	struct spirv_options o = {.noted = count_note, .skipped_arg = &notes};
	uint32_t *w = NULL;
	size_t n;
	int r = spirv_lower_module(m, &o, &w, &n, err, sizeof(err));
	CHECK(r == 0 && notes > 0, "%s with a note callback: %d, %u note(s): %s", path, r, notes, err);
	free(w);
	w = NULL;
	r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r == 0 && w, "%s without options: %d %s", path, r, err);
	free(w);
	ir_module_free(m);
}

/* An initializer element that is neither a number nor an identifier (the fuzzer's: a generic()
 * spanning lines) is one error line naming the variable, not a relocation with a made-up name. */
static void test_bad_initializer(void)
{
	static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
				  ".global .align 4 .u32 one = 11;\n"
				  ".global .align 8 .u64 ptrs[2] = {generic(one), generic(wget sm_70\n.x one)+4};\n"
				  ".visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n"
				  "\tld.global.u64 %rd2, [ptrs];\n\tst.global.u64 [%rd1], %rd2;\n\tret;\n}\n";
	char err[512];
	ir_module *m = ptx_parse(ptx, sizeof(ptx) - 1, err, sizeof(err));
	CHECK(m != NULL, "the module parses%s%s", m ? "" : ": ", m ? "" : err);
	if (!m)
		return;
	uint32_t *w = NULL;
	size_t n;
	int r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r < 0 && !w && !strcmp(err, "the initializer of ptrs holds an operand that cannot be read"),
	      "a generic() that names no identifier: %d '%s'", r, err);
	ir_module_free(m);
}

/* wmma.mma with a type the decoder does not know (the strict fuzzer's `.u8neg`): the two types it
 * knows were taken for the f16 shapes' d and c, and the module it made was invalid SPIR-V (an f16
 * product into s32); now one error line. */
static void test_wmma_unknown_type(const char *path)
{
	char err[512];
	ir_module *m = parse_file(path);
	if (!m)
		return;
	uint32_t *w = NULL;
	size_t n;
	int r = spirv_lower_module(m, NULL, &w, &n, err, sizeof(err));
	CHECK(r < 0 && !w && strstr(err, "27: cannot lower `wmma.mma.sync.aligned.row.col.m16n16k16.s32.u8neg.s32` to SPIR-V: "
					"two types (d and c) must be f16 or f32"),
	      "wmma.mma .s32.u8neg.s32: %d '%s'", r, err);
	ir_module_free(m);
}

int main(int argc, char **argv)
{
	test_bad_initializer();
	test_emitter_dedup();
	test_hand_built_ir();
	test_validator_rejects();
	test_level_zero();
	if (argc > 1)
		test_notes_without_options(argv[1]);
	if (argc > 2)
		test_wmma_unknown_type(argv[2]);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
