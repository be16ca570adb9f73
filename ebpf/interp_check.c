/* Encoding checks of RFC 9669 for every instruction, before anything runs: the interpreter then
 * only meets instructions it knows, and malformed programs (unused fields set, unknown opcodes,
 * jumps outside the program) are refused at load with the instruction index and the reason. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "ebpf/interp.h"

#ifndef BPF_JMP32
#define BPF_JMP32 0x06
#endif

static int bad(char *err, size_t errlen, size_t pc, const struct bpf_insn *in, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "insn %zu (code 0x%02x): %s", pc, in->code, msg);
	return -EINVAL;
}

static bool target_ok(size_t pc, int64_t rel, size_t n)
{
	int64_t t = (int64_t)pc + 1 + rel;
	return t >= 0 && (uint64_t)t < n;
}

static int check_alu(const struct bpf_insn *in, size_t pc, char *err, size_t errlen)
{
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	uint8_t op = BPF_OP(in->code);
	bool x = BPF_SRC(in->code) == BPF_X;
	if (in->dst_reg == BPF_REG_10)
		return bad(err, errlen, pc, in, "r10 is read-only");
	switch (op) {
	case BPF_NEG:
		if (x || in->src_reg || in->imm || in->off)
			return bad(err, errlen, pc, in, "neg takes no source: src, off and imm must be 0");
		return 0;
	case BPF_END:
		if (is64 && x)
			return bad(err, errlen, pc, in, "unknown byte-swap encoding");
		if (in->src_reg || in->off)
			return bad(err, errlen, pc, in, "byte swap: src and off must be 0");
		if (in->imm != 16 && in->imm != 32 && in->imm != 64)
			return bad(err, errlen, pc, in, "byte swap width %d (must be 16, 32 or 64)", in->imm);
		return 0;
	case BPF_ADD: case BPF_SUB: case BPF_MUL: case BPF_OR: case BPF_AND: case BPF_LSH:
	case BPF_RSH: case BPF_XOR: case BPF_ARSH: case BPF_DIV: case BPF_MOD: case BPF_MOV:
		break;
	default:
		return bad(err, errlen, pc, in, "unknown ALU operation 0x%02x", op);
	}
	if (x ? in->imm != 0 : in->src_reg != 0)
		return bad(err, errlen, pc, in, x ? "register source: imm must be 0" : "immediate source: src must be 0");
	if (in->src_reg > BPF_REG_10)
		return bad(err, errlen, pc, in, "invalid source register r%d", in->src_reg);
	if (in->off) {
		bool ok = false;
		if (op == BPF_DIV || op == BPF_MOD)
			ok = in->off == 1;
		else if (op == BPF_MOV && x)
			ok = in->off == 8 || in->off == 16 || (is64 && in->off == 32);
		if (!ok)
			return bad(err, errlen, pc, in, "offset %d must be 0", in->off);
	}
	return 0;
}

static int check_jmp(const struct bpf_insn *in, size_t pc, size_t n, char *err, size_t errlen)
{
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	uint8_t op = BPF_OP(in->code);
	bool x = BPF_SRC(in->code) == BPF_X;
	switch (op) {
	case BPF_JA:
		if (x || in->dst_reg || in->src_reg)
			return bad(err, errlen, pc, in, "ja: dst and src must be 0");
		if (is32) {
			if (in->off)
				return bad(err, errlen, pc, in, "ja32: off must be 0 (the target is in imm)");
			if (!target_ok(pc, in->imm, n))
				return bad(err, errlen, pc, in, "jump out of range to %lld", (long long)pc + 1 + in->imm);
			return 0;
		}
		if (in->imm)
			return bad(err, errlen, pc, in, "ja: imm must be 0");
		if (!target_ok(pc, in->off, n))
			return bad(err, errlen, pc, in, "jump out of range to %lld", (long long)pc + 1 + in->off);
		return 0;
	case BPF_CALL:
		if (is32)
			return bad(err, errlen, pc, in, "call is not a JMP32 operation");
		if (x) {
			if (in->src_reg || in->off || in->imm || in->dst_reg > BPF_REG_9)
				return bad(err, errlen, pc, in, "callx: register in dst, src/off/imm must be 0");
			return 0;
		}
		if (in->dst_reg || in->off)
			return bad(err, errlen, pc, in, "call: dst and off must be 0");
		if (in->src_reg == BPF_PSEUDO_CALL) {
			if (!target_ok(pc, in->imm, n))
				return bad(err, errlen, pc, in, "call to %lld outside the program", (long long)pc + 1 + in->imm);
			return 0;
		}
		if (in->src_reg != 0)
			return bad(err, errlen, pc, in, "call kind src=%d not supported", in->src_reg);
		return 0;
	case BPF_EXIT:
		if (is32 || x || in->dst_reg || in->src_reg || in->off || in->imm)
			return bad(err, errlen, pc, in, "exit: every field must be 0");
		return 0;
	case BPF_JEQ: case BPF_JGT: case BPF_JGE: case BPF_JSET: case BPF_JNE: case BPF_JSGT:
	case BPF_JSGE: case BPF_JLT: case BPF_JLE: case BPF_JSLT: case BPF_JSLE:
		break;
	default:
		return bad(err, errlen, pc, in, "unknown jump operation 0x%02x", op);
	}
	if (x ? in->imm != 0 : in->src_reg != 0)
		return bad(err, errlen, pc, in, x ? "register source: imm must be 0" : "immediate source: src must be 0");
	if (in->src_reg > BPF_REG_10)
		return bad(err, errlen, pc, in, "invalid source register r%d", in->src_reg);
	if (!target_ok(pc, in->off, n))
		return bad(err, errlen, pc, in, "jump out of range to %lld", (long long)pc + 1 + in->off);
	return 0;
}

static int check_mem(const struct bpf_insn *in, size_t pc, char *err, size_t errlen)
{
	uint8_t cls = BPF_CLASS(in->code), mode = BPF_MODE(in->code), size = BPF_SIZE(in->code);
	if (in->src_reg > BPF_REG_10)
		return bad(err, errlen, pc, in, "invalid source register r%d", in->src_reg);
	switch (cls) {
	case BPF_LDX:
		if (in->dst_reg == BPF_REG_10)
			return bad(err, errlen, pc, in, "r10 is read-only");
		if (mode != BPF_MEM && !(mode == BPF_MEMSX && size != BPF_DW))
			return bad(err, errlen, pc, in, "unknown load mode");
		if (in->imm)
			return bad(err, errlen, pc, in, "load: imm must be 0");
		return 0;
	case BPF_ST:
		if (mode != BPF_MEM)
			return bad(err, errlen, pc, in, "unknown store mode");
		if (in->src_reg)
			return bad(err, errlen, pc, in, "store immediate: src must be 0");
		return 0;
	case BPF_STX:
		if (mode == BPF_MEM) {
			if (in->imm)
				return bad(err, errlen, pc, in, "store: imm must be 0");
			return 0;
		}
		if (mode != BPF_ATOMIC)
			return bad(err, errlen, pc, in, "unknown store mode");
		if (size != BPF_W && size != BPF_DW)
			return bad(err, errlen, pc, in, "atomic operations are 32 or 64 bits wide");
		if ((in->imm & BPF_FETCH) && in->src_reg == BPF_REG_10)
			return bad(err, errlen, pc, in, "r10 is read-only (a fetching atomic writes its source register)");
		switch (in->imm) {
		case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
		case BPF_ADD | BPF_FETCH: case BPF_OR | BPF_FETCH: case BPF_AND | BPF_FETCH:
		case BPF_XOR | BPF_FETCH: case BPF_XCHG: case BPF_CMPXCHG:
			return 0;
		default:
			return bad(err, errlen, pc, in, "unknown atomic operation 0x%x", (unsigned)in->imm);
		}
	}
	return bad(err, errlen, pc, in, "unknown instruction class");
}

int gp_interp_check(const struct bpf_insn *insns, size_t n, char *err, size_t errlen)
{
	if (n == 0) {
		if (err && errlen)
			snprintf(err, errlen, "empty program");
		return -EINVAL;
	}
	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *in = &insns[pc];
		int rc;
		if (in->dst_reg > BPF_REG_10)
			return bad(err, errlen, pc, in, "invalid destination register r%d", in->dst_reg);
		switch (BPF_CLASS(in->code)) {
		case BPF_ALU:
		case BPF_ALU64:
			rc = check_alu(in, pc, err, errlen);
			break;
		case BPF_JMP:
		case BPF_JMP32:
			rc = check_jmp(in, pc, n, err, errlen);
			break;
		case BPF_LD:
			if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
				return bad(err, errlen, pc, in, "legacy packet loads (LD ABS/IND) are not supported");
			if (in->dst_reg == BPF_REG_10)
				return bad(err, errlen, pc, in, "r10 is read-only");
			if (in->off)
				return bad(err, errlen, pc, in, "lddw: off must be 0");
			if (in->src_reg != 0 && in->src_reg != BPF_PSEUDO_MAP_FD && in->src_reg != BPF_PSEUDO_MAP_VALUE &&
			    in->src_reg != BPF_PSEUDO_MAP_IDX && in->src_reg != BPF_PSEUDO_MAP_IDX_VALUE)
				return bad(err, errlen, pc, in, "lddw kind src=%d not supported", in->src_reg);
			if (pc + 1 >= n)
				return bad(err, errlen, pc, in, "lddw is missing its second half");
			if (insns[pc + 1].code || insns[pc + 1].dst_reg || insns[pc + 1].src_reg || insns[pc + 1].off)
				return bad(err, errlen, pc + 1, &insns[pc + 1], "second half of lddw: only imm may be set");
			pc++;
			rc = 0;
			break;
		default:
			rc = check_mem(in, pc, err, errlen);
			break;
		}
		if (rc)
			return rc;
	}
	/* A jump into the middle of an lddw would execute its second half as an instruction. */
	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *in = &insns[pc];
		uint8_t cls = BPF_CLASS(in->code);
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			pc++;
			continue;
		}
		int64_t rel;
		if (cls == BPF_JMP32 && BPF_OP(in->code) == BPF_JA)
			rel = in->imm;
		else if ((cls == BPF_JMP && BPF_OP(in->code) == BPF_CALL && BPF_SRC(in->code) == BPF_K &&
			  in->src_reg == BPF_PSEUDO_CALL))
			rel = in->imm;
		else if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(in->code) != BPF_CALL &&
			 BPF_OP(in->code) != BPF_EXIT)
			rel = in->off;
		else
			continue;
		size_t t = (size_t)((int64_t)pc + 1 + rel);
		if (t > 0 && insns[t - 1].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (t < 2 || insns[t - 2].code != (BPF_LD | BPF_IMM | BPF_DW)))
			return bad(err, errlen, pc, in, "jump into the middle of lddw at %zu", t - 1);
	}
	return 0;
}
