/* Inlining of generated calls: the probe pipeline calls each lowered probe (and the probes call
 * their map helpers) as a `.func` at every site, and ptxas does not inline calls, so every site
 * paid a real call (bench/overhead: the memory counter cost 16.9x the hand-written atomicAdd
 * counter). This pass copies a generated callee's body into each call site of the application's
 * functions: registers and labels renamed per site, ld.param of the callee's parameters turned
 * into mov from the values the site stored, st.param of the result into mov to the register
 * the site loads it into, ret into a branch to the site's end, the callee's .local arrays
 * declared once per caller function and callee (sites never overlap in time). Nested calls are
 * inlined in later rounds up to a depth limit; recursive or large callees stay calls. Generated
 * functions no longer referenced are dropped.
 *
 * Code must grow with the number of sites, not with inlined copies of every helper: only what
 * pays is inlined (inline.c, pays(): small callees, the probe body at its sites, a helper's
 * pieces into its one shared body), and the module as a whole may gain at most
 * GPUPROBE_INLINE_GROWTH (default 2) times its own instructions; past that, sites call the
 * shared bodies and gp_inline_probe_calls says so in one line. */
#ifndef GPUPROBE_PTX_INLINE_H
#define GPUPROBE_PTX_INLINE_H

#include "ptx-frontend/ir.h"

/* The default size limit of a callee. 400 since hash-map lookups with 4-byte keys are emitted in
 * place (maps/map_device.c emit_hash_lookup_var, about 40 instructions each): coalescing's probe,
 * four such lookups, became 306 instructions, where it had been 150 plus four calls of a 136-
 * instruction lookup that the site then inlined as well. The module's budget bounds growth. */
#define GP_INLINE_MAX_INSNS 400

struct gp_inline_opts {
	unsigned max_insns;        /* callees with more instructions stay calls; 0: GP_INLINE_MAX_INSNS */
	unsigned max_depth;        /* rounds of nested inlining; 0: 4 */
	/* Additions (zero keeps the default): */
	unsigned small_insns;      /* callees this small are inlined wherever called; 0: 48 */
	unsigned growth;           /* the module may gain this multiple of its instructions;
	                              0: GPUPROBE_INLINE_GROWTH, default 2 */
	unsigned long min_budget;  /* ... and at least this many; 0: 50,000 */
	int everything;            /* inline every usable callee up to max_insns, no budget (a
	                              backend that cannot run warp collectives out of line) */
};

struct gp_inline_stats {
	unsigned inlined;          /* call sites replaced by the callee's body */
	unsigned kept;             /* calls of generated functions left as calls */
	unsigned dropped;          /* generated functions removed as unreferenced */
	unsigned sites;            /* calls of generated functions in the application's code */
	unsigned budget_calls;     /* sites left as calls because the budget ran out */
	unsigned growth;           /* the multiple the budget used */
	unsigned long module_insns, demand, budget;   /* the application's instructions, what
	                              inlining all that pays would add, what the budget allows */
	int helpers_out;           /* whole helpers did not fit: sites call their shared bodies */
	unsigned long demand_all;  /* ... what inlining them too would have added */
};

/* Inline the calls of generated functions (top-level nodes marked generated, with a body) in
 * every application function of m. opts and stats may be NULL. Returns 0 (a site whose shape it
 * does not recognise stays a call). */
int gp_inline_generated_calls(ir_module *m, const struct gp_inline_opts *opts,
			      struct gp_inline_stats *stats);

/* The probe pipeline's switch: GPUPROBE_INLINE=0 turns inlining off, unset or 1 on. */
int gp_inline_enabled(void);

/* The pipeline's step: inline when enabled; returns 0. */
int gp_inline_probe_calls(ir_module *m);

#endif
