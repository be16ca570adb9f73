/* Loads, stores and atomics: where a pointer may read and write, with fixed and variable offsets
 * checked against the region's bounds (context, stack frame, map value, ring-buffer record),
 * stack bytes tracked as uninitialized / written / holding a spilled register, pointers kept out
 * of maps, and GPU alignment (a misaligned access faults the whole kernel). */
#include "ebpf/verifier_priv.h"

#include <errno.h>

enum { K_INSN, K_ATOMIC, K_HELPER };

static int check_var_range(struct gpv_env *env, int regno, const struct gpv_reg *reg, const char *what)
{
	if (reg->smin < -GPV_MAX_VAR_OFF || reg->smax > GPV_MAX_VAR_OFF)
		return gpv_reject(env, -EACCES, "R%d unbounded memory access to %s, make sure to bounds check any such access",
				  regno, what);
	return 0;
}

static int check_aligned(struct gpv_env *env, const struct gpv_reg *reg, int off, int size,
			 const char *what)
{
	if (size <= 1)
		return 0;
	struct tnum t = tnum_add(reg->var, tnum_const((uint64_t)(int64_t)(reg->off + off)));
	if (tnum_is_aligned(t, (uint64_t)size))
		return 0;
	if (tnum_is_const(reg->var))
		return gpv_reject(env, -EACCES, "misaligned %s access off=%d size=%d", what,
				  reg->off + off + (int)reg->var.value, size);
	return gpv_reject(env, -EACCES, "misaligned %s access var_off=(%#llx; %#llx)+%d size=%d", what,
			  (unsigned long long)reg->var.value, (unsigned long long)reg->var.mask,
			  reg->off + off, size);
}

static void out_unknown(struct gpv_reg *out, int size, bool sext)
{
	if (out)
		reg_mark_unknown_width(out, (unsigned)size, sext);
}

static int ctx_access(struct gpv_env *env, int regno, const struct gpv_reg *reg, int off, int size,
		      bool write, struct gpv_reg *out, bool sext, int kind)
{
	if (write)
		return gpv_reject(env, -EACCES, "cannot write into ctx: the context is read-only (off=%d size=%d)",
				  reg->off + off, size);
	if (!tnum_is_const(reg->var))
		return gpv_reject(env, -EACCES, "variable ctx access var_off=(%#llx; %#llx) disallowed",
				  (unsigned long long)reg->var.value, (unsigned long long)reg->var.mask);
	int64_t o = (int64_t)reg->off + off + (int64_t)reg->var.value;
	uint32_t ctx_size = env->opts->ctx_size;
	if (o < 0 || o + size > (int64_t)ctx_size)
		return gpv_reject(env, -EACCES, "invalid bpf_context access off=%lld size=%d (ctx size %u)",
				  (long long)o, size, ctx_size);
	if (!env->generic && kind != K_HELPER && size > 1 && (o % size))
		return gpv_reject(env, -EACCES, "misaligned context access off=%lld size=%d",
				  (long long)o, size);
	out_unknown(out, size, sext);
	return 0;
}

static struct gpv_slot *slot_of(struct gpv_frame *f, int o)
{
	return &f->slots[(-o - 1) / 8];
}

static int byte_in_slot(int o)
{
	int i = (-o - 1) / 8;
	return o + 8 * (i + 1);
}

static void scrub_slot(struct gpv_slot *s)
{
	if (s->type[0] == S_SPILL) {
		for (int j = 0; j < 8; j++)
			s->type[j] = S_MISC;
		reg_mark_not_init(&s->spill);
	}
}

static int stack_access(struct gpv_env *env, int regno, const struct gpv_reg *reg, int off,
			int size, bool write, const struct gpv_reg *val, struct gpv_reg *out,
			bool sext, int kind)
{
	const char *dir = write ? "write to" : "read from";
	bool cst = tnum_is_const(reg->var);
	int err = check_var_range(env, regno, reg, "stack");
	if (err)
		return err;
	int64_t lo = (int64_t)reg->off + off + (cst ? (int64_t)reg->var.value : reg->smin);
	int64_t hi = (int64_t)reg->off + off + (cst ? (int64_t)reg->var.value : reg->smax);
	if (lo < -GPV_STACK || hi + size > 0) {
		if (cst)
			return gpv_reject(env, -EACCES, "invalid %s stack R%d off=%lld size=%d", dir, regno,
					  (long long)lo, size);
		return gpv_reject(env, -EACCES,
				  "invalid variable-offset %s stack R%d var_off=(%#llx; %#llx) off=[%lld, %lld] size=%d",
				  dir, regno, (unsigned long long)reg->var.value,
				  (unsigned long long)reg->var.mask, (long long)lo, (long long)hi, size);
	}
	if (kind != K_HELPER && (err = check_aligned(env, reg, off, size, "stack")))
		return err;
	int fno = reg->frameno;
	int need = (int)((-lo + 7) / 8);
	if (need > env->cur.frame[fno]->nslots && gpv_frame_grow(&env->cur, fno, need))
		return gpv_reject(env, -ENOMEM, "out of memory");
	struct gpv_frame *f = env->cur.frame[fno];
	struct gpv_subprog *sp = &env->subs[f->subprog];
	if ((unsigned)-lo > sp->stack_depth)
		sp->stack_depth = (unsigned)-lo;

	if (write) {
		if (val && reg_is_pointer(val) && (!cst || size != 8 || (lo % 8)))
			return gpv_reject(env, -EACCES, "invalid size of register spill");
		if (val && val->type == T_PTR_STACK && val->frameno > fno)
			return gpv_reject(env, -EACCES, "cannot spill pointers to stack into stack frame of the caller");
		if (cst && kind != K_HELPER) {
			env->tr_slot = (int16_t)((-lo - 1) / 8);
			env->tr_frame = (uint8_t)fno;
			env->tr_flags |= TR_STACK_WRITE;
		}
		if (cst && size == 8 && !(lo % 8) && val && kind != K_HELPER) {
			env->tr_flags |= TR_SPILL;
			struct gpv_slot *s = slot_of(f, (int)lo);
			for (int j = 0; j < 8; j++)
				s->type[j] = S_SPILL;
			s->spill = *val;
			return 0;
		}
		for (int64_t o = lo; o < hi + size; o++) {
			struct gpv_slot *s = slot_of(f, (int)o);
			scrub_slot(s);
			if (cst)
				s->type[byte_in_slot((int)o)] = S_MISC;
		}
		return 0;
	}

	/* read */
	if (cst && size == 8 && !(lo % 8) && kind != K_HELPER) {
		struct gpv_slot *s = slot_of(f, (int)lo);
		if (s->type[0] == S_SPILL) {
			if (out)
				*out = s->spill;
			env->tr_slot = (int16_t)((-lo - 1) / 8);
			env->tr_frame = (uint8_t)fno;
			env->tr_flags |= TR_FILL;
			return 0;
		}
	}
	for (int64_t o = lo; o < hi + size; o++) {
		struct gpv_slot *s = slot_of(f, (int)o);
		uint8_t t = s->type[byte_in_slot((int)o)];
		if (t == S_INVALID) {
			if (cst)
				return gpv_reject(env, -EACCES, "invalid read from stack off %lld+%lld size %d",
						  (long long)lo, (long long)(o - lo), size);
			return gpv_reject(env, -EACCES,
					  "invalid variable-offset read from stack R%d off=[%lld, %lld] size=%d: byte at %lld is not initialized",
					  regno, (long long)lo, (long long)hi, size, (long long)o);
		}
		if (t == S_SPILL && reg_is_pointer(&s->spill)) {
			if (kind == K_HELPER)
				return gpv_reject(env, -EACCES, "invalid indirect read from stack off %lld: spilled pointer",
						  (long long)o);
			return gpv_reject(env, -EACCES, "invalid size of register fill");
		}
	}
	if (out) {
		struct gpv_slot *s = slot_of(f, (int)lo);
		int first = byte_in_slot((int)lo);
		if (cst && s->type[0] == S_SPILL && reg_is_const(&s->spill) && first + size <= 8) {
			/* a narrow read of a spilled constant: the bytes are known (little endian) */
			uint64_t v = s->spill.var.value >> (first * 8);
			if (size < 8)
				v &= (1ULL << (size * 8)) - 1;
			if (sext && size < 8) {
				uint64_t sign = 1ULL << (size * 8 - 1);
				v = (v ^ sign) - sign;
			}
			reg_mark_const(out, v);
			if (kind != K_HELPER) {
				env->tr_slot = (int16_t)((-lo - 1) / 8);
				env->tr_frame = (uint8_t)fno;
				env->tr_flags |= TR_FILL;
			}
		} else {
			out_unknown(out, size, sext);
		}
	}
	return 0;
}

static int region_access(struct gpv_env *env, int regno, const struct gpv_reg *reg, int off,
			 int size, uint64_t region, const char *what, int kind)
{
	int err = check_var_range(env, regno, reg, what);
	if (err)
		return err;
	bool cst = tnum_is_const(reg->var);
	int64_t base = (int64_t)reg->off + off;
	if (cst) {
		int64_t o = base + (int64_t)reg->var.value;
		if (o < 0 || o + size > (int64_t)region)
			return gpv_reject(env, -EACCES, "invalid access to %s, %s_size=%llu off=%lld size=%d",
					  what, what[0] == 'm' && what[1] == 'a' ? "value" : "mem",
					  (unsigned long long)region, (long long)o, size);
	} else {
		if (reg->smin < 0 && base + reg->smin < 0)
			return gpv_reject(env, -EACCES,
					  "R%d min value is negative, either use unsigned index or do a if (index >=0) check.",
					  regno);
		if (base + reg->smax + size > (int64_t)region)
			return gpv_reject(env, -EACCES,
					  "R%d max value is outside of the allowed memory range: off=%lld+[%lld, %lld] size=%d, %s size %llu",
					  regno, (long long)base, (long long)reg->smin, (long long)reg->smax, size,
					  what, (unsigned long long)region);
	}
	if (kind != K_HELPER && !(env->generic && reg->type == T_PTR_MEM))
		return check_aligned(env, reg, off, size, what);
	return 0;
}

/* A register that points to nothing it may access: say why, naming a released record as such. */
static int bad_mem_access(struct gpv_env *env, int regno, const struct gpv_reg *reg)
{
	if (reg->type == T_SCALAR && reg->released_at)
		return gpv_reject(env, -EACCES,
				  "R%d invalid mem access: reference released (the ring-buffer record was %s at insn %d)",
				  regno, gpv_release_verb(env, reg->released_at - 1), reg->released_at - 1);
	return gpv_reject(env, -EACCES, "R%d invalid mem access '%s'", regno, gpv_type_name(reg->type));
}

static int check_access(struct gpv_env *env, int regno, int off, int size, bool write,
			const struct gpv_reg *val, int val_regno, struct gpv_reg *out, bool sext, int kind)
{
	struct gpv_reg *reg = &cur_regs(env)[regno];
	int err;
	switch (reg->type) {
	case T_NOT_INIT:
		return gpv_reject(env, -EACCES, "R%d !read_ok", regno);
	case T_PTR_CTX:
		return ctx_access(env, regno, reg, off, size, write, out, sext, kind);
	case T_PTR_STACK:
		return stack_access(env, regno, reg, off, size, write, val, out, sext, kind);
	case T_PTR_MAP_VALUE: {
		const struct gp_map *m = &env->opts->maps[reg->map];
		if ((err = region_access(env, regno, reg, off, size, m->value_size, "map value", kind)))
			return err;
		if (write) {
			if (m->readonly)
				return gpv_reject(env, -EACCES, "write into map forbidden, value_size=%u off=%d size=%d",
						  m->value_size, reg->off + off, size);
			if (val && reg_is_pointer(val))
				return gpv_reject(env, -EACCES, "R%d leaks addr into map", val_regno);
			if (kind != K_ATOMIC)
				env->map_plain_write[reg->map] = 1;
			if (kind == K_INSN)
				gpv_race_store(env, reg, off, val);
		}
		out_unknown(out, size, sext);
		if (!write && kind == K_INSN)
			gpv_race_load(env, reg, off, out);
		return 0;
	}
	case T_PTR_MEM:
		if ((err = region_access(env, regno, reg, off, size, reg->mem_size, "mem", kind)))
			return err;
		if (write && val && reg_is_pointer(val))
			return gpv_reject(env, -EACCES, "R%d leaks addr into mem", val_regno);
		out_unknown(out, size, sext);
		return 0;
	default:
		return bad_mem_access(env, regno, reg);
	}
}

static int size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

int gpv_check_mem(struct gpv_env *env, const struct bpf_insn *insn)
{
	struct gpv_reg *regs = cur_regs(env);
	int size = size_bytes(insn->code);
	switch (BPF_CLASS(insn->code)) {
	case BPF_LDX: {
		if (regs[insn->src_reg].type == T_NOT_INIT)
			return gpv_reject(env, -EACCES, "R%d !read_ok", insn->src_reg);
		if (insn->dst_reg == BPF_REG_10)
			return gpv_reject(env, -EACCES, "frame pointer is read only");
		struct gpv_reg out;
		int err = check_access(env, insn->src_reg, insn->off, size, false, NULL, -1, &out,
				       BPF_MODE(insn->code) == BPF_MEMSX, K_INSN);
		if (err)
			return err;
		cur_regs(env)[insn->dst_reg] = out;
		return 0;
	}
	case BPF_ST: {
		if (regs[insn->dst_reg].type == T_NOT_INIT)
			return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
		struct gpv_reg v;
		reg_mark_const(&v, (uint64_t)(int64_t)insn->imm);
		if (size < 8)
			v.var.value &= (1ULL << (size * 8)) - 1, reg_mark_const(&v, v.var.value);
		return check_access(env, insn->dst_reg, insn->off, size, true, &v, -1, NULL, false, K_INSN);
	}
	default: { /* BPF_STX, BPF_MEM */
		if (regs[insn->dst_reg].type == T_NOT_INIT)
			return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
		if (regs[insn->src_reg].type == T_NOT_INIT)
			return gpv_reject(env, -EACCES, "R%d !read_ok", insn->src_reg);
		struct gpv_reg v = regs[insn->src_reg];
		if (size < 8 && !reg_is_pointer(&v)) {
			if (reg_is_const(&v))
				reg_mark_const(&v, v.var.value & ((1ULL << (size * 8)) - 1));
			else
				reg_mark_unknown_width(&v, (unsigned)size, false);
			v.vid = regs[insn->src_reg].vid;   /* still computed from what it was */
			v.voff = regs[insn->src_reg].voff;
			v.vinsn = regs[insn->src_reg].vinsn;
		}
		return check_access(env, insn->dst_reg, insn->off, size, true, &v, insn->src_reg, NULL,
				    false, K_INSN);
	}
	}
}

int gpv_check_atomic(struct gpv_env *env, const struct bpf_insn *insn)
{
	struct gpv_reg *regs = cur_regs(env);
	int size = size_bytes(insn->code);
	int op = insn->imm;
	if (regs[insn->dst_reg].type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
	if (regs[insn->src_reg].type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->src_reg);
	if (op == BPF_CMPXCHG && regs[BPF_REG_0].type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R0 !read_ok");
	if (reg_is_pointer(&regs[insn->src_reg]))
		return gpv_reject(env, -EACCES, "R%d leaks addr into mem", insn->src_reg);
	if (op == BPF_CMPXCHG && reg_is_pointer(&regs[BPF_REG_0]))
		return gpv_reject(env, -EACCES, "R0 leaks addr into mem");
	int t = regs[insn->dst_reg].type;
	if (t == T_PTR_CTX)
		return gpv_reject(env, -EACCES, "cannot write into ctx: the context is read-only (atomic)");
	if (t != T_PTR_STACK && t != T_PTR_MAP_VALUE && t != T_PTR_MEM)
		return bad_mem_access(env, insn->dst_reg, &regs[insn->dst_reg]);
	int err = check_access(env, insn->dst_reg, insn->off, size, false, NULL, -1, NULL, false, K_ATOMIC);
	if (err)
		return err;
	struct gpv_reg v;
	reg_mark_unknown_width(&v, (unsigned)size, false);
	if ((err = check_access(env, insn->dst_reg, insn->off, size, true, &v, insn->src_reg, NULL,
				false, K_ATOMIC)))
		return err;
	struct gpv_reg *dst = &cur_regs(env)[insn->dst_reg];
	if (dst->type == T_PTR_MAP_VALUE) {
		if ((op & ~BPF_FETCH) == BPF_ADD)
			env->map_atomic_add[dst->map] = 1;
		else
			env->map_plain_write[dst->map] = 1;
	}
	if (op == BPF_CMPXCHG)
		reg_mark_unknown_width(&cur_regs(env)[BPF_REG_0], (unsigned)size, false);
	else if (op & BPF_FETCH)
		reg_mark_unknown_width(&cur_regs(env)[insn->src_reg], (unsigned)size, false);
	return 0;
}

int gpv_check_helper_mem(struct gpv_env *env, int regno, int64_t size_min, uint64_t size_max,
			 bool write, bool need_init)
{
	(void)size_min;
	if (size_max > GPV_STACK * 64)
		return gpv_reject(env, -EACCES, "R%d unbounded memory access, size up to %llu", regno + 1,
				  (unsigned long long)size_max);
	struct gpv_reg *reg = &cur_regs(env)[regno];
	if (write && reg->type == T_PTR_STACK && !need_init) {
		/* the helper fills the bytes: they become initialized */
		return check_access(env, regno, 0, (int)size_max, true, NULL, -1, NULL, false, K_HELPER);
	}
	return check_access(env, regno, 0, (int)size_max, write, NULL, -1, NULL, false, K_HELPER);
}
