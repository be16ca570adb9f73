/* Static checks before any path is explored: every instruction is a known opcode with its
 * reserved fields zero, ld_imm64 pairs are whole, jumps land inside their own subprogram and never
 * in the middle of an ld_imm64, every subprogram ends in exit or goto. Also finds the
 * subprograms, the instructions where states are kept for pruning (jump targets), and which
 * registers are live on entry to each instruction (dead ones are dropped from kept states so
 * that more paths match them). */
#include "ebpf/verifier_priv.h"

#include <errno.h>
#include <stdlib.h>

static int reserved(struct gpv_env *env, const char *what)
{
	return gpv_reject(env, -EINVAL, "%s uses reserved fields", what);
}

static int unknown_opcode(struct gpv_env *env, uint8_t code)
{
	return gpv_reject(env, -EINVAL, "unknown opcode %02x", code);
}

static bool is_ldimm64(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

static int check_alu(struct gpv_env *env, const struct bpf_insn *insn)
{
	uint8_t code = insn->code, op = BPF_OP(code);
	bool is64 = BPF_CLASS(code) == BPF_ALU64, x = BPF_SRC(code) == BPF_X;
	if (op > BPF_END)
		return unknown_opcode(env, code);
	if (op == BPF_END) {
		if (insn->src_reg || insn->off || (insn->imm != 16 && insn->imm != 32 && insn->imm != 64) ||
		    (is64 && x))
			return reserved(env, "BPF_END");
		return 0;
	}
	if (op == BPF_NEG) {
		if (x || insn->src_reg || insn->off || insn->imm)
			return reserved(env, "BPF_NEG");
		return 0;
	}
	if (op == BPF_MOV) {
		if (x) {
			bool off_ok = !insn->off || insn->off == 8 || insn->off == 16 || (is64 && insn->off == 32);
			if (insn->imm || !off_ok)
				return reserved(env, "BPF_MOV");
		} else if (insn->src_reg || insn->off) {
			return reserved(env, "BPF_MOV");
		}
		return 0;
	}
	bool off_ok = !insn->off || ((op == BPF_DIV || op == BPF_MOD) && insn->off == 1);
	if (x ? (insn->imm || !off_ok) : (insn->src_reg || !off_ok))
		return reserved(env, "BPF_ALU");
	return 0;
}

static int check_jmp(struct gpv_env *env, const struct bpf_insn *insn)
{
	uint8_t code = insn->code, op = BPF_OP(code);
	bool is32 = BPF_CLASS(code) == BPF_JMP32, x = BPF_SRC(code) == BPF_X;
	switch (op) {
	case BPF_JA:
		if (x || insn->src_reg || insn->dst_reg || (is32 ? insn->off != 0 : insn->imm != 0))
			return reserved(env, "BPF_JA");
		return 0;
	case BPF_CALL:
		if (is32)
			return unknown_opcode(env, code);
		if (x) {
			/* callx: the helper id is in dst_reg; it must be a known constant (checked when
			 * explored), so this is a helper call in disguise */
			if (insn->off || insn->src_reg || insn->imm)
				return reserved(env, "BPF_CALL");
			return 0;
		}
		if (insn->off || insn->dst_reg || (insn->src_reg != 0 && insn->src_reg != BPF_PSEUDO_CALL))
			return reserved(env, "BPF_CALL");
		return 0;
	case BPF_EXIT:
		if (is32)
			return unknown_opcode(env, code);
		if (x || insn->src_reg || insn->dst_reg || insn->off || insn->imm)
			return reserved(env, "BPF_EXIT");
		return 0;
	case 0xe0:
	case 0xf0:
		return unknown_opcode(env, code);
	default:
		if (x ? insn->imm != 0 : insn->src_reg != 0)
			return reserved(env, "BPF_JMP/JMP32");
		return 0;
	}
}

static int check_ldimm64(struct gpv_env *env, int i)
{
	const struct bpf_insn *insn = &env->insns[i];
	if (i + 1 >= env->n)
		return gpv_reject(env, -EINVAL, "invalid bpf_ld_imm64 insn: the second half is missing");
	const struct bpf_insn *hi = insn + 1;
	if (hi->code || hi->dst_reg || hi->src_reg || hi->off || insn->off)
		return gpv_reject(env, -EINVAL, "invalid bpf_ld_imm64 insn");
	if (insn->src_reg == 0)
		return 0;
	if (insn->src_reg != BPF_PSEUDO_MAP_FD && insn->src_reg != BPF_PSEUDO_MAP_VALUE)
		return gpv_reject(env, -EINVAL, "unrecognized bpf_ld_imm64 insn (src_reg %d)", insn->src_reg);
	if (insn->imm < 0 || (size_t)insn->imm >= env->opts->nmaps)
		return gpv_reject(env, -EINVAL, "fd %d is not pointing to valid bpf_map (%zu maps)", insn->imm,
				  env->opts->nmaps);
	const struct gp_map *m = &env->opts->maps[insn->imm];
	if (insn->src_reg == BPF_PSEUDO_MAP_FD && hi->imm)
		return gpv_reject(env, -EINVAL, "invalid bpf_ld_imm64 insn: map reference with an offset");
	if (insn->src_reg == BPF_PSEUDO_MAP_VALUE && (hi->imm < 0 || (uint32_t)hi->imm >= m->value_size))
		return gpv_reject(env, -EINVAL, "invalid access to map value pointer, value_size=%u off=%d",
				  m->value_size, hi->imm);
	return 0;
}

static int check_insn(struct gpv_env *env, int i)
{
	const struct bpf_insn *insn = &env->insns[i];
	uint8_t code = insn->code;
	int err = 0;
	switch (BPF_CLASS(code)) {
	case BPF_ALU:
	case BPF_ALU64:
		err = check_alu(env, insn);
		break;
	case BPF_LD:
		if (!is_ldimm64(insn))
			return unknown_opcode(env, code);
		err = check_ldimm64(env, i);
		break;
	case BPF_LDX:
		if (BPF_MODE(code) != BPF_MEM && !(BPF_MODE(code) == BPF_MEMSX && BPF_SIZE(code) != BPF_DW))
			return unknown_opcode(env, code);
		if (insn->imm)
			return reserved(env, "BPF_LDX");
		break;
	case BPF_ST:
		if (BPF_MODE(code) != BPF_MEM)
			return unknown_opcode(env, code);
		if (insn->src_reg)
			return reserved(env, "BPF_ST");
		break;
	case BPF_STX:
		if (BPF_MODE(code) == BPF_ATOMIC) {
			if (BPF_SIZE(code) != BPF_W && BPF_SIZE(code) != BPF_DW)
				return unknown_opcode(env, code);
			int op = insn->imm;
			switch (op) {
			case BPF_ADD: case BPF_ADD | BPF_FETCH:
			case BPF_AND: case BPF_AND | BPF_FETCH:
			case BPF_OR: case BPF_OR | BPF_FETCH:
			case BPF_XOR: case BPF_XOR | BPF_FETCH:
			case BPF_XCHG: case BPF_CMPXCHG:
				break;
			default:
				return gpv_reject(env, -EINVAL, "BPF_ATOMIC uses invalid atomic opcode %#x", op);
			}
			break;
		}
		if (BPF_MODE(code) != BPF_MEM)
			return unknown_opcode(env, code);
		if (insn->imm)
			return reserved(env, "BPF_STX");
		break;
	default:
		err = check_jmp(env, insn);
		break;
	}
	if (err)
		return err;
	if (insn->dst_reg > BPF_REG_10)
		return gpv_reject(env, -EINVAL, "R%d is invalid", insn->dst_reg);
	if (insn->src_reg > BPF_REG_10)
		return gpv_reject(env, -EINVAL, "R%d is invalid", insn->src_reg);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static bool is_jump(const struct bpf_insn *insn, int *target, int i)
{
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	if (cls != BPF_JMP && cls != BPF_JMP32)
		return false;
	if (op == BPF_CALL || op == BPF_EXIT)
		return false;
	*target = i + 1 + (cls == BPF_JMP32 && op == BPF_JA ? insn->imm : insn->off);
	return true;
}

static void uses_defs(const struct bpf_insn *insn, uint16_t *use, uint16_t *def)
{
	uint8_t code = insn->code, cls = BPF_CLASS(code), op = BPF_OP(code);
	uint16_t d = (uint16_t)(1u << insn->dst_reg), s = (uint16_t)(1u << insn->src_reg);
	*use = 0;
	*def = 0;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (op != BPF_MOV)
			*use |= d;
		if (BPF_SRC(code) == BPF_X && op != BPF_END && op != BPF_NEG)
			*use |= s;
		*def = d;
		break;
	case BPF_LD:
		*def = d;
		break;
	case BPF_LDX:
		*use = s;
		*def = d;
		break;
	case BPF_ST:
		*use = d;
		break;
	case BPF_STX:
		*use = d | s;
		if (BPF_MODE(code) == BPF_ATOMIC) {
			if (insn->imm == BPF_CMPXCHG) {
				*use |= 1;
				*def = 1;
			} else if (insn->imm & BPF_FETCH) {
				*def = s;
			}
		}
		break;
	default:
		if (op == BPF_CALL) {
			bool callx = BPF_SRC(code) == BPF_X;
			int nargs = insn->src_reg == BPF_PSEUDO_CALL || callx ? 5 : gpv_helper_nargs(insn->imm);
			*use = (uint16_t)(((1u << nargs) - 1) << 1);
			if (callx)
				*use |= d;
			*def = 0x3f;
		} else if (op == BPF_EXIT) {
			*use = 1;
		} else if (op != BPF_JA) {
			*use = d;
			if (BPF_SRC(code) == BPF_X)
				*use |= s;
		}
		break;
	}
}

static void compute_liveness(struct gpv_env *env, const uint8_t *second_half)
{
	int n = env->n;
	uint16_t *live = env->live;
	bool changed = true;
	while (changed) {
		changed = false;
		for (int i = n - 1; i >= 0; i--) {
			if (second_half[i])
				continue;
			const struct bpf_insn *insn = &env->insns[i];
			uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
			uint16_t out = 0;
			int t;
			bool is_exit = (cls == BPF_JMP) && op == BPF_EXIT;
			bool is_ja = (cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_JA;
			if (is_jump(insn, &t, i) && t >= 0 && t < n)
				out |= live[t];
			int next = is_ldimm64(insn) ? i + 2 : i + 1;
			if (!is_exit && !is_ja && next < n)
				out |= live[next];
			uint16_t use, def;
			uses_defs(insn, &use, &def);
			uint16_t in = (uint16_t)(use | (out & ~def) | (1u << BPF_REG_10));
			if (in != live[i]) {
				live[i] = in;
				changed = true;
			}
		}
	}
}

int gpv_check_cfg(struct gpv_env *env)
{
	int n = env->n, err = 0;
	uint8_t *second = calloc((size_t)n + 1, 1);
	int *starts = malloc(sizeof(int) * ((size_t)n + 1));
	env->prune = calloc((size_t)n + 1, 1);
	env->live = calloc((size_t)n + 1, sizeof(uint16_t));
	env->subprog_of = calloc((size_t)n + 1, sizeof(int));
	if (!second || !starts || !env->prune || !env->live || !env->subprog_of) {
		err = gpv_reject(env, -ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		env->idx = i;
		if ((err = check_insn(env, i)))
			goto out;
		if (is_ldimm64(&env->insns[i]))
			second[++i] = 1;
	}
	int nstarts = 0;
	starts[nstarts++] = 0;
	for (int i = 0; i < n; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		if (second[i] || insn->code != (BPF_JMP | BPF_CALL) || insn->src_reg != BPF_PSEUDO_CALL)
			continue;
		env->idx = i;
		long t = (long)i + 1 + insn->imm;
		if (t < 0 || t >= n) {
			err = gpv_reject(env, -EINVAL, "call to invalid destination: insn %ld", t);
			goto out;
		}
		if (second[t]) {
			err = gpv_reject(env, -EINVAL, "call into the middle of ldimm64 insn %ld", t);
			goto out;
		}
		starts[nstarts++] = (int)t;
	}
	qsort(starts, (size_t)nstarts, sizeof(int), cmp_int);
	env->subs = calloc((size_t)nstarts, sizeof(*env->subs));
	if (!env->subs) {
		err = gpv_reject(env, -ENOMEM, "out of memory");
		goto out;
	}
	env->nsubs = 0;
	for (int k = 0; k < nstarts; k++)
		if (!env->nsubs || env->subs[env->nsubs - 1].start != starts[k])
			env->subs[env->nsubs++].start = starts[k];
	for (int k = 0; k < env->nsubs; k++) {
		struct gpv_subprog *sp = &env->subs[k];
		sp->end = k + 1 < env->nsubs ? env->subs[k + 1].start : n;
		for (int i = sp->start; i < sp->end; i++)
			env->subprog_of[i] = k;
		env->prune[sp->start] = 1;
		int last = sp->end - 1;
		const struct bpf_insn *li = &env->insns[last];
		uint8_t cls = BPF_CLASS(li->code), op = BPF_OP(li->code);
		bool ok = !second[last] && (cls == BPF_JMP || cls == BPF_JMP32) && (op == BPF_EXIT || op == BPF_JA);
		if (!ok) {
			env->idx = last;
			err = gpv_reject(env, -EINVAL, "last insn is not an exit or jmp%s",
					 k + 1 < env->nsubs ? " (end of a subprogram)" : "");
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		int t;
		if (second[i] || !is_jump(&env->insns[i], &t, i))
			continue;
		env->idx = i;
		if (t < 0 || t >= n || env->subprog_of[t] != env->subprog_of[i]) {
			err = gpv_reject(env, -EINVAL, "jump out of range from insn %d to %d", i, t);
			goto out;
		}
		if (second[t]) {
			err = gpv_reject(env, -EINVAL, "jump into the middle of ldimm64 insn %d", t - 1);
			goto out;
		}
		env->prune[t] = 1;
		if (t <= i)
			env->has_loop = true;
	}
	compute_liveness(env, second);
out:
	free(second);
	free(starts);
	return err;
}
