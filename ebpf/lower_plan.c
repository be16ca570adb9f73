/* What the lowering decides about a subprogram before emitting it (lower_frame_begin calls
 * lower_plan), and what it asks while emitting:
 * - Folded lookups: map_lookup_elem(map, &key) with a constant key in straight-line code becomes
 *   the element's address (the maps runtime's emit_map_lookup hook). The hook runs here, into a
 *   scratch function, so that the rest of the plan knows which calls fold; its statements move
 *   into the function when the call is lowered.
 * - The frame in registers: when r10 is never used as a value (only as the base of aligned
 *   r10+constant accesses inside the frame, or copied into a register whose only use is the key
 *   argument of a folded lookup), the stack becomes .b64 registers, one per 8-byte slot, and no
 *   .local array exists. bench/overhead's memory counter stored its key into .local at every
 *   access and kept a stack frame in every instrumented kernel for nothing.
 * - Map values: whether an atomic's base register holds a map value pointer (global memory,
 *   never the stack: no isspacep.local test), whether it is the same in every lane of a warp (a
 *   global variable, or a lookup the hook said so of: ptxas aggregates a plain red, no
 *   match.any), and whether it may be NULL. */
#include "ebpf/lower_internal.h"

#include <errno.h>
#include <string.h>

#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif
#ifndef BPF_FETCH
#define BPF_FETCH 0x01
#endif
#ifndef BPF_CMPXCHG
#define BPF_CMPXCHG (0xf0 | BPF_FETCH)
#endif
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

#define BIT(r) (1u << (r))
#define ARG_REGS (BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5))

static bool is_lddw(const struct bpf_insn *in) { return in->code == (BPF_LD | BPF_IMM | BPF_DW); }

static bool is_helper_call(const struct bpf_insn *in, int id)
{
	return in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 && in->imm == id;
}

static bool is_call(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code);
	return (cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(in->code) == BPF_CALL;
}

static unsigned size_of(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* First instruction of the straight-line code that reaches pc: the last jump target at or
 * before it, or the subprogram's start. Only the fall-through path enters it past its start. */
static size_t block_start(const struct lower_ctx *c, size_t sub_start, size_t pc)
{
	size_t s = pc;
	while (s > sub_start && !c->is_target[s])
		s--;
	return s;
}

size_t lower_block_start(const struct lower_ctx *c, size_t pc)
{
	return block_start(c, c->subs[c->sub].start, pc);
}

bool lower_frame_slot(const struct lower_ctx *c, unsigned base, int16_t off, unsigned size)
{
	return base == 10 && off < 0 && -(int)off <= (int)c->stack_size && off % (int)size == 0;
}

/* ---- folded lookups ---------------------------------------------------------------------- */

/* K_CTX: the context pointer (r1 at the program's entry); K_UNIFORM: a value the same in every
 * lane of a warp at a site (a context field gp_lower_opts.ctx_uniform names, or arithmetic on
 * such values and constants). */
enum known_kind { K_UNKNOWN, K_MAP, K_FP, K_CONST, K_CTX, K_UNIFORM };
struct known {
	enum known_kind kind;
	int64_t v;   /* map index, offset from r10, or the constant */
};

/* An upper bound of each register's value as an unsigned number, followed beside its kind: a
 * lookup whose key is below the map's max_entries (`k = ctx->dir & 3`, a field of a byte) can
 * never miss, and the hook then emits no bounds test and the program's null test folds away
 * (a branch at every memory access of a counting probe, a third of ptxas's time on fft). */
static uint64_t bound_after_alu(const struct bpf_insn *x, uint64_t dst, uint64_t src)
{
	bool alu32 = BPF_CLASS(x->code) == BPF_ALU;
	uint64_t full = alu32 ? UINT32_MAX : UINT64_MAX;
	bool imm = BPF_SRC(x->code) == BPF_K;
	uint64_t k = imm ? (alu32 ? (uint64_t)(uint32_t)x->imm : (uint64_t)(int64_t)x->imm) : src;
	switch (BPF_OP(x->code)) {
	case BPF_END:
		return UINT64_MAX;   /* a 64-bit swap exists in the 32-bit class too */
	case BPF_MOV:
		return x->off ? full : imm ? k : (src < full ? src : full);
	case BPF_AND:
		return (imm && x->imm < 0) ? (dst < full ? dst : full) : (dst < k ? dst : k);
	case BPF_RSH:
		return imm && x->imm >= 0 && x->imm < (alu32 ? 32 : 64) ? (dst < full ? dst : full) >> x->imm : full;
	default:
		return full;   /* a 32-bit operation's result is zero-extended */
	}
}

static bool same_in_warp(const struct known *k) { return k->kind == K_CONST || k->kind == K_UNIFORM; }

/* Whether the context bytes [off, off + size) are all the same in every lane at a site. */
static bool ctx_bytes_uniform(const struct lower_ctx *c, int64_t off, unsigned size)
{
	if (off < 0 || off + size > 128)
		return false;
	for (int64_t b = off; b < off + size; b++)
		if (!(c->opts->ctx_uniform[b / 64] >> (b % 64) & 1))
			return false;
	return true;
}

/* map_lookup_elem at pc with r1 = map and r2 = r10 + off, the 4 bytes at off a known constant,
 * in the code from the block's start to the call. Anything not followed (a store through a
 * pointer other than r10 + const, a call, an unknown size) forgets what the stack held.
 * *key_uniform: the key, known or not, is the same in every lane of a warp (a site-constant
 * context field such as a memory access's direction, ctx->dir & 3): chemv's memory counter
 * aggregated each access's atomic with a match.any.sync (4.8x the program, H100), where a plain
 * red through a warp-uniform address is aggregated by ptxas itself. */
static bool lookup_args(const struct lower_ctx *c, size_t sub_start, size_t pc, int *map,
			uint32_t *key, int64_t *key_off, bool *key_uniform, uint64_t *key_max,
			int64_t *val_off)
{
	*map = -1;
	*val_off = INT64_MIN;
	*key_uniform = false;
	*key_max = UINT32_MAX;
	struct known r[11] = {0};
	uint64_t max[11];   /* bound_after_alu */
	for (int j = 0; j < 11; j++)
		max[j] = UINT64_MAX;
	r[10].kind = K_FP;
	/* same: the word is the same in every lane (uniform: but not a known constant) */
	struct stack_word { int64_t off; uint32_t v; bool same, uniform; uint32_t max; } slot[16];
	size_t nslot = 0;
	size_t first = block_start(c, sub_start, pc);
	if (first == 0 && sub_start == 0)
		r[1].kind = K_CTX;   /* the program's entry: r1 is the context */
	for (size_t i = first; i < pc; i++) {
		const struct bpf_insn *x = &c->insns[i];
		uint8_t cls = BPF_CLASS(x->code);
		if (x->dst_reg > 10 || x->src_reg > 10)
			return false;
		if (is_lddw(x)) {
			r[x->dst_reg] = (struct known){x->src_reg == BPF_PSEUDO_MAP_FD ? K_MAP : K_UNKNOWN,
						       x->imm};
			max[x->dst_reg] = UINT64_MAX;
			i++;
			continue;
		}
		if (cls == BPF_ALU64 || cls == BPF_ALU) {
			struct known *d = &r[x->dst_reg];
			uint8_t op = BPF_OP(x->code);
			bool imm = BPF_SRC(x->code) == BPF_K;
			max[x->dst_reg] = bound_after_alu(x, max[x->dst_reg], imm ? 0 : max[x->src_reg]);
			if (op == BPF_MOV && imm)
				*d = (struct known){K_CONST, cls == BPF_ALU ? (int64_t)(uint32_t)x->imm : x->imm};
			else if (op == BPF_MOV && cls == BPF_ALU64 && x->off == 0)
				*d = r[x->src_reg];
			else if (op == BPF_ADD && imm && cls == BPF_ALU64 && d->kind == K_FP)
				d->v += x->imm;
			else if (op != BPF_END && (op == BPF_MOV ? x->off == 0 : same_in_warp(d)) &&
				 (imm || same_in_warp(&r[x->src_reg])))
				*d = (struct known){K_UNIFORM, 0};   /* lane-independent inputs, same result */
			else
				d->kind = K_UNKNOWN;
			continue;
		}
		if (cls == BPF_LDX) {
			bool u = r[x->src_reg].kind == K_CTX && BPF_MODE(x->code) == BPF_MEM &&
				 ctx_bytes_uniform(c, x->off, size_of(x->code));
			r[x->dst_reg] = (struct known){u ? K_UNIFORM : K_UNKNOWN, 0};
			unsigned sz = size_of(x->code);
			max[x->dst_reg] = BPF_MODE(x->code) == BPF_MEM && sz < 8 ? (1ull << (8 * sz)) - 1
										 : UINT64_MAX;
			continue;
		}
		if (cls == BPF_ST || cls == BPF_STX) {
			unsigned sz = size_of(x->code);
			bool atomic = cls == BPF_STX && BPF_MODE(x->code) == BPF_ATOMIC;
			if (atomic) {
				r[x->src_reg].kind = r[0].kind = K_UNKNOWN;
				max[x->src_reg] = max[0] = UINT64_MAX;
			}
			if (r[x->dst_reg].kind != K_FP) {
				nslot = 0;   /* might be the stack through a pointer not followed */
				continue;
			}
			int64_t off = r[x->dst_reg].v + x->off;
			size_t k = 0;
			for (size_t j = 0; j < nslot; j++)   /* forget what this store overlaps */
				if (slot[j].off + 4 <= off || slot[j].off >= off + sz)
					slot[k++] = slot[j];
			nslot = k;
			bool same = cls == BPF_ST || same_in_warp(&r[x->src_reg]);
			bool known = cls == BPF_ST || r[x->src_reg].kind == K_CONST;
			int64_t v = cls == BPF_ST ? x->imm : r[x->src_reg].v;
			uint64_t m = cls == BPF_ST ? (uint64_t)(int64_t)x->imm : max[x->src_reg];
			if (!atomic && BPF_MODE(x->code) == BPF_MEM && (sz == 4 || sz == 8) && nslot + 2 <= 16) {
				/* the low word, and for 8 bytes the high word (0 while m fits 32 bits) */
				slot[nslot++] = (struct stack_word){off, (uint32_t)v, same, same && !known,
								    m < UINT32_MAX ? (uint32_t)m : UINT32_MAX};
				if (sz == 8)
					slot[nslot++] = (struct stack_word){
						off + 4, (uint32_t)((uint64_t)v >> 32), same, same && !known,
						m <= UINT32_MAX ? 0 : UINT32_MAX};
			}
			continue;
		}
		if (cls == BPF_JMP || cls == BPF_JMP32) {
			if (BPF_OP(x->code) == BPF_CALL) {
				for (int j = 0; j <= 5; j++) {
					r[j].kind = K_UNKNOWN;
					max[j] = UINT64_MAX;
				}
				/* helpers may write the stack through their arguments; a map's lookup
				 * and update only read it (the key, the value) */
				if (!is_helper_call(x, 1) && !is_helper_call(x, 2))
					nslot = 0;
			}
			continue;    /* a branch out: the fall-through path is the one that got here */
		}
		return false;
	}
	if (r[1].kind != K_MAP || r[2].kind != K_FP)
		return false;
	*map = (int)r[1].v;   /* the map and where the key is, whatever the key */
	*key_off = r[2].v;
	if (r[3].kind == K_FP)
		*val_off = r[3].v;   /* an update's value in the frame */
	for (size_t j = 0; j < nslot; j++)
		if (slot[j].off == r[2].v) {
			*key_max = slot[j].max;
			if (!slot[j].same)
				return false;   /* differs between lanes */
			*key_uniform = true;
			if (slot[j].uniform)
				return false;   /* the same in every lane, but not known here */
			*key = slot[j].v;
			return true;
		}
	return false;
}

/* map_update_elem at pc with the key and the value in the frame: by value, when the maps
 * runtime offers it for this map (gp_lower_opts.update_by_value). */
static void plan_update(struct lower_ctx *c, size_t sub_start, size_t pc)
{
	int map;
	uint32_t key;
	int64_t key_off, val_off;
	bool key_uniform;
	uint64_t key_max;
	unsigned ks = 0, vs = 0;
	if (!c->opts->update_by_value || !c->opts->emit_map_ref)
		return;
	lookup_args(c, sub_start, pc, &map, &key, &key_off, &key_uniform, &key_max, &val_off);
	if (map < 0 || val_off == INT64_MIN)
		return;
	const char *fn = c->opts->update_by_value(c->opts->user, c->m, map, &ks, &vs);
	if (!fn || (ks != 4 && ks != 8) || (vs != 4 && vs != 8) ||
	    !lower_frame_slot(c, 10, (int16_t)key_off, ks) || !lower_frame_slot(c, 10, (int16_t)val_off, vs))
		return;
	c->folds[pc] = (struct lower_fold){.folded = true, .update_fn = fn, .map = map,
					   .key_off = (int16_t)key_off, .value_off = (int16_t)val_off,
					   .key_size = (uint8_t)ks, .value_size = (uint8_t)vs};
}

static int plan_folds(struct lower_ctx *c, const struct lower_subprog *sp)
{
	if (!c->opts->emit_map_lookup)
		return 0;
	for (size_t i = sp->start; i < sp->end; i++) {
		const struct bpf_insn *in = &c->insns[i];
		if (is_lddw(in)) {
			i++;
			continue;
		}
		int map;
		uint32_t key;
		int64_t off = 0;
		bool key_uniform;
		uint64_t key_max;
		int64_t val_off;
		if (is_helper_call(in, 2)) {
			plan_update(c, sp->start, i);
			continue;
		}
		if (!is_helper_call(in, 1))
			continue;
		ir_func scratch = {0};
		int rc;
		bool var = false;
		bool known = lookup_args(c, sp->start, i, &map, &key, &off, &key_uniform, &key_max,
					 &val_off);
		rc = known ? c->opts->emit_map_lookup(c->opts->user, c->m, &scratch, c->r[0], map, key)
			   : -ENOTSUP;
		/* A known key the constant hook does not take (a HASH map's) goes the variable
		 * key's way: at an inlined site the context is folded, so ctx->thread.kernel_hash
		 * is a constant there, and a per-kernel hash counter fell back to the generic
		 * helper (descriptor loads, a byte loop over the key in local memory, the hash's
		 * own loop): zoom-cuda's entry+exit counter cost 4.2x its run (bench/RESULTS.md).
		 * ptxas folds the hash of a constant key. */
		if (rc == -ENOTSUP && map >= 0 && c->opts->emit_map_lookup_var &&
		    lower_frame_slot(c, 10, (int16_t)off, 4)) {
			/* the key from its frame slot into t6 at the call */
			var = true;
			rc = c->opts->emit_map_lookup_var(c->opts->user, c->m, &scratch, c->r[0], map, c->t[6],
							  (uint32_t)key_max);
			/* the hook's address depends on the key and the SM only */
			if (rc >= 0 && key_uniform && (rc & GP_LOWER_KEY_UNIFORM))
				rc |= GP_LOWER_WARP_UNIFORM;
		}
		if (rc < 0)
			continue;   /* the helper call stays */
		c->folds[i] = (struct lower_fold){.folded = true, .flags = (unsigned)rc,
						  .first = scratch.first, .var_key = var,
						  .key_off = (int16_t)off};
	}
	return 0;
}

/* A hook's code may hold a loop (a hash map's probe): its labels get the call's instruction
 * index, unique in the function however many lookups fold into it. */
static void rename_fold_labels(struct lower_ctx *c, ir_stmt *first, size_t pc)
{
	for (ir_stmt *l = first; l; l = l->next) {
		if (l->kind != IR_STMT_LABEL)
			continue;
		const char *old = l->text, *fresh = ir_strfmt(c->m, "%s_%zu", old, pc);
		for (ir_stmt *s = first; s; s = s->next)
			if (s->kind == IR_STMT_INSN)
				for (unsigned i = 0; i < s->insn.nops; i++)
					if (s->insn.ops[i].kind == IR_OPND_SYMBOL &&
					    !strcmp(s->insn.ops[i].name, old))
						s->insn.ops[i].name = fresh;
		l->text = fresh;
	}
}

void lower_emit_fold(struct lower_ctx *c, size_t pc)
{
	if (c->folds[pc].var_key)
		lower_load_frame_u32(c, c->folds[pc].key_off, c->t[6]);
	rename_fold_labels(c, c->folds[pc].first, pc);
	for (ir_stmt *s = c->folds[pc].first, *next; s; s = next) {
		next = s->next;
		s->prev = s->next = NULL;
		ir_stmt_append(c->f, s);
	}
	c->folds[pc].first = NULL;
}

/* ---- registers read and written ------------------------------------------------------------ */

/* Registers an instruction reads (bit r for rN). Calls read r1-r5 (a folded lookup none). */
static unsigned reads_of(const struct lower_ctx *c, size_t i)
{
	const struct bpf_insn *x = &c->insns[i];
	uint8_t cls = BPF_CLASS(x->code), op = BPF_OP(x->code);
	unsigned d = x->dst_reg <= 10 ? BIT(x->dst_reg) : 0, s = x->src_reg <= 10 ? BIT(x->src_reg) : 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op == BPF_MOV)
			return BPF_SRC(x->code) == BPF_X ? s : 0;
		return d | (BPF_SRC(x->code) == BPF_X && op != BPF_NEG && op != BPF_END ? s : 0);
	case BPF_LDX:
		return s;
	case BPF_ST:
		return d;
	case BPF_STX:
		if (BPF_MODE(x->code) == BPF_ATOMIC && x->imm == BPF_CMPXCHG)
			return d | s | BIT(0);
		return d | s;
	case BPF_LD:
		return is_lddw(x) ? 0 : ~0u;   /* legacy packet loads: not lowered */
	default:   /* JMP, JMP32 */
		if (op == BPF_EXIT)
			return BIT(0);
		if (op == BPF_CALL) {
			if (x->code == (BPF_JMP | BPF_CALL | BPF_X))
				return ~0u;
			if (c->folds[i].folded)   /* a folded update reads its flags (r4) only */
				return c->folds[i].update_fn ? BIT(4) : 0;
			return ARG_REGS;
		}
		if (op == BPF_JA)
			return 0;
		return d | (BPF_SRC(x->code) == BPF_X ? s : 0);
	}
}

/* Registers an instruction writes; calls clobber r1-r5 (the ISA leaves them undefined). */
static unsigned writes_of(const struct bpf_insn *x)
{
	uint8_t cls = BPF_CLASS(x->code), op = BPF_OP(x->code);
	unsigned d = x->dst_reg <= 10 ? BIT(x->dst_reg) : 0, s = x->src_reg <= 10 ? BIT(x->src_reg) : 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
	case BPF_LDX:
		return d;
	case BPF_LD:
		return is_lddw(x) ? d : BIT(0) | ARG_REGS;
	case BPF_STX:
		if (BPF_MODE(x->code) != BPF_ATOMIC)
			return 0;
		return (x->imm == BPF_CMPXCHG ? BIT(0) : 0) | ((x->imm & BPF_FETCH) ? s : 0);
	case BPF_JMP:
	case BPF_JMP32:
		return op == BPF_CALL ? BIT(0) | ARG_REGS : 0;
	default:
		return 0;
	}
}

/* ---- the frame in registers ---------------------------------------------------------------- */

/* `rk = r10` at i: true when the pointer is never read before it dies (overwritten, clobbered
 * by a call, or the function returns), reached only in straight-line code with no branch out,
 * except to add constants to it; those instructions are marked dead. */
static bool pointer_dies_unread(struct lower_ctx *c, const struct lower_subprog *sp, size_t i,
				unsigned k)
{
	size_t first = i;
	bool dies = false;
	for (size_t j = i + 1; j < sp->end && !dies; j++) {
		const struct bpf_insn *x = &c->insns[j];
		if (c->is_target[j])
			return false;   /* another path joins: the pointer may be read after it */
		if (x->code == (BPF_ALU64 | BPF_ADD | BPF_K) && x->dst_reg == k)
			continue;
		if (reads_of(c, j) & BIT(k))
			return false;
		uint8_t cls = BPF_CLASS(x->code);
		if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(x->code) != BPF_CALL) {
			if (BPF_OP(x->code) != BPF_EXIT)
				return false;   /* a branch out: the pointer lives on at the target */
			dies = true;
		}
		if (writes_of(x) & BIT(k))
			dies = true;
		if (is_lddw(x))
			j++;
	}
	if (!dies)
		return false;
	/* dead from `first` to where it dies: the copy and the constants added to it */
	for (size_t j = first; j < sp->end; j++) {
		const struct bpf_insn *x = &c->insns[j];
		if (j == first || (x->code == (BPF_ALU64 | BPF_ADD | BPF_K) && x->dst_reg == k)) {
			c->dead[j] = true;
			continue;
		}
		if ((writes_of(x) & BIT(k)) || BPF_OP(x->code) == BPF_EXIT)
			break;
		if (is_lddw(x))
			j++;
	}
	return true;
}

/* Whether the subprogram uses r10 only as the base of in-frame r10+constant accesses (and in
 * dead copies, which this marks). */
static bool frame_stays_private(struct lower_ctx *c, const struct lower_subprog *sp)
{
	for (size_t i = sp->start; i < sp->end; i++) {
		const struct bpf_insn *x = &c->insns[i];
		if (is_lddw(x)) {
			i++;
			continue;
		}
		/* callx names its register in dst_reg, or (some assemblers) in imm */
		bool callx_r10 = x->code == (BPF_JMP | BPF_CALL | BPF_X) && !x->dst_reg && x->imm == 10;
		if (x->dst_reg != 10 && x->src_reg != 10 && !callx_r10)
			continue;
		uint8_t cls = BPF_CLASS(x->code), mode = BPF_MODE(x->code);
		unsigned size = size_of(x->code);
		if (cls == BPF_LDX && x->src_reg == 10 && x->dst_reg != 10 &&
		    (mode == BPF_MEM || (mode == BPF_MEMSX && size < 8)) &&
		    lower_frame_slot(c, 10, x->off, size))
			continue;
		if (cls == BPF_ST && mode == BPF_MEM && lower_frame_slot(c, 10, x->off, size))
			continue;
		if (cls == BPF_STX && mode == BPF_MEM && x->src_reg != 10 &&
		    lower_frame_slot(c, 10, x->off, size))
			continue;
		if (x->code == (BPF_ALU64 | BPF_MOV | BPF_X) && x->off == 0 && x->src_reg == 10 &&
		    x->dst_reg < 10 && pointer_dies_unread(c, sp, i, x->dst_reg))
			continue;
		return false;
	}
	return true;
}

int lower_plan(struct lower_ctx *c, size_t sub)
{
	const struct lower_subprog *sp = &c->subs[sub];
	int rc = plan_folds(c, sp);
	if (rc)
		return rc;
	c->stack_in_regs = frame_stays_private(c, sp);
	if (!c->stack_in_regs)   /* r10 exists: the copies may stay, ptxas drops them */
		for (size_t i = sp->start; i < sp->end; i++)
			c->dead[i] = false;
	return 0;
}

/* ---- map values ---------------------------------------------------------------------------- */

static void mv_walk(const struct lower_ctx *c, size_t first, size_t end, unsigned r[11], int depth);

size_t lower_block_preds(const struct lower_ctx *c, size_t first, size_t preds[LOWER_MAX_PREDS + 1])
{
	const struct lower_subprog *sp = &c->subs[c->sub];
	size_t np = 0;
	if (first > sp->start) {   /* the fall-through, unless the code before cannot fall through */
		size_t prev = first - 1;
		if (prev > sp->start && is_lddw(&c->insns[prev - 1]))
			prev--;
		const struct bpf_insn *x = &c->insns[prev];
		uint8_t cls = BPF_CLASS(x->code), op = BPF_OP(x->code);
		if ((cls != BPF_JMP && cls != BPF_JMP32) || (op != BPF_EXIT && op != BPF_JA))
			preds[np++] = prev;   /* ja and gotol (JMP32 ja) do not fall through */
	}
	for (size_t j = sp->start; j < sp->end && np <= LOWER_MAX_PREDS; j++) {
		const struct bpf_insn *x = &c->insns[j];
		if (is_lddw(x)) {
			j++;
			continue;
		}
		uint8_t cls = BPF_CLASS(x->code), op = BPF_OP(x->code);
		if ((cls != BPF_JMP && cls != BPF_JMP32) || op == BPF_CALL || op == BPF_EXIT)
			continue;
		int64_t off = (cls == BPF_JMP32 && op == BPF_JA) ? x->imm : x->off;
		if ((int64_t)j + 1 + off == (int64_t)first)
			preds[np++] = j;
	}
	return np;
}

/* What every way into the jump target `first` agrees on (flags ANDed over the fall-through and
 * every jump to it, each followed back depth more blocks); all 0 past LOWER_MAX_PREDS ways. The
 * counting idiom's add joins its two lookups (`v = lookup(k); if (!v) { insert; v = lookup(k);
 * if (!v) return; } add(v, 1)`): seen from its block alone, the add's pointer was unknown, and
 * the add got a test for the stack and a match.any.sync per lane pair. */
static void mv_join(const struct lower_ctx *c, size_t first, unsigned r[11], int depth)
{
	const struct lower_subprog *sp = &c->subs[c->sub];
	size_t preds[LOWER_MAX_PREDS + 1];
	size_t np = lower_block_preds(c, first, preds);
	memset(r, 0, 11 * sizeof(*r));
	if (!np || np > LOWER_MAX_PREDS)
		return;
	for (size_t k = 0; k < np; k++) {
		unsigned s[11];
		/* the state after preds[k], through its own block */
		size_t p = preds[k];
		mv_walk(c, block_start(c, sp->start, p), p + (is_lddw(&c->insns[p]) ? 2 : 1), s, depth - 1);
		for (int q = 0; q < 11; q++)   /* all ways agree; opaque if one way is */
			r[q] = k ? ((r[q] & s[q] & ~LOWER_MV_OPAQUE) | ((r[q] | s[q]) & LOWER_MV_OPAQUE))
				 : s[q];
	}
}

/* The LOWER_MV_* flags of every register after the straight-line code [first, end), first a
 * block's start (what the ways into it agree on, depth blocks back). */
static void mv_walk(const struct lower_ctx *c, size_t first, size_t end, unsigned r[11], int depth)
{
	memset(r, 0, 11 * sizeof(*r));
	if (first > c->subs[c->sub].start && depth > 0)
		mv_join(c, first, r, depth);
	for (size_t i = first; i < end; i++) {
		const struct bpf_insn *x = &c->insns[i];
		if (x->dst_reg > 10 || x->src_reg > 10) {
			memset(r, 0, 11 * sizeof(*r));
			return;
		}
		if (is_lddw(x)) {
			/* global data, the same in every lane (emit_map_ref's contract) */
			r[x->dst_reg] = x->src_reg == BPF_PSEUDO_MAP_VALUE ? LOWER_MV_VALUE | LOWER_MV_UNIFORM : 0;
			i++;
			continue;
		}
		if (is_call(x)) {
			unsigned w = writes_of(x);
			for (unsigned k = 0; k <= 10; k++)
				if (w & BIT(k))
					r[k] = 0;
			/* map_lookup_elem: a value of the map (global memory) or NULL */
			if (is_helper_call(x, 1)) {
				unsigned f = c->folds[i].folded ? c->folds[i].flags : 0;
				r[0] = LOWER_MV_VALUE | (f & GP_LOWER_WARP_UNIFORM ? LOWER_MV_UNIFORM : 0) |
				       (f & GP_LOWER_OPAQUE ? LOWER_MV_OPAQUE : 0) |
				       (f & GP_LOWER_NONNULL ? LOWER_MV_NONNULL : 0);
			}
			continue;
		}
		if (x->code == (BPF_ALU64 | BPF_MOV | BPF_X) && x->off == 0) {
			r[x->dst_reg] = r[x->src_reg];
			continue;
		}
		/* a constant offset stays in the same memory, the same in every lane (but may be 0) */
		if (x->code == (BPF_ALU64 | BPF_ADD | BPF_K) || x->code == (BPF_ALU64 | BPF_SUB | BPF_K)) {
			r[x->dst_reg] &= ~(unsigned)LOWER_MV_NONNULL;
			continue;
		}
		unsigned w = writes_of(x);
		for (unsigned k = 0; k <= 10; k++)
			if (w & BIT(k))
				r[k] = 0;
	}
}

unsigned lower_map_value_reg(const struct lower_ctx *c, unsigned reg)
{
	unsigned r[11];
	mv_walk(c, block_start(c, c->subs[c->sub].start, c->pc), c->pc, r, 3);
	return reg <= 10 ? r[reg] : 0;
}
