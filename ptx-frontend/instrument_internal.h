/* Private to the instrumentation passes (instrument*.c): the function being instrumented, a
 * writer that inserts generated statements before a position of it, one line of PTX-like text at
 * a time, and what the passes' files call of each other. */
#ifndef GPUPROBE_PTX_INSTRUMENT_INTERNAL_H
#define GPUPROBE_PTX_INSTRUMENT_INTERNAL_H

#include <stdint.h>

#include "ptx-frontend/ir.h"

#include <stdbool.h>
#include <stddef.h>

#include "gpuprobe/context.h"
#include "ptx-frontend/instrument.h"

#define CTX_BYTES 128   /* the largest context (gp_func_ctx, gp_bb_ctx: 120 bytes), rounded up */
_Static_assert(sizeof(struct gp_bb_ctx) <= CTX_BYTES && sizeof(struct gp_func_ctx) <= CTX_BYTES,
	       "a context outgrew the buffer sites fill");
#define CTX_WORDS (CTX_BYTES / 4)

/* One function being instrumented (instrument.c makes it, every site's file reads it). */
struct fn {
	ir_module *m;
	ir_func *f;
	uint32_t hash;          /* gp_name_hash of the function */
	int is_kernel;
	ir_stmt **stmts;        /* the application's statements, before any insertion */
	unsigned *index;        /* instruction index of each (INSN statements) */
	size_t n;
	ir_stmt *entry;         /* where entry code goes: first instruction, label or block */
	unsigned *labels;       /* module-wide label counter */
	struct gp_inst_stats *st;
	int defer_ok;           /* a kernel of a module whose device functions never `exit` */
	struct deferred *defers;   /* the deferred probes of this function (instrument_defer) */
	size_t ndefers;
};

/* ---- what every site's code is made of (instrument_site.c) ---- */

const char *inst_new_label(struct fn *fn);
/* Width in bits of a register from the function's .reg declarations; 64 when unknown. */
unsigned inst_reg_bits(const ir_func *f, const char *name);
struct inst_emit inst_at(struct fn *fn, ir_stmt *pos);
/* Whether the probe may read the n 4-byte words of the context at byte off. */
int inst_ctx_read(const struct inst_emit *e, unsigned off, unsigned n);
/* Context stores at byte off: a register or special register, an immediate, a 64-bit value, the
 * x, y, z of a special register; each left out where the probe never reads those bytes. */
void inst_st32(struct inst_emit *e, unsigned off, const char *src);
void inst_st32i(struct inst_emit *e, unsigned off, uint32_t v);
void inst_st64(struct inst_emit *e, unsigned off, const char *src);
void inst_fill_dim3(struct inst_emit *e, unsigned off, const char *sreg);
void inst_fill_thread(struct fn *fn, struct inst_emit *e, unsigned off);
/* The site's context address, the call (with the weight, the mask), the reconvergence. */
void inst_call_probe(struct fn *fn, struct inst_emit *e, const char *func);
/* The bracket of a branch that only some lanes take into a probe (activemask / bar.warp.sync of
 * %__gp_wo), where the probe reconverges. */
void inst_outer_open(struct inst_emit *e);
void inst_outer_close(struct inst_emit *e);
/* Skip what follows when the instruction's guard is false (NULL: it has none); inst_end_skip
 * places the returned label after the site. */
const char *inst_guard_skip(struct fn *fn, struct inst_emit *e, const ir_insn *in);
void inst_end_skip(struct inst_emit *e, const char *l);

/* ---- the sites of each attach point, found in fn's snapshot; k: the probe's index ---- */

int inst_is_leave(const ir_insn *in);   /* ret or exit (not trap) */
/* Kernel entry, block begin, function entry; a block end's zeroing of its counter
 * (instrument_entry_exit.c). */
void inst_site_entry(struct fn *fn, const struct gp_inst_probe *p, unsigned k);
/* Before each ret and exit: kernel exit, block end, function exit (instrument_entry_exit.c). */
void inst_sites_leave(struct fn *fn, const struct gp_inst_probe *p, unsigned k);
/* Memory accesses (instrument_mem.c): 0, or -ENOMEM. */
int inst_sites_mem(struct fn *fn, const struct gp_inst_probe *p);
void inst_sites_barrier(struct fn *fn, const struct gp_inst_probe *p);   /* instrument_barrier.c */
void inst_sites_bb(struct fn *fn, const struct gp_inst_probe *p);        /* instrument_bb.c */

/* ---- after every site of a function (instrument_reconverge.c) ---- */

/* A site's activemask dropped where the site before it in the same block left the mask in
 * %__gp_wm; a kernel's bar.warp.sync dropped right before its ret or exit. */
void inst_reuse_site_masks(ir_func *f);
void inst_drop_syncs_before_return(ir_func *f);

/* ---- deferred sites (instrument_defer.c, gp_inst_probe.deferred) ---- */

/* The context words a site sets to its own constants (a memory access's size and kind, a
 * block's counts, lines), by word index; a thread's ids are not among them. */
struct site_words {
	uint32_t w[CTX_WORDS];
	uint32_t set;              /* bit i: w[i] is the site's */
};
void inst_words_set(struct site_words *sw, size_t off, uint32_t v);
/* The function's state for deferred probe p; NULL where p's sites keep their calls (not a
 * kernel, not deferred, a device function of the module exits). */
struct deferred *inst_deferred_of(struct fn *fn, const struct gp_inst_probe *p);
/* Count a site with words sw, weight w, before statement s (under the guard of instruction
 * guard, if any) into its class's accumulator. False when there is no room for another class:
 * the site then calls its probe as it would without deferral. */
bool inst_defer_site(struct fn *fn, struct deferred *d, ir_stmt *s, const ir_insn *guard,
		     const struct site_words *sw, unsigned w);
/* After every site of the function: the accumulators' declarations and zeroing, every ret and
 * exit turned into a branch to one flush at the end of the body. */
void inst_finish_deferred(struct fn *fn);

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
