/* gp_verify: explores every path of a program, depth first, with typed register states.
 * Each conditional jump whose outcome the ranges do not decide splits the path; the other side
 * waits on a stack. States are kept at jump targets: a new path whose state is covered by a fully
 * explored kept one stops there (pruning); a state equal to one of its own ancestors at the same
 * instruction is a loop that can repeat forever. Loops whose every iteration changes the state
 * (a counter moving towards its bound) are explored iteration by iteration until they leave,
 * within a budget of processed instructions: past it the program is too complex to prove
 * bounded, and GPUs cannot preempt a probe that never ends. */
#include "ebpf/verifier_priv.h"

#include "gpuprobe/context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t gp_attach_ctx_size(enum gp_attach_kind kind)
{
	switch (kind) {
	case GP_ATTACH_KERNEL_ENTRY:
	case GP_ATTACH_KERNEL_EXIT: return sizeof(struct gp_kernel_ctx);
	case GP_ATTACH_BLOCK_BEGIN:
	case GP_ATTACH_BLOCK_END: return sizeof(struct gp_block_ctx);
	case GP_ATTACH_FUNC_ENTRY:
	case GP_ATTACH_FUNC_EXIT: return sizeof(struct gp_func_ctx);
	case GP_ATTACH_MEM: return sizeof(struct gp_mem_ctx);
	case GP_ATTACH_BARRIER: return sizeof(struct gp_barrier_ctx);
	case GP_ATTACH_BASIC_BLOCK: return sizeof(struct gp_bb_ctx);
	case GP_ATTACH_HOST_ENTRY:
	case GP_ATTACH_HOST_EXIT: return sizeof(struct gp_host_ctx);
	default: return 0;
	}
}

/* Another path to explore later, starting at insn with state st (taken over). */
static int push_pending(struct gpv_env *env, struct gpv_state *st, int insn)
{
	if (env->nstack == env->capstack) {
		size_t cap = env->capstack ? env->capstack * 2 : 64;
		struct gpv_pending *s = realloc(env->stack, cap * sizeof(*s));
		if (!s)
			return gpv_reject(env, -ENOMEM, "out of memory");
		env->stack = s;
		env->capstack = cap;
	}
	/* the branch insn itself belongs to the other path's history too */
	int err = gpv_trace_add(env, st, env->idx);
	if (err) {
		gpv_state_free(st);
		return err;
	}
	if (st->parent)
		st->parent->branches++;
	env->stack[env->nstack].st = *st;
	env->stack[env->nstack].insn = insn;
	env->stack[env->nstack].from = env->idx;
	env->nstack++;
	return 0;
}

/* The current path ended: its kept ancestors have one path fewer in flight. */
static void path_done(struct gpv_env *env)
{
	struct gpv_checkpoint *cp = env->cur.parent;
	while (cp) {
		if (--cp->branches)
			break;
		cp = cp->st.parent;
	}
}

static bool pop_pending(struct gpv_env *env)
{
	gpv_state_free(&env->cur);
	if (!env->nstack)
		return false;
	struct gpv_pending *p = &env->stack[--env->nstack];
	env->cur = p->st;
	env->idx = p->insn;
	if (env->log_level) {
		env->src_printed = NULL;
		gpv_log(env, "from %d to %d:", p->from, p->insn);
		gpv_log_state(env, &env->cur);
	}
	return true;
}

/* 1: pruned; 0: go on (a checkpoint was kept); <0: rejected. */
static int visit_checkpoint(struct gpv_env *env)
{
	int idx = env->idx, kept = 0;
	/* newest first; past the scan limit a match is not looked for (the path goes on: only
	 * slower, never unsafe; an endless loop then ends on the instruction budget). After many
	 * comparisons (long loops with thousands of kept states) the limit tightens. */
	int limit = env->compares > GPV_MAX_COMPARES ? GPV_SCAN_LIMIT_LATE : GPV_SCAN_LIMIT;
	for (struct gpv_checkpoint *cp = env->cps[idx]; cp && kept < limit; cp = cp->next, kept++) {
		env->compares++;
		if (cp->branches) {
			/* an ancestor of this path: equal means nothing changed in a round of the loop */
			if (gpv_states_equal(env, &cp->st, &env->cur, true))
				return gpv_reject(env, -EACCES, "infinite loop detected at insn %d (loop not provably bounded)",
						  idx);
			continue;
		}
		if (gpv_states_equal(env, &cp->st, &env->cur, false)) {
			cp->hits++;
			gpv_propagate_precision(env, &cp->st);
			return 1;
		}
		cp->misses++;
	}
	/* Enough kept here: comparing against more costs more than it prunes. Long loops then go
	 * on without checkpoints at this instruction; the instruction budget still bounds them. */
	if (env->cps_len[idx] >= GPV_MAX_STATES_PER_INSN) {
		struct gpv_checkpoint *ph = calloc(1, sizeof(*ph));
		if (!ph)
			return gpv_reject(env, -ENOMEM, "out of memory");
		ph->phantom = 1;
		ph->st.curframe = env->cur.curframe;
		ph->st.parent = env->cur.parent;
		ph->st.tail = env->cur.tail;
		ph->branches = 1;
		env->cur.parent = ph;
		ph->next = env->phantoms;
		env->phantoms = ph;
		return 0;
	}
	if (env->nstates >= env->max_states) {
		if (!env->has_loop)
			return gpv_reject(env, -E2BIG,
					  "program too complex: %u states stored (limit %u); "
					  "the program has no loop: too many paths to explore",
					  env->nstates, env->max_states);
		return gpv_reject(env, -E2BIG,
				  "program too complex: more than %u states kept (loop not provably bounded?)",
				  env->max_states);
	}
	struct gpv_checkpoint *cp = calloc(1, sizeof(*cp));
	if (!cp || gpv_state_copy(&cp->st, &env->cur)) {
		free(cp);
		return gpv_reject(env, -ENOMEM, "out of memory");
	}
	gpv_clear_dead(env, &cp->st, idx);
	cp->branches = 1;
	cp->st.parent = env->cur.parent;
	env->cur.parent = cp;
	cp->next = env->cps[idx];
	env->cps[idx] = cp;
	env->cps_len[idx]++;
	env->nstates++;
	return 0;
}

static void drop_ref(struct gpv_state *st, uint32_t ref)
{
	for (int i = 0; i < st->nrefs; i++)
		if (st->refs[i] == ref) {
			st->nrefs--;
			st->refs[i] = st->refs[st->nrefs];
			st->ref_insn[i] = st->ref_insn[st->nrefs];
			return;
		}
}

static bool is_or_null(int type)
{
	return type == T_PTR_MAP_VALUE_OR_NULL || type == T_PTR_MEM_OR_NULL;
}

/* Conditional jumps. Sets *next to the instruction the current path goes on with, or -1 when the
 * current path is impossible. */
static int check_cond_jmp(struct gpv_env *env, const struct bpf_insn *insn, int *next)
{
	uint8_t op = BPF_OP(insn->code);
	bool is32 = BPF_CLASS(insn->code) == BPF_JMP32;
	bool x = BPF_SRC(insn->code) == BPF_X;
	int target = env->idx + 1 + insn->off;
	struct gpv_reg *regs = cur_regs(env);
	struct gpv_reg *dst = &regs[insn->dst_reg], imm;
	if (dst->type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
	if (x && regs[insn->src_reg].type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", insn->src_reg);
	bool sop = op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT || op == BPF_JSLE;
	reg_mark_const(&imm, is32 && !sop ? (uint64_t)(uint32_t)insn->imm : (uint64_t)(int64_t)insn->imm);
	struct gpv_reg *src = x ? &regs[insn->src_reg] : &imm;
	*next = env->idx + 1;

	if (reg_is_pointer(dst) || reg_is_pointer(src)) {
		bool against_zero = reg_is_const(src) && src->var.value == 0 && (op == BPF_JEQ || op == BPF_JNE);
		if (against_zero && x)
			gpv_mark_precise(env, insn->src_reg);
		if (is_or_null(dst->type) && against_zero && !is32) {
			bool null_if_taken = op == BPF_JEQ;
			uint32_t id = dst->id, ref = dst->ref_obj_id;
			struct gpv_state other;
			if (gpv_state_copy(&other, &env->cur))
				return gpv_reject(env, -ENOMEM, "out of memory");
			gpv_mark_null_checked(&other, id, null_if_taken);
			if (null_if_taken && ref)
				drop_ref(&other, ref);
			gpv_mark_null_checked(&env->cur, id, !null_if_taken);
			if (!null_if_taken && ref)
				drop_ref(&env->cur, ref);
			return push_pending(env, &other, target);
		}
		if (reg_is_pointer(dst) && !is_or_null(dst->type) && against_zero && !is32) {
			if (op == BPF_JNE)
				*next = target;   /* a valid pointer is never 0 */
			return 0;
		}
		struct gpv_state other;   /* pointer comparisons: both ways, nothing learnt */
		if (gpv_state_copy(&other, &env->cur))
			return gpv_reject(env, -ENOMEM, "out of memory");
		return push_pending(env, &other, target);
	}

	int t = gpv_branch_taken(dst, src, op, is32);
	if (t >= 0) {
		/* decided by the ranges: they must hold on any path pruned against this one */
		gpv_mark_precise(env, insn->dst_reg);
		if (x)
			gpv_mark_precise(env, insn->src_reg);
	}
	if (t == 1) {
		*next = target;
		return 0;
	}
	if (t == 0)
		return 0;
	struct gpv_state other;
	if (gpv_state_copy(&other, &env->cur))
		return gpv_reject(env, -ENOMEM, "out of memory");
	struct gpv_reg *oregs = other.frame[other.curframe]->regs;
	struct gpv_reg oimm = imm;
	bool taken_ok = gpv_refine(&other, &oregs[insn->dst_reg], x ? &oregs[insn->src_reg] : &oimm, op,
				   is32, true, !x);
	if (taken_ok) {
		int err = push_pending(env, &other, target);
		if (err)
			return err;
	} else {
		gpv_state_free(&other);
	}
	regs = cur_regs(env);
	if (!gpv_refine(&env->cur, &regs[insn->dst_reg], x ? &regs[insn->src_reg] : &imm, op, is32, false, !x))
		*next = -1;
	return 0;
}

static int check_ld_imm64(struct gpv_env *env, const struct bpf_insn *insn)
{
	if (insn->dst_reg == BPF_REG_10)
		return gpv_reject(env, -EACCES, "frame pointer is read only");
	struct gpv_reg *r = &cur_regs(env)[insn->dst_reg];
	if (insn->src_reg == 0) {
		reg_mark_const(r, (uint32_t)insn->imm | ((uint64_t)(uint32_t)insn[1].imm << 32));
		return 0;
	}
	*r = (struct gpv_reg){0};
	r->var = tnum_const(0);
	r->map = (int16_t)insn->imm;
	if (insn->src_reg == BPF_PSEUDO_MAP_FD) {
		r->type = T_CONST_MAP_PTR;
	} else {
		r->type = T_PTR_MAP_VALUE;
		r->off = insn[1].imm;
		r->vid = GPV_VID_GLOBAL | (uint32_t)insn->imm;   /* one variable, whichever lddw */
	}
	return 0;
}

/* The call stack would pass GPV_MAX_FRAMES: a subprogram that calls itself (directly or through
 * others) is named as such, with the cycle. */
static int call_too_deep(struct gpv_env *env, int callee)
{
	struct gpv_state *st = &env->cur;
	int first = -1;
	for (int f = st->curframe; f >= 0; f--)
		if (st->frame[f]->subprog == callee)
			first = f;
	if (first < 0)
		return gpv_reject(env, -EACCES, "the call stack of %d frames is too deep", st->curframe + 2);
	/* the innermost round of the cycle: from the last frame of callee up to this call */
	int last = first;
	for (int f = st->curframe; f >= 0; f--)
		if (st->frame[f]->subprog == callee) {
			last = f;
			break;
		}
	char chain[512], name[128];
	size_t o = 0;
	for (int f = last; f <= st->curframe && o < sizeof(chain); f++)
		o += (size_t)snprintf(chain + o, sizeof(chain) - o, "%s -> ",
				      gpv_subprog_name(env, st->frame[f]->subprog, name, sizeof(name)));
	if (o < sizeof(chain))
		snprintf(chain + o, sizeof(chain) - o, "%s", gpv_subprog_name(env, callee, name, sizeof(name)));
	char cname[128];
	gpv_subprog_name(env, callee, cname, sizeof(cname));
	if (last == st->curframe)
		return gpv_reject(env, -EACCES,
				  "recursive call: %s calls itself and does not stop within %d frames",
				  cname, GPV_MAX_FRAMES);
	return gpv_reject(env, -EACCES, "recursive call: %s calls itself through %s and does not stop within %d frames",
			  cname, chain, GPV_MAX_FRAMES);
}

static int enter_subprog(struct gpv_env *env, const struct bpf_insn *insn, int *next)
{
	struct gpv_state *st = &env->cur;
	int target = env->idx + 1 + insn->imm;
	if (st->curframe + 1 >= GPV_MAX_FRAMES)
		return call_too_deep(env, env->subprog_of[target]);
	struct gpv_frame *callee = gpv_frame_new(env->idx, env->subprog_of[target]);
	if (!callee)
		return gpv_reject(env, -ENOMEM, "out of memory");
	struct gpv_frame *caller = st->frame[st->curframe];
	for (int i = BPF_REG_1; i <= BPF_REG_5; i++)
		callee->regs[i] = caller->regs[i];
	callee->regs[BPF_REG_10] = caller->regs[BPF_REG_10];
	callee->regs[BPF_REG_10].frameno = (uint8_t)(st->curframe + 1);
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		reg_mark_not_init(&caller->regs[i]);
	st->frame[++st->curframe] = callee;
	*next = target;
	return 0;
}

/* exit: return to the caller, or end the path. *next = -1 when the path ends. */
static int check_exit(struct gpv_env *env, int *next)
{
	struct gpv_state *st = &env->cur;
	struct gpv_reg *r0 = &cur_regs(env)[BPF_REG_0];
	/* Like Linux, only the main program must return a value: a subprogram's r0 is checked
	 * where the caller reads it (a void static function returns without setting it). */
	if (r0->type == T_NOT_INIT && st->curframe == 0)
		return gpv_reject(env, -EACCES, "R0 !read_ok");
	if (st->curframe > 0) {
		struct gpv_frame *callee = st->frame[st->curframe];
		if (r0->type == T_PTR_STACK && r0->frameno == st->curframe)
			return gpv_reject(env, -EACCES, "cannot return stack pointer to the caller");
		struct gpv_frame *caller = st->frame[st->curframe - 1];
		caller->regs[BPF_REG_0] = *r0;
		*next = callee->callsite + 1;
		free(callee);
		st->frame[st->curframe--] = NULL;
		return 0;
	}
	if (st->nrefs)
		return gpv_reject(env, -EACCES, "Unreleased reference id=%u alloc_insn=%d", st->refs[0],
				  st->ref_insn[0]);
	if (r0->type != T_SCALAR)
		return gpv_reject(env, -EACCES, "R0 leaks addr as return value");
	*next = -1;
	return 0;
}

static int do_step(struct gpv_env *env, int *next)
{
	const struct bpf_insn *insn = &env->insns[env->idx];
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	*next = env->idx + 1;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64: {
		struct gpv_vtag t = gpv_race_alu_tag(env, insn);
		int err = gpv_check_alu(env, insn);
		if (!err)
			gpv_race_alu_done(env, insn, t);
		return err;
	}
	case BPF_LDX:
	case BPF_ST:
		return gpv_check_mem(env, insn);
	case BPF_STX:
		if (BPF_MODE(insn->code) == BPF_ATOMIC)
			return gpv_check_atomic(env, insn);
		return gpv_check_mem(env, insn);
	case BPF_LD:
		*next = env->idx + 2;
		return check_ld_imm64(env, insn);
	default:
		if (op == BPF_JA) {
			*next = env->idx + 1 + (cls == BPF_JMP32 ? insn->imm : insn->off);
			return 0;
		}
		if (op == BPF_CALL) {
			if (insn->src_reg == BPF_PSEUDO_CALL)
				return enter_subprog(env, insn, next);
			return gpv_check_helper_call(env, insn);
		}
		if (op == BPF_EXIT)
			return check_exit(env, next);
		return check_cond_jmp(env, insn, next);
	}
}

static int explore(struct gpv_env *env)
{
	for (;;) {
		if (++env->processed > env->max_insns) {
			if (!env->has_loop)   /* no loop to blame: too many paths */
				return gpv_reject(env, -E2BIG,
						  "program too complex: %lu instructions processed (limit %lu); "
						  "the program has no loop: too many paths to explore",
						  env->processed - 1, env->max_insns);
			return gpv_reject(env, -E2BIG,
					  "program too complex: processed %lu insns (limit %lu) (loop not provably bounded)",
					  env->processed - 1, env->max_insns);
		}
		if (env->idx < 0 || env->idx >= env->n)
			return gpv_reject(env, -EINVAL, "fall-through off the end of the program");
		int next = -1, err = 0;
		if (env->prune[env->idx]) {
			err = visit_checkpoint(env);
			if (err < 0)
				return err;
			if (err == 1) {
				if (env->log_level)
					gpv_log(env, "%d: safe\n", env->idx);
				goto path_end;
			}
		}
		if (env->log_level)
			gpv_log_insn(env, env->idx);
		env->tr_slot = -1;
		env->tr_flags = 0;
		env->tr_frame = 0;
		int at = env->idx;
		gpv_additive_step(env, &env->insns[at]);
		err = do_step(env, &next);
		if (err)
			return err;
		if ((err = gpv_trace_append(env, at)))
			return err;
		if (next >= 0) {
			env->idx = next;
			continue;
		}
path_end:
		path_done(env);
		if (!pop_pending(env))
			return 0;
	}
}

/* Largest stack over any chain of calls from subprogram k (bounded by the frame limit). */
static unsigned chain_stack(struct gpv_env *env, int k, int depth)
{
	unsigned own = (env->subs[k].stack_depth + 7) & ~7u, deepest = 0;
	if (depth >= GPV_MAX_FRAMES)
		return own;
	for (int i = env->subs[k].start; i < env->subs[k].end; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL) {
			int t = i + 1 + insn->imm;
			unsigned d = chain_stack(env, env->subprog_of[t], depth + 1);
			if (d > deepest)
				deepest = d;
		}
	}
	return own + deepest;
}

static int init_state(struct gpv_env *env)
{
	struct gpv_state *st = &env->cur;
	memset(st, 0, sizeof(*st));
	st->frame[0] = gpv_frame_new(-1, 0);
	if (!st->frame[0])
		return gpv_reject(env, -ENOMEM, "out of memory");
	struct gpv_reg *regs = st->frame[0]->regs;
	if (env->generic && env->opts->ctx_size) {
		/* generic programs (the conformance corpus): r1 is plain writable memory */
		regs[BPF_REG_1] = (struct gpv_reg){0};
		regs[BPF_REG_1].type = T_PTR_MEM;
		regs[BPF_REG_1].mem_size = env->opts->ctx_size;
		regs[BPF_REG_1].var = tnum_const(0);
	} else if (env->opts->ctx_size) {
		regs[BPF_REG_1] = (struct gpv_reg){0};
		regs[BPF_REG_1].type = T_PTR_CTX;
		regs[BPF_REG_1].var = tnum_const(0);
	} else if (env->generic) {
		reg_mark_unknown(&regs[BPF_REG_1]);
	}
	if (env->generic && env->opts->r2_is_ctx_size)
		reg_mark_const(&regs[BPF_REG_2], env->opts->ctx_size);
	regs[BPF_REG_10] = (struct gpv_reg){0};
	regs[BPF_REG_10].type = T_PTR_STACK;
	regs[BPF_REG_10].var = tnum_const(0);
	return 0;
}

int gp_verify(const struct bpf_insn *insns, size_t n, struct gp_verify_opts *opts)
{
	if (!opts)
		return -EINVAL;
	struct gpv_env env = {0};
	env.insns = insns;
	env.opts = opts;
	env.generic = opts->attach == GP_ATTACH_NONE;
	env.log = opts->log;
	env.log_size = opts->log_size;
	env.log_level = opts->log_level;
	env.err_idx = -1;
	env.max_insns = opts->max_insns ? opts->max_insns : GPV_DEFAULT_MAX_INSNS;
	env.max_states = opts->max_states ? opts->max_states : GPV_DEFAULT_MAX_STATES;
	if (env.log && env.log_size)
		env.log[0] = 0;
	opts->stack_depth = 0;
	opts->insns_processed = 0;
	opts->states_stored = 0;
	opts->nwarnings = 0;
	if (opts->warnings && opts->warnings_size)
		opts->warnings[0] = 0;
	env.cur.curframe = -1;
	int ret;
	if (!insns || !n) {
		ret = gpv_reject(&env, -EINVAL, "empty program: no instructions");
		goto out;
	}
	if (n > 1000000) {
		ret = gpv_reject(&env, -E2BIG, "program too large: %zu insns", n);
		goto out;
	}
	if (opts->nmaps && !opts->maps) {
		ret = gpv_reject(&env, -EINVAL, "maps missing");
		goto out;
	}
	env.n = (int)n;
	env.cps = calloc(n, sizeof(*env.cps));
	env.cps_len = calloc(n, sizeof(*env.cps_len));
	env.map_plain_write = calloc(opts->nmaps + 1, 1);
	env.map_atomic_add = calloc(opts->nmaps + 1, 1);
	if (!env.cps || !env.cps_len || !env.map_plain_write || !env.map_atomic_add) {
		ret = gpv_reject(&env, -ENOMEM, "out of memory");
		goto out;
	}
	gpv_additive_start(&env);
	if ((ret = gpv_check_cfg(&env)))
		goto out;
	env.idx = 0;
	env.err_idx = -1;
	if ((ret = init_state(&env)))
		goto out;
	if (env.log_level) {
		gpv_log(&env, "func#0 @0:");
		gpv_log_state(&env, &env.cur);
	}
	ret = explore(&env);
	if (!ret) {
		opts->stack_depth = chain_stack(&env, 0, 1);
		if (opts->map_atomic_only)
			for (size_t i = 0; i < opts->nmaps; i++)
				opts->map_atomic_only[i] = env.map_atomic_add[i] && !env.map_plain_write[i];
	}
out:
	opts->insns_processed = env.processed;
	opts->states_stored = env.nstates;
	if (ret && opts->map_atomic_only)
		memset(opts->map_atomic_only, 0, opts->nmaps);
	gpv_additive_finish(&env, ret);
	gpv_finish_log(&env, ret);
	if (env.cur.curframe >= 0)
		gpv_state_free(&env.cur);
	for (size_t i = 0; i < env.nstack; i++)
		gpv_state_free(&env.stack[i].st);
	free(env.stack);
	if (env.cps) {
		for (size_t i = 0; i < n; i++) {
			struct gpv_checkpoint *cp = env.cps[i];
			while (cp) {
				struct gpv_checkpoint *nx = cp->next;
				gpv_state_free(&cp->st);
				free(cp);
				cp = nx;
			}
		}
		free(env.cps);
	}
	while (env.phantoms) {
		struct gpv_checkpoint *nx = env.phantoms->next;
		free(env.phantoms);
		env.phantoms = nx;
	}
	gpv_trace_free(&env);
	free(env.cps_len);
	free(env.prune);
	free(env.live);
	free(env.subprog_of);
	free(env.subs);
	free(env.map_plain_write);
	free(env.map_atomic_add);
	free(env.warned);
	return ret;
}
