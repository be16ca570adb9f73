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
	unsigned weight;      /* nonzero: pass it as the probe's weight (gp_inst_probe.weighted) */
	const char *weight_reg;   /* or pass this .b32 register (a deferred probe's flush) */
};

/* A site of a weighted probe, for inst_merge_sites (instrument_merge.c). */
struct inst_msite {
	size_t stmt;          /* the application's statement it is at (index in the snapshot) */
	uint8_t key[16];      /* what must be equal for two sites to merge: the context bytes the
	                         site fills that the probe reads (others 0) */
	unsigned weight;      /* out: 0, counted by an earlier site's call; else how many sites
	                         (itself included) its call counts */
	size_t leader;        /* out: the site whose call counts it (itself when weight > 0) */
};

/* Merge the n sites (in statement order) of one function whose statements, before any
 * insertion, are stmts[0..nstmts): a site joins the call of an earlier one with the same key and
 * the same guard in the same straight-line run of statements when nothing between them can
 * change whether the later one runs. */
void inst_merge_sites(ir_stmt *const *stmts, size_t nstmts, struct inst_msite *sites, size_t n);

/* "@!%p1 bra __gp_L3", "st.local.u32 [__gp_ctx+8], %__gp_s0", "call (__gp_ret), f, (__gp_arg)" */
void ie_insn(struct inst_emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ie_label(struct inst_emit *e, const char *name);
void ie_block(struct inst_emit *e, int open);
/* A declaration statement: space ".param"/".reg"/".local"/".shared", type, name, align, dims. */
void ie_decl(struct inst_emit *e, const char *space, const char *type, const char *name,
	     int count, unsigned align, const char *dims);

#endif
