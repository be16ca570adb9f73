/* Internals of the verifier (ebpf/verifier*.c), one job per file:
 *   verifier_tnum.c     known-bits numbers and the range bookkeeping of scalar registers
 *   verifier_alu.c      ALU instructions on register states, pointer arithmetic rules
 *   verifier_branch.c   conditional jumps: which way they can go, ranges learnt on each side
 *   verifier_mem.c      loads, stores, atomics: context, stack, map value, ring-buffer memory
 *   verifier_helpers.c  helper calls checked against ebpf/helpers.def
 *   verifier_cfg.c      static checks: opcodes, reserved fields, jumps, subprograms, liveness
 *   verifier_state.c    state copies, the pruning comparison, the infinite-loop comparison
 *   verifier_log.c      the disassembler and the Linux-style log
 *   verifier.c          path exploration, BPF-to-BPF calls, gp_verify itself */
#ifndef GPUPROBE_EBPF_VERIFIER_PRIV_H
#define GPUPROBE_EBPF_VERIFIER_PRIV_H

#include "ebpf/verifier.h"

#include <stdbool.h>
#include <stdint.h>

/* Debian 12's linux/bpf.h predates the sign-extending loads (ISA v4). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

#define GPV_MAX_FRAMES 8
#define GPV_STACK 512
#define GPV_SLOTS (GPV_STACK / 8)
#define GPV_MAX_REFS 16
#define GPV_MAX_VAR_OFF (1LL << 29)     /* like Linux: pointer offsets stay well inside s32 */
#define GPV_DEFAULT_MAX_INSNS 1000000UL
#define GPV_DEFAULT_MAX_STATES 100000u
#define GPV_MAX_STATES_PER_INSN 4096         /* past it, phantom checkpoints only */
#define GPV_SCAN_LIMIT 512                   /* kept states compared per visit, newest first */
#define GPV_SCAN_LIMIT_LATE 16               /* ... once GPV_MAX_COMPARES comparisons were made */
#define GPV_MAX_COMPARES 4000000UL           /* bounds the time spent comparing states */
#define GPV_MAX_BACKTRACK_STEPS 20000000UL   /* past it, precision falls back to "all precise" */

/* A number whose bits are partly known: bit set in mask = unknown; value holds the known bits. */
struct tnum {
	uint64_t value, mask;
};

enum gpv_type {
	T_NOT_INIT = 0,
	T_SCALAR,
	T_PTR_CTX,
	T_PTR_STACK,
	T_PTR_MAP_VALUE,
	T_PTR_MAP_VALUE_OR_NULL,
	T_CONST_MAP_PTR,
	T_PTR_MEM,              /* ring-buffer record from ringbuf_reserve */
	T_PTR_MEM_OR_NULL,
};

struct gpv_reg {
	uint8_t type;           /* enum gpv_type */
	uint8_t frameno;        /* T_PTR_STACK: the frame whose stack it points into */
	uint8_t precise;        /* scalars: the exact range matters to a later safety decision */
	uint8_t has32;          /* scalars: u32min/u32max bound the low 32 bits (learnt from a
	                           32-bit comparison); 0: no more than the 64-bit view says */
	int16_t map;            /* map index for map pointers and map values */
	int32_t off;            /* pointers: the fixed part of the offset */
	uint32_t mem_size;      /* T_PTR_MEM: bytes of the record */
	uint32_t id;            /* or-null pointers: copies share it; scalars: copies share it */
	uint32_t ref_obj_id;    /* ring-buffer records: the reservation that must be released */
	/* Racy read-modify-write (verifier_race.c). Map values (or null): vid names the pointer (the
	 * lookup that returned it, or the global variable), kept through the null check, copies and
	 * constant offsets. Scalars: vid of the map value they were loaded from (0: none), with the
	 * offset in it and the load; kept through arithmetic on them. Never compared by pruning: a
	 * warning may be missed on a pruned path, never made up. */
	uint32_t vid;
	int32_t voff, vinsn;
	/* Scalars: 1 + the instruction that released the ring-buffer record this register pointed
	 * to (bpf_ringbuf_submit/discard), so that a later use says so; 0: none. Messages only. */
	int32_t released_at;
	uint32_t u32min, u32max; /* has32: the low 32 bits lie in [u32min, u32max] */
	struct tnum var;        /* scalar value, or the variable part of a pointer's offset */
	uint64_t umin, umax;
	int64_t smin, smax;
};

/* Byte states of the stack. */
enum { S_INVALID = 0, S_MISC, S_SPILL };

struct gpv_slot {
	uint8_t type[8];        /* per byte; S_SPILL on all 8 when a register was spilled here */
	struct gpv_reg spill;
};

struct gpv_frame {
	struct gpv_reg regs[11];
	int callsite;           /* index of the call insn in the caller, -1 for the main program */
	int subprog;
	int nslots;             /* slot i covers offsets [-8(i+1), -8i) */
	struct gpv_slot slots[];
};

struct gpv_checkpoint;

/* One executed instruction of a path, for precision backtracking. Entries are shared by the
 * paths that forked after them (each points to the one before), and live until gp_verify ends. */
enum { TR_FILL = 1, TR_STACK_WRITE = 2, TR_SPILL = 4 };
struct gpv_trace {
	struct gpv_trace *prev;
	int32_t idx;
	int16_t slot;           /* stack slot read or written (TR_*), -1 for none */
	uint8_t frame;
	uint8_t flags;
};

struct gpv_state {
	struct gpv_frame *frame[GPV_MAX_FRAMES];
	int curframe;
	int nrefs;
	uint32_t refs[GPV_MAX_REFS];       /* unreleased ring-buffer reservations (ids) */
	int ref_insn[GPV_MAX_REFS];
	struct gpv_checkpoint *parent;     /* the latest checkpoint on this path */
	struct gpv_trace *tail;            /* the last instruction executed on this path */
};

struct gpv_checkpoint {
	struct gpv_state st;
	struct gpv_checkpoint *next;       /* same instruction (phantoms: all phantoms) */
	unsigned branches;                 /* paths from here not yet finished */
	unsigned hits, misses;
	/* A phantom stands where a checkpoint was due but its instruction already keeps enough:
	 * no registers (never compared), only what precision backtracking needs to stop early,
	 * so a long loop is walked back one iteration at a time. */
	uint8_t phantom;
	uint8_t all_precise;               /* every scalar marked precise here and above */
	uint16_t ph_regs;                  /* phantom: registers of st.curframe already precise */
	uint64_t ph_slots[GPV_MAX_FRAMES]; /* phantom: stack slots already precise */
};

struct gpv_pending {
	struct gpv_state st;
	int insn;
	int from;                          /* the branch insn, for the log */
};

struct gpv_subprog {
	int start, end;                    /* [start, end) */
	unsigned stack_depth;
};

struct gpv_env {
	const struct bpf_insn *insns;
	int n;
	struct gp_verify_opts *opts;
	bool generic;                      /* GP_ATTACH_NONE: r1 is plain memory, alignment not enforced */

	/* static facts */
	uint8_t *prune;                    /* checkpoint here */
	uint16_t *live;                    /* registers live on entry */
	int *subprog_of;
	struct gpv_subprog *subs;
	int nsubs;

	/* exploration */
	struct gpv_checkpoint **cps;
	unsigned *cps_len;
	struct gpv_checkpoint *phantoms;
	unsigned nstates;
	unsigned long bt_steps;            /* instructions walked back by precision tracking */
	unsigned long compares;            /* state comparisons made */
	struct gpv_pending *stack;
	size_t nstack, capstack;
	struct gpv_state cur;
	int idx;
	unsigned long processed, max_insns;
	unsigned max_states;
	uint32_t next_id;

	/* trace of executed instructions (precision backtracking) */
	struct gpv_trace_chunk *chunks;
	size_t chunk_used;
	int16_t tr_slot;                   /* set by the memory checks for the insn being executed */
	uint8_t tr_frame, tr_flags;

	/* what the program does to maps */
	uint8_t *map_plain_write;
	uint8_t *map_atomic_add;
	bool not_additive;                 /* verifier_additive.c: a reason was found */
	int hash_map, hash_key_off;        /* the one hash map and key (frame offset) it uses, -1 */
	int hash_first;                    /* the first instruction calling a helper on it */
	int16_t *stack_write_lo, *stack_write_hi;   /* per instruction: frame bytes it may write */

	/* warnings (verifier_race.c): instructions already warned about */
	uint8_t *warned;
	size_t warn_len;

	/* the log */
	char *log;
	size_t log_size, log_len;
	int log_level;
	char reason[1024];
	int err_idx;
	size_t insn_logged_at;             /* log_len right after the last instruction line of the
	                                      verbose trace (0: none): -v prints the rejected one once */
	int insn_logged;                   /* which instruction that line was */
	const struct gp_verify_line *src_printed;   /* verbose trace: the source line printed last */
	bool has_loop;                     /* a jump goes backwards (verifier_cfg.c): a complexity
	                                      limit is then blamed on a loop */
};

/* verifier_tnum.c */
struct tnum tnum_const(uint64_t v);
struct tnum tnum_unknown(void);
struct tnum tnum_range(uint64_t min, uint64_t max);
struct tnum tnum_add(struct tnum a, struct tnum b);
struct tnum tnum_sub(struct tnum a, struct tnum b);
struct tnum tnum_and(struct tnum a, struct tnum b);
struct tnum tnum_or(struct tnum a, struct tnum b);
struct tnum tnum_xor(struct tnum a, struct tnum b);
struct tnum tnum_mul(struct tnum a, struct tnum b);
struct tnum tnum_lshift(struct tnum a, unsigned k);
struct tnum tnum_rshift(struct tnum a, unsigned k);
struct tnum tnum_arshift(struct tnum a, unsigned k, unsigned width);
struct tnum tnum_intersect(struct tnum a, struct tnum b);
struct tnum tnum_cast(struct tnum a, unsigned bytes);
bool tnum_is_const(struct tnum a);
bool tnum_in(struct tnum outer, struct tnum inner);
bool tnum_is_aligned(struct tnum a, uint64_t size);
void reg_mark_unknown(struct gpv_reg *r);
void reg_mark_const(struct gpv_reg *r, uint64_t v);
void reg_mark_not_init(struct gpv_reg *r);
void reg_mark_unknown_width(struct gpv_reg *r, unsigned bytes, bool sign_extend);
void reg_sync_bounds(struct gpv_reg *r);
bool reg_bounds_sane(const struct gpv_reg *r);
bool reg_is_const(const struct gpv_reg *r);
void reg_zext32(struct gpv_reg *r);
/* The low 32 bits of a scalar, zero-extended (sext: sign-extended) into *out, with what
 * is known of them (the 64-bit view, has32, the known bits). */
void reg_view32(const struct gpv_reg *r, struct gpv_reg *out, bool sext);
/* The bounds [*lo, *hi] known for the low 32 bits. */
void reg_bounds32(const struct gpv_reg *r, uint32_t *lo, uint32_t *hi);
bool reg_is_pointer(const struct gpv_reg *r);

/* verifier_log.c */
const char *gpv_type_name(int type);
void gpv_log(struct gpv_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gpv_reject(struct gpv_env *env, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gpv_log_state(struct gpv_env *env, const struct gpv_state *st);
void gpv_log_insn(struct gpv_env *env, int idx);
void gpv_finish_log(struct gpv_env *env, int ret);
const char *gpv_helper_name(int id);        /* ours (helpers.def), else Linux's; NULL: none */
/* "bpf_map_lookup_elem, bpf_ktime_get_ns, ..." : the helpers a program at this attach point
 * may call (device: GPU attach points; host: host ones; both for GP_ATTACH_NONE). */
void gpv_helper_list(enum gp_attach_kind at, char *buf, size_t size);
/* The subprogram's name from the source information, else "func#K"; into buf. */
const char *gpv_subprog_name(struct gpv_env *env, int subprog, char *buf, size_t size);

/* verifier_cfg.c */
int gpv_check_cfg(struct gpv_env *env);

/* verifier_state.c */
struct gpv_frame *gpv_frame_new(int callsite, int subprog);
int gpv_frame_grow(struct gpv_state *st, int fno, int nslots);
int gpv_state_copy(struct gpv_state *dst, const struct gpv_state *src);
void gpv_state_free(struct gpv_state *st);
bool gpv_states_equal(struct gpv_env *env, const struct gpv_state *old, const struct gpv_state *cur,
		      bool exact);
void gpv_clear_dead(struct gpv_env *env, struct gpv_state *st, int idx);
void gpv_for_each_reg(struct gpv_state *st, void (*fn)(struct gpv_reg *, void *), void *arg);

/* verifier_precise.c */
void gpv_mark_precise(struct gpv_env *env, int regno);
void gpv_propagate_precision(struct gpv_env *env, const struct gpv_state *old);
int gpv_trace_append(struct gpv_env *env, int idx);
int gpv_trace_add(struct gpv_env *env, struct gpv_state *st, int idx);
void gpv_trace_free(struct gpv_env *env);

/* verifier_alu.c */
int gpv_check_alu(struct gpv_env *env, const struct bpf_insn *insn);
uint64_t gpv_alu_eval(uint8_t code, int16_t off, int32_t imm, uint64_t dst, uint64_t src);

/* verifier_branch.c: returns 1 always taken, 0 never, -1 unknown */
int gpv_branch_taken(const struct gpv_reg *dst, const struct gpv_reg *src, uint8_t op, bool is32);
/* refine dst/src (copies in the state with the same id too) for the branch outcome;
 * returns false when that outcome is impossible */
bool gpv_refine(struct gpv_state *st, struct gpv_reg *dst, struct gpv_reg *src, uint8_t op,
		bool is32, bool taken, bool src_is_imm);
void gpv_mark_null_checked(struct gpv_state *st, uint32_t id, bool is_null);

/* verifier_mem.c */
int gpv_check_mem(struct gpv_env *env, const struct bpf_insn *insn);
int gpv_check_atomic(struct gpv_env *env, const struct bpf_insn *insn);
/* check that [reg+off, +size) is readable (write=false) or writable; for helper arguments */
int gpv_check_helper_mem(struct gpv_env *env, int regno, int64_t size_min, uint64_t size_max,
			 bool write, bool need_init);

/* verifier_race.c: racy read-modify-write of map values (a warning, not an error) */
#define GPV_VID_GLOBAL 0x80000000u   /* vid of global data: | the map index */
struct gpv_vtag {
	uint32_t vid;
	int32_t voff, vinsn;
};
struct gpv_vtag gpv_race_alu_tag(struct gpv_env *env, const struct bpf_insn *insn);
void gpv_race_alu_done(struct gpv_env *env, const struct bpf_insn *insn, struct gpv_vtag t);
void gpv_race_load(struct gpv_env *env, const struct gpv_reg *ptr, int off, struct gpv_reg *out);
void gpv_race_store(struct gpv_env *env, const struct gpv_reg *ptr, int off, const struct gpv_reg *val);

/* verifier_additive.c: whether sites may merge the program's runs (gp_verify_opts.additive);
 * step sees each instruction before it executes, on the state it executes in */
void gpv_additive_start(struct gpv_env *env);
void gpv_additive_step(struct gpv_env *env, const struct bpf_insn *insn);
void gpv_additive_finish(struct gpv_env *env, int ret);

/* verifier_helpers.c */
int gpv_check_helper_call(struct gpv_env *env, const struct bpf_insn *insn);
int gpv_helper_nargs(int id);
/* "submitted", "discarded" or "released": what the helper call at insn did to a record. */
const char *gpv_release_verb(struct gpv_env *env, int insn);

static inline struct gpv_frame *cur_frame(struct gpv_env *env)
{
	return env->cur.frame[env->cur.curframe];
}
static inline struct gpv_reg *cur_regs(struct gpv_env *env)
{
	return cur_frame(env)->regs;
}

#endif
