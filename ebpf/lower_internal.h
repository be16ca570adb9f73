/* Shared state of the eBPF lowering (ebpf/lower*.c): one lowering context per program, the
 * emitters every part uses, and the per-job entry points. Not part of the public API. */
#ifndef GPUPROBE_EBPF_LOWER_INTERNAL_H
#define GPUPROBE_EBPF_LOWER_INTERNAL_H

#include "ebpf/lower.h"

#include <stdbool.h>

/* Temporaries per function: 64-bit, 32-bit and predicate scratch registers. */
enum { LOWER_NTMP64 = 8, LOWER_NTMP32 = 8, LOWER_NTMPPRED = 4 };

struct lower_subprog {
	size_t start, end;          /* instruction range [start, end) */
	const char *name;           /* .func name */
	ir_top *top;                /* the .func being built (not yet in the module) */
};

/* A map_lookup_elem call the maps runtime turned into the element's address (lower_plan.c). */
struct lower_fold {
	bool folded;
	unsigned flags;             /* what the hook said of the address: GP_LOWER_LOOKUP_* */
	ir_stmt *first;             /* what it emitted, moved into the function at the call */
	bool var_key;               /* the key is loaded from the frame at key_off first (into t6) */
	int16_t key_off;
	/* map_update_elem by value (gp_lower_opts.update_by_value): map, the frame offsets and
	 * sizes of key and value, and the .func to call (first is NULL then) */
	const char *update_fn;
	int map;
	int16_t value_off;
	uint8_t key_size, value_size;
};

struct lower_ctx {
	ir_module *m;
	const struct gp_lower_opts *opts;
	const struct bpf_insn *insns;
	size_t n;
	const char *prefix;
	const char *func_name;
	char *err;
	size_t errlen;

	bool *is_target;            /* n entries: some jump lands here, needs a label */
	struct lower_subprog *subs; /* subs[0] is the main program */
	size_t nsubs;
	bool uses_exit_helper;      /* helper 507 somewhere: subprograms carry an exit flag */
	struct lower_fold *folds;   /* n entries: the calls that fold (lower_plan) */
	bool *dead;                 /* n entries: copies of r10 nothing reads (lower_plan) */
	unsigned nargs;             /* main function's .param arguments (r1..) */
	unsigned stack_size;        /* bytes of each frame's .local stack array */
	const char *site_mask;      /* opts->site_mask: the main function's mask register */
	const char *weight;         /* opts->weight: the main function's weight register (.b32) */
	size_t prefix_end;          /* main's instructions before it run once in every lane */

	/* current function */
	ir_func *f;
	size_t sub;                 /* index in subs */
	size_t pc;                  /* instruction being lowered */
	unsigned label_seq;         /* local labels made by lowering sequences */
	bool stack_in_regs;         /* the frame's 8-byte slots are registers %<prefix>s<N> */

	/* register names */
	const char *r[11];
	const char *t[LOWER_NTMP64];
	const char *w[LOWER_NTMP32];
	const char *p[LOWER_NTMPPRED];
	const char *ret_param, *ctx_param, *stack, *exit_flag;
	const char *slot_base;      /* "%<prefix>s": slot k of the frame is slot_base k */
	const char *vprintf_fmt;    /* module global "%s\n" for puts, once made */
};

/* ---- errors ---- */
int lower_fail(struct lower_ctx *c, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- operands ---- */
ir_operand lo_reg(struct lower_ctx *c, const char *name);  /* a register by full name */
ir_operand lo_imm(struct lower_ctx *c, uint64_t v);        /* hex literal */
ir_operand lo_sym(struct lower_ctx *c, const char *name);
ir_operand lo_addr(struct lower_ctx *c, const char *base, int64_t off);
ir_operand lo_vec2(struct lower_ctx *c, const char *a, const char *b);
ir_operand lo_list(struct lower_ctx *c, unsigned n, const char *const *names);

/* ---- statements ---- */
/* Append `op<mods> ops...` to the current function; nops operands follow as ir_operand. */
void lo_emit(struct lower_ctx *c, const char *op, const char *mods, unsigned nops, ...);
/* Same, guarded by @pred (or @!pred when neg). */
void lo_emit_if(struct lower_ctx *c, const char *pred, bool neg, const char *op, const char *mods,
		unsigned nops, ...);
void lo_label(struct lower_ctx *c, const char *name);
const char *lo_new_label(struct lower_ctx *c);             /* fresh local label name */
const char *lo_insn_label(struct lower_ctx *c, size_t idx); /* label of instruction idx */
void lo_decl_stmt(struct lower_ctx *c, const char *space, unsigned align, const char *type,
		  const char *name, const char *dims);
void lo_block_open(struct lower_ctx *c);
void lo_block_close(struct lower_ctx *c);

/* Low 32 bits of a 64-bit register into a 32-bit one, and back zero-extended. */
void lo_lo32(struct lower_ctx *c, const char *w, const char *r);
void lo_zext32(struct lower_ctx *c, const char *r, const char *w);

/* ---- jobs: each lowers the instruction at c->pc; returns 0, or lower_fail's value ---- */
int lower_alu(struct lower_ctx *c, const struct bpf_insn *in);      /* ALU, ALU64 */
int lower_jump(struct lower_ctx *c, const struct bpf_insn *in);     /* JMP, JMP32 but calls/exit */
int lower_mem(struct lower_ctx *c, const struct bpf_insn *in);      /* LD (lddw), LDX, ST, STX */
int lower_call(struct lower_ctx *c, const struct bpf_insn *in);     /* call helper/local/callx */
int lower_exit(struct lower_ctx *c);                                /* exit: return r0 */

/* Store of the low size bytes of val at [b+off], byte-wise when misaligned unless aligned. */
void lower_store_at(struct lower_ctx *c, const char *b, bool aligned, int16_t off, unsigned size,
		    ir_operand val);

/* Frames: building a subprogram's .func shell and its entry sequence (lower_frame.c). */
int lower_frame_begin(struct lower_ctx *c, size_t sub);
/* Return from the current function with r0 (ret param); exits the probe when from_helper. */
void lower_frame_return(struct lower_ctx *c);

const char *lower_helper_name(int id);                      /* NULL for an unknown id */

/* The plan of a subprogram (lower_plan.c), made by lower_frame_begin before any code: which
 * lookups fold, whether the frame lives in registers (c->stack_in_regs), which r10 copies are
 * dead. Returns 0 or lower_fail's value. */
int lower_plan(struct lower_ctx *c, size_t sub);
/* Move the folded lookup's code (c->folds[pc]) into the function. */
void lower_emit_fold(struct lower_ctx *c, size_t pc);
/* The instructions control reaches the jump target `first` from (lower_plan.c): the one
 * before it when it falls through, and every jump to it; more than LOWER_MAX_PREDS: give up
 * (the count returned is then past it). */
enum { LOWER_MAX_PREDS = 4 };
size_t lower_block_preds(const struct lower_ctx *c, size_t first, size_t preds[LOWER_MAX_PREDS + 1]);
/* First instruction of the straight-line code that reaches pc (the last jump target at or
 * before it, or the subprogram's start). */
size_t lower_block_start(const struct lower_ctx *c, size_t pc);
/* Load the u32 at frame offset off into the 64-bit register dst (lower_mem.c). */
void lower_load_frame_u32(struct lower_ctx *c, int16_t off, const char *dst);
/* Load the size (4 or 8) bytes at frame offset off into dst, zero-extended (lower_mem.c). */
void lower_load_frame(struct lower_ctx *c, int16_t off, unsigned size, const char *dst);
/* The folded update at pc (lower_fold.update_fn): key and value from the frame, one call. */
int lower_emit_update_fold(struct lower_ctx *c, size_t pc);
/* An aligned r10+off access of size bytes inside the frame. */
bool lower_frame_slot(const struct lower_ctx *c, unsigned base, int16_t off, unsigned size);
/* What register reg holds at c->pc, from the straight-line code before it: LOWER_MV_* flags, 0
 * when nothing is known. */
enum {
	LOWER_MV_VALUE = 1,         /* a map value pointer (global memory) or NULL */
	LOWER_MV_UNIFORM = 2,       /* the same in every lane of a warp */
	LOWER_MV_NONNULL = 4,       /* not NULL */
	LOWER_MV_OPAQUE = 8,        /* UNIFORM, but loaded from memory: ptxas cannot tell */
};
unsigned lower_map_value_reg(const struct lower_ctx *c, unsigned reg);

#endif
