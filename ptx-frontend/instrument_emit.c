/* The line writer of the instrumentation passes (instrument_internal.h). */
#include "ptx-frontend/instrument_internal.h"

#include <stdarg.h>
#include <stdio.h>

static void put(struct inst_emit *e, ir_stmt *s)
{
	s->generated = true;
	ir_stmt_insert_before(e->f, e->pos, s);
}

void ie_insn(struct inst_emit *e, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ir_stmt *st = len < 0 || (size_t)len >= sizeof(line) ? NULL : ir_insn_from_text(e->m, line);
	if (!st) {
		e->failed = 1;
		return;
	}
	put(e, st);
}

void ie_label(struct inst_emit *e, const char *name)
{
	put(e, ir_label_new(e->m, name));
}

void ie_block(struct inst_emit *e, int open)
{
	put(e, ir_stmt_new(e->m, open ? IR_STMT_BLOCK_OPEN : IR_STMT_BLOCK_CLOSE));
}

void ie_decl(struct inst_emit *e, const char *space, const char *type, const char *name,
	     int count, unsigned align, const char *dims)
{
	ir_stmt *s = ir_reg_decl_new(e->m, type, name, count);
	s->decl.space = ir_strdup(e->m, space);
	s->decl.align = align;
	if (dims)
		s->decl.dims = ir_strdup(e->m, dims);
	put(e, s);
}
