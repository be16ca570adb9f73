/* The line-at-a-time IR writer of maps/ (see map_emit.h). */
#include "maps/map_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_em(struct gp_emit *e, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ir_stmt *st = len < 0 || (size_t)len >= sizeof(buf) ? NULL : ir_insn_from_text(e->m, buf);
	if (!st) {
		if (!e->failed)
			fprintf(stderr, "gpuprobe: maps: internal error: cannot emit '%s'\n", buf);
		e->failed = 1;
		return;
	}
	ir_stmt_append(e->f, st);
}

void gp_em_label(struct gp_emit *e, const char *name)
{
	ir_stmt_append(e->f, ir_label_new(e->m, name));
}

static ir_decl param(ir_module *m, const char *name)
{
	return (ir_decl){.space = ".param", .type = ".b64", .name = ir_strdup(m, name), .count = -1};
}

ir_func *gp_em_func(ir_module *m, const char *name, unsigned nparams)
{
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	t->generated = true;
	ir_func *f = &t->func;
	f->name = ir_strdup(m, name);
	f->has_rets = true;
	f->nrets = 1;
	f->rets = ir_alloc(m, sizeof(ir_decl));
	f->rets[0] = param(m, "gp_ret");
	f->has_params = true;
	f->nparams = nparams;
	f->params = ir_alloc(m, (nparams ? nparams : 1) * sizeof(ir_decl));
	for (unsigned i = 0; i < nparams; i++)
		f->params[i] = param(m, ir_strfmt(m, "gp_a%u", i + 1));
	f->has_body = true;
	/* After the helpers already there (a helper may call an earlier one), before the rest. */
	ir_top *pos = m->first;
	while (pos && (pos->kind != IR_TOP_FUNC || !strncmp(pos->func.name, GP_EMIT_PREFIX,
							      strlen(GP_EMIT_PREFIX))))
		pos = pos->next;
	ir_top_insert_before(m, pos, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 48));
	ir_stmt_append(f, ir_reg_decl_new(m, ".b32", "%r", 32));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%p", 16));
	return f;
}

void gp_em_call(struct gp_emit *e, const char *fn, const char *ret_reg, unsigned nargs,
		const char *const *args)
{
	ir_module *m = e->m;
	ir_stmt_append(e->f, ir_stmt_new(m, IR_STMT_BLOCK_OPEN));
	char list[256] = "";
	size_t len = 0;
	for (unsigned i = 0; i < nargs; i++) {
		ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
		d->generated = true;
		d->decl = (ir_decl){.space = ".param", .type = ".b64",
				    .name = ir_strfmt(m, "gp_c%u", i + 1), .count = -1};
		ir_stmt_append(e->f, d);
		gp_em(e, "st.param.b64 [gp_c%u], %s", i + 1, args[i]);
		len += snprintf(list + len, sizeof(list) - len, "%sgp_c%u", i ? ", " : "", i + 1);
	}
	ir_stmt *d = ir_stmt_new(m, IR_STMT_DECL);
	d->generated = true;
	d->decl = (ir_decl){.space = ".param", .type = ".b64", .name = "gp_cr", .count = -1};
	ir_stmt_append(e->f, d);
	gp_em(e, "call.uni (gp_cr), %s, (%s)", fn, list);
	gp_em(e, "ld.param.b64 %s, [gp_cr]", ret_reg);
	ir_stmt_append(e->f, ir_stmt_new(m, IR_STMT_BLOCK_CLOSE));
}
