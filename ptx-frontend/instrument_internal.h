/* Private to the instrumentation passes: a writer that inserts generated statements before a
 * position of a function, one line of PTX-like text at a time. */
#ifndef GPUPROBE_PTX_INSTRUMENT_INTERNAL_H
#define GPUPROBE_PTX_INSTRUMENT_INTERNAL_H

#include <stdint.h>

#include "ptx-frontend/ir.h"

struct inst_emit {
	ir_module *m;
	ir_func *f;
	ir_stmt *pos;     /* insert before this statement (NULL: append) */
	int failed;       /* a line could not be read (a bug in the pass) */
	uint64_t ctx_unread;  /* context words the probe never reads: not filled (gp_inst_probe) */
	int warp_sync;        /* pass the site's mask to the probe (gp_inst_probe) */
	int reconverge;       /* reconverge the lanes that entered the probe (gp_inst_probe) */
};

/* "@!%p1 bra __gp_L3", "st.local.u32 [__gp_ctx+8], %__gp_s0", "call (__gp_ret), f, (__gp_arg)" */
void ie_insn(struct inst_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ie_label(struct inst_emit *e, const char *name);
void ie_block(struct inst_emit *e, int open);
/* A declaration statement: space ".param"/".reg"/".local"/".shared", type, name, align, dims. */
void ie_decl(struct inst_emit *e, const char *space, const char *type, const char *name,
	     int count, unsigned align, const char *dims);

#endif
