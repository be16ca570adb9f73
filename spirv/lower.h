/* Internal to spirv/: the state shared by the lowering of each instruction family.
 *
 * Every PTX register is a Function-storage variable; an instruction loads its operands and stores
 * its results. That keeps PTX's unstructured control flow trivially valid (no SSA to build);
 * the consumer's compiler (LLVM mem2reg, IGC) promotes them back to registers. */
#ifndef GPUPROBE_SPIRV_LOWER_H
#define GPUPROBE_SPIRV_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "ptx-frontend/ir.h"
#include "spirv/emit.h"
#include "spirv/spirv.h"
#include <spirv/unified1/OpenCL.std.h>

/* A PTX scalar type: kind 'u', 's', 'b', 'f' or 'p' (predicate), width in bits. */
typedef struct ptype {
	char k;
	unsigned bits;
} ptype;

ptype ptype_parse(const char *s);            /* ".u32" -> {'u',32}; unknown: bits 0 */
static inline bool ptype_ok(ptype t) { return t.bits != 0; }
static inline ptype PT(char k, unsigned bits) { return (ptype){k, bits}; }

#define LW_RESERVED_SMEM 1024u /* bytes of reserved shared memory, as CUDA reserves per block */

enum sym_kind { SYM_GLOBAL, SYM_SHARED, SYM_LOCAL, SYM_CONST, SYM_PARAM, SYM_FUNC };

struct reg {
	const char *name;
	uint32_t var;     /* OpVariable (Function) */
	ptype t;
};

struct sym {
	const char *name;
	enum sym_kind kind;
	uint32_t var;     /* the variable (SHARED: unused, its place is window + offset) */
	SpvStorageClass sc;
	uint64_t offset;  /* SHARED: byte offset in the shared window */
	ptype t;          /* element type as declared */
	uint32_t func_id; /* SYM_FUNC */
	const ir_func *func;
	const ir_decl *decl; /* a body declaration (.param/.local of a call sequence's block) */
	bool live;        /* its declaration has been passed in lowering order (lw_sym) */
};

struct lw_func_info { /* per IR function: its SPIR-V id and signature */
	const ir_func *f;
	uint32_t id, ret_type, fn_type;
	uint32_t param_types[33];
	bool param_ptr[33];   /* a byte-array .param: passed as a pointer to its bytes */
	bool ret_ptr;         /* a byte-array return: an extra last pointer parameter */
	bool skip;            /* left out: it (or a function it needs) cannot be lowered */
	bool failed;          /* this pass: lowering it failed (message in fail_msg) */
	char *fail_msg;
	unsigned nspv_params; /* nparams + ret_ptr */
};

/* A statement of a divergent region, or of a loop whose threads leave it at different
 * iterations, whose warp collectives are reached by every thread (lower_diverge.c). */
enum {
	LW_DIVERGE_BRANCH,     /* the region's guarded branch: skip = its guard */
	LW_DIVERGE_BARRIER,    /* a collective of a region and/or of a loop */
	LW_DIVERGE_DROP,       /* LLVM's pair: the unguarded branch its guarded one replaces */
	LW_DIVERGE_LOOP_ENTER, /* the branch that skips the loop: done = its guard, then to the top */
	LW_DIVERGE_LOOP_TOP,   /* the loop's header label: done threads go round the collectives */
	LW_DIVERGE_LOOP_BACK,  /* the back edge: round again while any thread of the block goes on */
};
struct lw_diverge {
	const ir_stmt *s;
	int kind;
	bool negate;         /* BRANCH: the region is skipped where the guard is false */
	uint32_t var;        /* bool: this thread skips the region (0: the collective is in a loop only) */
	uint32_t own;        /* BARRIER: the label opened before it */
	uint32_t next;       /* where skipping threads go next; 0: the join label */
	const char *join;    /* the region's join label (the last barrier's) */
	size_t from;         /* the region's first statement (its guarded branch) */
	uint32_t lvar;       /* bool: this thread is done with the enclosing loop (0: in none) */
	uint32_t lown;       /* BARRIER: the label done threads reach it by; LOOP_BACK: the latch */
	uint32_t lnext;      /* BARRIER, LOOP_TOP: where done threads go next (the latch last) */
	const char *top;     /* LOOP_ENTER, LOOP_BACK: the loop's header label */
};

typedef struct lw {
	spv_emitter *e;
	const ir_module *m;
	const struct spirv_options *opts;
	char *err;
	size_t errlen;
	int failed;

	/* module scope */
	struct sym *gsyms;
	size_t ngsyms, capgsyms;
	uint32_t shared_window;  /* Workgroup i8 array holding every .shared variable */
	uint64_t shared_size;
	uint64_t shared_sink;    /* the window's bytes; LW_SHARED_SINK more past them take stray accesses */
	uint64_t reserved_smem;  /* offset of the reserved shared memory (%reserved_smem_offset_*) */
	uint32_t warp_scratch;   /* Workgroup u32[1024] for the warp emulation */
	uint32_t warp_live;      /* Workgroup u32[1024]: lanes live at a collective of a divergent region */
	uint32_t warp_skip;      /* bool: this thread skips the divergent region whose collective is being
				  * lowered (lower_diverge.c); 0 outside such regions */
	uint32_t mma_scratch;    /* Workgroup u32 array for the wmma emulation; 0 until used */
	struct { unsigned key; uint32_t id; } *mma_helpers; /* its dot-product functions */
	size_t nmma_helpers;
	spv_buf helper_funcs;    /* functions generated while lowering others, emitted at the end */
	uint32_t grid_ws;        /* cooperative groups' grid workspace (%envreg1/2); 0 until used */
	uint32_t tex_texel;      /* the texel-fetch helper function (lower_tex.c); 0 until used */
	uint32_t heap, heap_top;  /* device malloc's heap and its offset; 0 until used */
	uint32_t fence_word;     /* CrossWorkgroup u32 that fences (membar) apply to */
	uint32_t token_word;     /* CrossWorkgroup u64 behind the region token (lower_region.c); 0 until used */
	uint32_t builtins[16];   /* BuiltIn Input variables by enum lw_builtin; 0 until used */
	struct lw_func_info *funcs;
	size_t nfuncs;
	uint32_t *entry_ids;
	const char **entry_names;
	size_t nentries;

	/* function scope */
	const ir_func *fn;
	spv_buf vars, prologue, body;   /* entry block: variables, then parameter copies */
	struct reg *regs;        /* open hash on name */
	size_t capregs, nregs;
	struct sym *lsyms;       /* params and function-scope variables */
	size_t nlsyms, caplsyms;
	struct { const char *name; uint32_t id; } *labels;
	size_t nlabels;
	bool in_block;
	uint32_t ret_block;      /* kernel: the block that returns */
	uint32_t clock_var;      /* per-thread counter behind %clock */
	uint32_t carry_var;      /* the carry flag of add.cc/addc chains */
	uint32_t token_var;      /* the region token (lower_region.c); 0 until used */
	bool token_escaped;      /* this function stores the token's address (lower_region.c) */
	uint32_t alloca_arena, alloca_top; /* alloca: a private arena and its bump offset */
	const ir_stmt *cur;      /* for error lines */
	struct lw_diverge *diverge; /* divergent regions and loops rewritten around their collectives */
	const ir_stmt *divergent_collective; /* one left as written that part of a block may not reach */
	const ir_stmt **lane_alone;  /* probe collectives part of a block may not reach: one lane's own */
	bool lockstep;               /* this function's blocks run in lock step (lower_lockstep.c) */
	const char **varying;        /* registers whose value differs between a block's threads (lower_diverge.c) */
	size_t nvarying;
	size_t nlane_alone;
	char **notes;                /* "FUNC\tLINE: message" for spirv_options.noted, this pass's */
	size_t nnotes;
	const ir_insn **rec_calls;   /* calls within a cycle of calls, not made (lower_recursion.c) */
	size_t nrec_calls;
	size_t ndiverge;
	const char *const *skip_names; /* functions to leave out (spirv_lower_module's second pass) */
	size_t nskip;
} lw;

/* Errors: the first one wins; always returns -1 so callers can `return lw_fail(...)`. */
int lw_fail(lw *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lw_unsupported(lw *c, const ir_insn *in, const char *why);

/* Types and constants. */
uint32_t lw_type(lw *c, ptype t);
uint32_t lw_const(lw *c, ptype t, uint64_t v);        /* integer bits (float: raw bits) */
uint32_t lw_u32(lw *c, uint32_t v);
uint32_t lw_u64(lw *c, uint64_t v);

/* Emission into the current block; starts an unreachable block after a terminator. */
void lw_ensure_block(lw *c);
uint32_t lw_op1(lw *c, SpvOp op, uint32_t type, uint32_t a);
uint32_t lw_op2(lw *c, SpvOp op, uint32_t type, uint32_t a, uint32_t b);
uint32_t lw_op3(lw *c, SpvOp op, uint32_t type, uint32_t a, uint32_t b, uint32_t d);
uint32_t lw_ext(lw *c, uint32_t type, enum OpenCLstd_Entrypoints inst, unsigned n, ...);
uint32_t lw_select(lw *c, uint32_t type, uint32_t cond, uint32_t a, uint32_t b);
void lw_label(lw *c, uint32_t id);                    /* closes the open block with a branch */
void lw_branch(lw *c, uint32_t target);
void lw_branch_cond(lw *c, uint32_t cond, uint32_t t, uint32_t f);

/* Convert value v of PTX type from to PTX type to (bit reinterpretation for equal widths,
 * truncation, or extension by the signedness of `from`). */
uint32_t lw_convert_bits(lw *c, uint32_t v, ptype from, ptype to);

/* Operands. */
struct reg *lw_reg(lw *c, const char *name);
uint32_t lw_read(lw *c, const ir_operand *op, ptype want);      /* 0 on error (reported) */
int lw_write(lw *c, const ir_operand *op, ptype t, uint32_t v);  /* `_` discards */
uint32_t lw_read_pred(lw *c, const ir_operand *op);             /* honours `!p` */
/* The pointer an address operand designates, for an access of type t in space sp. */
uint32_t lw_address(lw *c, const ir_operand *op, enum ir_space sp, ptype t, SpvStorageClass *sc_out);
/* A pointer to t at integer address a (u64) of space sp (shared: an offset in the window). */
uint32_t lw_ptr_at(lw *c, enum ir_space sp, uint32_t a, ptype t);
struct sym *lw_sym(lw *c, const char *name);

/* Instruction helpers. */
ptype lw_insn_type(const ir_insn *in);           /* the last type modifier (.u32, .f64, ...) */
ptype lw_insn_type_n(const ir_insn *in, int n);  /* n-th type modifier: cvt.f32.s32 has two */
enum ir_space lw_insn_space(const ir_insn *in);
const char *lw_insn_mod_in(const ir_insn *in, const char *const *set); /* first of set present */

/* Special registers (%tid.x, ...). Returns 0 and sets *v, 1 if name is not special, -1 on error. */
int lw_special_reg(lw *c, const char *name, uint32_t *v, ptype *t);
enum lw_builtin { LW_B_LOCAL_ID, LW_B_WG_SIZE, LW_B_WG_ID, LW_B_NUM_WG, LW_B_COUNT };
uint32_t lw_builtin_load(lw *c, enum lw_builtin b, unsigned comp); /* u32 */
uint32_t lw_linear_tid(lw *c);   /* u32 */
uint32_t lw_block_threads(lw *c); /* u32 */
void lw_barrier(lw *c);
/* Bytes past the shared window where accesses outside it are sent (lower_util.c): the widest
 * access there is, v4.b64. */
#define LW_SHARED_SINK 32u
/* A memory fence of a SpvScope (membar, fence, barrier.cluster.arrive): lower_ctrl.c. */
void lw_fence(lw *c, uint32_t scope);

/* Warp collectives in divergent regions and loops (lower_diverge.c): plan a function's regions
 * (after its labels are known), then lower each statement through lw_divergent_stmt first (1:
 * lowered) and call lw_divergent_label after each label. */
void lw_plan_divergent_barriers(lw *c, const ir_func *f);
int lw_divergent_stmt(lw *c, const ir_stmt *s, int (*lower_insn)(lw *, const ir_insn *));
int lw_divergent_label(lw *c, const ir_stmt *s);
/* true in every thread of the block when p is true in any (reached by every thread). */
uint32_t lw_block_any(lw *c, uint32_t p);
/* The block's smallest v (u32), in every thread (reached by every thread). */
uint32_t lw_block_min(lw *c, uint32_t v);
/* A collective run by every thread, those with skip not live (their destinations kept). */
int lw_collective_for_all(lw *c, const ir_insn *in, uint32_t skip, int (*lower_insn)(lw *, const ir_insn *));
bool lw_is_collective_insn(const ir_insn *in);
/* A kernel whose collectives part of a block may not reach, run in lock step (lower_lockstep.c):
 * whether it can be, and its body lowered so. */
bool lw_lockstep_ok(lw *c, const ir_func *f);
/* The calls between functions of one cycle of direct calls (recursion), which OpenCL cannot make:
 * each is noted (spirv_options.noted) and becomes the trap word's 4 where it is reached, so the
 * rest of the function and every path without recursion run (lower_recursion.c). */
void lw_cut_recursion(lw *c);
bool lw_is_recursive_call(const lw *c, const ir_insn *in);
/* A "FUNC\tLINE: message" note of this pass (spirv_options.noted). */
void lw_add_note(lw *c, const char *func, unsigned line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int lw_lower_lockstep(lw *c, const ir_func *f, int (*lower_stmt)(lw *, const ir_stmt *),
		      int (*lower_insn)(lw *, const ir_insn *));
/* A probe's collective (lower_diverge.c), and whether it runs as a warp of one lane here. */
bool lw_is_probe_collective(const ir_stmt *s);
bool lw_lane_alone(const lw *c, const ir_stmt *s);

/* The region token (lower_region.c): a u64 0 that LLVM cannot carry across a barrier, so that
 * `reg + imm` addresses are not hoisted out of loops past barriers (PoCL saves each per thread). */
void lw_region_after_barrier(lw *c);
uint32_t lw_region_token(lw *c); /* u64 */

/* Declarations: bytes a declaration occupies (*open for `[]`), and its initializer's bytes. */
uint64_t lw_decl_bytes(const ir_decl *d, bool *open);
int lw_init_bytes(lw *c, const ir_decl *d, uint8_t *out, uint64_t size);
struct lw_reloc {
	uint64_t offset;   /* byte offset of a 64-bit address in the initializer */
	int64_t addend;
	char name[256];    /* the variable whose address it is */
};
int lw_init_bytes_r(lw *c, const ir_decl *d, uint8_t *out, uint64_t size, struct lw_reloc **relocs, size_t *nrelocs);
/* A function's address (a token: function pointers are emulated), 0 if name is no function. */
#define LW_FUNC_TOKEN_TAG 0xf00d000000000000ull
uint64_t lw_func_token(const ir_module *m, const char *name);
/* call vprintf(fmt, args) with a constant format: OpenCL printf (lower_printf.c). */
int lw_vprintf(lw *c, const ir_insn *in, const ir_operand *args, const ir_operand *ret);
int lw_assertfail(lw *c, const ir_insn *in, const ir_operand *args);
/* A .param argument (or return) symbol's pointer as a pointer to t (lower_ctrl.c). */
uint32_t lw_param_ptr(lw *c, const ir_operand *o, ptype t);
/* Dynamic parallelism's device runtime calls (lower_launch.c): whether name is one, and its
 * lowering onto the device launch queue (spirv_options.launch_queue). */
bool lw_is_device_launch_call(const char *name);
int lw_device_launch_call(lw *c, const ir_insn *in, const char *name, const ir_operand *args, const ir_operand *rets);
/* A failed assert (1), a trap (2) or a recursive call reached (4) noted in the driver's trap word
 * (spirv_options.trap_word), if any. */
void lw_note_trap(lw *c, uint32_t what);

/* The families: each returns 1 if it handled the opcode, 0 if not its opcode, -1 on error. */
int lw_int_arith(lw *c, const ir_insn *in);
int lw_float_arith(lw *c, const ir_insn *in);
int lw_convert(lw *c, const ir_insn *in);     /* cvt, cvta, mov, setp, selp, set */
int lw_memory(lw *c, const ir_insn *in);      /* ld, st, atom, red, prefetch */
int lw_control(lw *c, const ir_insn *in);     /* bra, ret, exit, call, bar, membar, fence */
int lw_warp(lw *c, const ir_insn *in);
int lw_async(lw *c, const ir_insn *in);      /* cp.async and its groups, as ordinary copies */
int lw_bits(lw *c, const ir_insn *in);
int lw_half(lw *c, const ir_insn *in);      /* f16 and f16x2 arithmetic */
uint32_t lw_f2h(lw *c, uint32_t f);       /* an f32 rounded to f16 (to nearest even), as a 16-bit integer */
int lw_mma(lw *c, const ir_insn *in);
int lw_simd(lw *c, const ir_insn *in);
int lw_texture(lw *c, const ir_insn *in);   /* tex, suld, sust, txq from descriptors (lower_tex.c) */      /* vadd4, vabsdiff4, add.u16x2, ... (lower_simd.c) */
int lw_cvt_narrow(lw *c, const ir_insn *in); /* tf32, bf16, fp8 conversions (lower_cvt8.c) */       /* wmma.load/store/mma, emulated (lower_mma.c) */
uint32_t lw_h2f(lw *c, uint32_t bits16);   /* an f16 (16-bit integer) widened to f32 */      /* lop3, shf, bfind, bmsk, prmt, carry chains */        /* shfl, vote, redux, activemask, bar.warp */

#endif
