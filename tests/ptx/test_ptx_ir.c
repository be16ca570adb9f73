/* Unit tests of the PTX frontend: the semantic table on real instruction spellings, printing of
 * generated IR, in-place edits of parsed IR, and parse errors (exact messages).
 * usage: test_ptx_ir [semantics|print|errors|edit] (no argument: all) */
#include "ptx-frontend/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Parse one instruction inside a minimal kernel and return it (module in *mp). */
static ir_insn *parse_insn(const char *line, ir_module **mp)
{
	char text[1024], err[256];
	snprintf(text, sizeof(text),
		 ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\t%s\n}\n", line);
	ir_module *m = ptx_parse(text, strlen(text), err, sizeof(err));
	if (!m) {
		fprintf(stderr, "parse failed for '%s': %s\n", line, err);
		failures++;
		return NULL;
	}
	*mp = m;
	ir_func *f = ir_module_find_func(m, "k");
	if (!f || !f->first || f->first->kind != IR_STMT_INSN) {
		fprintf(stderr, "no instruction parsed from '%s'\n", line);
		failures++;
		return NULL;
	}
	return &f->first->insn;
}

struct mem_case {
	const char *insn;
	unsigned flags;          /* flags that must be set */
	int ndst;
	int is_mem;
	enum ir_space space;
	enum ir_access_dir dir;
	unsigned size;
	int addr_op;
	int dst_addr_op;
	enum ir_space dst_space;
};

static const struct mem_case mem_cases[] = {
	{"ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];", IR_F_LOAD, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 16, 1, -1, 0},
	{"ld.u64 %rd1, [%rd2];", IR_F_LOAD, 1, 1, IR_SPACE_GENERIC, IR_ACCESS_READ, 8, 1, -1, 0},
	{"ld.param.u64 %rd1, [k_param_0];", IR_F_LOAD, 1, 1, IR_SPACE_PARAM, IR_ACCESS_READ, 8, 1, -1, 0},
	{"ld.global.L1::no_allocate.L2::256B.v2.u32 {%r1, %r2}, [%rd1];", IR_F_LOAD, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 8, 1, -1, 0},
	{"ld.shared::cta.b128 %rq1, [%r1];", IR_F_LOAD, 1, 1, IR_SPACE_SHARED, IR_ACCESS_READ, 16, 1, -1, 0},
	{"ld.volatile.shared.u16 %rs1, [%r2+-4];", IR_F_LOAD, 1, 1, IR_SPACE_SHARED, IR_ACCESS_READ, 2, 1, -1, 0},
	{"ldu.global.f64 %fd1, [%rd3];", IR_F_LOAD, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 8, 1, -1, 0},
	{"ld.const.v4.u8 {%rs1, %rs2, %rs3, %rs4}, [cdata+8];", IR_F_LOAD, 1, 1, IR_SPACE_CONST, IR_ACCESS_READ, 4, 1, -1, 0},
	{"st.shared.u8 [%r1], %rs1;", IR_F_STORE, 0, 1, IR_SPACE_SHARED, IR_ACCESS_WRITE, 1, 0, -1, 0},
	{"st.local.v2.f64 [%rd1], {%fd1, %fd2};", IR_F_STORE, 0, 1, IR_SPACE_LOCAL, IR_ACCESS_WRITE, 16, 0, -1, 0},
	{"st.global.cs.v8.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};", IR_F_STORE, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_WRITE, 32, 0, -1, 0},
	{"st.f16 [%rd1], %rs1;", IR_F_STORE, 0, 1, IR_SPACE_GENERIC, IR_ACCESS_WRITE, 2, 0, -1, 0},
	{"st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.s32 [%r1], {%r2, %r3}, [%r4];", IR_F_STORE | IR_F_ASYNC, 0, 1, IR_SPACE_SHARED, IR_ACCESS_WRITE, 8, 0, -1, 0},
	{"atom.global.add.u32 %r1, [%rd1], 1;", IR_F_ATOMIC, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_RMW, 4, 1, -1, 0},
	{"atom.shared.cas.b64 %rd1, [%r1], %rd2, %rd3;", IR_F_ATOMIC, 1, 1, IR_SPACE_SHARED, IR_ACCESS_RMW, 8, 1, -1, 0},
	{"atom.add.noftz.f16x2 %r1, [%rd1], %r2;", IR_F_ATOMIC, 1, 1, IR_SPACE_GENERIC, IR_ACCESS_RMW, 4, 1, -1, 0},
	{"atom.sys.global.exch.b32 %r1, [%rd1], %r2;", IR_F_ATOMIC, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_RMW, 4, 1, -1, 0},
	{"red.shared.add.u64 [%r1], %rd1;", IR_F_ATOMIC, 0, 1, IR_SPACE_SHARED, IR_ACCESS_RMW, 8, 0, -1, 0},
	{"red.relaxed.gpu.global.add.f32 [%rd1], %f1;", IR_F_ATOMIC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_RMW, 4, 0, -1, 0},
	{"cp.async.ca.shared.global [%r1], [%rd1], 16;", IR_F_ASYNC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 16, 1, 0, IR_SPACE_SHARED},
	{"cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16, %r2;", IR_F_ASYNC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 16, 1, 0, IR_SPACE_SHARED},
	{"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 4096, [%r2];", IR_F_ASYNC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 4096, 1, 0, IR_SPACE_SHARED},
	{"cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 4096;", IR_F_ASYNC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_WRITE, 4096, 0, -1, 0},
	{"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];", IR_F_ASYNC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 0, 1, 0, IR_SPACE_SHARED},
	{"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 256;", IR_F_ASYNC | IR_F_ATOMIC, 0, 1, IR_SPACE_GLOBAL, IR_ACCESS_RMW, 256, 0, -1, 0},
	{"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", IR_F_LOAD | IR_F_TENSOR, 1, 1, IR_SPACE_SHARED, IR_ACCESS_READ, 16, 1, -1, 0},
	{"ldmatrix.sync.aligned.m8n8.x2.trans.b16 {%r1, %r2}, [%r5];", IR_F_LOAD | IR_F_TENSOR, 1, 1, IR_SPACE_SHARED, IR_ACCESS_READ, 8, 1, -1, 0},
	{"stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r1], {%r2, %r3};", IR_F_STORE | IR_F_TENSOR, 0, 1, IR_SPACE_SHARED, IR_ACCESS_WRITE, 8, 0, -1, 0},
	{"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;", IR_F_LOAD | IR_F_TENSOR, 1, 1, IR_SPACE_GLOBAL, IR_ACCESS_READ, 32, 1, -1, 0},
	{"wmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, %r1;", IR_F_STORE | IR_F_TENSOR, 0, 1, IR_SPACE_GENERIC, IR_ACCESS_WRITE, 32, 0, -1, 0},
	/* not memory accesses */
	{"prefetch.global.L2 [%rd1];", 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];", IR_F_TEX, 1, 0, 0, 0, 0, 0, 0, 0},
	{"suld.b.2d.b32.trap {%r1}, [%rd1, {%r2, %r3}];", IR_F_TEX, 1, 0, 0, 0, 0, 0, 0, 0},
	{"sust.b.2d.b32.trap [%rd1, {%r2, %r3}], {%r4};", IR_F_TEX, 0, 0, 0, 0, 0, 0, 0, 0},
	{"cp.async.wait_group 0;", IR_F_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0},
	{"cp.async.commit_group;", IR_F_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0},
	{"bar.sync 0;", IR_F_BARRIER, 0, 0, 0, 0, 0, 0, 0, 0},
	{"barrier.sync.aligned 1, 64;", IR_F_BARRIER, 0, 0, 0, 0, 0, 0, 0, 0},
	{"bar.red.popc.u32 %r1, 0, %p1;", IR_F_BARRIER, 1, 0, 0, 0, 0, 0, 0, 0},
	{"bar.warp.sync -1;", IR_F_BARRIER | IR_F_WARP, 0, 0, 0, 0, 0, 0, 0, 0},
	{"shfl.sync.idx.b32 %r1|%p1, %r2, 1, 31, -1;", IR_F_WARP, 1, 0, 0, 0, 0, 0, 0, 0},
	{"vote.sync.ballot.b32 %r1, %p1, -1;", IR_F_WARP, 1, 0, 0, 0, 0, 0, 0, 0},
	{"redux.sync.add.u32 %r1, %r2, -1;", IR_F_WARP, 1, 0, 0, 0, 0, 0, 0, 0},
	{"activemask.b32 %r1;", IR_F_WARP, 1, 0, 0, 0, 0, 0, 0, 0},
	{"membar.gl;", IR_F_FENCE, 0, 0, 0, 0, 0, 0, 0, 0},
	{"fence.proxy.async.shared::cta;", IR_F_FENCE, 0, 0, 0, 0, 0, 0, 0, 0},
	{"call.uni (retval0), _Z3fooi, (param0);", IR_F_CALL, 0, 0, 0, 0, 0, 0, 0, 0},
	{"@%p1 bra $L__BB0_2;", IR_F_BRANCH, 0, 0, 0, 0, 0, 0, 0, 0},
	{"brx.idx %r1, $L_brx_0;", IR_F_BRANCH, 0, 0, 0, 0, 0, 0, 0, 0},
	{"ret;", IR_F_RET, 0, 0, 0, 0, 0, 0, 0, 0},
	{"exit;", IR_F_EXIT, 0, 0, 0, 0, 0, 0, 0, 0},
	{"trap;", IR_F_EXIT, 0, 0, 0, 0, 0, 0, 0, 0},
	{"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r3}, {%f1, %f2, %f3, %f4};", IR_F_TENSOR, 1, 0, 0, 0, 0, 0, 0, 0},
	{"wgmma.fence.sync.aligned;", IR_F_TENSOR | IR_F_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0},
	{"mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", IR_F_BARRIER, 1, 0, 0, 0, 0, 0, 0, 0},
	{"mbarrier.init.shared::cta.b64 [%r1], 1;", IR_F_BARRIER, 0, 0, 0, 0, 0, 0, 0, 0},
	{"mad.lo.s32 %r5, %r4, %r3, %r1;", 0, 1, 0, 0, 0, 0, 0, 0, 0},
	{"setp.ne.s32 %p3, %r19, 0;", 0, 1, 0, 0, 0, 0, 0, 0, 0},
};

static void test_semantics(void)
{
	for (size_t i = 0; i < sizeof(mem_cases) / sizeof(mem_cases[0]); i++) {
		const struct mem_case *c = &mem_cases[i];
		ir_module *m = NULL;
		ir_insn *in = parse_insn(c->insn, &m);
		if (!in) {
			ir_module_free(m);
			continue;
		}
		CHECK(in->info, "%s: not in the table", c->insn);
		if (in->info) {
			CHECK((in->info->flags & c->flags) == c->flags, "%s: flags %#x, want %#x set",
			      c->insn, in->info->flags, c->flags);
			CHECK(in->info->ndst == c->ndst, "%s: ndst %d, want %d", c->insn, in->info->ndst,
			      c->ndst);
		}
		struct ir_mem_access a;
		memset(&a, 0x5a, sizeof(a));
		int r = ir_insn_mem_access(in, &a);
		CHECK(r == c->is_mem, "%s: mem_access returned %d, want %d", c->insn, r, c->is_mem);
		if (r && c->is_mem) {
			CHECK(a.space == c->space, "%s: space %d, want %d", c->insn, a.space, c->space);
			CHECK(a.dir == c->dir, "%s: dir %d, want %d", c->insn, a.dir, c->dir);
			CHECK(a.size == c->size, "%s: size %u, want %u", c->insn, a.size, c->size);
			CHECK(a.addr_op == c->addr_op, "%s: addr_op %d, want %d", c->insn, a.addr_op,
			      c->addr_op);
			CHECK(in->ops[a.addr_op].kind == IR_OPND_ADDR, "%s: address operand is not [..]",
			      c->insn);
			CHECK(a.dst_addr_op == c->dst_addr_op, "%s: dst_addr_op %d, want %d", c->insn,
			      a.dst_addr_op, c->dst_addr_op);
			if (c->dst_addr_op >= 0)
				CHECK(a.dst_space == c->dst_space, "%s: dst_space %d, want %d", c->insn,
				      a.dst_space, c->dst_space);
		}
		ir_module_free(m);
	}
	/* Lookups by name, dotted entries included; unknown opcodes give NULL. */
	const char *known[] = {"abs", "add", "atom", "bar", "bar.red", "cp.async", "cp.async.bulk.tensor",
			       "ld", "ldmatrix", "mbarrier.try_wait", "st", "wmma.load", "xor", "vote", "tex"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const ir_insn_info *e = ir_insn_info_lookup(known[i]);
		CHECK(e && !strcmp(e->opcode, known[i]), "lookup '%s' failed", known[i]);
	}
	CHECK(!ir_insn_info_lookup("frobnicate"), "unknown opcode found");
	CHECK(!ir_insn_info_lookup(""), "empty opcode found");
	/* An unknown instruction parses, has no info, and round-trips. */
	ir_module *m = NULL;
	ir_insn *in = parse_insn("frob.x.y %r1, [%rd1+8], {%r2, _};", &m);
	if (in) {
		CHECK(!in->info, "frob has info");
		CHECK(in->nmods == 2 && in->nops == 3, "frob: %u mods %u ops", in->nmods, in->nops);
		CHECK(in->ops[1].kind == IR_OPND_ADDR && in->ops[1].ival == 8, "frob: address operand");
		CHECK(in->ops[2].kind == IR_OPND_VEC && in->ops[2].nelems == 2, "frob: vector operand");
	}
	ir_module_free(m);
}

static void expect_print(ir_module *m, const char *want, const char *what)
{
	size_t len;
	char *got = ptx_print(m, &len);
	CHECK(len == strlen(got), "%s: length %zu vs strlen %zu", what, len, strlen(got));
	CHECK(!strcmp(got, want), "%s: printed\n---\n%s---\nwant\n---\n%s---", what, got, want);
	free(got);
}

static void test_print_generated(void)
{
	ir_module *m = ir_module_new();
	ir_top *d = ir_top_new(m, IR_TOP_DIRECTIVE);
	d->text = ".version 8.8";
	ir_top_append(m, d);
	ir_top *g = ir_top_new(m, IR_TOP_DECL);
	g->decl = (ir_decl){.linkage = ".visible", .space = ".global", .align = 8, .type = ".u64",
			    .name = "counter", .count = -1, .dims = "[4]", .init = "{1, 2, 3, 4}"};
	ir_top_append(m, g);
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *f = &t->func;
	f->is_entry = true;
	f->linkage = ".visible";
	f->name = "k";
	f->has_params = true;
	f->nparams = 1;
	f->params = ir_alloc(m, sizeof(ir_decl));
	f->params[0] = (ir_decl){.space = ".param", .type = ".u64", .name = "k_param_0", .count = -1,
				 .ptr_attrs = ".ptr .global .align 4"};
	f->has_body = true;
	ir_top_append(m, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%gp", 4));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%gp_p", -1));
	ir_stmt_append(f, ir_insn_new(m, "add", ".s64", 3,
				      (ir_operand[]){ir_reg(m, "%gp1"), ir_reg(m, "%gp2"), ir_int(-5)}));
	ir_stmt_append(f, ir_insn_new(m, "ld", ".global.u32", 2,
				      (ir_operand[]){ir_reg(m, "%r1"), ir_addr(m, "%gp1", 8)}));
	ir_stmt_append(f, ir_insn_new(m, "st", ".local.u8", 2,
				      (ir_operand[]){ir_addr(m, "%gp1", -4), ir_reg(m, "%rs1")}));
	ir_stmt_append(f, ir_insn_new(m, "ld", ".const.u32", 2,
				      (ir_operand[]){ir_reg(m, "%r2"), ir_addr(m, NULL, 64)}));
	ir_stmt_append(f, ir_insn_new(m, "st", ".shared.u32", 2,
				      (ir_operand[]){ir_addr(m, "buf", 0), ir_int(1234567890123LL)}));
	ir_stmt *br = ir_insn_new(m, "bra", ".uni", 1, (ir_operand[]){ir_sym(m, "$L_gp_done")});
	br->insn.guard = "%gp_p";
	br->insn.guard_neg = true;
	ir_stmt_append(f, br);
	ir_stmt_append(f, ir_label_new(m, "$L_gp_done"));
	ir_stmt_append(f, ir_insn_new(m, "ret", "", 0, NULL));
	CHECK(f->first->next->next->insn.info && !strcmp(f->first->next->next->insn.info->opcode, "add"),
	      "ir_insn_new sets info");
	expect_print(m,
		     ".version 8.8\n"
		     ".visible .global .align 8 .u64 \tcounter[4] = {1, 2, 3, 4};\n"
		     ".visible .entry k(\n"
		     "\t.param .u64 .ptr .global .align 4 \tk_param_0\n"
		     ")\n"
		     "{\n"
		     "\t.reg .b64 \t%gp<4>;\n"
		     "\t.reg .pred \t%gp_p;\n"
		     "\tadd.s64 \t%gp1, %gp2, -5;\n"
		     "\tld.global.u32 \t%r1, [%gp1+8];\n"
		     "\tst.local.u8 \t[%gp1+-4], %rs1;\n"
		     "\tld.const.u32 \t%r2, [64];\n"
		     "\tst.shared.u32 \t[buf], 1234567890123;\n"
		     "\t@!%gp_p bra.uni \t$L_gp_done;\n"
		     "$L_gp_done:\n"
		     "\tret;\n"
		     "}\n",
		     "generated module");
	ir_module_free(m);
}

/* Edits of a parsed module: untouched lines keep their text (comments, layout), edited ones are
 * printed from the IR, inserted ones appear in place. */
static void test_edit(void)
{
	const char *src = ".version 8.8\n.target sm_90\n.address_size 64\n\n"
			  "// kernel\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
			  "\t.reg .b32 \t%r<3>;  // regs\n"
			  "\tmov.u32 \t%r1, %tid.x; // tid\n"
			  "\tadd.s32 \t%r2, %r1, 0x10;\n"
			  "\tret;\n}\n// end\n";
	char err[256];
	ir_module *m = ptx_parse(src, strlen(src), err, sizeof(err));
	CHECK(m, "parse: %s", err);
	if (!m)
		return;
	size_t len;
	char *out = ptx_print(m, &len);
	CHECK(!strcmp(out, src), "untouched module not reproduced:\n%s", out);
	free(out);
	ir_func *f = ir_module_find_func(m, "k");
	ir_stmt *add = f->first->next->next;
	CHECK(add->kind == IR_STMT_INSN && !strcmp(add->insn.opcode, "add"), "third statement is add");
	CHECK(add->insn.ops[2].kind == IR_OPND_INT && add->insn.ops[2].ival == 16, "0x10 parsed as 16");
	add->insn.ops[2] = ir_int(7);
	add->insn.ops[2].text = NULL;
	ir_stmt_insert_before(f, add, ir_insn_new(m, "mov", ".u32", 2,
						  (ir_operand[]){ir_reg(m, "%r2"), ir_int(3)}));
	CHECK(m->version && !strcmp(m->version, "8.8"), "version field");
	CHECK(m->target && !strcmp(m->target, "sm_90"), "target field");
	CHECK(m->address_size == 64, "address size");
	out = ptx_print(m, &len);
	const char *want = ".version 8.8\n.target sm_90\n.address_size 64\n\n"
			   "// kernel\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
			   "\t.reg .b32 \t%r<3>;  // regs\n"
			   "\tmov.u32 \t%r1, %tid.x; // tid\n"
			   "\tmov.u32 \t%r2, 3;\n"
			   "\tadd.s32 \t%r2, %r1, 7;\n"
			   "\tret;\n}\n// end\n";
	CHECK(!strcmp(out, want), "edited module:\n%s\nwant\n%s", out, want);
	free(out);
	/* a new parameter makes the header print from the IR */
	ir_decl *np = ir_alloc(m, 2 * sizeof(ir_decl));
	np[0] = f->params[0];
	np[1] = (ir_decl){.space = ".param", .type = ".u64", .name = "k_param_1", .count = -1};
	f->params = np;
	f->nparams = 2;
	out = ptx_print(m, &len);
	CHECK(strstr(out, ".visible .entry k(\n\t.param .u64 \tk_param_0,\n\t.param .u64 \tk_param_1\n)\n{\n"),
	      "header with new parameter:\n%s", out);
	free(out);
	ir_module_free(m);
}

struct err_case {
	const char *text;
	const char *want;
};

static const struct err_case err_cases[] = {
	{".version 8.8\n.entry k()\n{\n\tadd.s32 %r1, %r2 %r3;\n}\n", "4:19: expected ',' or ';' after an operand, found '%r3'"},
	{".version 8.8\n.entry k()\n{\n\tret;\n", "3:1: unterminated function body (missing '}')"},
	{".version 8.8\n.entry k(\n", "3:1: expected a state space, found end of file"},
	{"mov.u32 %r1, 2;\n", "1:1: expected a directive, declaration or function, found 'mov'"},
	{".version 8.8\n.global .u32 x = ;\n", "2:18: expected an initializer, found ';'"},
	{".entry k()\n{\n\tld.global.u32 %r1, [%rd1;\n}\n", "3:26: expected ']', found ';'"},
	{".entry k()\n{\n\t@ ;\n}\n", "3:4: expected a predicate after '@', found ';'"},
	{".entry k()\n{\n\tmov.u32 %r1, 12abc;\n}\n", "3:15: malformed number"},
	{".file 1 \"a.cu\n", "1:9: unterminated string"},
	{"/* never closed\n.version 8.8\n", "1:1: unterminated comment"},
	{".entry k()\n{\n\tmov.u32 %r1, \x01;\n}\n", "3:15: unexpected character"},
	{".reg .b32 %r<;\n", "1:14: expected a register count, found ';'"},
	{".entry k()\n{\n\t%r1: mov.u32 %r1, 1;\n}\n", "3:2: expected an instruction, label, declaration or directive, found '%r1'"},
	{".section .debug_info {\n.b8 1\n", "1:1: unterminated .section (missing '}')"},
	{".entry k()\n{\n\tmov.b32 {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{;\n}\n", "3:42: operand nested too deeply"},
	/* the amdgpu fuzzer: a second body with more parameters overran the first's parameter types */
	{".func f(.param .u32 a)\n{\n\tret;\n}\n.func f(.param .u32 a, .param .u32 b)\n{\n\tret;\n}\n",
	 "6:1: function f is defined twice (first at line 1)"},
	{".func f();\n.func f()\n{\n\tret;\n}\n", NULL},   /* a declaration, then the body: fine */
	/* a prototype without the parameters of the body that follows (the fuzzer, again) */
	{".entry k;\n.entry k(.param .u64 a)\n{\n\tret;\n}\n",
	 "3:1: function k: 1 parameter(s) and 0 return value(s) here, 0 and 0 at line 1"},
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		char err[256] = "untouched";
		ir_module *m = ptx_parse(err_cases[i].text, strlen(err_cases[i].text), err, sizeof(err));
		if (!err_cases[i].want) {   /* must parse */
			CHECK(m, "case %zu: %s", i, err);
			ir_module_free(m);
			continue;
		}
		CHECK(!m, "case %zu parsed", i);
		ir_module_free(m);
		CHECK(!strcmp(err, err_cases[i].want), "case %zu: error '%s', want '%s'", i, err,
		      err_cases[i].want);
	}
	/* Trailing NULs (PTX from a fatbin) end the text; other NULs are errors, even in comments. */
	char e2[64];
	ir_module *mz = ptx_parse(".version 8.8\n\0\0", 15, e2, sizeof(e2));
	CHECK(mz, "trailing NULs rejected: %s", e2);
	ir_module_free(mz);
	mz = ptx_parse(".version 8.8\n// a\0b\n", 19, e2, sizeof(e2));
	CHECK(!mz && !strcmp(e2, "2:5: unexpected NUL byte"), "NUL in comment: '%s'", e2);
	ir_module_free(mz);
	/* Embedded NUL and a tiny error buffer must not crash. */
	char small[4];
	ir_module *m = ptx_parse(".version\0 8.8", 13, small, sizeof(small));
	CHECK(!m && strlen(small) == 3, "tiny error buffer");
	ir_module_free(m);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	bool all = !strcmp(which, "all");
	if (all || !strcmp(which, "semantics"))
		test_semantics();
	if (all || !strcmp(which, "print"))
		test_print_generated();
	if (all || !strcmp(which, "edit"))
		test_edit();
	if (all || !strcmp(which, "errors"))
		test_errors();
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("test_ptx_ir %s: all checks passed\n", which);
	return 0;
}
