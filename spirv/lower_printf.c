/* CUDA's device printf is vprintf(format, packed arguments); OpenCL's is the printf extended
 * instruction with a constant format and the arguments as values. When the format is a constant
 * string of the module (as nvcc and ebpf/lower's puts write it: mov of the string's symbol, cvta,
 * st.param), the call becomes OpenCL printf: the format is copied into constant memory and each
 * conversion's argument is loaded from the packed buffer (every argument at its natural
 * alignment; float already promoted to double, as C varargs do). */
#include "spirv/lower.h"

#include <stdlib.h>
#include <string.h>

/* The symbol whose address reaches `.param` variable pname, following st.param, mov and cvta
 * back from the call. */
static const char *format_symbol(lw *c, const char *pname)
{
	const char *want = NULL;
	unsigned budget = 256;
	for (const ir_stmt *s = c->cur ? c->cur->prev : NULL; s && budget--; s = s->prev) {
		if (s->kind != IR_STMT_INSN)
			continue;
		const ir_insn *in = &s->insn;
		if (!want) {
			if (!strcmp(in->opcode, "st") && in->nops == 2 && in->ops[0].kind == IR_OPND_ADDR &&
			    in->ops[0].name && !strcmp(in->ops[0].name, pname)) {
				if (in->ops[1].kind == IR_OPND_SYMBOL)
					return in->ops[1].name;
				if (in->ops[1].kind != IR_OPND_REG)
					return NULL;
				want = in->ops[1].name;
			}
			continue;
		}
		if (in->nops == 2 && in->ops[0].kind == IR_OPND_REG && !strcmp(in->ops[0].name, want)) {
			if (strcmp(in->opcode, "mov") && strcmp(in->opcode, "cvta"))
				return NULL;
			if (in->ops[1].kind == IR_OPND_SYMBOL)
				return in->ops[1].name;
			if (in->ops[1].kind != IR_OPND_REG)
				return NULL;
			want = in->ops[1].name;
		}
	}
	return NULL;
}

static const ir_decl *find_decl(const ir_module *m, const char *name)
{
	for (const ir_top *t = m->first; t; t = t->next) {
		if (t->kind == IR_TOP_DECL && t->decl.name && !strcmp(t->decl.name, name))
			return &t->decl;
		if (t->kind == IR_TOP_FUNC)
			for (const ir_stmt *s = t->func.first; s; s = s->next)
				if (s->kind == IR_STMT_DECL && s->decl.name && !strcmp(s->decl.name, name))
					return &s->decl;
	}
	return NULL;
}

enum arg_kind { ARG_I32, ARG_I64, ARG_F64, ARG_STR, ARG_PTR };

/* A string in constant memory (where OpenCL printf wants its format); returns an i8 pointer. */
static uint32_t const_string(lw *c, const char *str, size_t len)
{
	uint32_t i8 = spv_t_int(c->e, 8);
	uint32_t at = spv_t_array(c->e, i8, spv_c_int(c->e, 32, len + 1));
	uint32_t *ops = malloc((len + 3) * sizeof(uint32_t));
	ops[0] = at;
	ops[1] = spv_id(c->e);
	for (size_t k = 0; k <= len; k++)
		ops[2 + k] = spv_c_int(c->e, 8, k < len ? (uint8_t)str[k] : 0);
	spv_inst(&c->e->globals, SpvOpConstantComposite, (unsigned)(len + 3), ops);
	uint32_t var = spv_id(c->e);
	spv_op(&c->e->globals, SpvOpVariable, 4, spv_t_ptr(c->e, SpvStorageClassUniformConstant, at), var,
	       (uint32_t)SpvStorageClassUniformConstant, ops[1]);
	spv_decorate(c->e, var, SpvDecorationConstant, 0);
	spv_name(c->e, var, "gpuprobe_printf_format");
	free(ops);
	return lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassUniformConstant, i8), var);
}

void lw_note_trap(lw *c, uint32_t what)
{
	if (!c->opts || !c->opts->trap_word)
		return;
	lw_ensure_block(c);
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, u32),
			    lw_u64(c, c->opts->trap_word));
	spv_op(&c->body, SpvOpStore, 2, p, lw_u32(c, what));
}

/* __assertfail(message, file, line, function, char size): CUDA's failed assert() prints its
 * message; here OpenCL printf does, in CUDA's words, and the driver's trap word notes it (the
 * launch then reports CUDA_ERROR_ASSERT). The thread goes on (a kernel cannot be aborted from
 * inside on this target). */
int lw_assertfail(lw *c, const ir_insn *in, const ir_operand *args)
{
	if (!args || args->nelems != 5)
		return lw_unsupported(c, in, "__assertfail takes five arguments");
	uint32_t u64 = spv_t_int(c->e, 64), u32 = spv_t_int(c->e, 32);
	uint32_t cptr = spv_t_ptr(c->e, SpvStorageClassUniformConstant, spv_t_int(c->e, 8));
	uint32_t v[4];
	for (unsigned i = 0; i < 4; i++) {
		const ir_operand *a = &args->elems[i];
		struct sym *s = a->kind == IR_OPND_SYMBOL ? lw_sym(c, a->name) : NULL;
		uint32_t ty = i == 2 ? u32 : u64;
		if (s && s->kind == SYM_PARAM)
			v[i] = lw_op1(c, SpvOpLoad, ty, lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, ty), s->var));
		else
			v[i] = lw_read(c, a, i == 2 ? PT('u', 32) : PT('u', 64));
		if (!v[i])
			return -1;
		if (i != 2)
			v[i] = lw_op1(c, SpvOpConvertUToPtr, cptr, v[i]);
	}
	static const char fmt[] = "%s:%u: %s: Assertion `%s` failed.\n";
	uint32_t f = const_string(c, fmt, sizeof(fmt) - 1);
	lw_ext(c, u32, OpenCLstd_Printf, 5, f, v[1], v[2], v[3], v[0]);
	lw_note_trap(c, 1);
	return 1;
}

int lw_vprintf(lw *c, const ir_insn *in, const ir_operand *args, const ir_operand *ret)
{
	if (!args || args->nelems != 2 || args->elems[0].kind != IR_OPND_SYMBOL)
		return lw_unsupported(c, in, "vprintf takes a format and an argument buffer");
	const char *sym = format_symbol(c, args->elems[0].name);
	const ir_decl *d = sym ? find_decl(c->m, sym) : NULL;
	bool open;
	uint64_t size = d ? lw_decl_bytes(d, &open) : 0;
	if (!d || !d->init || !size || size > 4096)
		return lw_fail(c, "cannot lower call to vprintf: its format is not a constant string of the module");
	uint8_t *fmt = calloc(1, size + 1);
	if (lw_init_bytes(c, d, fmt, size) < 0) {
		free(fmt);
		return -1;
	}
	size_t len = strnlen((char *)fmt, size);
	/* the arguments the format converts, in order; the format is rewritten for OpenCL, whose
	 * printf knows only `l` for 64-bit integers (not ll, j, z, t) */
	enum arg_kind kinds[24];
	unsigned nk = 0;
	char *ofmt = malloc(len + 1);
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		ofmt[o++] = (char)fmt[i];
		if (fmt[i] != '%')
			continue;
		if (fmt[i + 1] == '%') {
			ofmt[o++] = '%';
			i++;
			continue;
		}
		i++;
		while (i < len && strchr("-+ #0123456789.*", fmt[i])) {
			if (fmt[i] == '*' && nk < 24)
				kinds[nk++] = ARG_I32;
			ofmt[o++] = (char)fmt[i++];
		}
		bool wide = false;
		size_t lstart = o;
		while (i < len && strchr("hlLqjzt", fmt[i])) {
			wide |= strchr("lLqjzt", fmt[i]) != NULL;
			ofmt[o++] = (char)fmt[i++];
		}
		if (wide) {
			o = lstart;
			ofmt[o++] = 'l';
		}
		if (i >= len || nk == 24)
			break;
		char conv = (char)fmt[i];
		ofmt[o++] = conv;
		if (strchr("diouxXc", conv))
			kinds[nk++] = wide ? ARG_I64 : ARG_I32;
		else if (strchr("fFeEgGaA", conv))
			kinds[nk++] = ARG_F64;
		else if (conv == 's')
			kinds[nk++] = ARG_STR;
		else if (conv == 'p')
			kinds[nk++] = ARG_PTR;
		else {
			free(fmt);
			free(ofmt);
			return lw_fail(c, "cannot lower call to vprintf: conversion %%%c is not supported", conv);
		}
	}
	ofmt[o] = 0;
	free(fmt);
	uint32_t i8 = spv_t_int(c->e, 8);
	uint32_t cptr = spv_t_ptr(c->e, SpvStorageClassUniformConstant, i8);
	uint32_t vals[24];
	vals[0] = const_string(c, ofmt, o);
	free(ofmt);
	/* the argument buffer */
	struct sym *as = lw_sym(c, args->elems[1].name);
	uint32_t u64 = spv_t_int(c->e, 64);
	uint32_t base = as && as->kind == SYM_PARAM ? lw_op1(c, SpvOpLoad, u64, lw_op1(c, SpvOpBitcast,
								     spv_t_ptr(c->e, SpvStorageClassFunction, u64), as->var))
						    : lw_read(c, &args->elems[1], PT('u', 64));
	if (!base)
		return -1;
	uint64_t off = 0;
	for (unsigned k = 0; k < nk && k < 23; k++) {
		unsigned sz = kinds[k] == ARG_I32 ? 4 : 8;
		off = (off + sz - 1) / sz * sz;
		uint32_t ty = kinds[k] == ARG_I32 ? spv_t_int(c->e, 32) : kinds[k] == ARG_F64 ? spv_t_float(c->e, 64) : u64;
		uint32_t a = lw_op2(c, SpvOpIAdd, u64, base, lw_u64(c, off));
		uint32_t p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassGeneric, ty), a);
		lw_ensure_block(c);
		uint32_t v = spv_id(c->e);
		spv_op(&c->body, SpvOpLoad, 5, ty, v, p, (uint32_t)SpvMemoryAccessAlignedMask, sz);
		if (kinds[k] == ARG_STR || kinds[k] == ARG_PTR) /* strings are read where they are */
			v = lw_op1(c, SpvOpConvertUToPtr, cptr, v);
		vals[1 + k] = v;
		off += sz;
	}
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t r;
	switch (nk) { /* lw_ext takes its operands inline */
	case 0: r = lw_ext(c, u32, OpenCLstd_Printf, 1, vals[0]); break;
	case 1: r = lw_ext(c, u32, OpenCLstd_Printf, 2, vals[0], vals[1]); break;
	case 2: r = lw_ext(c, u32, OpenCLstd_Printf, 3, vals[0], vals[1], vals[2]); break;
	case 3: r = lw_ext(c, u32, OpenCLstd_Printf, 4, vals[0], vals[1], vals[2], vals[3]); break;
	case 4: r = lw_ext(c, u32, OpenCLstd_Printf, 5, vals[0], vals[1], vals[2], vals[3], vals[4]); break;
	case 5: r = lw_ext(c, u32, OpenCLstd_Printf, 6, vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]); break;
	case 6: r = lw_ext(c, u32, OpenCLstd_Printf, 7, vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6]); break;
	case 7: r = lw_ext(c, u32, OpenCLstd_Printf, 8, vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6], vals[7]); break;
	case 8: r = lw_ext(c, u32, OpenCLstd_Printf, 9, vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6], vals[7], vals[8]); break;
	default:
		return lw_fail(c, "cannot lower call to vprintf: more than 8 arguments");
	}
	if (ret && ret->nelems == 1) {
		const ir_operand *ro = &ret->elems[0];
		struct sym *rs = ro->kind == IR_OPND_SYMBOL ? lw_sym(c, ro->name) : NULL;
		if (rs && rs->kind == SYM_PARAM) {
			uint32_t pp = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, u32), rs->var);
			spv_op(&c->body, SpvOpStore, 2, pp, r);
		} else if (lw_write(c, ro, PT('s', 32), r) < 0) {
			return -1;
		}
	}
	return 1;
}
