/* The attach-point passes: splice calls of lowered probes (ebpf/lower.h: `.func (.param .b64 ret)
 * NAME(.param .b64 ctx)`) into the kernels and device functions of a parsed module.
 *
 * At each site the pass fills the attach point's context struct (include/gpuprobe/context.h) in a
 * .local buffer of the instrumented function and passes its generic address as r1. Sites:
 *   kernel entry      every thread, before the kernel's first instruction
 *   kernel exit       every thread, before each ret/exit of the kernel (a guarded ret keeps its
 *                     guard: the probe runs only where the thread really leaves)
 *   block begin       thread (0,0,0) of each block, at entry
 *   block end         the last thread of the block to leave: a .shared counter per kernel, set to
 *                     0 by thread 0 at entry (followed by bar.sync 0, where every thread is still
 *                     converged), incremented at each exit; the thread that brings it to the block
 *                     size runs the probe
 *   func entry/exit   .func bodies: entry, and before each ret
 *   memory            before each ld/ldu/st/atom/red in the global/shared/local/generic spaces
 *                     that the filter selects; addr computed from the address operand; a guarded
 *                     access keeps its guard
 *   barrier           before (or after) bar.sync/bar/barrier.sync (not .arrive, .red, .warp)
 *   basic block       at each block leader (first instruction, after labels, after branches)
 * Memory, barrier and basic-block probes attach to the selected kernels' bodies (device functions
 * the compiler did not inline are not walked).
 * Generated statements are marked `generated`; registers and symbols begin with __gp_. */
#ifndef GPUPROBE_PTX_INSTRUMENT_H
#define GPUPROBE_PTX_INSTRUMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebpf/object.h"
#include "ptx-frontend/ir.h"

struct gp_inst_probe {
	enum gp_attach_kind attach;
	const char *glob;          /* kernel (or .func) glob from the section; NULL or "": all */
	unsigned mem_filter;       /* GP_MEM_* (GP_ATTACH_MEM) */
	int barrier_after;         /* GP_ATTACH_BARRIER: 1 after the barrier */
	const char *func;          /* the lowered probe's .func name in the module */
	/* Optional extra kernel filter (the configuration's include/exclude): nonzero selects. */
	int (*selected)(void *user, const char *mangled, const char *demangled);
	void *user;
	/* Bit i: bytes 4i..4i+3 of the context are never read by the probe, so the site does not
	 * fill them (all set: no context at all, r1 = 0). 0 fills everything. */
	uint64_t ctx_unread;
	/* The probe uses warp-collective helpers (515/516): the mask every site captures before the
	 * call (and bar.warp.syncs after it, whatever the probe) is passed to the probe, whose
	 * helpers match over it (gp_lower_opts.site_mask). */
	int warp_sync;
	/* The probe can branch (gp_instrument_func_branches): each site captures activemask before
	 * the call and bar.warp.syncs it after, so the lanes leave the site together. Set with
	 * warp_sync too. */
	int reconverge;
	/* GP_ATTACH_MEM only: the probe is additive (gp_verify_opts.additive) and lowered with a
	 * weight (gp_lower_opts.weight). Sites of one straight-line run of the kernel (no label,
	 * branch, call, return or exit between them) under the same guard predicate, not written in
	 * between, whose ctx_key bytes get equal values are counted by one call at the first of
	 * them, passing their count as the weight: N runs of an additive probe at such sites are
	 * one run with every add times N, so the maps hold exactly what one call per site would
	 * leave. Every other site passes weight 1. (GPUPROBE_AGGREGATE=0: the pipeline does not
	 * set it.) */
	int weighted;
	/* weighted only: a merged group of N >= 2 sites makes two calls, weight 1 then N-1 (the
	 * probe's first run may insert a hash key later runs find: gp_verify_opts.additive 2) */
	int first_run;
	uint64_t ctx_key[2];       /* bytes of the context the probe reads (gp_verify_opts.ctx_read) */
	/* weighted memory and basic-block probes: in a kernel, each site only adds its weight to a
	 * per-thread accumulator of its class (sites whose read context bytes are equal, at most
	 * 64 classes a kernel), and the thread runs the probe once per class with the accumulated
	 * count as its weight where it leaves the kernel (every ret and exit branches to one
	 * flush). N runs of an additive probe at sites with equal read context bytes are one run
	 * of weight N, so the maps end up as one call per site would leave them, once the thread
	 * has left; a site costs an add instead of a call (a 900-block CUB kernel under a
	 * basic-block counter: ptxas 28 s with calls). Not in device functions (their sites keep
	 * their calls), nor in a module where a device function executes `exit` (the thread would
	 * leave without its flush). GPUPROBE_DEFER=0: the pipeline does not set it. */
	int deferred;
};

struct gp_inst_stats {
	unsigned sites;            /* probe calls spliced in */
	unsigned functions;        /* functions instrumented */
	unsigned merged;           /* sites of weighted probes counted by another site's call */
	unsigned deferred;         /* sites counted in an accumulator (gp_inst_probe.deferred) */
};

/* Whether the function named in m can branch or call (so the lanes that enter it together may
 * leave it apart): true also when there is no such function. `bra.uni` does not count: it goes
 * the same way in every lane. */
bool gp_instrument_func_branches(const ir_module *m, const char *name);

/* Whether probe p has at least one site in m (to skip lowering probes that would not be used). */
int gp_instrument_matches(const ir_module *m, const struct gp_inst_probe *p);

/* Instrument every function of m for the n probes (whose .funcs must already be in m, before
 * the application's functions: see gp_instrument_hoist). Returns 0, or -EINVAL with one line in
 * err (a probe of a kind that has no device sites). */
int gp_instrument_module(ir_module *m, const struct gp_inst_probe *p, size_t n,
			 struct gp_inst_stats *stats, char *err, size_t errlen);

/* Move the top-level nodes after `after` (NULL: all generated functions at the end) to just
 * before the module's first application function, so the application's kernels may call them. */
void gp_instrument_hoist(ir_module *m, ir_top *after);

/* The one kernel-matching rule (ptx-frontend/kernel_match.h, defined there): the glob against the
 * mangled name, the demangled name without return type, that without parameters, and the base
 * name; NULL or "" matches everything. */
int gp_instrument_glob(const char *glob, const char *mangled, const char *demangled);

#endif
