/* The emitters every part of the lowering uses: operands, instructions, labels, declarations,
 * all appended to the function being built (c->f). */
#include "ebpf/lower_internal.h"

#include <stdarg.h>
#include <stdio.h>

int lower_fail(struct lower_ctx *c, int errnum, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int k = snprintf(c->err, c->errlen, "insn %zu: ", c->pc);
		if (k >= 0 && (size_t)k < c->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return -errnum;
}

ir_operand lo_reg(struct lower_ctx *c, const char *name) { return ir_reg(c->m, name); }

ir_operand lo_imm(struct lower_ctx *c, uint64_t v)
{
	ir_operand o = ir_int((int64_t)v);
	/* Hex keeps every 64-bit pattern a valid PTX literal (no signed overflow in decimal). */
	o.text = ir_strfmt(c->m, "0x%llx", (unsigned long long)v);
	return o;
}

ir_operand lo_sym(struct lower_ctx *c, const char *name) { return ir_sym(c->m, name); }

ir_operand lo_addr(struct lower_ctx *c, const char *base, int64_t off)
{
	return ir_addr(c->m, base, off);
}

ir_operand lo_vec2(struct lower_ctx *c, const char *a, const char *b)
{
	ir_operand o = {.kind = IR_OPND_VEC, .nelems = 2};
	o.elems = ir_alloc(c->m, 2 * sizeof(*o.elems));
	o.elems[0] = ir_reg(c->m, a);
	o.elems[1] = ir_reg(c->m, b);
	return o;
}

ir_operand lo_list(struct lower_ctx *c, unsigned n, const char *const *names)
{
	ir_operand o = {.kind = IR_OPND_LIST, .nelems = n};
	o.elems = ir_alloc(c->m, (n ? n : 1) * sizeof(*o.elems));
	for (unsigned i = 0; i < n; i++)
		o.elems[i] = ir_sym(c->m, names[i]);
	return o;
}

static void emit_v(struct lower_ctx *c, const char *pred, bool neg, const char *op,
		   const char *mods, unsigned nops, va_list ap)
{
	ir_operand ops[8];
	for (unsigned i = 0; i < nops && i < 8; i++)
		ops[i] = va_arg(ap, ir_operand);
	ir_stmt *s = ir_insn_new(c->m, op, mods, nops, ops);
	if (pred) {
		s->insn.guard = ir_strdup(c->m, pred);
		s->insn.guard_neg = neg;
	}
	ir_stmt_append(c->f, s);
}

void lo_emit(struct lower_ctx *c, const char *op, const char *mods, unsigned nops, ...)
{
	va_list ap;
	va_start(ap, nops);
	emit_v(c, NULL, false, op, mods, nops, ap);
	va_end(ap);
}

void lo_emit_if(struct lower_ctx *c, const char *pred, bool neg, const char *op, const char *mods,
		unsigned nops, ...)
{
	va_list ap;
	va_start(ap, nops);
	emit_v(c, pred, neg, op, mods, nops, ap);
	va_end(ap);
}

void lo_label(struct lower_ctx *c, const char *name) { ir_stmt_append(c->f, ir_label_new(c->m, name)); }

const char *lo_new_label(struct lower_ctx *c)
{
	return ir_strfmt(c->m, "%sS%zu_%u", c->prefix, c->pc, c->label_seq++);
}

const char *lo_insn_label(struct lower_ctx *c, size_t idx)
{
	return ir_strfmt(c->m, "%sL%zu", c->prefix, idx);
}

void lo_decl_stmt(struct lower_ctx *c, const char *space, unsigned align, const char *type,
		  const char *name, const char *dims)
{
	ir_stmt *s = ir_stmt_new(c->m, IR_STMT_DECL);
	s->generated = true;
	s->decl.space = space;
	s->decl.align = align;
	s->decl.type = type;
	s->decl.name = ir_strdup(c->m, name);
	s->decl.count = -1;
	s->decl.dims = dims ? ir_strdup(c->m, dims) : NULL;
	ir_stmt_append(c->f, s);
}

static void block(struct lower_ctx *c, enum ir_stmt_kind k)
{
	ir_stmt *s = ir_stmt_new(c->m, k);
	s->generated = true;
	ir_stmt_append(c->f, s);
}

void lo_block_open(struct lower_ctx *c) { block(c, IR_STMT_BLOCK_OPEN); }
void lo_block_close(struct lower_ctx *c) { block(c, IR_STMT_BLOCK_CLOSE); }

void lo_lo32(struct lower_ctx *c, const char *w, const char *r)
{
	lo_emit(c, "cvt", ".u32.u64", 2, lo_reg(c, w), lo_reg(c, r));
}

void lo_zext32(struct lower_ctx *c, const char *r, const char *w)
{
	lo_emit(c, "cvt", ".u64.u32", 2, lo_reg(c, r), lo_reg(c, w));
}
