/* Additive programs (verifier.h, gp_verify_opts.additive): programs whose only effect is atomic
 * adds to array elements, computed from nothing but the context bytes that are the same at every
 * run of one site by one thread. N runs of such a program at sites whose read context bytes are
 * equal have the effect of one run with every add multiplied by N, which lets the
 * instrumentation count a basic block's memory accesses with one call
 * (ptx-frontend/instrument_mem.c, "aggregated sites") instead of one per access: bench/RESULTS.md
 * measured one red per warp per access as what was left of the memory counter's cost on chemv
 * and fma.
 *
 * The argument: every value the program computes is a function of its inputs; with no helper but
 * an array lookup (whose result depends on the key alone), no read of map values (which other
 * threads change) and no context byte that differs between runs (an address, a time), the inputs
 * are the same at every such site, so every run takes the same path, looks up the same elements
 * and adds the same values. The check runs on the verifier's own register types, at every
 * instruction of every explored path (a pruned path is covered by the state that pruned it: the
 * types compare exactly).
 *
 * Hash maps (additive == 2): the counting idiom `v = lookup(k); if (!v) { update(k, &zero,
 * BPF_NOEXIST); v = lookup(k); } if (v) add(v, n)` (gp_count, one-liners' count()) depends on
 * whether the key is there, which the run itself may change. Keys are never removed (no delete
 * helper, no LRU map) and a map only fills, so with one key of one map, looked up with bytes that
 * nothing rewrites after the first lookup, a run that follows another at the same site finds
 * what the one after it finds (the lookups' results and the insert's return alike): runs 2..N
 * are alike, run 1 alone may differ. One run of weight 1
 * and one of weight N-1 then do what N runs do (the instrumentation's "first run"). */
#include "ebpf/verifier_priv.h"

#include "gpuprobe/context.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif

static void not_additive(struct gpv_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void not_additive(struct gpv_env *env, const char *fmt, ...)
{
	if (env->not_additive)
		return;   /* the first reason is the one said */
	env->not_additive = true;
	struct gp_verify_opts *o = env->opts;
	int n = snprintf(o->additive_why, sizeof(o->additive_why), "insn %d: ", env->idx);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(o->additive_why))
		vsnprintf(o->additive_why + n, sizeof(o->additive_why) - (size_t)n, fmt, ap);
	va_end(ap);
}

struct span {
	unsigned off, len;
};

/* The context bytes of an attach point that can differ between runs of one site by one thread:
 * an access's address, clocks, a function's arguments, a barrier id held in a register. Every
 * other byte is fixed by the site (size, direction, instruction, line, a block's counts) or by
 * the thread (its block and thread index, lane, SM, warp, kernel: %smid and %warpid change only
 * when the thread is preempted and moved, and then which SM's copy counts an access is the
 * hardware's choice either way). */
static size_t variant_bytes(enum gp_attach_kind k, struct span *out)
{
	switch (k) {
	case GP_ATTACH_MEM:
		out[0] = (struct span){offsetof(struct gp_mem_ctx, addr), 8};
		return 1;
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_KERNEL_EXIT:
		out[0] = (struct span){offsetof(struct gp_kernel_ctx, timestamp), 8};
		return 1;
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_BLOCK_END:
		out[0] = (struct span){offsetof(struct gp_block_ctx, timestamp), 8};
		return 1;
	case GP_ATTACH_BARRIER:
		out[0] = (struct span){offsetof(struct gp_barrier_ctx, barrier_id), 4};
		out[1] = (struct span){offsetof(struct gp_barrier_ctx, timestamp), 8};
		return 2;
	case GP_ATTACH_FUNC_ENTRY:
	case GP_ATTACH_FUNC_EXIT:
		out[0] = (struct span){offsetof(struct gp_func_ctx, args),
				       offsetof(struct gp_func_ctx, thread) - offsetof(struct gp_func_ctx, args)};
		return 1;
	case GP_ATTACH_BASIC_BLOCK:
		return 0;
	default:
		return (size_t)-1;   /* no device sites: never additive */
	}
}

static bool array_map(const struct gpv_env *env, int map)
{
	if (map < 0 || (size_t)map >= env->opts->nmaps)
		return false;
	uint32_t t = env->opts->maps[map].type;
	return t == BPF_MAP_TYPE_ARRAY || t == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* A hash map whose keys stay once inserted (not LRU, which evicts). */
static bool hash_map(const struct gpv_env *env, int map)
{
	return map >= 0 && (size_t)map < env->opts->nmaps &&
	       env->opts->maps[map].type == BPF_MAP_TYPE_HASH;
}

/* Frame bytes [lo, hi) a store through a stack pointer may write, kept per instruction. */
static void stack_write(struct gpv_env *env, const struct gpv_reg *dst, int off, int size)
{
	if (!env->stack_write_lo)
		return;
	int lo = -GPV_STACK, hi = 0;   /* a variable offset: anywhere */
	if (tnum_is_const(dst->var)) {
		lo = dst->off + off + (int)dst->var.value;
		hi = lo + size;
	}
	int16_t *l = &env->stack_write_lo[env->idx], *h = &env->stack_write_hi[env->idx];
	if (*l == *h) {   /* none yet */
		*l = (int16_t)lo;
		*h = (int16_t)hi;
	} else {
		*l = (int16_t)(lo < *l ? lo : *l);
		*h = (int16_t)(hi > *h ? hi : *h);
	}
}

/* A lookup or NOEXIST insert on a hash map: the program's one key of its one hash map. */
static void hash_call(struct gpv_env *env, const struct bpf_insn *insn)
{
	const struct gpv_reg *regs = cur_regs(env);
	const struct gpv_reg *key = &regs[BPF_REG_2];
	int map = regs[BPF_REG_1].map;
	if (key->type != T_PTR_STACK || !tnum_is_const(key->var)) {
		not_additive(env, "a hash key outside the stack or at a variable offset");
		return;
	}
	int off = key->off + (int)key->var.value;
	if (env->hash_map < 0) {
		env->hash_map = map;
		env->hash_key_off = off;
	} else if (env->hash_map != map || env->hash_key_off != off) {
		not_additive(env, "a second hash map or key (one key of one hash map is additive)");
		return;
	}
	if (env->hash_first < 0 || env->idx < env->hash_first)
		env->hash_first = env->idx;
	if (insn->imm != BPF_FUNC_map_update_elem)
		return;
	const struct gpv_reg *val = &regs[BPF_REG_3], *flags = &regs[BPF_REG_4];
	if (!reg_is_const(flags) || flags->var.value != BPF_NOEXIST)
		not_additive(env, "an update whose flags are not a known BPF_NOEXIST");
	else if (val->type != T_PTR_STACK)
		not_additive(env, "an inserted value outside the stack");
	/* What the update returns may be read (`if (update(..) && (v = lookup(..))) add(v, 1)`,
	 * bpftrace's and libbpf-tools' idiom): 0, -EEXIST or -E2BIG depends on whether the key is
	 * there and whether the map is full, both of which only grow, so runs 2..N see the same. */
}

static void ctx_read(struct gpv_env *env, const struct gpv_reg *ptr, int off, int size)
{
	if (!tnum_is_const(ptr->var))
		return;   /* the memory check rejects it */
	int64_t o = (int64_t)ptr->off + off + (int64_t)ptr->var.value;
	if (o < 0 || o + size > 128) {
		not_additive(env, "reads context bytes %lld-%lld, past the ones sites can compare",
			     (long long)o, (long long)(o + size - 1));
		return;
	}
	for (int64_t b = o; b < o + size; b++)
		env->opts->ctx_read[b / 64] |= 1ull << (b % 64);
	struct span v[4];
	size_t n = variant_bytes(env->opts->attach, v);
	for (size_t i = 0; i < n && n != (size_t)-1; i++)
		if (o < v[i].off + v[i].len && o + size > v[i].off)
			not_additive(env, "reads context bytes %lld-%lld, which change from one run to the next",
				     (long long)o, (long long)(o + size - 1));
}

void gpv_additive_step(struct gpv_env *env, const struct bpf_insn *insn)
{
	if (env->not_additive)
		return;
	const struct gpv_reg *regs = cur_regs(env);
	uint8_t cls = BPF_CLASS(insn->code);
	switch (cls) {
	case BPF_LDX: {
		const struct gpv_reg *src = &regs[insn->src_reg];
		int size = BPF_SIZE(insn->code) == BPF_DW ? 8 : BPF_SIZE(insn->code) == BPF_W ? 4
			 : BPF_SIZE(insn->code) == BPF_H ? 2 : 1;
		if (src->type == T_PTR_CTX)
			ctx_read(env, src, insn->off, size);
		else if (src->type == T_PTR_MAP_VALUE && !env->opts->maps[src->map].readonly)
			not_additive(env, "reads a map value");
		else if (src->type == T_PTR_MEM)
			not_additive(env, "reads ring-buffer memory");
		return;
	}
	case BPF_ST:
	case BPF_STX: {
		const struct gpv_reg *dst = &regs[insn->dst_reg];
		if (dst->type == T_PTR_STACK) {   /* the thread's own frame */
			int size = BPF_SIZE(insn->code) == BPF_DW ? 8 : BPF_SIZE(insn->code) == BPF_W ? 4
				 : BPF_SIZE(insn->code) == BPF_H ? 2 : 1;
			stack_write(env, dst, insn->off, size);
			return;
		}
		if (cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC) {
			if (insn->imm != BPF_ADD)
				not_additive(env, "an atomic operation other than add without fetch");
			else if (dst->type != T_PTR_MAP_VALUE ||
				 (!array_map(env, dst->map) && !hash_map(env, dst->map)))
				not_additive(env, "an atomic add outside an array or hash map's value");
			return;
		}
		not_additive(env, "a store outside the stack");
		return;
	}
	case BPF_JMP:
	case BPF_JMP32:
		if (BPF_OP(insn->code) != BPF_CALL)
			return;
		if (insn->src_reg == BPF_PSEUDO_CALL) {
			not_additive(env, "a BPF-to-BPF call");
			return;
		}
		if (insn->src_reg == 0 && (insn->imm == BPF_FUNC_map_lookup_elem ||
					   insn->imm == BPF_FUNC_map_update_elem) &&
		    regs[BPF_REG_1].type == T_CONST_MAP_PTR && hash_map(env, regs[BPF_REG_1].map)) {
			hash_call(env, insn);
			return;
		}
		if (insn->src_reg != 0 || insn->imm != BPF_FUNC_map_lookup_elem) {
			const char *name = insn->src_reg ? NULL : gpv_helper_name(insn->imm);
			if (!name)
				not_additive(env, "calls a function that is not a helper");
			else
				not_additive(env, "calls %s%s (only map lookups and hash inserts are additive)",
					     strncmp(name, "bpf_", 4) ? "bpf_" : "", name);
			return;
		}
		if (regs[BPF_REG_1].type != T_CONST_MAP_PTR || !array_map(env, regs[BPF_REG_1].map))
			not_additive(env, "looks up a map that is neither an array nor a hash map");
		else if (regs[BPF_REG_2].type != T_PTR_STACK)
			not_additive(env, "a lookup key outside the stack");
		return;
	default:
		return;
	}
}

void gpv_additive_start(struct gpv_env *env)
{
	struct gp_verify_opts *o = env->opts;
	o->additive = 0;
	o->additive_why[0] = 0;
	o->ctx_read[0] = o->ctx_read[1] = 0;
	struct span v[4];
	env->not_additive = false;
	env->hash_map = env->hash_key_off = env->hash_first = -1;
	env->stack_write_lo = calloc((size_t)env->n + 1, sizeof(int16_t));
	env->stack_write_hi = calloc((size_t)env->n + 1, sizeof(int16_t));
	if (!env->stack_write_lo || !env->stack_write_hi) {
		env->not_additive = true;
		snprintf(o->additive_why, sizeof(o->additive_why), "out of memory");
	}
	if (variant_bytes(o->attach, v) == (size_t)-1) {
		env->not_additive = true;
		snprintf(o->additive_why, sizeof(o->additive_why), "the attach point has no device sites");
	}
}

/* The hash key's bytes are what the first lookup read, on every path: no loop brings a store
 * back above it, and no store after it (instructions run in index order without loops) touches
 * them. */
static void hash_key_kept(struct gpv_env *env)
{
	if (env->not_additive || env->hash_map < 0)
		return;
	if (env->has_loop) {
		env->not_additive = true;
		snprintf(env->opts->additive_why, sizeof(env->opts->additive_why),
			 "a loop in a program that uses a hash map");
		return;
	}
	int lo = env->hash_key_off, hi = lo + (int)env->opts->maps[env->hash_map].key_size;
	for (int i = env->hash_first + 1; i < env->n; i++) {
		int16_t l = env->stack_write_lo[i], h = env->stack_write_hi[i];
		if (l != h && l < hi && h > lo) {
			env->not_additive = true;
			snprintf(env->opts->additive_why, sizeof(env->opts->additive_why),
				 "insn %d: changes the hash key after its first use (insn %d)", i,
				 env->hash_first);
			return;
		}
	}
}

void gpv_additive_finish(struct gpv_env *env, int ret)
{
	struct gp_verify_opts *o = env->opts;
	if (!ret && env->stack_write_lo)
		hash_key_kept(env);
	free(env->stack_write_lo);
	free(env->stack_write_hi);
	env->stack_write_lo = env->stack_write_hi = NULL;
	o->additive = !ret && !env->not_additive ? (env->hash_map >= 0 ? 2 : 1) : 0;
	if (ret) {
		o->additive_why[0] = 0;
		o->ctx_read[0] = o->ctx_read[1] = 0;
	}
}
