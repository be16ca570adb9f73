/* ptx_link (ptx-frontend/link.h): two translation units as nvcc -rdc writes them, linked; the
 * result parses, defines each function and variable once (a called function of the later unit
 * keeps a prototype before its caller; both units' `extern __shared__` array is declared once), calls and reads across the units, and keeps both units'
 * format strings apart. Then the errors: two visible definitions of one name,
 * a unit that does not parse. */
#include "ptx-frontend/ir.h"
#include "ptx-frontend/link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char unit_a[] =
	".version 8.8\n.target sm_90\n.address_size 64\n"
	".extern .global .align 4 .u32 scale_b;\n"
	".extern .shared .align 4 .b8 dyn[];\n"
	".global .align 1 .b8 $str[4] = {97, 58, 10, 0};\n"
	".extern .func (.param .b32 ret) twice_b(.param .b32 x);\n"
	".weak .func (.param .b32 r) helper(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u32 %r1, [x];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".visible .entry kernel_a(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n"
	"\t{\n\t.param .b32 p0;\n\t.param .b32 r0;\n\tst.param.b32 [p0], %r1;\n"
	"\tcall.uni (r0), twice_b, (p0);\n\tld.param.b32 %r2, [r0];\n\t}\n"
	"\tld.global.u32 %r3, [scale_b];\n\tmov.u64 %rd2, $str;\n\tst.global.u32 [%rd1], %r3;\n\tret;\n}\n";

static const char unit_b[] =
	".version 9.0\n.target sm_90\n.address_size 64\n"
	".visible .global .align 4 .u32 scale_b = 3;\n"
	".extern .shared .align 16 .b8 dyn[];\n"
	".global .align 1 .b8 $str[4] = {98, 58, 10, 0};\n"
	".global .align 8 .u64 p_str = generic($str);\n"
	".weak .func (.param .b32 r) helper(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u32 %r1, [x];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".visible .func (.param .b32 ret) twice_b(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n"
	"\tld.param.u32 %r1, [x];\n\tshl.b32 %r2, %r1, 1;\n\tst.param.b32 [ret], %r2;\n\tret;\n}\n"
	".visible .entry kernel_b(.param .u64 out)\n{\n\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [out];\n\tmov.u64 %rd2, $str;\n\tst.global.u64 [%rd1], %rd2;\n\tret;\n}\n";

/* How many module-scope nodes name `name`, and how many of them with a body or no .extern. */
static void count(const ir_module *m, const char *name, int *all, int *defs)
{
	*all = *defs = 0;
	for (const ir_top *t = m->first; t; t = t->next) {
		const char *n = t->kind == IR_TOP_FUNC ? t->func.name : t->kind == IR_TOP_DECL ? t->decl.name : NULL;
		if (!n || strcmp(n, name))
			continue;
		(*all)++;
		if (t->kind == IR_TOP_FUNC ? t->func.has_body : !(t->decl.linkage && !strcmp(t->decl.linkage, ".extern")))
			(*defs)++;
	}
}

int main(void)
{
	const char *texts[2] = {unit_a, unit_b};
	size_t lens[2] = {sizeof(unit_a) - 1, sizeof(unit_b) - 1}, len = 0;
	char err[256] = "";
	char *out = ptx_link(texts, lens, 2, &len, err, sizeof(err));
	CHECK(out, "ptx_link failed: %s", err);
	if (!out)
		return 1;
	ir_module *m = ptx_parse(out, len, err, sizeof(err));
	CHECK(m, "the linked module does not parse: %s\n%s", err, out);
	if (m) {
		CHECK(m->version && !strcmp(m->version, "9.0"), "version %s, expected the units' highest, 9.0",
		      m->version ? m->version : "(none)");
		int headers = 0;
		for (const ir_top *t = m->first; t; t = t->next)
			headers += t->kind == IR_TOP_DIRECTIVE && !strncmp(t->text, ".target", 7);
		CHECK(headers == 1, "%d .target lines, expected 1", headers);
		static const struct { const char *name; int all, defs; } want[] = {
			{"twice_b", 2, 1}, {"scale_b", 1, 1}, {"helper", 1, 1}, {"kernel_a", 1, 1}, {"kernel_b", 1, 1},
			{"$str", 1, 1}, {"$str_gpl_2", 1, 1}, {"p_str", 1, 1}, {"dyn", 1, 0},
		};
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			int all, defs;
			count(m, want[i].name, &all, &defs);
			CHECK(all == want[i].all && defs == want[i].defs, "%s: %d nodes, %d definitions; expected %d and %d",
			      want[i].name, all, defs, want[i].all, want[i].defs);
		}
		/* twice_b's prototype: .visible now, and before kernel_a, which calls it; every variable
		 * before every function */
		int seen_func = 0, proto_first = 0, var_after_func = 0;
		for (const ir_top *t = m->first; t; t = t->next) {
			if (t->kind == IR_TOP_FUNC && !strcmp(t->func.name, "twice_b") && !t->func.has_body)
				proto_first = !seen_func && t->func.linkage && !strcmp(t->func.linkage, ".visible");
			if (t->kind == IR_TOP_FUNC && !strcmp(t->func.name, "kernel_a"))
				seen_func = 1;
			if (t->kind == IR_TOP_DECL && (seen_func || ir_module_first_func(m) != NULL) &&
			    ir_module_first_func(m) && t->line > ir_module_first_func(m)->line)
				var_after_func = 1;
		}
		CHECK(proto_first, "twice_b's prototype is not a .visible one before kernel_a");
		CHECK(!var_after_func, "a variable after a function");
		ir_func *kb = ir_module_find_func(m, "kernel_b");
		const char *kb_str = NULL;
		for (const ir_stmt *s = kb ? kb->first : NULL; s; s = s->next)
			if (s->kind == IR_STMT_INSN && !strcmp(s->insn.opcode, "mov") && s->insn.nops == 2)
				kb_str = s->insn.ops[1].name;
		CHECK(kb_str && !strcmp(kb_str, "$str_gpl_2"), "kernel_b reads %s, expected its own $str_gpl_2",
		      kb_str ? kb_str : "(nothing)");
		int found = 0;
		for (const ir_top *t = m->first; t; t = t->next)
			found |= t->kind == IR_TOP_DECL && !strcmp(t->decl.name, "p_str") && t->decl.init &&
				 strstr(t->decl.init, "generic($str_gpl_2)");
		CHECK(found, "p_str's initializer does not name $str_gpl_2");
		unsigned dyn_align = 0;
		for (const ir_top *t = m->first; t; t = t->next)
			if (t->kind == IR_TOP_DECL && !strcmp(t->decl.name, "dyn"))
				dyn_align = t->decl.align;
		CHECK(dyn_align == 16, "the one dyn[] is aligned %u, expected the larger of 4 and 16", dyn_align);
		ir_module_free(m);
	}
	free(out);

	/* two visible definitions of one name */
	const char *twice[2] = {unit_b, unit_b};
	size_t tl[2] = {sizeof(unit_b) - 1, sizeof(unit_b) - 1};
	out = ptx_link(twice, tl, 2, &len, err, sizeof(err));
	CHECK(!out && !strcmp(err, "scale_b is defined in more than one unit"), "two visible scale_b: %s",
	      out ? "linked" : err);
	free(out);
	/* a unit that does not parse */
	const char *bad[2] = {unit_a, ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n"};
	size_t bl[2] = {sizeof(unit_a) - 1, strlen(bad[1])};
	out = ptx_link(bad, bl, 2, &len, err, sizeof(err));
	CHECK(!out && !strncmp(err, "unit 2: ", 8), "a broken unit 2: %s", out ? "linked" : err);
	free(out);
	if (failures)
		fprintf(stderr, "test_ptx_link: %d failures\n", failures);
	else
		printf("test_ptx_link: PASS\n");
	return failures != 0;
}
