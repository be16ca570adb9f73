/* The eBPF verifier: proves a program safe to run inside a GPU kernel before it is lowered.
 * Modelled on the Linux BPF verifier: typed register states (scalars with ranges and known bits,
 * pointers to the context, the stack, map values, ring-buffer memory), every path explored with
 * state pruning, and a log whose last line names the instruction and the reason, e.g.
 *   "7: (61) r2 = *(u32 *)(r1 +64)\ninvalid access to context: off=64 size=4 (ctx size 16)".
 * GPUs cannot be preempted: a program whose loops are not provably bounded never verifies. */
#ifndef GPUPROBE_EBPF_VERIFIER_H
#define GPUPROBE_EBPF_VERIFIER_H

#include "ebpf/object.h"

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

/* Where each instruction came from in the C source (the object's BTF line info, clang -g), for
 * the log: Linux prints the source line above the instruction ("; if (!v) @ probe.bpf.c:12"). */
struct gp_verify_line {
	const char *text;          /* the source line as BTF keeps it; NULL: none known */
	const char *file;          /* the file's base name */
	uint32_t line, col;
	uint32_t rec;              /* 1 + the line-info record: equal for the instructions of one */
};
struct gp_verify_srcinfo {
	size_t n;                  /* instructions described (the program's count) */
	struct gp_verify_line *lines;   /* n entries */
	const char **func_names;   /* n entries: the function starting at that instruction, or NULL */
	char *strings;             /* owned storage */
};

/* The source information of one program of a BPF object file (its BTF line info and function
 * symbols), laid out as the loader laid out the program (ebpf/object_reloc.c: the program's
 * function, then every subprogram it calls). NULL when the object has none or its layout cannot be
 * matched (never a wrong line). */
struct gp_verify_srcinfo *gp_verify_srcinfo_load(const char *path, const struct gp_program *prog);
struct gp_verify_srcinfo *gp_verify_srcinfo_load_mem(const void *elf, size_t size,
						     const struct gp_program *prog);
void gp_verify_srcinfo_free(struct gp_verify_srcinfo *si);

struct gp_verify_opts {
	enum gp_attach_kind attach;
	const struct gp_map *maps; size_t nmaps;   /* ld_imm64 imm = map index */
	uint32_t ctx_size;                         /* readable bytes at r1; the context is read-only */
	char *log; size_t log_size;                /* Linux-verifier-style log; last line says why */
	unsigned max_states;                       /* 0: default */
	uint8_t *map_atomic_only;                  /* out, optional, nmaps entries: 1 when the program
	                                              changes that map's values only by atomic add */
	unsigned stack_depth;                      /* out: bytes of stack used */
	/* Additions beyond the contract (zero-initialised opts keep the defaults): */
	int log_level;                             /* 0: the rejection only; 1: every instruction
	                                              processed with its register state (-v) */
	unsigned long max_insns;                   /* instructions processed budget; 0: 1,000,000 */
	unsigned long insns_processed;             /* out: instructions processed (all paths) */
	unsigned states_stored;                    /* out: states kept for pruning */
	int r2_is_ctx_size;                        /* GP_ATTACH_NONE only: r2 holds ctx_size on
	                                              entry (the conformance corpus's mem length) */
	/* Warnings about programs that verify but will not do what their author means on a GPU,
	   one line each ("warning: 7: (7b) *(u64 *)(r0 +0) = r1: ..."), at most one per
	   instruction; optional. Today: a plain read-modify-write of a map value (load, change,
	   store back through the same value pointer), which loses updates when threads race. */
	char *warnings; size_t warnings_size;
	unsigned nwarnings;                        /* out */
	/* Optional: source lines and function names for the log (gp_verify_srcinfo_load); its n
	   must be the program's instruction count, else it is ignored. */
	const struct gp_verify_srcinfo *src;
	/* out: 1 when the program is additive (ebpf/verifier_additive.c): it calls no helper but
	   map_lookup_elem on ARRAY/PERCPU_ARRAY maps with a key on the stack (or, for 2 below, a
	   HASH map), changes map values
	   only by atomic add without fetch, reads no map value (but .rodata), no ring-buffer
	   memory, and no context byte that can differ between runs of one site by one thread (a
	   memory access's address, clocks, a function's arguments), and makes no BPF-to-BPF call.
	   N runs of it at sites whose ctx_read bytes hold equal values then do what one run does
	   with every add multiplied by N: the instrumentation may count a basic block's sites
	   with one call (ptx-frontend/instrument.h, weighted sites).
	   2: the same with a HASH map too (lookups and BPF_NOEXIST inserts whose result is not
	   read, of one key of one map, whose stack bytes nothing changes after its first use, in
	   a program without loops: gp_count's idiom): a run may insert the key the next run finds,
	   so runs 2..N are alike but the first may differ: one run of weight 1, then one of weight
	   N-1, do what N runs do. */
	int additive;
	char additive_why[160];                    /* out: when not additive, the first reason
	                                              ("insn 7: reads a map value") */
	uint64_t ctx_read[2];                      /* out: context bytes the program reads (bit b of
	                                              word b / 64, the first 128 bytes); exact when
	                                              additive */
};

/* 0 when safe; -EINVAL (malformed), -EACCES (unsafe), -E2BIG (too complex).
 * With GP_ATTACH_NONE (generic mode), r1 points to ctx_size bytes of plain writable memory with
 * no alignment rule (an unknown scalar when ctx_size is 0), every helper is allowed, and with
 * r2_is_ctx_size r2 holds ctx_size: how the conformance corpus is checked.
 * stack_depth (out) is the largest stack over any chain of BPF-to-BPF calls, each frame's
 * depth rounded up to 8 bytes; every frame has its own 512 bytes.
 * map_atomic_only[i] (out) is 1 when map i's values are changed, and only changed, by
 * BPF_ATOMIC|BPF_ADD (with or without BPF_FETCH) through map-value pointers, and possibly
 * created by map_update_elem with flags a known BPF_NOEXIST (the counting idiom: lookup, insert
 * on a miss, atomic add): no plain store, no other atomic, no other update, no
 * map_delete_elem, no helper writing into the value. Such a map's values can be sharded per SM
 * and summed by the host: a NOEXIST insert only succeeds for a key no copy holds yet, so the
 * inserted value lands in one copy while the others stay 0, and the sum is the value. Plain
 * loads of the value do not clear it. */
int gp_verify(const struct bpf_insn *insns, size_t n, struct gp_verify_opts *opts);

/* sizeof the context struct in include/gpuprobe/ for that attach point; 0 for GP_ATTACH_NONE. */
uint32_t gp_attach_ctx_size(enum gp_attach_kind kind);

/* Disassemble one instruction in the Linux verifier's log style ("r2 = *(u32 *)(r1 +64)").
 * For ld_imm64, insn[1] must be readable. Returns the length written (snprintf semantics). */
int gp_disasm_insn(const struct bpf_insn *insn, char *buf, size_t size);

#endif
