/* ALU instructions on register states: exact results for constants, ranges and known bits for
 * the rest, and the rules of pointer arithmetic (64-bit add/sub of a bounded scalar to a pointer
 * that may move; nothing else). */
#include "ebpf/verifier_priv.h"

#include <errno.h>

static uint64_t swap_bytes(uint64_t v, unsigned bits)
{
	switch (bits) {
	case 16: return __builtin_bswap16((uint16_t)v);
	case 32: return __builtin_bswap32((uint32_t)v);
	default: return __builtin_bswap64(v);
	}
}

static uint64_t trunc_bits(uint64_t v, unsigned bits)
{
	return bits >= 64 ? v : v & ((1ULL << bits) - 1);
}

static int64_t sext_bits(uint64_t v, unsigned bits)
{
	if (bits >= 64)
		return (int64_t)v;
	uint64_t sign = 1ULL << (bits - 1);
	v = trunc_bits(v, bits);
	return (int64_t)((v ^ sign) - sign);
}

/* The ISA's exact result of an ALU instruction on known operands. `src` is the operand (register
 * value, or the immediate already sign-extended to 64 bits). Division by zero gives 0, modulo by
 * zero leaves the dividend, shift counts are masked, signed overflow wraps. */
uint64_t gpv_alu_eval(uint8_t code, int16_t off, int32_t imm, uint64_t dst, uint64_t src)
{
	bool is64 = BPF_CLASS(code) == BPF_ALU64;
	unsigned bits = is64 ? 64 : 32;
	uint8_t op = BPF_OP(code);
	if (op == BPF_END) {
		unsigned w = (unsigned)imm;
		if (w != 16 && w != 32 && w != 64)
			return dst;
		if (is64 || BPF_SRC(code) == BPF_TO_BE)
			return trunc_bits(swap_bytes(dst, w), w);
		return trunc_bits(dst, w);
	}
	uint64_t a = trunc_bits(dst, bits), b = trunc_bits(src, bits), r;
	int64_t sa = sext_bits(a, bits), sb = sext_bits(b, bits);
	switch (op) {
	case BPF_ADD: r = a + b; break;
	case BPF_SUB: r = a - b; break;
	case BPF_MUL: r = a * b; break;
	case BPF_DIV:
		if (!b)
			r = 0;
		else if (off == 1)
			r = (sb == -1) ? (uint64_t)0 - (uint64_t)sa : (uint64_t)(sa / sb);
		else
			r = a / b;
		break;
	case BPF_MOD:
		if (!b)
			r = a;
		else if (off == 1)
			r = (sb == -1) ? 0 : (uint64_t)(sa % sb);
		else
			r = a % b;
		break;
	case BPF_OR: r = a | b; break;
	case BPF_AND: r = a & b; break;
	case BPF_XOR: r = a ^ b; break;
	case BPF_LSH: r = a << (b & (bits - 1)); break;
	case BPF_RSH: r = a >> (b & (bits - 1)); break;
	case BPF_ARSH: r = (uint64_t)(sa >> (b & (bits - 1))); break;
	case BPF_NEG: r = (uint64_t)0 - a; break;
	case BPF_MOV:
		r = off ? (uint64_t)sext_bits(src, (unsigned)off) : src;
		break;
	default: r = 0; break;
	}
	return trunc_bits(r, bits);
}

/* The low 32 bits of a scalar as a zero-extended value, with what is known of them. */
static void view32(struct gpv_reg *r)
{
	if (r->umax <= UINT32_MAX && !r->has32)
		return;
	struct gpv_reg v;
	reg_view32(r, &v, false);
	*r = v;
}

static void unbounded(struct gpv_reg *r)
{
	r->umin = 0;
	r->umax = UINT64_MAX;
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
}

/* dst = dst OP src on scalars. */
static void scalar_alu(struct gpv_reg *dst, struct gpv_reg src, const struct bpf_insn *insn)
{
	uint8_t code = insn->code, op = BPF_OP(code);
	bool is64 = BPF_CLASS(code) == BPF_ALU64;
	int16_t off = insn->off;
	if (reg_is_const(dst) && (reg_is_const(&src) || op == BPF_NEG || op == BPF_END)) {
		reg_mark_const(dst, gpv_alu_eval(code, off, insn->imm, dst->var.value, src.var.value));
		return;
	}
	struct gpv_reg a = *dst, b = src;
	if (!is64) {
		view32(&a);
		view32(&b);
	}
	struct gpv_reg r;
	reg_mark_unknown(&r);
	bool bconst = tnum_is_const(b.var);
	unsigned bits = is64 ? 64 : 32;
	switch (op) {
	case BPF_ADD:
		r.var = tnum_add(a.var, b.var);
		if (a.umax <= UINT64_MAX - b.umax) {
			r.umin = a.umin + b.umin;
			r.umax = a.umax + b.umax;
		}
		if (__builtin_add_overflow(a.smin, b.smin, &r.smin) ||
		    __builtin_add_overflow(a.smax, b.smax, &r.smax)) {
			r.smin = INT64_MIN;
			r.smax = INT64_MAX;
		}
		break;
	case BPF_SUB:
		r.var = tnum_sub(a.var, b.var);
		if (a.umin >= b.umax) {
			r.umin = a.umin - b.umax;
			r.umax = a.umax - b.umin;
		}
		if (__builtin_sub_overflow(a.smin, b.smax, &r.smin) ||
		    __builtin_sub_overflow(a.smax, b.smin, &r.smax)) {
			r.smin = INT64_MIN;
			r.smax = INT64_MAX;
		}
		break;
	case BPF_MUL:
		r.var = tnum_mul(a.var, b.var);
		if (a.umax <= UINT32_MAX && b.umax <= UINT32_MAX) {
			r.umin = a.umin * b.umin;
			r.umax = a.umax * b.umax;
		}
		break;
	case BPF_AND:
		if (is64 && bconst && b.var.value == UINT32_MAX) {
			reg_view32(&a, &r, false);   /* x & 0xffffffff: x's low half, as w = w */
			break;
		}
		r.var = tnum_and(a.var, b.var);
		r.umin = r.var.value;
		r.umax = a.umax < b.umax ? a.umax : b.umax;
		break;
	case BPF_OR:
		r.var = tnum_or(a.var, b.var);
		r.umin = a.umin > b.umin ? a.umin : b.umin;
		r.umax = r.var.value | r.var.mask;
		break;
	case BPF_XOR:
		r.var = tnum_xor(a.var, b.var);
		break;
	case BPF_LSH:
		if (bconst) {
			unsigned k = b.var.value & (bits - 1);
			r.var = tnum_lshift(a.var, k);
			if (is64 && k == 32) {
				/* x << 32 is x's low half moved up: clang's zero/sign extension
				 * (<<= 32, then >>= 32 or s>>= 32) keeps a bound checked on w */
				uint32_t lo, hi;
				reg_bounds32(&a, &lo, &hi);
				r.umin = (uint64_t)lo << 32;
				r.umax = (uint64_t)hi << 32;
			} else if (a.umax <= (UINT64_MAX >> k)) {
				r.umin = a.umin << k;
				r.umax = a.umax << k;
			}
		}
		break;
	case BPF_RSH:
		if (bconst) {
			unsigned k = b.var.value & (bits - 1);
			r.var = tnum_rshift(a.var, k);
			r.umin = a.umin >> k;
			r.umax = a.umax >> k;
		} else {
			r.umax = a.umax;
		}
		break;
	case BPF_ARSH:
		if (bconst && is64) {
			unsigned k = b.var.value & 63;
			r.var = tnum_arshift(a.var, k, 64);
			r.smin = a.smin >> k;
			r.smax = a.smax >> k;
		} else if (bconst && a.umax <= INT32_MAX) {
			/* a non-negative 32-bit value: arithmetic shift is a logical one */
			unsigned k = b.var.value & 31;
			r.var = tnum_rshift(a.var, k);
			r.umin = a.umin >> k;
			r.umax = a.umax >> k;
		}
		break;
	case BPF_DIV:
		if (off)
			break;
		if (bconst && b.var.value) {
			r.umin = a.umin / b.var.value;
			r.umax = a.umax / b.var.value;
		} else {
			r.umax = a.umax;
		}
		break;
	case BPF_MOD:
		if (off)
			break;
		r.umax = a.umax;
		if (b.umin > 0 && b.umax - 1 < r.umax)
			r.umax = b.umax - 1;
		break;
	case BPF_MOV:   /* sign-extending move of an unknown */
		if (a.umax < (1ULL << (off - 1))) {
			r = a;   /* already non-negative in the narrow width */
			r.id = 0;
		} else {
			r.smin = -(1LL << (off - 1));
			r.smax = (1LL << (off - 1)) - 1;
		}
		break;
	case BPF_END: {
		unsigned w = (unsigned)insn->imm;
		if (w < 64)
			r.umax = (1ULL << w) - 1;
		break;
	}
	default:    /* NEG, signed DIV/MOD: unknown */
		break;
	}
	if (op == BPF_XOR || (op == BPF_MUL && r.umax == UINT64_MAX))
		unbounded(&r);
	reg_sync_bounds(&r);
	if (!is64)
		reg_zext32(&r);
	if (!reg_bounds_sane(&r))
		reg_mark_unknown(&r);
	r.id = 0;
	*dst = r;
}

static bool ptr_arith_ok(int type)
{
	return type == T_PTR_CTX || type == T_PTR_STACK || type == T_PTR_MAP_VALUE || type == T_PTR_MEM;
}

static const char *op_name(uint8_t op)
{
	static const char *names[16] = {"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
					"neg", "%=", "^=", "=", "s>>=", "endian", "?", "?"};
	return names[op >> 4];
}

/* ptr +/- scalar, in place on *ptr. */
static int ptr_add_scalar(struct gpv_env *env, const struct bpf_insn *insn, struct gpv_reg *ptr,
			  const struct gpv_reg *s, bool sub)
{
	int regno = insn->dst_reg;
	if (reg_is_const(s)) {
		int64_t c = (int64_t)s->var.value, o = ptr->off;
		o = sub ? o - c : o + c;
		if (c < -GPV_MAX_VAR_OFF || c > GPV_MAX_VAR_OFF || o < -GPV_MAX_VAR_OFF || o > GPV_MAX_VAR_OFF)
			return gpv_reject(env, -EACCES, "value %lld makes %s pointer be out of bounds",
					  (long long)c, gpv_type_name(ptr->type));
		ptr->off = (int32_t)o;
		return 0;
	}
	if (s->smin < -GPV_MAX_VAR_OFF || s->smax > GPV_MAX_VAR_OFF)
		return gpv_reject(env, -EACCES,
				  "R%d math between %s pointer and register with unbounded %s value is not allowed",
				  regno, gpv_type_name(ptr->type), s->smin < -GPV_MAX_VAR_OFF ? "min" : "max");
	struct gpv_reg v = *ptr;
	if (sub) {
		v.var = tnum_sub(ptr->var, s->var);
		v.smin = ptr->smin - s->smax;
		v.smax = ptr->smax - s->smin;
	} else {
		v.var = tnum_add(ptr->var, s->var);
		v.smin = ptr->smin + s->smin;
		v.smax = ptr->smax + s->smax;
	}
	if (v.smin < -GPV_MAX_VAR_OFF || v.smax > GPV_MAX_VAR_OFF)
		return gpv_reject(env, -EACCES, "R%d variable offset of %s pointer is out of bounds",
				  regno, gpv_type_name(ptr->type));
	v.umin = 0;
	v.umax = UINT64_MAX;
	uint8_t type = v.type;
	v.type = T_SCALAR;   /* let the scalar bookkeeping tighten the offset's ranges */
	reg_sync_bounds(&v);
	v.type = type;
	*ptr = v;
	return 0;
}

static int pointer_alu(struct gpv_env *env, const struct bpf_insn *insn, struct gpv_reg *dst,
		       struct gpv_reg src)
{
	uint8_t op = BPF_OP(insn->code);
	int regno = insn->dst_reg;
	bool dptr = reg_is_pointer(dst), sptr = reg_is_pointer(&src);
	if (BPF_CLASS(insn->code) != BPF_ALU64)
		return gpv_reject(env, -EACCES, "R%d 32-bit pointer arithmetic prohibited", regno);
	if (op != BPF_ADD && op != BPF_SUB)
		return gpv_reject(env, -EACCES, "R%d pointer arithmetic with %s operator prohibited",
				  dptr ? regno : insn->src_reg, op_name(op));
	const struct gpv_reg *p = dptr ? dst : &src;
	if (!ptr_arith_ok(p->type)) {
		if (p->type == T_PTR_MAP_VALUE_OR_NULL || p->type == T_PTR_MEM_OR_NULL)
			return gpv_reject(env, -EACCES,
					  "R%d pointer arithmetic on %s prohibited, null-check it first",
					  dptr ? regno : insn->src_reg, gpv_type_name(p->type));
		return gpv_reject(env, -EACCES, "R%d pointer arithmetic on %s prohibited",
				  dptr ? regno : insn->src_reg, gpv_type_name(p->type));
	}
	if (dptr && sptr) {
		if (op == BPF_ADD)
			return gpv_reject(env, -EACCES, "R%d pointer += pointer prohibited", regno);
		bool same = dst->type == src.type &&
			    (dst->type != T_PTR_STACK || dst->frameno == src.frameno) &&
			    (dst->type != T_PTR_MAP_VALUE || dst->map == src.map) &&
			    (dst->type != T_PTR_MEM || dst->ref_obj_id == src.ref_obj_id);
		if (!same)
			return gpv_reject(env, -EACCES, "R%d pointer -= pointer of another object prohibited",
					  regno);
		reg_mark_unknown(dst);   /* a distance; Linux gives an unknown scalar too */
		return 0;
	}
	if (!dptr) {
		if (op == BPF_SUB)
			return gpv_reject(env, -EACCES, "R%d tried to subtract pointer from scalar", regno);
		gpv_mark_precise(env, regno);
		struct gpv_reg s = *dst;
		*dst = src;
		return ptr_add_scalar(env, insn, dst, &s, false);
	}
	if (BPF_SRC(insn->code) == BPF_X)
		gpv_mark_precise(env, insn->src_reg);
	return ptr_add_scalar(env, insn, dst, &src, op == BPF_SUB);
}

int gpv_check_alu(struct gpv_env *env, const struct bpf_insn *insn)
{
	struct gpv_reg *regs = cur_regs(env);
	uint8_t op = BPF_OP(insn->code);
	bool is64 = BPF_CLASS(insn->code) == BPF_ALU64;
	bool srcx = BPF_SRC(insn->code) == BPF_X && op != BPF_END && op != BPF_NEG;
	struct gpv_reg *dst = &regs[insn->dst_reg];

	if (srcx && regs[insn->src_reg].type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->src_reg);
	if (op != BPF_MOV && dst->type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
	if (insn->dst_reg == BPF_REG_10)
		return gpv_reject(env, -EACCES, "frame pointer is read only");

	struct gpv_reg src;
	if (srcx)
		src = regs[insn->src_reg];
	else
		reg_mark_const(&src, is64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);

	if (op == BPF_MOV) {
		if (!srcx) {
			reg_mark_const(dst, src.var.value);
			return 0;
		}
		struct gpv_reg *s = &regs[insn->src_reg];
		if (reg_is_pointer(s)) {
			if (!is64 || insn->off)
				return gpv_reject(env, -EACCES, "R%d partial copy of pointer", insn->src_reg);
			*dst = *s;
			return 0;
		}
		if (is64 && !insn->off) {
			/* copies of a scalar share an id so that a bound learnt on one holds for all */
			if (!s->id && !reg_is_const(s))
				s->id = ++env->next_id;
			*dst = *s;
			return 0;
		}
		struct gpv_reg v = *s;
		v.id = 0;
		if (insn->off) {
			if (!is64)
				view32(&v);
			struct gpv_reg d = v;
			scalar_alu(&d, v, insn);
			*dst = d;
		} else {
			*dst = v;
			reg_zext32(dst);
			dst->id = 0;
		}
		return 0;
	}
	if (op == BPF_NEG || op == BPF_END) {
		if (reg_is_pointer(dst))
			return gpv_reject(env, -EACCES, "R%d %s on pointer prohibited", insn->dst_reg,
					  op == BPF_NEG ? "negation" : "byte swap");
		scalar_alu(dst, src, insn);
		return 0;
	}
	if (reg_is_pointer(dst) || reg_is_pointer(&src))
		return pointer_alu(env, insn, dst, src);
	scalar_alu(dst, src, insn);
	return 0;
}
