/* Jumps (RFC 9669 section 4.3): JMP compares 64-bit registers, JMP32 their low halves; the
 * immediate is sign-extended to 64 bits for JMP. JA uses off, JMP32 JA (gotol) uses imm.
 * Every jump becomes a predicate and a guarded bra to the target's label. */
#include "ebpf/lower_internal.h"

#include <errno.h>

#define R(x) lo_reg(c, (x))

static const char *cmp_of(uint8_t op, bool *sign)
{
	*sign = false;
	switch (op) {
	case BPF_JEQ: return ".eq";
	case BPF_JNE: return ".ne";
	case BPF_JGT: return ".gt";
	case BPF_JGE: return ".ge";
	case BPF_JLT: return ".lt";
	case BPF_JLE: return ".le";
	case BPF_JSGT: *sign = true; return ".gt";
	case BPF_JSGE: *sign = true; return ".ge";
	case BPF_JSLT: *sign = true; return ".lt";
	case BPF_JSLE: *sign = true; return ".le";
	}
	return NULL;
}

int lower_jump(struct lower_ctx *c, const struct bpf_insn *in)
{
	uint8_t op = BPF_OP(in->code);
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	if (op == BPF_JA) {
		if (BPF_SRC(in->code) != BPF_K)
			return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
		long long t = (long long)c->pc + 1 + (is32 ? in->imm : in->off);
		lo_emit(c, "bra", ".uni", 1, lo_sym(c, lo_insn_label(c, (size_t)t)));
		return 0;
	}
	if (in->dst_reg > 10 || in->src_reg > 10)
		return lower_fail(c, EINVAL, "register r%u does not exist",
				  in->dst_reg > 10 ? in->dst_reg : in->src_reg);
	bool sign;
	const char *cmp = cmp_of(op, &sign);
	if (!cmp && op != BPF_JSET)
		return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
	bool k = BPF_SRC(in->code) == BPF_K;
	long long target = (long long)c->pc + 1 + in->off;
	/* The null test of a pointer known not to be NULL (a lookup the maps runtime folded into an
	 * address, lower_plan.c): a branch never or always taken. ptxas cannot tell, and the test
	 * split each memory counter site into blocks of its own. */
	if (!is32 && k && in->imm == 0 && (op == BPF_JEQ || op == BPF_JNE) &&
	    (lower_map_value_reg(c, in->dst_reg) & LOWER_MV_NONNULL)) {
		if (op == BPF_JNE)
			lo_emit(c, "bra", ".uni", 1, lo_sym(c, lo_insn_label(c, (size_t)target)));
		return 0;
	}
	const char *a = c->r[in->dst_reg];
	ir_operand b = k ? lo_imm(c, (uint64_t)(int64_t)in->imm) : R(c->r[in->src_reg]);
	if (is32) {
		lo_lo32(c, c->w[0], a);
		a = c->w[0];
		if (k) {
			b = lo_imm(c, (uint32_t)in->imm);
		} else {
			lo_lo32(c, c->w[1], c->r[in->src_reg]);
			b = R(c->w[1]);
		}
	}
	/* The null test of a map value the same in every lane (lower_plan.c: a lookup whose key is
	 * a constant or site-constant context fields): never divergent, so it says so, and a site of
	 * a probe whose only branches are such needs no reconvergence (instrument_reconverge.c). */
	bool uni = !is32 && k && in->imm == 0 && (op == BPF_JEQ || op == BPF_JNE) &&
		   (lower_map_value_reg(c, in->dst_reg) & LOWER_MV_UNIFORM);
	const char *pred = c->p[0];
	if (op == BPF_JSET) {
		const char *t = is32 ? c->w[2] : c->t[0];
		lo_emit(c, "and", is32 ? ".b32" : ".b64", 3, R(t), R(a), b);
		lo_emit(c, "setp", is32 ? ".ne.b32" : ".ne.b64", 3, R(pred), R(t), lo_imm(c, 0));
	} else {
		const char *ty = is32 ? (sign ? ".s32" : ".u32") : (sign ? ".s64" : ".u64");
		lo_emit(c, "setp", ir_strfmt(c->m, "%s%s", cmp, ty), 3, R(pred), R(a), b);
	}
	lo_emit_if(c, pred, false, "bra", uni ? ".uni" : "", 1, lo_sym(c, lo_insn_label(c, (size_t)target)));
	return 0;
}
