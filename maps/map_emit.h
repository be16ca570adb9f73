/* Private to maps/: a tiny writer of IR from one line of PTX-like text at a time, so the device
 * helpers read like the PTX they become. Each line is split into guard, opcode, modifiers and
 * operands and built with the ir.h constructors (ir_insn_new, ir_reg, ir_addr, ...); it knows only
 * the operand forms the helpers use: %reg, integers, symbols, [base+off], (a, b) lists. */
#ifndef GPUPROBE_MAPS_MAP_EMIT_H
#define GPUPROBE_MAPS_MAP_EMIT_H

#include "ptx-frontend/ir.h"

struct gp_emit {
	ir_module *m;
	ir_func *f;
	int failed;       /* set when a line could not be read (a bug in maps/, reported once) */
};

/* Append one instruction ("@%p1 bra $L;", "add.u64 %rd1, %rd2, 8"), printf-style. */
void gp_em(struct gp_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a label. */
void gp_em_label(struct gp_emit *e, const char *name);
/* Every helper's name begins with this. */
#define GP_EMIT_PREFIX "__gp_m_"
/* A new .func (.param .b64 ret) name(.param .b64 a1 .. a<nparams>), name starting with
 * GP_EMIT_PREFIX, placed after the helpers already in m and before every other function (so the
 * functions after it may call it), with the registers the helpers use
 * declared: %rd<48> (.b64), %r<32> (.b32), %p<16> (.pred). */
ir_func *gp_em_func(ir_module *m, const char *name, unsigned nparams);



/* Call fn (a .func of this kind) with nargs 64-bit registers, its result into ret_reg. */
void gp_em_call(struct gp_emit *e, const char *fn, const char *ret_reg, unsigned nargs,
		const char *const *args);
#endif
