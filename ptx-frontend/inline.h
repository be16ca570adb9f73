/* Inlining of generated calls: the probe pipeline calls each lowered probe (and the probes call
 * their map helpers) as a `.func` at every site, and ptxas does not inline calls, so every site
 * paid a real call (bench/overhead: the memory counter cost 16.9x the hand-written atomicAdd
 * counter). This pass copies a generated callee's body into each call site of the application's
 * functions: registers and labels renamed per site, ld.param of the callee's parameters turned
 * into mov from the values the site stored, st.param of the result into mov to the register
 * the site loads it into, ret into a branch to the site's end, the callee's .local arrays
 * declared once per caller function and callee (sites never overlap in time). Nested calls are
 * inlined in later rounds up to a depth limit; recursive or large callees stay calls. Generated
 * functions no longer referenced are dropped. */
#ifndef GPUPROBE_PTX_INLINE_H
#define GPUPROBE_PTX_INLINE_H

#include "ptx-frontend/ir.h"

struct gp_inline_opts {
	unsigned max_insns;        /* callees with more instructions stay calls; 0: 200 */
	unsigned max_depth;        /* rounds of nested inlining; 0: 4 */
};

struct gp_inline_stats {
	unsigned inlined;          /* call sites replaced by the callee's body */
	unsigned kept;             /* calls of generated functions left as calls */
	unsigned dropped;          /* generated functions removed as unreferenced */
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
