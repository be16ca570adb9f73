/* Memory (RFC 9669 section 5): lddw, loads (zero- and sign-extending), stores, atomics.
 * Every access is a generic ld/st/atom so it works on the stack, the context and map values
 * alike. Two GPU facts shape the code:
 * - A misaligned access faults. Accesses whose alignment is not known at lowering time (any
 *   base but r10) test it and fall back to byte accesses, unless opts->assume_aligned.
 * - atom on a generic address that points into local memory (the stack) is undefined. The
 *   stack is private to the thread, so there a plain load-modify-store is exact: r10-based
 *   atomics use it directly, others test isspacep.local. */
#include "ebpf/lower_internal.h"

#include <errno.h>
#include <string.h>

#define R(x) lo_reg(c, (x))
#define IMM(v) lo_imm(c, (uint64_t)(v))

#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif
#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif
#ifndef BPF_FETCH
#define BPF_FETCH 0x01
#endif
#ifndef BPF_XCHG
#define BPF_XCHG (0xe0 | BPF_FETCH)
#endif
#ifndef BPF_CMPXCHG
#define BPF_CMPXCHG (0xf0 | BPF_FETCH)
#endif
#define LOWER_LOAD_ACQ 0x100
#define LOWER_STORE_REL 0x110

static unsigned size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

static bool known_aligned(struct lower_ctx *c, unsigned base, int16_t off, unsigned size)
{
	return size == 1 || c->opts->assume_aligned || (base == 10 && off % (int)size == 0);
}

/* An r10-based access inside the frame, aligned: addressed in .local directly (stack+offset),
 * which lets ptxas keep stack slots in registers, or a slot register when the whole frame is in
 * registers (lower_plan.c). */
static bool frame_slot(struct lower_ctx *c, unsigned base, int16_t off, unsigned size)
{
	return lower_frame_slot(c, base, off, size);
}

/* The register of the 8-byte slot holding frame offset off, and the bit where off starts in it
 * (little endian: the byte at the lowest address is the lowest). Accesses are aligned to their
 * size, so none spans two slots. */
static const char *slot_reg(struct lower_ctx *c, int16_t off, unsigned *bit)
{
	unsigned at = c->stack_size + off;
	*bit = 8 * (at % 8);
	return ir_strfmt(c->m, "%s%u", c->slot_base, at / 8);
}

/* Load size bytes at [base+off] into register dst, sign-extending when sx. */
static void emit_load(struct lower_ctx *c, unsigned base, int16_t off, unsigned size, bool sx,
		      const char *dst)
{
	const char *ty = ir_strfmt(c->m, ".%c%u", sx ? 's' : 'u', size * 8);
	const char *b = c->r[base];
	if (frame_slot(c, base, off, size) && c->stack_in_regs) {
		unsigned bit;
		const char *slot = slot_reg(c, off, &bit);
		if (size == 8)
			lo_emit(c, "mov", ".b64", 2, R(dst), R(slot));
		else
			lo_emit(c, "bfe", sx ? ".s64" : ".u64", 4, R(dst), R(slot), IMM(bit), IMM(8 * size));
		return;
	}
	if (frame_slot(c, base, off, size)) {
		lo_emit(c, "ld", ir_strfmt(c->m, ".local%s", ty), 2, R(dst),
			lo_addr(c, c->stack, (int64_t)c->stack_size + off));
		return;
	}
	if (known_aligned(c, base, off, size)) {
		lo_emit(c, "ld", ty, 2, R(dst), lo_addr(c, b, off));
		return;
	}
	const char *a = c->t[1], *v = c->t[2], *byte = c->t[3];
	const char *slow = lo_new_label(c), *done = lo_new_label(c);
	lo_emit(c, "add", ".s64", 3, R(a), R(b), IMM((int64_t)off));
	lo_emit(c, "and", ".b64", 3, R(c->t[0]), R(a), IMM(size - 1));
	lo_emit(c, "setp", ".ne.u64", 3, R(c->p[3]), R(c->t[0]), IMM(0));
	lo_emit_if(c, c->p[3], false, "bra", "", 1, lo_sym(c, slow));
	lo_emit(c, "ld", ty, 2, R(dst), lo_addr(c, a, 0));
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, done));
	lo_label(c, slow);
	lo_emit(c, "ld", ".u8", 2, R(v), lo_addr(c, a, 0));
	for (unsigned k = 1; k < size; k++) {
		lo_emit(c, "ld", ".u8", 2, R(byte), lo_addr(c, a, k));
		lo_emit(c, "shl", ".b64", 3, R(byte), R(byte), IMM(8 * k));
		lo_emit(c, "or", ".b64", 3, R(v), R(v), R(byte));
	}
	if (sx)
		lo_emit(c, "bfe", ".s64", 4, R(dst), R(v), IMM(0), IMM(8 * size));
	else
		lo_emit(c, "mov", ".b64", 2, R(dst), R(v));
	lo_label(c, done);
}

void lower_load_frame_u32(struct lower_ctx *c, int16_t off, const char *dst)
{
	emit_load(c, 10, off, 4, false, dst);
}

void lower_load_frame(struct lower_ctx *c, int16_t off, unsigned size, const char *dst)
{
	emit_load(c, 10, off, size, false, dst);
}

/* Store the low size bytes of val (a register or an immediate) at [b+off]; b is any 64-bit
 * register, aligned says its alignment is known (opts->assume_aligned is the caller's to
 * apply: helper out-pointers are not covered by it). Uses t0-t3 and p3. */
void lower_store_at(struct lower_ctx *c, const char *b, bool aligned, int16_t off, unsigned size,
		    ir_operand val)
{
	const char *ty = ir_strfmt(c->m, ".u%u", size * 8);
	if (aligned || size == 1) {
		lo_emit(c, "st", ty, 2, lo_addr(c, b, off), val);
		return;
	}
	const char *a = c->t[1], *v = c->t[2], *byte = c->t[3];
	const char *slow = lo_new_label(c), *done = lo_new_label(c);
	lo_emit(c, "add", ".s64", 3, R(a), R(b), IMM((int64_t)off));
	lo_emit(c, "and", ".b64", 3, R(c->t[0]), R(a), IMM(size - 1));
	lo_emit(c, "setp", ".ne.u64", 3, R(c->p[3]), R(c->t[0]), IMM(0));
	lo_emit_if(c, c->p[3], false, "bra", "", 1, lo_sym(c, slow));
	lo_emit(c, "st", ty, 2, lo_addr(c, a, 0), val);
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, done));
	lo_label(c, slow);
	lo_emit(c, "mov", ".b64", 2, R(v), val);
	lo_emit(c, "st", ".u8", 2, lo_addr(c, a, 0), R(v));
	for (unsigned k = 1; k < size; k++) {
		lo_emit(c, "shr", ".u64", 3, R(byte), R(v), IMM(8 * k));
		lo_emit(c, "st", ".u8", 2, lo_addr(c, a, k), R(byte));
	}
	lo_label(c, done);
}

static void emit_store(struct lower_ctx *c, unsigned base, int16_t off, unsigned size,
		       ir_operand val)
{
	if (frame_slot(c, base, off, size) && c->stack_in_regs) {
		unsigned bit;
		const char *slot = slot_reg(c, off, &bit);
		if (size == 8)
			lo_emit(c, "mov", ".b64", 2, R(slot), val);
		else
			lo_emit(c, "bfi", ".b64", 5, R(slot), val, R(slot), IMM(bit), IMM(8 * size));
		return;
	}
	if (frame_slot(c, base, off, size)) {
		lo_emit(c, "st", ir_strfmt(c->m, ".local.u%u", size * 8), 2,
			lo_addr(c, c->stack, (int64_t)c->stack_size + off), val);
		return;
	}
	lower_store_at(c, c->r[base], known_aligned(c, base, off, size), off, size, val);
}

static int lower_lddw(struct lower_ctx *c, const struct bpf_insn *in)
{
	const struct bpf_insn *hi = in + 1;
	const char *d = c->r[in->dst_reg];
	if (in->dst_reg >= 10)
		return lower_fail(c, EINVAL, "lddw into r%u", in->dst_reg);
	if (hi->code || hi->dst_reg || hi->src_reg || hi->off)
		return lower_fail(c, EINVAL, "malformed second half of lddw");
	if (in->src_reg == 0) {
		uint64_t v = (uint32_t)in->imm | (uint64_t)(uint32_t)hi->imm << 32;
		lo_emit(c, "mov", ".b64", 2, R(d), IMM(v));
		return 0;
	}
	if (in->src_reg != BPF_PSEUDO_MAP_FD && in->src_reg != BPF_PSEUDO_MAP_VALUE)
		return lower_fail(c, EINVAL, "lddw with source %u (only maps, as map index, are known)",
				  in->src_reg);
	if (!c->opts->emit_map_ref)
		return lower_fail(c, EINVAL, "lddw of map %d, but no map runtime was given", in->imm);
	int value_form = in->src_reg == BPF_PSEUDO_MAP_VALUE;
	int rc = c->opts->emit_map_ref(c->opts->user, c->m, c->f, d, in->imm, value_form,
				       value_form ? hi->imm : 0);
	if (rc)
		return lower_fail(c, rc < 0 ? -rc : EINVAL, "map %d: the map runtime could not reference it",
				  in->imm);
	return 0;
}

/* red.add of v at a, once per group of active lanes that add the same v at the same a: the
 * group's lowest lane adds v times the group's size (exact modulo 2^32/2^64, as the separate
 * adds would be). Counters sharded per SM then cost one atomic per warp, as nvcc's own.
 * Each lane reads activemask inside the site, so lanes that run it apart (divergence, a partial
 * warp) form groups of their own and every lane is counted exactly once.
 * uniform: a is the same in every lane (a folded lookup, lower_plan.c). ptxas then aggregates a
 * plain red itself when v is a constant or 32 bits wide (one vote and popc or redux per warp,
 * shared by the sites of a block: nvcc's atomicAdd code exactly), which a hand-made ballot only
 * made slower (bench/overhead's memory counter in a vector add, sm_90: 87 SASS instructions with
 * the ballot, 46 without, 45 for the hand-written counter). A 64-bit v it does not aggregate:
 * the groups are then the lanes holding the same v. uniform UNIFORM_OPAQUE: the same in every
 * lane, but loaded from memory (a hash bucket's value), which ptxas does not aggregate: with a
 * constant v the group is every active lane. */
enum { UNIFORM_NOT = 0, UNIFORM_SEEN = 1, UNIFORM_OPAQUE = 2 };
static void red_add_aggregated(struct lower_ctx *c, bool is64, const char *a, const char *v,
			       bool v_const, int64_t kv, const char *space, int uniform)
{
	const char *red = ir_strfmt(c->m, "%s.add%s", space, is64 ? ".u64" : ".u32");
	if (uniform == UNIFORM_SEEN && (v_const || !is64)) {
		lo_emit(c, "red", red, 2, lo_addr(c, a, 0),
			v_const ? lo_imm(c, is64 ? (uint64_t)kv : (uint32_t)kv) : R(v));
		return;
	}
	const char *mask = c->w[4], *grp = c->w[5], *tmp = c->w[6], *me = c->w[7];
	const char *skip = lo_new_label(c);
	lo_emit(c, "activemask", ".b32", 1, R(mask));
	if (uniform && v_const) {   /* an address ptxas cannot see uniform: the active lanes */
		lo_emit(c, "mov", ".b32", 2, R(grp), R(mask));
	} else if (uniform) {
		lo_emit(c, "match", ".any.sync.b64", 3, R(grp), R(v), R(mask));
	} else {
		lo_emit(c, "match", ".any.sync.b64", 3, R(grp), R(a), R(mask));
		if (!v_const) {   /* a constant is the same in every lane: no second match */
			lo_emit(c, "match", is64 ? ".any.sync.b64" : ".any.sync.b32", 3, R(tmp), R(v), R(mask));
			lo_emit(c, "and", ".b32", 3, R(grp), R(grp), R(tmp));
		}
	}
	lo_emit(c, "neg", ".s32", 2, R(tmp), R(grp));
	lo_emit(c, "and", ".b32", 3, R(tmp), R(tmp), R(grp));
	lo_emit(c, "mov", ".u32", 2, R(me), R("%lanemask_eq"));
	lo_emit(c, "setp", ".ne.b32", 3, R(c->p[2]), R(tmp), R(me));
	lo_emit_if(c, c->p[2], false, "bra", "", 1, lo_sym(c, skip));
	lo_emit(c, "popc", ".b32", 2, R(tmp), R(grp));
	if (is64) {
		lo_emit(c, "cvt", ".u64.u32", 2, R(c->t[4]), R(tmp));
		if (!v_const || kv != 1)
			lo_emit(c, "mul", ".lo.u64", 3, R(c->t[4]), R(c->t[4]), R(v));
		lo_emit(c, "red", red, 2, lo_addr(c, a, 0), R(c->t[4]));
	} else {
		if (!v_const || (uint32_t)kv != 1)
			lo_emit(c, "mul", ".lo.u32", 3, R(tmp), R(tmp), R(v));
		lo_emit(c, "red", red, 2, lo_addr(c, a, 0), R(tmp));
	}
	lo_label(c, skip);
}

/* Whether register reg holds a constant at c->pc, set by a mov of an immediate in the
 * straight-line code since the last jump target (*v: its value); anything else writing reg, or
 * a call, forgets it. bench/overhead's counters add a constant 1 on every memory access. */
static bool const_walk(struct lower_ctx *c, size_t s, size_t end, unsigned reg, int64_t *v,
		       int depth);

/* At a join, the constant every way in agrees on (the counting idiom's add of 1 joins the
 * lookup's path and the insert's). */
static bool const_join(struct lower_ctx *c, size_t first, unsigned reg, int64_t *v, int depth)
{
	size_t preds[LOWER_MAX_PREDS + 1];
	size_t np = lower_block_preds(c, first, preds);
	if (!np || np > LOWER_MAX_PREDS || depth <= 0)
		return false;
	for (size_t k = 0; k < np; k++) {
		size_t p = preds[k];
		int64_t pv = 0;
		size_t end = p + (c->insns[p].code == (BPF_LD | BPF_IMM | BPF_DW) ? 2 : 1);
		if (!const_walk(c, lower_block_start(c, p), end, reg, &pv, depth - 1) ||
		    (k && pv != *v))
			return false;
		*v = pv;
	}
	return true;
}

static bool reg_const_here(struct lower_ctx *c, unsigned reg, int64_t *v)
{
	return const_walk(c, lower_block_start(c, c->pc), c->pc, reg, v, 3);
}

/* Whether reg holds a known constant (*v) after the straight-line code [s, end). */
static bool const_walk(struct lower_ctx *c, size_t s, size_t end, unsigned reg, int64_t *v,
		       int depth)
{
	bool known = s > c->subs[c->sub].start && c->is_target[s] && const_join(c, s, reg, v, depth);
	for (size_t i = s; i < end; i++) {
		const struct bpf_insn *x = &c->insns[i];
		uint8_t cls = BPF_CLASS(x->code);
		if (x->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (x->dst_reg == reg)
				known = false;
			i++;
			continue;
		}
		if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(x->code) == BPF_CALL) {
			if (reg <= 5)
				known = false;
			continue;
		}
		if (cls == BPF_STX && BPF_MODE(x->code) == BPF_ATOMIC) {
			int32_t aop = x->imm;
			if (((aop & BPF_FETCH) && x->src_reg == reg) || (aop == BPF_CMPXCHG && reg == 0))
				known = false;
			continue;
		}
		if (cls == BPF_LD && reg == 0) {   /* legacy packet loads write r0 */
			known = false;
			continue;
		}
		if ((cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX || cls == BPF_LD) &&
		    x->dst_reg == reg) {
			known = (cls == BPF_ALU || cls == BPF_ALU64) && BPF_OP(x->code) == BPF_MOV &&
				BPF_SRC(x->code) == BPF_K && x->off == 0;
			if (known)
				*v = cls == BPF_ALU ? (int64_t)(uint32_t)x->imm : (int64_t)x->imm;
		}
	}
	return known;
}

/* An atomic add without fetch in a weighted program (gp_lower_opts.weight): the value times the
 * weight (v, or the constant the straight-line code put in src_reg). Inlined at a site, the weight
 * is an immediate and ptxas folds the product: weight 1 leaves the unweighted add, weight K a
 * constant add of K times the value, which it aggregates per warp at a uniform address as it does
 * any constant (a plain red, lower comment of red_add_aggregated). A 64-bit add of a variable it
 * does not aggregate, so a constant add at a uniform address keeps the unweighted red beside the
 * weighted one, each under its own predicate: out of line (a call left by the inliner's budget)
 * weight 1 still costs what it did before weights. A 32-bit product ptxas aggregates as it is. */
static void weighted_add(struct lower_ctx *c, bool is64, const char *a, const char *v,
			 unsigned src_reg, const char *space, int uniform)
{
	int64_t kv = 0;
	bool v_const = reg_const_here(c, src_reg, &kv);
	const char *ty = is64 ? ".u64" : ".u32";
	const char *prod = is64 ? c->t[5] : c->w[3];
	if (is64)
		lo_emit(c, "cvt", ".u64.u32", 2, R(prod), R(c->weight));
	else
		lo_emit(c, "mov", ".b32", 2, R(prod), R(c->weight));
	uint64_t k = is64 ? (uint64_t)kv : (uint32_t)kv;
	if (!v_const)
		lo_emit(c, "mul", is64 ? ".lo.u64" : ".lo.u32", 3, R(prod), R(prod), R(v));
	else if (k && !(k & (k - 1)) && k != 1)
		lo_emit(c, "shl", is64 ? ".b64" : ".b32", 3, R(prod), R(prod), IMM(__builtin_ctzll(k)));
	else if (k != 1)
		lo_emit(c, "mul", is64 ? ".lo.u64" : ".lo.u32", 3, R(prod), R(prod), IMM(k));
	const char *red = ir_strfmt(c->m, "%s.add%s", space, ty);
	if (!c->opts->warp_aggregate) {
		lo_emit(c, "red", red, 2, lo_addr(c, a, 0), R(prod));
		return;
	}
	if (uniform == UNIFORM_SEEN && v_const && is64) {
		lo_emit(c, "setp", ".eq.u32", 3, R(c->p[1]), R(c->weight), IMM(1));
		lo_emit_if(c, c->p[1], false, "red", red, 2, lo_addr(c, a, 0), IMM(k));
		lo_emit_if(c, c->p[1], true, "red", red, 2, lo_addr(c, a, 0), R(prod));
		return;
	}
	red_add_aggregated(c, is64, a, prod, false, 0, space, uniform);
}

/* Read-modify-write of the value at address register a (size 4 or 8), for the atomic op. */
static void atomic_native(struct lower_ctx *c, int op, bool is64, const char *a, const char *s,
			  unsigned src_reg, const char *space, int uniform)
{
	const char *r0 = c->r[0];
	const char *bt = is64 ? ".b64" : ".b32";
	bool fetch = op & BPF_FETCH;
	const char *name = NULL;
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: name = "add"; break;
	case BPF_OR: name = "or"; break;
	case BPF_AND: name = "and"; break;
	case BPF_XOR: name = "xor"; break;
	}
	const char *v = s, *old = s, *cmp = r0, *res = r0;
	if (!is64) {
		lo_lo32(c, c->w[1], s);
		v = c->w[1];
		old = c->w[2];
	}
	if (op == BPF_CMPXCHG) {
		if (!is64) {
			lo_lo32(c, c->w[0], r0);
			cmp = c->w[0];
			res = c->w[2];
		}
		lo_emit(c, "atom", ir_strfmt(c->m, "%s.cas%s", space, bt), 4, R(res), lo_addr(c, a, 0),
			R(cmp), R(v));
		if (!is64)
			lo_zext32(c, r0, res);
		return;
	}
	if (op == BPF_XCHG) {
		lo_emit(c, "atom", ir_strfmt(c->m, "%s.exch%s", space, bt), 3, R(old), lo_addr(c, a, 0), R(v));
	} else {
		const char *ty = !strcmp(name, "add") ? (is64 ? ".u64" : ".u32") : bt;
		if (!fetch && op == BPF_ADD && c->weight) {
			weighted_add(c, is64, a, v, src_reg, space, uniform);
			return;
		}
		if (!fetch && op == BPF_ADD && c->opts->warp_aggregate) {
			int64_t kv = 0;
			bool v_const = reg_const_here(c, src_reg, &kv);
			red_add_aggregated(c, is64, a, v, v_const, kv, space, uniform);
			return;
		}
		if (!fetch) {
			lo_emit(c, "red", ir_strfmt(c->m, "%s.%s%s", space, name, ty), 2, lo_addr(c, a, 0), R(v));
			return;
		}
		lo_emit(c, "atom", ir_strfmt(c->m, "%s.%s%s", space, name, ty), 3, R(old), lo_addr(c, a, 0),
			R(v));
	}
	if (!is64)
		lo_zext32(c, s, old);
}

/* The same on thread-private memory: a plain load, operation and store. */
static void atomic_plain(struct lower_ctx *c, int op, bool is64, const char *a, const char *s)
{
	const char *r0 = c->r[0];
	const char *ty = is64 ? ".u64" : ".u32", *bt = is64 ? ".b64" : ".b32";
	const char *old = is64 ? c->t[2] : c->w[2], *nv = is64 ? c->t[3] : c->w[3];
	const char *v = s;
	if (!is64) {
		lo_lo32(c, c->w[1], s);
		v = c->w[1];
	}
	lo_emit(c, "ld", ty, 2, R(old), lo_addr(c, a, 0));
	if (op == BPF_CMPXCHG) {
		const char *cmp = r0;
		if (!is64) {
			lo_lo32(c, c->w[0], r0);
			cmp = c->w[0];
		}
		lo_emit(c, "setp", is64 ? ".eq.b64" : ".eq.b32", 3, R(c->p[2]), R(old), R(cmp));
		lo_emit_if(c, c->p[2], false, "st", ty, 2, lo_addr(c, a, 0), R(v));
		if (is64)
			lo_emit(c, "mov", ".b64", 2, R(r0), R(old));
		else
			lo_zext32(c, r0, old);
		return;
	}
	if (op == BPF_XCHG) {
		lo_emit(c, "st", ty, 2, lo_addr(c, a, 0), R(v));
	} else {
		const char *name = NULL;
		switch (op & ~BPF_FETCH) {
		case BPF_ADD: name = "add"; break;
		case BPF_OR: name = "or"; break;
		case BPF_AND: name = "and"; break;
		case BPF_XOR: name = "xor"; break;
		}
		lo_emit(c, name, !strcmp(name, "add") ? ty : bt, 3, R(nv), R(old), R(v));
		lo_emit(c, "st", ty, 2, lo_addr(c, a, 0), R(nv));
		if (!(op & BPF_FETCH))
			return;
	}
	if (is64)
		lo_emit(c, "mov", ".b64", 2, R(s), R(old));
	else
		lo_zext32(c, s, old);
}

static int lower_atomic(struct lower_ctx *c, const struct bpf_insn *in)
{
	unsigned size = size_bytes(in->code);
	int op = in->imm;
	if (op == LOWER_LOAD_ACQ || op == LOWER_STORE_REL) {
		/* Acquire/release as a plain access fenced on the right side (exact on every space). */
		if (op == LOWER_LOAD_ACQ) {
			if (in->dst_reg >= 10)
				return lower_fail(c, EACCES, "load into r%u", in->dst_reg);
			emit_load(c, in->src_reg, in->off, size, false, c->r[in->dst_reg]);
			lo_emit(c, "membar", ".gl", 0);
		} else {
			lo_emit(c, "membar", ".gl", 0);
			emit_store(c, in->dst_reg, in->off, size, R(c->r[in->src_reg]));
		}
		return 0;
	}
	bool known = op == BPF_XCHG || op == BPF_CMPXCHG;
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR: known = true;
	}
	if (!known || (size != 4 && size != 8))
		return lower_fail(c, EINVAL, "unknown atomic operation 0x%x of size %u", (unsigned)op, size);
	if (in->src_reg == 10 && (op & BPF_FETCH))
		return lower_fail(c, EACCES, "atomic fetch into r10");
	const char *a = c->t[1];
	lo_emit(c, "add", ".s64", 3, R(a), R(c->r[in->dst_reg]), IMM((int64_t)in->off));
	if (in->dst_reg == 10) {
		atomic_plain(c, op, size == 8, a, c->r[in->src_reg]);
		return 0;
	}
	/* A map value is global memory: no test for the stack, and a global atomic (ptxas expands
	 * a generic one into a test of the address's space with one atomic per space). */
	unsigned value = lower_map_value_reg(c, in->dst_reg);
	if (value & LOWER_MV_VALUE) {
		lo_emit(c, "cvta", ".to.global.u64", 2, R(a), R(a));
		atomic_native(c, op, size == 8, a, c->r[in->src_reg], in->src_reg, ".global",
			      !(value & LOWER_MV_UNIFORM) ? UNIFORM_NOT
			      : value & LOWER_MV_OPAQUE   ? UNIFORM_OPAQUE
							  : UNIFORM_SEEN);
		return 0;
	}
	const char *local = lo_new_label(c), *done = lo_new_label(c);
	lo_emit(c, "isspacep", ".local", 2, R(c->p[3]), R(a));
	lo_emit_if(c, c->p[3], false, "bra", "", 1, lo_sym(c, local));
	atomic_native(c, op, size == 8, a, c->r[in->src_reg], in->src_reg, "", UNIFORM_NOT);
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, done));
	lo_label(c, local);
	atomic_plain(c, op, size == 8, a, c->r[in->src_reg]);
	lo_label(c, done);
	return 0;
}

int lower_mem(struct lower_ctx *c, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), mode = BPF_MODE(in->code);
	if (in->dst_reg > 10 || in->src_reg > 10)
		return lower_fail(c, EINVAL, "register r%u does not exist",
				  in->dst_reg > 10 ? in->dst_reg : in->src_reg);
	unsigned size = size_bytes(in->code);
	switch (cls) {
	case BPF_LD:
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW))
			return lower_lddw(c, in);
		if (mode == BPF_ABS || mode == BPF_IND)
			return lower_fail(c, EINVAL, "legacy packet access (ld_abs/ld_ind) has no packet on the GPU");
		break;
	case BPF_LDX:
		if (mode != BPF_MEM && !(mode == BPF_MEMSX && size < 8))
			break;
		if (in->dst_reg == 10)
			return lower_fail(c, EACCES, "r10 is read-only");
		emit_load(c, in->src_reg, in->off, size, mode == BPF_MEMSX, c->r[in->dst_reg]);
		return 0;
	case BPF_ST:
		if (mode != BPF_MEM)
			break;
		/* The immediate, truncated to the stored width (ptxas wants it to fit). */
		emit_store(c, in->dst_reg, in->off, size,
			   lo_imm(c, size == 8 ? (uint64_t)(int64_t)in->imm
				  : (uint32_t)in->imm & (0xffffffffu >> (32 - 8 * size))));
		return 0;
	case BPF_STX:
		if (mode == BPF_ATOMIC)
			return lower_atomic(c, in);
		if (mode != BPF_MEM)
			break;
		emit_store(c, in->dst_reg, in->off, size, R(c->r[in->src_reg]));
		return 0;
	}
	return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
}
