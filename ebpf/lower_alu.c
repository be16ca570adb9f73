/* ALU and ALU64 (RFC 9669 section 4.1-4.2): exact semantics in PTX.
 * - ALU computes in 32 bits and zero-extends the result into the 64-bit register.
 * - Division by zero gives 0; modulo by zero leaves the dividend (truncated to 32 bits for
 *   ALU). Signed INT_MIN / -1 gives INT_MIN and INT_MIN % -1 gives 0 (PTX leaves those
 *   undefined, so -1 is routed around div/rem). No traps anywhere.
 * - Shift counts are masked to 5 or 6 bits (PTX would clamp instead).
 * - END: TO_LE on a little-endian GPU only truncates; TO_BE and ALU64 bswap swap with prmt. */
#include "ebpf/lower_internal.h"

#include <errno.h>

#define R(x) lo_reg(c, (x))
#define IMM(v) lo_imm(c, (uint64_t)(v))

/* 32-bit source operand: the immediate or the low half of the source register (into w1). */
static ir_operand src32(struct lower_ctx *c, const struct bpf_insn *in)
{
	if (BPF_SRC(in->code) == BPF_K)
		return IMM((uint32_t)in->imm);
	lo_lo32(c, c->w[1], c->r[in->src_reg]);
	return R(c->w[1]);
}

/* 64-bit source operand: the sign-extended immediate or the source register. */
static ir_operand src64(struct lower_ctx *c, const struct bpf_insn *in)
{
	if (BPF_SRC(in->code) == BPF_K)
		return IMM((int64_t)in->imm);
	return R(c->r[in->src_reg]);
}

/* Byte swap of the low `bits` of register d, zero-extending (bswap16/32/64). */
static void bswap(struct lower_ctx *c, const char *d, int bits)
{
	const char *w0 = c->w[0], *w1 = c->w[1], *w2 = c->w[2], *w3 = c->w[3];
	if (bits == 64) {
		lo_emit(c, "mov", ".b64", 2, lo_vec2(c, w0, w1), R(d));
		lo_emit(c, "prmt", ".b32", 4, R(w2), R(w0), IMM(0), IMM(0x0123));
		lo_emit(c, "prmt", ".b32", 4, R(w3), R(w1), IMM(0), IMM(0x0123));
		lo_emit(c, "mov", ".b64", 2, R(d), lo_vec2(c, w3, w2));
		return;
	}
	/* prmt selector: result byte k takes source byte nibble k; 4 selects a zero byte of b. */
	lo_lo32(c, w0, d);
	lo_emit(c, "prmt", ".b32", 4, R(w0), R(w0), IMM(0), IMM(bits == 16 ? 0x4401 : 0x0123));
	lo_zext32(c, d, w0);
}

static int lower_end(struct lower_ctx *c, const struct bpf_insn *in)
{
	const char *d = c->r[in->dst_reg];
	int bits = in->imm;
	if (bits != 16 && bits != 32 && bits != 64)
		return lower_fail(c, EINVAL, "byte swap width %d (16, 32 or 64)", bits);
	if (BPF_CLASS(in->code) == BPF_ALU64) {
		if (BPF_SRC(in->code) != 0)
			return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
		bswap(c, d, bits);
		return 0;
	}
	if (BPF_SRC(in->code) == BPF_TO_BE) {
		bswap(c, d, bits);
		return 0;
	}
	if (bits < 64)
		lo_emit(c, "and", ".b64", 3, R(d), R(d), IMM(bits == 16 ? 0xffff : 0xffffffffu));
	return 0;
}

/* Unsigned and signed division/modulo by a register, with every corner case defined.
 * w: 32-bit registers or 64-bit; a is the dividend register (in place), b the divisor. */
static void divmod_reg(struct lower_ctx *c, bool is64, bool sign, bool mod, const char *a,
		       const char *b)
{
	const char *tb = is64 ? c->t[1] : c->w[2], *tq = is64 ? c->t[2] : c->w[3];
	const char *pz = c->p[0], *pm = c->p[1];
	const char *ty = is64 ? (sign ? ".s64" : ".u64") : (sign ? ".s32" : ".u32");
	const char *bt = is64 ? ".b64" : ".b32";
	lo_emit(c, "setp", is64 ? ".eq.u64" : ".eq.u32", 3, R(pz), R(b), IMM(0));
	if (sign) {
		/* b == -1: quotient -a (wraps at INT_MIN as the ISA wants), remainder 0. */
		lo_emit(c, "setp", is64 ? ".eq.s64" : ".eq.s32", 3, R(pm), R(b), lo_imm(c, is64 ? ~0ull : 0xffffffffu));
		lo_emit(c, "or", ".pred", 3, R(c->p[2]), R(pz), R(pm));
		lo_emit(c, "selp", bt, 4, R(tb), IMM(1), R(b), R(c->p[2]));
	} else {
		lo_emit(c, "selp", bt, 4, R(tb), IMM(1), R(b), R(pz));
	}
	lo_emit(c, mod ? "rem" : "div", ty, 3, R(tq), R(a), R(tb));
	if (sign) {
		if (mod)
			lo_emit_if(c, pm, false, "mov", bt, 2, R(tq), IMM(0));
		else
			lo_emit_if(c, pm, false, "neg", is64 ? ".s64" : ".s32", 2, R(tq), R(a));
	}
	if (mod)
		lo_emit(c, "selp", bt, 4, R(a), R(a), R(tq), R(pz));
	else
		lo_emit(c, "selp", bt, 4, R(a), IMM(0), R(tq), R(pz));
}

/* Same with a constant divisor: the corner cases are settled at lowering time. */
static void divmod_imm(struct lower_ctx *c, bool is64, bool sign, bool mod, const char *a,
		       int32_t imm)
{
	const char *ty = is64 ? (sign ? ".s64" : ".u64") : (sign ? ".s32" : ".u32");
	const char *bt = is64 ? ".b64" : ".b32";
	uint64_t b = is64 ? (uint64_t)(int64_t)imm : (uint32_t)imm;
	if (imm == 0) {
		if (!mod)
			lo_emit(c, "mov", bt, 2, R(a), IMM(0));
		return;
	}
	if (sign && imm == -1) {
		if (mod)
			lo_emit(c, "mov", bt, 2, R(a), IMM(0));
		else
			lo_emit(c, "neg", is64 ? ".s64" : ".s32", 2, R(a), R(a));
		return;
	}
	lo_emit(c, mod ? "rem" : "div", ty, 3, R(a), R(a), IMM(b));
}

static int lower_alu64(struct lower_ctx *c, const struct bpf_insn *in)
{
	const char *d = c->r[in->dst_reg];
	uint8_t op = BPF_OP(in->code);
	bool k = BPF_SRC(in->code) == BPF_K;
	bool sign = in->off == 1;
	if ((op == BPF_DIV || op == BPF_MOD) ? in->off > 1 || in->off < 0
	    : op == BPF_MOV ? !(in->off == 0 || (!k && (in->off == 8 || in->off == 16 || in->off == 32)))
	    : in->off != 0)
		return lower_fail(c, EINVAL, "unknown opcode 0x%02x with offset %d", in->code, in->off);
	switch (op) {
	case BPF_ADD: lo_emit(c, "add", ".s64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_SUB: lo_emit(c, "sub", ".s64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_MUL: lo_emit(c, "mul", ".lo.s64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_OR:  lo_emit(c, "or", ".b64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_AND: lo_emit(c, "and", ".b64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_XOR: lo_emit(c, "xor", ".b64", 3, R(d), R(d), src64(c, in)); return 0;
	case BPF_NEG: lo_emit(c, "neg", ".s64", 2, R(d), R(d)); return 0;
	case BPF_MOV:
		if (in->off)
			lo_emit(c, "bfe", ".s64", 4, R(d), R(c->r[in->src_reg]), IMM(0), IMM(in->off));
		else
			lo_emit(c, "mov", ".b64", 2, R(d), src64(c, in));
		return 0;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH: {
		const char *opc = op == BPF_LSH ? "shl" : "shr";
		const char *ty = op == BPF_LSH ? ".b64" : op == BPF_RSH ? ".u64" : ".s64";
		if (k) {
			lo_emit(c, opc, ty, 3, R(d), R(d), IMM(in->imm & 63));
		} else {
			lo_lo32(c, c->w[0], c->r[in->src_reg]);
			lo_emit(c, "and", ".b32", 3, R(c->w[0]), R(c->w[0]), IMM(63));
			lo_emit(c, opc, ty, 3, R(d), R(d), R(c->w[0]));
		}
		return 0;
	}
	case BPF_DIV:
	case BPF_MOD:
		if (k)
			divmod_imm(c, true, sign, op == BPF_MOD, d, in->imm);
		else
			divmod_reg(c, true, sign, op == BPF_MOD, d, c->r[in->src_reg]);
		return 0;
	case BPF_END:
		return lower_end(c, in);
	}
	return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
}

static int lower_alu32(struct lower_ctx *c, const struct bpf_insn *in)
{
	const char *d = c->r[in->dst_reg];
	const char *w = c->w[0];
	uint8_t op = BPF_OP(in->code);
	bool k = BPF_SRC(in->code) == BPF_K;
	bool sign = in->off == 1;
	if (op == BPF_END)
		return lower_end(c, in);
	if ((op == BPF_DIV || op == BPF_MOD) ? in->off > 1 || in->off < 0
	    : op == BPF_MOV ? !(in->off == 0 || (!k && (in->off == 8 || in->off == 16)))
	    : in->off != 0)
		return lower_fail(c, EINVAL, "unknown opcode 0x%02x with offset %d", in->code, in->off);
	if (op == BPF_MOV) {
		if (k) {
			lo_emit(c, "mov", ".b64", 2, R(d), IMM((uint32_t)in->imm));
		} else if (in->off) {
			lo_lo32(c, w, c->r[in->src_reg]);
			lo_emit(c, "bfe", ".s32", 4, R(w), R(w), IMM(0), IMM(in->off));
			lo_zext32(c, d, w);
		} else {
			lo_emit(c, "and", ".b64", 3, R(d), R(c->r[in->src_reg]), IMM(0xffffffffu));
		}
		return 0;
	}
	const char *opc = NULL, *ty = ".b32";
	switch (op) {
	case BPF_ADD: opc = "add"; ty = ".s32"; break;
	case BPF_SUB: opc = "sub"; ty = ".s32"; break;
	case BPF_MUL: opc = "mul"; ty = ".lo.s32"; break;
	case BPF_OR:  opc = "or"; break;
	case BPF_AND: opc = "and"; break;
	case BPF_XOR: opc = "xor"; break;
	case BPF_LSH: opc = "shl"; break;
	case BPF_RSH: opc = "shr"; ty = ".u32"; break;
	case BPF_ARSH: opc = "shr"; ty = ".s32"; break;
	case BPF_NEG:
	case BPF_DIV:
	case BPF_MOD:
		break;
	default:
		return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
	}
	lo_lo32(c, w, d);
	if (op == BPF_NEG) {
		lo_emit(c, "neg", ".s32", 2, R(w), R(w));
	} else if (op == BPF_DIV || op == BPF_MOD) {
		if (k) {
			divmod_imm(c, false, sign, op == BPF_MOD, w, in->imm);
		} else {
			lo_lo32(c, c->w[1], c->r[in->src_reg]);
			divmod_reg(c, false, sign, op == BPF_MOD, w, c->w[1]);
		}
	} else if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) {
		if (k) {
			lo_emit(c, opc, ty, 3, R(w), R(w), IMM(in->imm & 31));
		} else {
			lo_lo32(c, c->w[1], c->r[in->src_reg]);
			lo_emit(c, "and", ".b32", 3, R(c->w[1]), R(c->w[1]), IMM(31));
			lo_emit(c, opc, ty, 3, R(w), R(w), R(c->w[1]));
		}
	} else {
		lo_emit(c, opc, ty, 3, R(w), R(w), src32(c, in));
	}
	lo_zext32(c, d, w);
	return 0;
}

int lower_alu(struct lower_ctx *c, const struct bpf_insn *in)
{
	if (in->dst_reg > 10 || in->src_reg > 10)
		return lower_fail(c, EINVAL, "register r%u does not exist",
				  in->dst_reg > 10 ? in->dst_reg : in->src_reg);
	if (in->dst_reg == 10)
		return lower_fail(c, EACCES, "r10 is read-only");
	return BPF_CLASS(in->code) == BPF_ALU64 ? lower_alu64(c, in) : lower_alu32(c, in);
}
