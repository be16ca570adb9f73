/* Warp collectives inside divergent code: bar.warp.sync (__syncwarp), shfl, vote, redux, match
 * and activemask. The warp emulation makes each a work-group barrier (lower_warp.c), which every
 * thread of the block must reach; code such as
 *
 *	@%p bra $L_join;      threads that skip: lanes 16..63 of dxtc's 16-lane tiles
 *	S0  bar.warp.sync  S1  bar.warp.sync  S2
 *	$L_join:
 *
 * reaches it in some threads only, which is undefined behaviour for OpenCL (PoCL compiled dxtc's
 * kernel to an empty function). Where every barrier of such a region is on every path through it
 * (no branch of the region jumps across it), the threads that skip go through the same barriers
 * instead, skipping only the code between them:
 *
 *	skip = p; skip ? C1 : S0;  C1: barrier; skip ? C2 : S1;  C2: barrier; skip ? join : S2
 *
 * A region qualifies when its guarded branch jumps forward, its code has no other way in or out
 * (its branches stay inside it or go to the join; nothing outside branches into it; no return,
 * call or indexed branch), and its only collectives are unguarded ones of the list above (no
 * block barrier, mbarrier, matrix or asynchronous copy). Anything else is left as it was.
 *
 * The skipping threads take part in a shfl, vote, redux, match or activemask: they publish their
 * operands, flagged not live (lw->warp_skip), so that votes, reductions, matches and activemask
 * count only the live lanes (a shuffle from a lane that skipped is undefined in CUDA as well),
 * and what the collective writes is put back for them: their registers stay as they were. This is
 * what cooperative groups make of a tile's reduction inside `if (tile.meta_group_rank() == 0)` and
 * of coalesced_threads() inside a branch.
 *
 * LLVM's NVPTX backend lays the same region out the other way round (amdgpu/'s round trip):
 *
 *	@%p bra $L_region;  bra.uni $L_join;  $L_region:  S0 bar.warp.sync ...  $L_join:
 *
 * which is the region above skipped where %p is false: the pair is read as `@!%p bra $L_join`.
 *
 * A collective of the application that no region or loop here covers and that part of a block
 * may not reach makes the whole kernel run in lock step instead (lower_lockstep.c). */
#include "spirv/lower.h"

#include <stdlib.h>
#include <string.h>

static bool is_warp_sync(const ir_insn *in)
{
	return (!strcmp(in->opcode, "bar") || !strcmp(in->opcode, "barrier")) && ir_insn_has_mod(in, ".warp") &&
	       !ir_insn_has_mod(in, ".red");
}

bool lw_is_collective_insn(const ir_insn *in)
{
	static const char *const ops[] = {"shfl", "vote", "redux", "match", "activemask"};
	if (is_warp_sync(in))
		return true;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(in->opcode, ops[i]))
			return true;
	return false;
}

/* A collective of a probe (inserted by the instrumentation, or named %__gp* by it in PTX printed
 * and read again: its destination, or a bar.warp.sync's mask). Probe code is written for any
 * activemask: where part of a block may not reach it, it runs as a warp of one lane (lw_warp),
 * with no barrier, so it never needs a region rewritten around it and never blocks one.
 * Barriers around the sites of a loop in the application made PoCL compile cuRAND's
 * curand_init, probed, to an empty function (MonteCarloMultiGPU jumped into data). */
bool lw_is_probe_collective(const ir_stmt *s)
{
	if (s->kind != IR_STMT_INSN || !lw_is_collective_insn(&s->insn))
		return false;
	if (s->generated)
		return true;
	const ir_operand *d = s->insn.nops ? &s->insn.ops[0] : NULL;
	if (d && d->kind == IR_OPND_PAIR && d->nelems)
		d = &d->elems[0];
	return d && d->kind == IR_OPND_REG && !strncmp(d->name, "%__gp", 5);
}

/* The collectives a region is rewritten around: the application's. */
static bool is_region_collective(const ir_stmt *s)
{
	return s->kind == IR_STMT_INSN && lw_is_collective_insn(&s->insn) && !lw_is_probe_collective(s);
}

/* Instructions that must be reached by the whole block (the emulated collectives and barriers),
 * or that leave the region some other way: a region holding one is not rewritten. */
static bool blocks_rewrite(const ir_stmt *s)
{
	const ir_insn *in = &s->insn;
	if (lw_is_probe_collective(s))
		return false;
	static const char *const ops[] = {"shfl", "vote", "match", "redux", "wmma", "ldmatrix", "stmatrix", "mma",
					  "mbarrier", "bar", "barrier", "ret", "exit", "call", "brx", "cp", "elect",
					  "activemask", "griddepcontrol", "tcgen05", "wgmma"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(in->opcode, ops[i]))
			return true;
	return false;
}

static const char *bra_target(const ir_stmt *s)
{
	if (s->kind != IR_STMT_INSN || strcmp(s->insn.opcode, "bra") || s->insn.nops != 1 ||
	    s->insn.ops[0].kind != IR_OPND_SYMBOL)
		return NULL;
	return s->insn.ops[0].name;
}

static void add_action(lw *c, const ir_stmt *s, int kind, uint32_t var, uint32_t own, uint32_t next)
{
	c->diverge = realloc(c->diverge, (c->ndiverge + 1) * sizeof(*c->diverge));
	c->diverge[c->ndiverge++] = (struct lw_diverge){.s = s, .kind = kind, .var = var, .own = own, .next = next};
}

/* One region: the guarded branch at index i to the label at index t; pair: st[i] is the
 * unguarded branch of LLVM's layout and st[i - 1] the guarded one that jumps over it (to i + 1). */
static void plan_region(lw *c, const ir_stmt *const *st, size_t n, const long *target, size_t i, size_t t,
			bool pair)
{
	size_t nbar = 0;
	for (size_t j = i + 1; j < t; j++) {
		const ir_stmt *s = st[j];
		if (s->kind != IR_STMT_INSN)
			continue;
		if (is_region_collective(s)) {
			if (s->insn.guard)
				return;
			nbar++;
			continue;
		}
		if (!strcmp(s->insn.opcode, "bra")) {
			if (target[j] < 0 || (size_t)target[j] <= i || (size_t)target[j] > t)
				return; /* leaves the region (or an unknown label) */
			continue;
		}
		if (blocks_rewrite(s))
			return;
	}
	if (!nbar)
		return;
	/* nothing outside branches into the region (but the pair's own guarded branch) */
	for (size_t j = 0; j < n; j++)
		if ((j < i || j >= t) && target[j] > (long)i && target[j] < (long)t && !(pair && j == i - 1))
			return;
	/* a statement of another region's plan (nested regions): left as it was */
	for (size_t j = pair ? i - 1 : i; j <= t && j < n; j++)
		for (size_t k = 0; k < c->ndiverge; k++)
			if (c->diverge[k].s == st[j])
				return;
	/* every barrier is on every path: no branch of the region jumps across it */
	for (size_t b = i + 1; b < t; b++) {
		if (st[b]->kind != IR_STMT_INSN || !is_region_collective(st[b]))
			continue;
		for (size_t j = i + 1; j < t; j++) {
			if (target[j] < 0)
				continue;
			size_t lo = j < (size_t)target[j] ? j : (size_t)target[j];
			size_t hi = j < (size_t)target[j] ? (size_t)target[j] : j;
			if (lo < b && b < hi)
				return;
		}
	}
	uint32_t var = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, spv_t_bool(c->e)), var,
	       (uint32_t)SpvStorageClassFunction);
	/* the branch goes to the first barrier's label; each barrier's skip goes to the next one's,
	 * the last one's to the join (own == 0: the existing label of st[t]) */
	uint32_t next = spv_id(c->e);
	if (pair) {   /* the guarded branch decides (skip where its guard is false); the other goes */
		add_action(c, st[i - 1], LW_DIVERGE_BRANCH, var, 0, next);
		c->diverge[c->ndiverge - 1].negate = true;
		add_action(c, st[i], LW_DIVERGE_DROP, var, 0, 0);
	} else {
		add_action(c, st[i], LW_DIVERGE_BRANCH, var, 0, next);
	}
	for (size_t b = i + 1; b < t; b++) {
		if (st[b]->kind != IR_STMT_INSN || !is_region_collective(st[b]))
			continue;
		uint32_t own = next;
		next = --nbar ? spv_id(c->e) : 0;
		add_action(c, st[b], LW_DIVERGE_BARRIER, var, own, next);
	}
	c->diverge[c->ndiverge - 1].join = st[t]->text;
	for (size_t k = 0; k < c->ndiverge; k++)
		if (c->diverge[k].var == var)
			c->diverge[k].from = pair ? i - 1 : i;
}

static struct lw_diverge *action_of(lw *c, const ir_stmt *s)
{
	for (size_t i = 0; i < c->ndiverge; i++)
		if (c->diverge[i].s == s)
			return &c->diverge[i];
	return NULL;
}

static uint32_t bool_var(lw *c)
{
	uint32_t var = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, spv_t_bool(c->e)), var,
	       (uint32_t)SpvStorageClassFunction);
	/* false in the entry block: llvm-spirv 15 makes a Function variable with an initializer one
	 * global shared by every work-item */
	spv_op(&c->prologue, SpvOpStore, 2, var, spv_c_bool(c->e, 0));
	return var;
}

/* A loop whose back edge is the guarded branch at b to the header label at h, holding warp
 * collectives: its threads may leave it at different iterations (a grid-stride loop), and a
 * collective of a later iteration would then not be reached by the threads that left. Rewritten
 * so that every thread of the block goes round as long as any thread goes on; the threads that
 * are done go from collective to collective (not live) and keep a flag of their own:
 *
 *	[@q bra X]   ->  done = q; done ? H : fall            (the branch that skips the loop)
 *	H:               H: done ? (first collective) : body
 *	  body           body, each collective: done ? (next one) : fall
 *	@p bra H     ->  latch: go = !done && p; done = !go; any(go) in the block ? H : out
 *	X:               out: done = false
 *
 * It qualifies when its body has no other way in or out (its branches stay inside it, nothing
 * outside branches into it, no return, call or indexed branch), its collectives are those of
 * regions (is_region_collective), unguarded, and it is not inside a region rewritten above; the
 * regions inside it were planned first and their collectives take part in both. */
static void plan_loop(lw *c, const ir_stmt *const *st, size_t n, const long *target, size_t h, size_t b)
{
	size_t ncoll = 0;
	for (size_t j = h + 1; j < b; j++) {
		const ir_stmt *s = st[j];
		if (s->kind != IR_STMT_INSN)
			continue;
		if (is_region_collective(s)) {
			if (s->insn.guard)
				return;
			struct lw_diverge *d = action_of(c, s);
			if (d && (d->from < h || d->lvar))
				return;   /* a collective of a region around the loop, or of another loop */
			ncoll++;
			continue;
		}
		if (!strcmp(s->insn.opcode, "bra")) {
			if (target[j] <= (long)h || target[j] > (long)b)
				return;
			continue;
		}
		if (blocks_rewrite(s))
			return;
	}
	if (!ncoll || action_of(c, st[b]) || action_of(c, st[h]))
		return;
	for (size_t j = 0; j < n; j++)
		if ((j < h || j > b) && target[j] >= (long)h && target[j] <= (long)b)
			return;   /* a way in other than falling into the header */
	/* the branch that skips the loop: @q bra X, X the first label after the back edge, with only
	 * straight-line code from it to the header */
	size_t x = b + 1;
	while (x < n && st[x]->kind != IR_STMT_LABEL && st[x]->kind != IR_STMT_INSN)
		x++;
	long enter = -1;
	if (x < n && st[x]->kind == IR_STMT_LABEL)
		for (size_t j = h; j-- > 0;) {
			const ir_stmt *s = st[j];
			if (s->kind == IR_STMT_LABEL)
				break;
			if (s->kind != IR_STMT_INSN)
				continue;
			if (!strcmp(s->insn.opcode, "bra")) {
				if (s->insn.guard && target[j] == (long)x && !action_of(c, s))
					enter = (long)j;
				break;
			}
			if (is_region_collective(s) || blocks_rewrite(s))
				break;
		}
	/* the skip target stays outside: a branch to X from elsewhere is no way into the loop */
	uint32_t lvar = bool_var(c);
	uint32_t latch = spv_id(c->e), first = 0, *prev_next = &first;
	for (size_t j = h + 1; j < b; j++) {
		const ir_stmt *s = st[j];
		if (s->kind != IR_STMT_INSN || !is_region_collective(s))
			continue;
		struct lw_diverge *d = action_of(c, s);
		if (!d) {
			add_action(c, s, LW_DIVERGE_BARRIER, 0, 0, 0);
			d = &c->diverge[c->ndiverge - 1];
			d->from = h;
		}
		d->lvar = lvar;
		d->lown = spv_id(c->e);
	}
	/* chain the done threads' labels in body order, the latch last */
	for (size_t j = h + 1; j < b; j++) {
		struct lw_diverge *d = st[j]->kind == IR_STMT_INSN ? action_of(c, st[j]) : NULL;
		if (!d || d->lvar != lvar || d->kind != LW_DIVERGE_BARRIER)
			continue;
		*prev_next = d->lown;
		prev_next = &d->lnext;
	}
	*prev_next = latch;
	add_action(c, st[h], LW_DIVERGE_LOOP_TOP, 0, 0, 0);
	c->diverge[c->ndiverge - 1].lvar = lvar;
	c->diverge[c->ndiverge - 1].lnext = first;
	add_action(c, st[b], LW_DIVERGE_LOOP_BACK, 0, 0, 0);
	c->diverge[c->ndiverge - 1].lvar = lvar;
	c->diverge[c->ndiverge - 1].lown = latch;
	c->diverge[c->ndiverge - 1].top = st[h]->text;
	if (enter >= 0) {
		add_action(c, st[enter], LW_DIVERGE_LOOP_ENTER, 0, 0, 0);
		c->diverge[c->ndiverge - 1].lvar = lvar;
		c->diverge[c->ndiverge - 1].top = st[h]->text;
	}
}

/* ---- which registers hold the same value in every thread of the block ----
 * A register is varying when a definition reads a varying register or a thread's own special
 * register (%tid, %laneid, %clock, ...), loads from memory other than parameters, takes part in
 * a collective, an atomic or a call, is under a varying guard, or (for a register defined more
 * than once) lies where a varying branch may take some threads only. Branches on uniform
 * predicates (a loop over a block-uniform count, `if (blockIdx.x == 0)`) are not divergent:
 * collectives behind them need no rewrite (MonteCarloMultiGPU's and shfl_scan's went to lock
 * step for nothing, several times slower). Conservative: what it cannot tell is varying. */

static bool name_in(const char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

static bool varying_sreg(const char *name)
{
	static const char *const uniform[] = {"%ctaid", "%nctaid", "%ntid", "%nwarpid", "%nsmid", "%gridid",
					      "%cluster", "%nclusterid", "%clusterid", "%is_explicit_cluster",
					      "%envreg", "%total_smem_size", "%dynamic_smem_size",
					      "%aggr_smem_size", "%reserved_smem"};
	if (name[0] != '%')
		return false;
	for (size_t i = 0; i < sizeof(uniform) / sizeof(uniform[0]); i++)
		if (!strncmp(name, uniform[i], strlen(uniform[i])))
			return false;
	/* %tid, %laneid, %warpid, %smid, %lanemask_*, %clock*, %globaltimer, %pm*: a thread's own */
	return !strncmp(name, "%tid", 4) || !strncmp(name, "%lane", 5) || !strncmp(name, "%warpid", 7) ||
	       !strncmp(name, "%smid", 5) || !strncmp(name, "%clock", 6) || !strncmp(name, "%globaltimer", 12) ||
	       !strncmp(name, "%pm", 3) || !strncmp(name, "%cluster_ctarank", 16);
}

static bool operand_varying(const ir_operand *o, const char *const *v, size_t n)
{
	switch (o->kind) {
	case IR_OPND_REG:
		return varying_sreg(o->name) || name_in(v, n, o->name);
	case IR_OPND_ADDR:
		return (o->name && (varying_sreg(o->name) || name_in(v, n, o->name))) ||
		       (o->elems && operand_varying(&o->elems[0], v, n));
	case IR_OPND_VEC:
	case IR_OPND_LIST:
	case IR_OPND_PAIR:
		for (unsigned i = 0; i < o->nelems; i++)
			if (operand_varying(&o->elems[i], v, n))
				return true;
		return false;
	default:
		return false;
	}
}

/* A kernel parameter's name (not a call's .param: what a callee returns may differ). */
static bool kernel_param(const lw *c, const ir_insn *in)
{
	const ir_operand *a = in->nops > 1 ? &in->ops[1] : NULL;
	if (!c->fn || !c->fn->is_entry || !a || a->kind != IR_OPND_ADDR || !a->name)
		return false;
	for (unsigned i = 0; i < c->fn->nparams; i++)
		if (!strcmp(c->fn->params[i].name, a->name))
			return true;
	return false;
}

/* The instruction's result differs between threads whatever its operands. */
static bool varying_op(const lw *c, const ir_insn *in)
{
	static const char *const ops[] = {"atom", "red", "call", "tex", "tld4", "suld", "sust", "txq", "suq",
					  "shfl", "vote", "match", "redux", "activemask", "elect", "mma", "wmma",
					  "ldmatrix", "cp", "mbarrier", "alloca", "getctarank", "isspacep", "ldu"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(in->opcode, ops[i]))
			return true;
	if (!strcmp(in->opcode, "ld"))   /* the kernel's parameters and constants are the block's */
		return ir_insn_has_mod(in, ".param") ? !kernel_param(c, in) : !ir_insn_has_mod(in, ".const");
	return false;   /* bar.red's block-wide result is uniform (dests: it writes none we track) */
}

static void add_name(const char ***v, size_t *n, const char *name)
{
	if (name_in(*v, *n, name))
		return;
	*v = realloc((void *)*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = name;
}

/* The registers an instruction writes (its first operand, or both halves of a pair). */
static unsigned dests(const ir_insn *in, const char *out[4])
{
	static const char *const no_dest[] = {"st", "bra", "ret", "exit", "bar", "barrier", "red", "membar",
					      "fence", "trap", "brkpt", "prefetch", "prefetchu", "sust", "cp",
					      "mbarrier", "griddepcontrol", "nanosleep", "pmevent", "call"};
	for (size_t i = 0; i < sizeof(no_dest) / sizeof(no_dest[0]); i++)
		if (!strcmp(in->opcode, no_dest[i]))
			return 0;
	if (!in->nops)
		return 0;
	const ir_operand *d = &in->ops[0];
	unsigned n = 0;
	if (d->kind == IR_OPND_REG)
		out[n++] = d->name;
	else if (d->kind == IR_OPND_PAIR || d->kind == IR_OPND_VEC)
		for (unsigned i = 0; i < d->nelems && n < 4; i++)
			if (d->elems[i].kind == IR_OPND_REG)
				out[n++] = d->elems[i].name;
	return n;
}

static bool guard_varying(const lw *c, const ir_insn *in)
{
	return in->guard && (varying_sreg(in->guard) || name_in(c->varying, c->nvarying, in->guard));
}

/* A branch some threads may take and others not. uniform_aware: not when its predicate is the
 * block's (the application's collectives); else any guarded branch but .uni (the probes': their
 * barriers under a condition, even a uniform one, are what lane-alone avoids). */
static bool divergent_branch(const lw *c, const ir_stmt *s, bool uniform_aware)
{
	return s->kind == IR_STMT_INSN && s->insn.guard && !ir_insn_has_mod(&s->insn, ".uni") &&
	       (!uniform_aware || guard_varying(c, &s->insn));
}

static bool part_may_reach(const lw *c, const ir_stmt *const *st, size_t n, const long *target, size_t k,
			   bool uniform_aware);

/* The varying registers of the function (c->varying), to a fixed point. */
static void find_varying(lw *c, const ir_stmt *const *st, size_t n, const long *target)
{
	free((void *)c->varying);
	c->varying = NULL;
	c->nvarying = 0;
	/* registers written more than once: where they are written matters */
	const char **multi = NULL, **once = NULL;
	size_t nmulti = 0, nonce = 0;
	for (size_t k = 0; k < n; k++) {
		if (st[k]->kind != IR_STMT_INSN)
			continue;
		const char *d[4];
		unsigned nd = dests(&st[k]->insn, d);
		for (unsigned i = 0; i < nd; i++) {
			if (name_in(once, nonce, d[i]))
				add_name(&multi, &nmulti, d[i]);
			else
				add_name(&once, &nonce, d[i]);
		}
	}
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < n; k++) {
			if (st[k]->kind != IR_STMT_INSN)
				continue;
			const ir_insn *in = &st[k]->insn;
			const char *d[4];
			unsigned nd = dests(in, d);
			if (!nd)
				continue;
			bool var = varying_op(c, in) || guard_varying(c, in);
			for (unsigned i = 1; i < in->nops && !var; i++)
				var = operand_varying(&in->ops[i], c->varying, c->nvarying);
			if (!var && in->nops && in->ops[0].kind == IR_OPND_ADDR)
				var = true;
			for (unsigned i = 0; i < nd; i++) {
				bool vi = var || (name_in(multi, nmulti, d[i]) && part_may_reach(c, st, n, target, k, true));
				if (vi && !name_in(c->varying, c->nvarying, d[i])) {
					add_name(&c->varying, &c->nvarying, d[i]);
					changed = true;
				}
			}
		}
	}
	free((void *)multi);
	free((void *)once);
}

/* Whether some threads of a block may not reach st[k]: a guarded (not .uni) branch jumps over
 * it, or it is in a loop (a back edge spans it) that a guarded branch leaves or goes round
 * (threads then leave it at different iterations: a grid-stride loop). */
static bool part_may_reach(const lw *c, const ir_stmt *const *st, size_t n, const long *target, size_t k,
			   bool uniform_aware)
{
	for (size_t j = 0; j < n; j++) {
		if (target[j] < 0)
			continue;
		size_t t = (size_t)target[j];
		if (j < k && k < t && divergent_branch(c, st[j], uniform_aware))
			return true;
		if (t < k && k < j)   /* a loop around it: divergent if a guarded branch leaves it */
			for (size_t e = t; e <= j; e++)
				if (divergent_branch(c, st[e], uniform_aware) && (e == j || target[e] < (long)t || target[e] > (long)j))
					return true;
	}
	return false;
}

/* The first of the application's collectives left as written that part of a block may not
 * reach: its results are undefined on the work-group emulation; the caller says so. The
 * probes' collectives there are noted to run one lane alone (lw_lane_alone). */
static const ir_stmt *uncovered_collective(lw *c, const ir_stmt *const *st, size_t n, const long *target)
{
	const ir_stmt *first = NULL;
	for (size_t k = 0; k < n; k++) {
		if (lw_is_probe_collective(st[k])) {
			if (part_may_reach(c, st, n, target, k, false)) {
				c->lane_alone = realloc(c->lane_alone, (c->nlane_alone + 1) * sizeof(*c->lane_alone));
				c->lane_alone[c->nlane_alone++] = st[k];
			}
			continue;
		}
		if (!first && is_region_collective(st[k]) && !action_of(c, st[k]) && part_may_reach(c, st, n, target, k, true))
			first = st[k];
	}
	return first;
}

bool lw_lane_alone(const lw *c, const ir_stmt *s)
{
	if (c->lockstep && s && lw_is_probe_collective(s))
		return true;   /* every block of a lock-step kernel is one part of the block may skip */
	for (size_t i = 0; s && i < c->nlane_alone; i++)
		if (c->lane_alone[i] == s)
			return true;
	return false;
}

void lw_plan_divergent_barriers(lw *c, const ir_func *f)
{
	c->ndiverge = 0;
	c->nlane_alone = 0;
	c->divergent_collective = NULL;
	size_t n = 0;
	for (const ir_stmt *s = f->first; s; s = s->next)
		n++;
	if (!n)
		return;
	const ir_stmt **st = malloc(n * sizeof(*st));
	long *target = malloc(n * sizeof(*target));
	size_t k = 0;
	bool app = false, any = false;
	for (const ir_stmt *s = f->first; s; s = s->next) {
		app |= is_region_collective(s);
		any |= s->kind == IR_STMT_INSN && lw_is_collective_insn(&s->insn);
		st[k++] = s;
	}
	for (size_t j = 0; j < n && any; j++) {
		const char *name = bra_target(st[j]);
		target[j] = -1;
		if (!name)
			continue;
		for (size_t l = 0; l < n; l++)
			if (st[l]->kind == IR_STMT_LABEL && !strcmp(st[l]->text, name)) {
				target[j] = (long)l;
				break;
			}
		if (target[j] < 0)
			target[j] = -2; /* a label we cannot see: treated as leaving every region */
	}
	if (app)   /* the uniform-aware test serves the application's collectives only */
		find_varying(c, st, n, target);
	for (size_t j = 0; j < n && app; j++) {
		if (st[j]->kind != IR_STMT_INSN || target[j] <= (long)j)
			continue;
		if (st[j]->insn.guard)
			plan_region(c, st, n, target, j, (size_t)target[j], false);
		else if (j > 0 && j + 1 < n && st[j - 1]->kind == IR_STMT_INSN && st[j - 1]->insn.guard &&
			 target[j - 1] == (long)(j + 1))   /* LLVM's layout: @p bra A; bra B; A: */
			plan_region(c, st, n, target, j, (size_t)target[j], true);
	}
	for (size_t j = 0; j < n && app; j++)
		if (st[j]->kind == IR_STMT_INSN && st[j]->insn.guard && target[j] >= 0 && target[j] < (long)j)
			plan_loop(c, st, n, target, (size_t)target[j], j);
	c->divergent_collective = any ? uncovered_collective(c, st, n, target) : NULL;
	free(st);
	free(target);
}

static uint32_t join_id(lw *c, const struct lw_diverge *d)
{
	if (d->next)
		return d->next;
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].name, d->join))
			return c->labels[i].id;
	return 0;
}

/* The registers an instruction's destination names (a register, or the pair d|p). */
static unsigned dest_regs(lw *c, const ir_insn *in, struct reg *out[2])
{
	unsigned n = 0;
	const ir_operand *d = in->nops ? &in->ops[0] : NULL;
	const ir_operand *one[2] = {d, NULL};
	if (d && d->kind == IR_OPND_PAIR && d->nelems == 2)
		one[0] = &d->elems[0], one[1] = &d->elems[1];
	for (unsigned i = 0; i < 2; i++)
		if (one[i] && one[i]->kind == IR_OPND_REG && strcmp(one[i]->name, "_") && (out[n] = lw_reg(c, one[i]->name)))
			n++;
	return n;
}

/* A shfl/vote/redux/match/activemask of the region, run by every thread: the skipping ones
 * (skip) take part not live and keep their destination registers as they were. */
int lw_collective_for_all(lw *c, const ir_insn *in, uint32_t skip, int (*lower_insn)(lw *, const ir_insn *))
{
	struct reg *r[2];
	uint32_t old[2];
	unsigned n = dest_regs(c, in, r);
	for (unsigned i = 0; i < n; i++)
		old[i] = lw_op1(c, SpvOpLoad, lw_type(c, r[i]->t), r[i]->var);
	c->warp_skip = skip;
	int rc = lower_insn(c, in);
	c->warp_skip = 0;
	if (rc < 0)
		return -1;
	lw_ensure_block(c);
	for (unsigned i = 0; i < n; i++) {
		uint32_t ty = lw_type(c, r[i]->t);
		uint32_t now = lw_op1(c, SpvOpLoad, ty, r[i]->var);
		spv_op(&c->body, SpvOpStore, 2, r[i]->var, lw_select(c, ty, skip, old[i], now));
	}
	return 0;
}

static uint32_t label_of(lw *c, const char *name)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].name, name))
			return c->labels[i].id;
	return 0;
}

static uint32_t load_bool(lw *c, uint32_t var)
{
	lw_ensure_block(c);
	return lw_op1(c, SpvOpLoad, spv_t_bool(c->e), var);
}

/* Threads for which skip holds go to `to`; the others go on here. */
static void skip_to(lw *c, uint32_t skip, uint32_t to)
{
	uint32_t fall = spv_id(c->e);
	lw_branch_cond(c, skip, to, fall);
	lw_label(c, fall);
}

static uint32_t guard_of(lw *c, const ir_insn *in, bool negate)
{
	return lw_read(c, &(ir_operand){.kind = IR_OPND_REG, .name = in->guard, .neg = in->guard_neg != negate},
		       PT('p', 1));
}

/* The loop's header label was just opened: done threads go round its collectives. */
int lw_divergent_label(lw *c, const ir_stmt *s)
{
	const struct lw_diverge *d = action_of(c, s);
	if (!d || d->kind != LW_DIVERGE_LOOP_TOP)
		return 0;
	skip_to(c, load_bool(c, d->lvar), d->lnext);
	return 0;
}

/* 1: s was lowered here; 0: not part of a rewritten region; -1: error. */
int lw_divergent_stmt(lw *c, const ir_stmt *s, int (*lower_insn)(lw *, const ir_insn *))
{
	const struct lw_diverge *d = action_of(c, s);
	if (!d || d->kind == LW_DIVERGE_LOOP_TOP)
		return 0;
	uint32_t bl = spv_t_bool(c->e);
	if (d->kind == LW_DIVERGE_DROP)
		return 1;   /* the pair's unguarded branch: its guarded one decided */
	if (d->kind == LW_DIVERGE_BRANCH) {
		uint32_t p = guard_of(c, &s->insn, d->negate);
		if (!p)
			return -1;
		spv_op(&c->body, SpvOpStore, 2, d->var, p);
		skip_to(c, p, d->next);
		return 1;
	}
	if (d->kind == LW_DIVERGE_LOOP_ENTER || d->kind == LW_DIVERGE_LOOP_BACK) {
		uint32_t top = label_of(c, d->top);
		if (!top)
			return lw_fail(c, "branch to unknown label %s", d->top);
		if (d->kind == LW_DIVERGE_LOOP_ENTER) {   /* done = q; done ? header : fall */
			uint32_t q = guard_of(c, &s->insn, false);
			if (!q)
				return -1;
			spv_op(&c->body, SpvOpStore, 2, d->lvar, q);
			skip_to(c, q, top);
			return 1;
		}
		lw_label(c, d->lown);   /* the latch: done threads arrive from the last collective */
		uint32_t done = load_bool(c, d->lvar);
		uint32_t p = guard_of(c, &s->insn, false);
		if (!p)
			return -1;
		uint32_t go = lw_op2(c, SpvOpLogicalAnd, bl, lw_op1(c, SpvOpLogicalNot, bl, done), p);
		spv_op(&c->body, SpvOpStore, 2, d->lvar, lw_op1(c, SpvOpLogicalNot, bl, go));
		uint32_t any = lw_block_any(c, go);
		skip_to(c, any, top);
		spv_op(&c->body, SpvOpStore, 2, d->lvar, spv_c_bool(c->e, 0));   /* for the next time round */
		return 1;
	}
	/* a collective: of a region (var), of a loop (lvar), or of both */
	if (d->lvar)
		lw_label(c, d->lown);
	if (d->var)
		lw_label(c, d->own);
	uint32_t skip = d->var ? load_bool(c, d->var) : 0;
	if (d->lvar)
		skip = skip ? lw_op2(c, SpvOpLogicalOr, bl, skip, load_bool(c, d->lvar)) : load_bool(c, d->lvar);
	if (is_warp_sync(&s->insn)) {
		if (lower_insn(c, &s->insn) < 0)
			return -1;
	} else if (lw_collective_for_all(c, &s->insn, skip, lower_insn) < 0) {
		return -1;
	}
	if (d->lvar)
		skip_to(c, load_bool(c, d->lvar), d->lnext);
	if (d->var) {
		uint32_t to = join_id(c, d);
		if (!to)
			return lw_fail(c, "branch to unknown label %s", d->join);
		skip_to(c, load_bool(c, d->var), to);
	}
	return 1;
}
