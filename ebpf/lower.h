/* eBPF lowered into the IR (ptx-frontend/ir.h), not into text (docs/architecture.md): one lowering serves
 * every backend. Each eBPF register becomes a 64-bit virtual register, each frame's 512-byte
 * stack a .local array, and every instruction keeps its exact ISA semantics (RFC 9669): division
 * by zero gives 0, modulo by zero leaves the dividend, shift counts are masked, ALU32 results are
 * zero-extended. ptxas allocates registers and optimizes. */
#ifndef GPUPROBE_EBPF_LOWER_H
#define GPUPROBE_EBPF_LOWER_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

#include "../ptx-frontend/ir.h"

struct gp_lower_opts {
	/* ld_imm64 of map i (BPF_PSEUDO_MAP_FD) or of map i's value + off (BPF_PSEUDO_MAP_VALUE):
	   emit IR that puts the 64-bit address into register dst, appended to f (where the
	   lowering is). The maps engineer provides this; a NULL hook rejects programs that use
	   maps. Returns 0 or a negative errno. Functions the hooks add to m may go anywhere: the
	   lowered functions are appended to m only after all hooks ran, so they come later.
	   The value form's address is global data, the same in every lane of a warp that runs
	   the code together (it may depend on the SM, never on the lane): an atomic add of a
	   constant to a global variable is then a plain red that ptxas aggregates per warp. */
	int (*emit_map_ref)(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			    int value_form, int32_t off);
	/* helpers whose device implementation belongs to maps/ (map_lookup/update/delete,
	   ringbuf_*, perf_event_output, trace_printk): return the name of an IR .func taking
	   .param .b64 args r1..r5 and returning .param .b64, that the maps engineer adds to the
	   module; NULL when not provided (then the program is rejected with a clear error). */
	const char *(*helper_func)(void *user, ir_module *m, int helper_id);
	void *user;
	const char *prefix;   /* register/label prefix, unique per lowered program, e.g. "__gp0_" */

	/* Additions of the lowering engineer (zero-initialised opts keep the defaults): */
	uint64_t pid_tgid;    /* what get_current_pid_tgid (14) returns: tgid << 32 | pid */
	/* bpftime's puts (501): name of an IR .func (.param .b64 ret) f(.param .b64 str) in the
	   module; NULL: puts lowers to vprintf("%s\n", str), declaring vprintf when absent. */
	const char *puts_func;
	/* .param .b64 arguments of the function: r1..r<nargs>; 0 means 1 (r1 = ctx), at most 5.
	   The conformance corpus passes r1 = memory and r2 = its length. */
	unsigned nargs;
	/* Loads and stores whose alignment is not known statically (any base but r10) check it at
	   run time and fall back to byte accesses, as misaligned accesses fault on the GPU. Set
	   it for programs verified for an attach point: ebpf/verifier.c rejects misaligned
	   context, stack and map-value accesses there. (The u64 out-pointers of helpers 503-508
	   are checked regardless: the verifier does not check helper arguments' alignment.) */
	int assume_aligned;
	/* A fetch-less atomic add (a counter) becomes one atomic per group of lanes of the warp
	   that add the same value at the same address (activemask, match.any.sync: sm_70 and
	   later, NVIDIA only). ptxas cannot aggregate it itself: the address comes back from a
	   map helper. bench/overhead measured the per-lane atomics: a counter in every thread of a
	   16M-element vector add cost 7.7x the kernel, nvcc's aggregated atomicAdd 1.03x. */
	int warp_aggregate;
	/* Optional: map_lookup_elem(map, &key) where the lowering sees, in straight-line code before
	   the call, r1 = map `map_index` and a 4-byte constant `key` stored at r2's stack slot:
	   emit dst = the element's address directly (no helper call). Returns a negative errno to
	   fall back to the helper, or what is known of dst, GP_LOWER_LOOKUP_* flags (0: nothing):
	   WARP_UNIFORM, the same address in every lane of a warp that runs the code together;
	   NONNULL, never 0 (the program's null test folds away). The lowering may call it before
	   it lowers the instructions ahead of the call, on a function of its own whose statements
	   it moves to the call's place. NULL: always the helper. */
	int (*emit_map_lookup)(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			       uint32_t key);
	/* Optional: the same where the key is not a known constant but r2 is still the frame plus
	   a constant (`k = ctx->dir & 3; v = lookup(&map, &k)`): the lowering loads the u32 key
	   into the 64-bit register key (zero-extended) and the hook emits dst = the element's
	   address, or 0 when there is none (an index past max_entries). Returns as
	   emit_map_lookup. bench/overhead's per-direction memory counter called the generic
	   lookup helper at every access; out of line (ptx-frontend/inline.c) that is a call.
	   key_max: the key is known to be at most this (UINT32_MAX when nothing is known; a key
	   below max_entries lets the hook drop its bounds test and return NONNULL). */
	int (*emit_map_lookup_var)(void *user, ir_module *m, ir_func *f, const char *dst,
				   int map_index, const char *key, uint32_t key_max);
	/* Optional: map_update_elem(map, &key, &value, flags) with the key and the value in the
	   frame (r2, r3 = r10 plus constants): the name of a .func (ret) f(desc, key, value,
	   flags, unused), all .param .b64, that does the update with the key's and the value's
	   bytes passed by value (the low *key_size and *value_size bytes of the two words), and
	   the two sizes (4 or 8 each); NULL: the helper. The lowering then loads both from the
	   frame and calls it: the frame's address is handed to no call, so ptxas keeps the frame
	   and the site's context in registers. A counting probe's insert-on-miss passed
	   pointers into the frame to the update helper, which kept both in local memory: a
	   store and a load back of each word at every call (zoom-cuda's kernels, 160 bytes of
	   stack a thread). */
	const char *(*update_by_value)(void *user, ir_module *m, int map_index, unsigned *key_size,
				       unsigned *value_size);
	/* Bytes of stack per frame, from the verifier's stack_depth (rounded up to 8); 0 means
	   the ISA's 512. Accesses outside it are the verifier's to reject. */
	unsigned stack_size;
	/* Nonzero: get_current_pid_tgid (14) loads the u64 at this global address
	   (ld.global.nc.u64) instead of returning pid_tgid as an immediate, so the lowered code
	   is the same in every process (the driver's JIT cache keys on the PTX text). */
	uint64_t pid_tgid_addr;
	/* Nonzero: the main function takes one more parameter after r1..r<nargs>, a .param .b32
	   membermask: the lanes that entered the probe together, captured by the caller at the
	   site (ptx-frontend/instrument_site.c). The warp helpers 515/516 that every entering lane
	   reaches exactly once (those before the program's first jump, exit or bpftime exit)
	   match over that mask instead of an activemask taken at the call: an explicit mask makes
	   match.any.sync wait for every lane of it, however the code before it diverged or
	   ptxas scheduled it; activemask only names the lanes that happen to run together. */
	int site_mask;
	/* Nonzero: the GPU's clock helpers return times on the host's clocks (docs/architecture.md "One
	   clock"): ktime_get_ns (5) adds the s64 at clock_addr + GP_CLOCK_WORD_KTIME (the host's
	   CLOCK_MONOTONIC minus %globaltimer) to %globaltimer, get_globaltimer (502) the s64 at
	   clock_addr + GP_CLOCK_WORD_REALTIME (CLOCK_REALTIME minus %globaltimer), the clocks
	   the host helpers read. The shim measures the offsets when probes start and rewrites the
	   words at each re-check; the address, not the offset, is in the PTX, so the text stays
	   the same from run to run. Zero: both return %globaltimer itself. */
	uint64_t clock_addr;
	/* Bytes of the context (bit b of word b / 64 for byte b, the first 128 bytes) whose value is
	   the same in every lane of a warp at every site: a memory access's size, space and
	   direction, the block index, the SM, the kernel. A map key computed from them and
	   constants (`k = ctx->dir & 3`) gives a lookup the same address in every lane, whose
	   atomic add then needs no match.any.sync (ptxas aggregates a plain red). 0: none known. */
	uint64_t ctx_uniform[2];
	/* Nonzero: the main function takes one more parameter, after the mask when there is one:
	   a .param .b32 weight, the number of runs the call stands for. Every atomic add without
	   fetch outside the stack adds its value times the weight. For additive programs
	   (gp_verify_opts.additive), whose runs at sites with equal context bytes one weighted run
	   replaces (ptx-frontend/instrument.h, gp_inst_probe.weighted). Inlined, the weight is the
	   site's immediate and ptxas folds the product: a constant add stays a constant add, which
	   it aggregates per warp. Programs with BPF-to-BPF calls are refused. */
	int weight;
};

/* The two s64 words at gp_lower_opts.clock_addr (byte offsets). */
#define GP_CLOCK_WORD_KTIME 0
#define GP_CLOCK_WORD_REALTIME 8
#define GP_CLOCK_WORDS_SIZE 16

/* What emit_map_lookup knows of the address it emitted (flags). */
#define GP_LOWER_WARP_UNIFORM 1
#define GP_LOWER_NONNULL 2
/* emit_map_lookup_var only: the address depends on the key and the SM alone (a key the same in
   every lane of a warp then gives a warp-uniform address). */
#define GP_LOWER_KEY_UNIFORM 4
/* The address is loaded from memory (a hash bucket's): the same in every lane where
   WARP_UNIFORM says so, but ptxas cannot see that and aggregates no red through it (zoom-cuda's
   entry+exit counter: a red per lane at one address, 20x its native time on the H100) */
#define GP_LOWER_OPAQUE 8

/* Adds `.func (.param .b64 ret) func_name(.param .b64 ctx)` to m; r1 = ctx on entry, the value
 * returned is r0 at exit. BPF-to-BPF subprograms become their own .func named
 * "<func_name>__sub<insn index>" (r1-r5 passed, r0 returned, r6-r9 and the stack per frame).
 * The program must have passed the verifier (or come from the conformance corpus): lowering
 * checks only what it needs to produce well-formed IR (opcodes, jump targets, helper ids).
 * Returns 0, or a negative errno with one line in err ("insn N: message"). */
int gp_lower_program(ir_module *m, const struct bpf_insn *insns, size_t n, const char *func_name,
		     const struct gp_lower_opts *opts, char *err, size_t errlen);

#endif
