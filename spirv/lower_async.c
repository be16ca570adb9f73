/* Asynchronous copies as ordinary ones: cp.async.{ca,cg}.shared.global copies its bytes at once
 * (zero-filling past src-size, or all of them under ignore-src), so commit_group, wait_group and
 * wait_all have nothing left to wait for, and cp.async.mbarrier.arrive (without .noinc: a net
 * zero change of the barrier's pending count) nothing to signal. A thread sees its own copies at
 * once, others' after the barrier the program has anyway, as on the GPU. cp.async.bulk from
 * global to shared memory copies at once too and completes its bytes on the mbarrier.
 *
 * mbarriers, where simple: the 64-bit object holds pending arrivals (bits 0-19), the expected
 * count (20-39), the transaction count (40-62, wrapping) and the phase (63), changed by 64-bit
 * compare-and-swap; a phase completes when arrivals and transactions are both down to zero.
 * arrive returns the phase as its token. test_wait/try_wait first wait at a work-group barrier,
 * then test: waiting by spinning cannot work where a work-group's threads run one after the
 * other (PoCL), so every thread of the block must reach the wait, as in the common pattern
 * (all threads arrive, then all wait). Producer/consumer warps that wait on each other are not. */
#include "spirv/lower.h"

#include <string.h>

static bool is_pred_operand(lw *c, const ir_operand *o)
{
	if (o->kind != IR_OPND_REG)
		return false;
	struct reg *r = lw_reg(c, o->name);
	return r && r->t.k == 'p';
}

static int cp_async_copy(lw *c, const ir_insn *in)
{
	if (in->nops < 3 || in->ops[0].kind != IR_OPND_ADDR || in->ops[1].kind != IR_OPND_ADDR ||
	    in->ops[2].kind != IR_OPND_INT)
		return lw_unsupported(c, in, "expected [dst], [src], cp-size");
	unsigned size = (unsigned)in->ops[2].ival;
	if (size != 4 && size != 8 && size != 16)
		return lw_unsupported(c, in, "cp-size must be 4, 8 or 16");
	const ir_operand *extra = in->nops > 3 ? &in->ops[3] : NULL;
	if (extra && ir_insn_has_mod(in, ".L2::cache_hint") && in->nops == 4)
		extra = NULL; /* the cache policy alone */
	enum ir_space dsp = lw_insn_space(in);
	if (dsp != IR_SPACE_SHARED)
		return lw_unsupported(c, in, "the destination must be .shared");
	uint32_t u8 = spv_t_int(c->e, 8), u32 = spv_t_int(c->e, 32), bl = spv_t_bool(c->e);
	SpvStorageClass sc;
	/* the common form: all bytes (no src-size, or src-size the literal cp-size), by words */
	if (!extra || (extra->kind == IR_OPND_INT && (unsigned)extra->ival >= size)) {
		for (unsigned i = 0; i < size; i += 4) {
			ir_operand s = in->ops[1], d = in->ops[0];
			s.ival += i;
			d.ival += i;
			uint32_t sp = lw_address(c, &s, IR_SPACE_GLOBAL, PT('u', 32), &sc);
			if (!sp)
				return -1;
			lw_ensure_block(c);
			uint32_t v = spv_id(c->e);
			spv_op(&c->body, SpvOpLoad, 5, u32, v, sp, (uint32_t)SpvMemoryAccessAlignedMask, 4u);
			uint32_t dp = lw_address(c, &d, IR_SPACE_SHARED, PT('u', 32), &sc);
			if (!dp)
				return -1;
			spv_op(&c->body, SpvOpStore, 4, dp, v, (uint32_t)SpvMemoryAccessAlignedMask, 4u);
		}
		return 1;
	}
	/* n bytes from the source, zeros after: src-size (a value) or ignore-src (a predicate) */
	uint32_t n;
	if (is_pred_operand(c, extra)) {
		uint32_t p = lw_read_pred(c, extra);
		if (!p)
			return -1;
		n = lw_select(c, u32, p, lw_u32(c, 0), lw_u32(c, size));
	} else {
		n = lw_read(c, extra, PT('u', 32));
		if (!n)
			return -1;
	}
	for (unsigned i = 0; i < size; i++) {
		ir_operand s = in->ops[1], d = in->ops[0];
		s.ival += i;
		d.ival += i;
		uint32_t take = lw_op2(c, SpvOpULessThan, bl, lw_u32(c, i), n);
		uint32_t then = spv_id(c->e), other = spv_id(c->e), join = spv_id(c->e);
		uint32_t dp = lw_address(c, &d, IR_SPACE_SHARED, PT('u', 8), &sc);
		if (!dp)
			return -1;
		lw_branch_cond(c, take, then, other);
		lw_label(c, then);
		uint32_t sp = lw_address(c, &s, IR_SPACE_GLOBAL, PT('u', 8), &sc);
		if (!sp)
			return -1;
		uint32_t v = lw_op1(c, SpvOpLoad, u8, sp);
		spv_op(&c->body, SpvOpStore, 2, dp, v);
		lw_branch(c, join);
		lw_label(c, other);
		spv_op(&c->body, SpvOpStore, 2, dp, lw_const(c, PT('u', 8), 0));
		lw_label(c, join);
	}
	return 1;
}

/* ---- mbarrier ---------------------------------------------------------------------------------- */

#define MB_COUNT_MASK 0xfffffull
#define MB_TX_SHIFT 40
#define MB_TX_MASK 0x7fffffull

static uint32_t mbar_ptr(lw *c, const ir_insn *in, const ir_operand *a)
{
	SpvStorageClass sc;
	enum ir_space sp = lw_insn_space(in);
	for (unsigned i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], ".shared::cluster"))
			sp = IR_SPACE_SHARED; /* one-block clusters: the block's own shared memory */
	return lw_address(c, a, sp, PT('u', 64), &sc);
}

/* state -> state after: expected -= drop, tx += dtx, pending -= arrive; completing the phase when
 * pending and tx are both 0 (pending back to expected, phase flipped). Returns the old state. */
static uint32_t mbar_update(lw *c, uint32_t p, uint32_t arrive, uint32_t drop, uint32_t dtx)
{
	uint32_t u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t tmp = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u64), tmp, (uint32_t)SpvStorageClassFunction);
	lw_ensure_block(c);
	uint32_t first = spv_id(c->e);
	spv_op(&c->body, SpvOpLoad, 5, u64, first, p, (uint32_t)(SpvMemoryAccessVolatileMask | SpvMemoryAccessAlignedMask), 8u);
	spv_op(&c->body, SpvOpStore, 2, tmp, first);
	uint32_t loop = spv_id(c->e), done = spv_id(c->e);
	lw_branch(c, loop);
	lw_label(c, loop);
	uint32_t cur = lw_op1(c, SpvOpLoad, u64, tmp);
	uint32_t pend = lw_op2(c, SpvOpBitwiseAnd, u64, cur, lw_u64(c, MB_COUNT_MASK));
	uint32_t exp = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpShiftRightLogical, u64, cur, lw_u64(c, 20)), lw_u64(c, MB_COUNT_MASK));
	uint32_t tx = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpShiftRightLogical, u64, cur, lw_u64(c, MB_TX_SHIFT)), lw_u64(c, MB_TX_MASK));
	uint32_t ph = lw_op2(c, SpvOpShiftRightLogical, u64, cur, lw_u64(c, 63));
	exp = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpISub, u64, exp, drop), lw_u64(c, MB_COUNT_MASK));
	tx = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpIAdd, u64, tx, dtx), lw_u64(c, MB_TX_MASK));
	pend = lw_op2(c, SpvOpBitwiseAnd, u64, lw_op2(c, SpvOpISub, u64, pend, arrive), lw_u64(c, MB_COUNT_MASK));
	uint32_t complete = lw_op2(c, SpvOpLogicalAnd, bl, lw_op2(c, SpvOpIEqual, bl, pend, lw_u64(c, 0)),
				   lw_op2(c, SpvOpIEqual, bl, tx, lw_u64(c, 0)));
	/* only arrivals and transaction completions complete a phase (not expect_tx alone) */
	complete = lw_op2(c, SpvOpLogicalAnd, bl, complete,
			  lw_op2(c, SpvOpLogicalOr, bl, lw_op2(c, SpvOpINotEqual, bl, arrive, lw_u64(c, 0)),
				 lw_op2(c, SpvOpINotEqual, bl, dtx, lw_u64(c, 0))));
	pend = lw_select(c, u64, complete, exp, pend);
	ph = lw_select(c, u64, complete, lw_op2(c, SpvOpBitwiseXor, u64, ph, lw_u64(c, 1)), ph);
	uint32_t nv = lw_op2(c, SpvOpBitwiseOr, u64, pend, lw_op2(c, SpvOpShiftLeftLogical, u64, exp, lw_u64(c, 20)));
	nv = lw_op2(c, SpvOpBitwiseOr, u64, nv, lw_op2(c, SpvOpShiftLeftLogical, u64, tx, lw_u64(c, MB_TX_SHIFT)));
	nv = lw_op2(c, SpvOpBitwiseOr, u64, nv, lw_op2(c, SpvOpShiftLeftLogical, u64, ph, lw_u64(c, 63)));
	spv_capability(c->e, SpvCapabilityInt64Atomics);
	uint32_t prev = spv_id(c->e);
	uint32_t sem = lw_u32(c, SpvMemorySemanticsSequentiallyConsistentMask | SpvMemorySemanticsWorkgroupMemoryMask);
	spv_op(&c->body, SpvOpAtomicCompareExchange, 8, u64, prev, p, lw_u32(c, SpvScopeWorkgroup), sem, sem, nv, cur);
	spv_op(&c->body, SpvOpStore, 2, tmp, prev);
	lw_branch_cond(c, lw_op2(c, SpvOpIEqual, bl, prev, cur), done, loop);
	lw_label(c, done);
	return cur;
}

static uint32_t read_u64(lw *c, const ir_operand *o)
{
	return lw_read(c, o, PT('u', 64));
}

static int mbarrier(lw *c, const ir_insn *in)
{
	uint32_t u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	const char *k = in->nmods ? in->mods[0] : "";
	const ir_operand *o = in->ops;
	unsigned n = in->nops;
	if (!strcmp(k, ".inval"))
		return 1;
	if (!strcmp(k, ".init")) {
		if (n != 2)
			return lw_unsupported(c, in, "expected [bar], count");
		uint32_t p = mbar_ptr(c, in, &o[0]), cnt = p ? read_u64(c, &o[1]) : 0;
		if (!cnt)
			return -1;
		cnt = lw_op2(c, SpvOpBitwiseAnd, u64, cnt, lw_u64(c, MB_COUNT_MASK));
		uint32_t v = lw_op2(c, SpvOpBitwiseOr, u64, cnt, lw_op2(c, SpvOpShiftLeftLogical, u64, cnt, lw_u64(c, 20)));
		spv_op(&c->body, SpvOpStore, 4, p, v, (uint32_t)(SpvMemoryAccessVolatileMask | SpvMemoryAccessAlignedMask), 8u);
		return 1;
	}
	if (!strcmp(k, ".arrive") || !strcmp(k, ".arrive_drop") || !strcmp(k, ".expect_tx") || !strcmp(k, ".complete_tx")) {
		if (ir_insn_has_mod(in, ".shared::cluster") && strcmp(k, ".expect_tx") && strcmp(k, ".complete_tx"))
			return lw_unsupported(c, in, "arrivals on another block's mbarrier are not lowered");
		bool tx_op = !strcmp(k, ".expect_tx") || !strcmp(k, ".complete_tx");
		bool expect = ir_insn_has_mod(in, ".expect_tx") || !strcmp(k, ".expect_tx");
		bool nocomplete = ir_insn_has_mod(in, ".noComplete");
		if (nocomplete)
			return lw_unsupported(c, in, ".noComplete is not lowered");
		/* operands: [state,] [bar] [, count or tx-count] */
		unsigned ai = 0;
		while (ai < n && o[ai].kind != IR_OPND_ADDR)
			ai++;
		if (ai == n)
			return lw_unsupported(c, in, "expected [bar]");
		uint32_t p = mbar_ptr(c, in, &o[ai]);
		if (!p)
			return -1;
		uint32_t val = ai + 1 < n ? read_u64(c, &o[ai + 1]) : lw_u64(c, 1);
		if (!val)
			return -1;
		uint32_t zero = lw_u64(c, 0), one = lw_u64(c, 1);
		uint32_t arrive = tx_op ? zero : (expect ? one : val);
		uint32_t drop = !strcmp(k, ".arrive_drop") ? arrive : zero;
		uint32_t dtx = !expect && !tx_op ? zero : !strcmp(k, ".complete_tx") ? lw_op1(c, SpvOpSNegate, u64, val) : val;
		if (tx_op && !strcmp(k, ".complete_tx"))
			arrive = zero;
		uint32_t old;
		if (expect && !tx_op) {
			/* arrive.expect_tx: the transactions first, then the arrival */
			mbar_update(c, p, zero, zero, dtx);
			old = mbar_update(c, p, arrive, drop, zero);
		} else {
			old = mbar_update(c, p, arrive, drop, dtx);
		}
		if (!tx_op && ai > 0 && !(o[0].kind == IR_OPND_SYMBOL && !strcmp(o[0].name, "_")))
			return lw_write(c, &o[0], PT('u', 64), lw_op2(c, SpvOpShiftRightLogical, u64, old, lw_u64(c, 63))) < 0 ? -1 : 1;
		return 1;
	}
	if (!strcmp(k, ".test_wait") || !strcmp(k, ".try_wait")) {
		/* p, [bar], state-or-parity (, suspend hint) */
		if (n < 3 || o[1].kind != IR_OPND_ADDR)
			return lw_unsupported(c, in, "expected p, [bar], state");
		lw_barrier(c);
		uint32_t p = mbar_ptr(c, in, &o[1]);
		uint32_t tok = p ? read_u64(c, &o[2]) : 0;
		if (!tok)
			return -1;
		lw_ensure_block(c);
		uint32_t st = spv_id(c->e);
		spv_op(&c->body, SpvOpLoad, 5, u64, st, p, (uint32_t)(SpvMemoryAccessVolatileMask | SpvMemoryAccessAlignedMask), 8u);
		uint32_t ph = lw_op2(c, SpvOpShiftRightLogical, u64, st, lw_u64(c, 63));
		uint32_t want = lw_op2(c, SpvOpBitwiseAnd, u64, tok, lw_u64(c, 1));
		/* the token's (or parity's) phase has completed when the current phase differs */
		uint32_t done = lw_op2(c, SpvOpINotEqual, bl, ph, want);
		return lw_write(c, &o[0], PT('p', 1), done) < 0 ? -1 : 1;
	}
	if (!strcmp(k, ".pending_count")) {
		if (n != 2)
			return lw_unsupported(c, in, "expected count, state");
		return lw_unsupported(c, in, "pending_count is not lowered");
	}
	return lw_unsupported(c, in, "this mbarrier operation is not lowered");
}

/* cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar], and
 * (to_global) cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: copied at once. */
static int bulk_copy(lw *c, const ir_insn *in, bool to_global)
{
	if (to_global) {
		if (in->nops < 3 || in->ops[0].kind != IR_OPND_ADDR || in->ops[1].kind != IR_OPND_ADDR)
			return lw_unsupported(c, in, "expected [dst], [src], size");
	} else if (in->nops < 4 || !ir_insn_has_mod(in, ".global") || in->ops[0].kind != IR_OPND_ADDR ||
		   in->ops[1].kind != IR_OPND_ADDR || in->ops[3].kind != IR_OPND_ADDR) {
		return lw_unsupported(c, in, "only global-to-shared bulk copies completing on an mbarrier are lowered");
	}
	uint32_t u8 = spv_t_int(c->e, 8), u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	SpvStorageClass sc;
	uint32_t size = lw_read(c, &in->ops[2], PT('u', 32));
	if (!size)
		return -1;
	uint32_t d0 = lw_address(c, &in->ops[0], to_global ? IR_SPACE_GLOBAL : IR_SPACE_SHARED, PT('u', 8), &sc);
	uint32_t s0 = d0 ? lw_address(c, &in->ops[1], to_global ? IR_SPACE_SHARED : IR_SPACE_GLOBAL, PT('u', 8), &sc) : 0;
	if (!s0)
		return -1;
	/* a byte loop */
	uint32_t iv = spv_id(c->e);
	spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, u32), iv, (uint32_t)SpvStorageClassFunction);
	lw_ensure_block(c);
	spv_op(&c->body, SpvOpStore, 2, iv, lw_u32(c, 0));
	uint32_t head = spv_id(c->e), body = spv_id(c->e), done = spv_id(c->e);
	lw_label(c, head);
	uint32_t i = lw_op1(c, SpvOpLoad, u32, iv);
	lw_branch_cond(c, lw_op2(c, SpvOpULessThan, bl, i, size), body, done);
	lw_label(c, body);
	uint32_t i64 = lw_op1(c, SpvOpUConvert, u64, i);
	SpvStorageClass ssc = to_global ? SpvStorageClassWorkgroup : SpvStorageClassCrossWorkgroup;
	SpvStorageClass dsc = to_global ? SpvStorageClassCrossWorkgroup : SpvStorageClassWorkgroup;
	uint32_t sp = lw_op2(c, SpvOpInBoundsPtrAccessChain, spv_t_ptr(c->e, ssc, u8), s0, i64);
	uint32_t dp = lw_op2(c, SpvOpInBoundsPtrAccessChain, spv_t_ptr(c->e, dsc, u8), d0, i64);
	spv_op(&c->body, SpvOpStore, 2, dp, lw_op1(c, SpvOpLoad, u8, sp));
	spv_op(&c->body, SpvOpStore, 2, iv, lw_op2(c, SpvOpIAdd, u32, i, lw_u32(c, 1)));
	lw_branch(c, head);
	lw_label(c, done);
	if (to_global)
		return 1;
	uint32_t p = mbar_ptr(c, in, &in->ops[3]);
	if (!p)
		return -1;
	mbar_update(c, p, lw_u64(c, 0), lw_u64(c, 0), lw_op1(c, SpvOpSNegate, u64, lw_op1(c, SpvOpUConvert, u64, size)));
	return 1;
}

/* mapa: another block's copy of a shared variable in the cluster. Clusters are one block here (a
 * launch without cluster dimensions makes them so, and the own driver refuses clusters of more),
 * so rank 0, the only one there is, names the block's own: the address itself. */
static int mapa(lw *c, const ir_insn *in)
{
	ptype t = in->nmods ? ptype_parse(in->mods[in->nmods - 1]) : PT(0, 0);
	if (in->nops != 3 || (t.bits != 32 && t.bits != 64))
		return lw_unsupported(c, in, "expected mapa{.shared::cluster}.u32/.u64 d, a, rank");
	uint32_t a = lw_read(c, &in->ops[1], t);
	if (!a)
		return -1;
	return lw_write(c, &in->ops[0], t, a) < 0 ? -1 : 1;
}

int lw_async(lw *c, const ir_insn *in)
{
	if (!strcmp(in->opcode, "mbarrier"))
		return mbarrier(c, in);
	if (!strcmp(in->opcode, "mapa"))
		return mapa(c, in);
	if (!strcmp(in->opcode, "barrier") && ir_insn_has_mod(in, ".cluster")) {
		/* one-block clusters: arrive is a release fence (nothing when .relaxed), and the wait,
		 * which every thread of the cluster reaches after its arrive, the block's barrier */
		if (ir_insn_has_mod(in, ".arrive")) {
			if (!ir_insn_has_mod(in, ".relaxed"))
				lw_fence(c, SpvScopeWorkgroup);
			return 1;
		}
		if (ir_insn_has_mod(in, ".wait")) {
			lw_barrier(c);
			return 1;
		}
		return lw_unsupported(c, in, "expected barrier.cluster.arrive or .wait");
	}
	if (!strcmp(in->opcode, "cp") && in->nmods >= 2 && !strcmp(in->mods[0], ".async") && !strcmp(in->mods[1], ".bulk") &&
	    in->nmods >= 3 && !strncmp(in->mods[2], ".shared", 7) && ir_insn_has_mod(in, ".mbarrier::complete_tx::bytes"))
		return bulk_copy(c, in, false);
	if (!strcmp(in->opcode, "cp") && in->nmods >= 4 && !strcmp(in->mods[0], ".async") && !strcmp(in->mods[1], ".bulk")) {
		if (!strcmp(in->mods[2], ".commit_group") || !strcmp(in->mods[2], ".wait_group"))
			return 1; /* bulk copies complete when issued */
		if (!strcmp(in->mods[2], ".global") && !strncmp(in->mods[3], ".shared", 7) && ir_insn_has_mod(in, ".bulk_group"))
			return bulk_copy(c, in, true);
	}
	if (!strcmp(in->opcode, "cp") && in->nmods == 3 && !strcmp(in->mods[0], ".async") && !strcmp(in->mods[1], ".bulk") &&
	    (!strcmp(in->mods[2], ".commit_group") || !strcmp(in->mods[2], ".wait_group")))
		return 1;


	if (strcmp(in->opcode, "cp") || !in->nmods || strcmp(in->mods[0], ".async"))
		return 0;
	if (ir_insn_has_mod(in, ".bulk"))
		return lw_unsupported(c, in, "bulk asynchronous copies (TMA) are not lowered");
	if (ir_insn_has_mod(in, ".commit_group") || ir_insn_has_mod(in, ".wait_group") || ir_insn_has_mod(in, ".wait_all"))
		return 1; /* every copy is complete when it returns */
	if (ir_insn_has_mod(in, ".mbarrier")) {
		if (ir_insn_has_mod(in, ".noinc"))
			return lw_unsupported(c, in, "mbarriers are not lowered");
		return 1; /* increment and arrive: no change to the barrier */
	}
	return cp_async_copy(c, in);
}
