/* Asynchronous barriers (mbarrier.*) and bulk copies (cp.async.bulk), with spirv/lower_async.c's
 * semantics and mbarrier layout, for both targets:
 *
 * - The 64-bit mbarrier object holds the pending arrivals (bits 0-19), the expected arrival count
 *   (20-39), the transaction count (40-62, wrapping, so that a copy may complete its bytes before
 *   they are expected) and the phase (63). Every change is a 64-bit compare-and-swap loop on it; a
 *   phase completes when an arrival or a transaction completion leaves both the pending arrivals
 *   and the transaction count at zero: the pending count goes back to the expected one, the phase
 *   flips. arrive_drop lowers the expected count too.
 * - arrive's state (the token) is its phase in bit 0 (as spirv/'s token) and the pending arrivals
 *   it left in bits 1-20, which is what pending_count reads (PTX allows pending_count only on the
 *   state of an arrive.noComplete, which here is an ordinary arrival: the program promises that it
 *   does not complete the phase).
 * - test_wait/try_wait (token or .parity) only test: the token's phase has completed when the
 *   current phase differs from it. The program's own loop retries; what a target must do before
 *   testing (nvptx: a block barrier, for the CPU check) is al_mbar_wait() in lower_target.c.
 * - cp.async.bulk copies at once, by the issuing thread (global or shared to shared completing its
 *   bytes on the mbarrier, shared to global in a bulk group), so commit_group and wait_group have
 *   nothing to wait for; cp.async.mbarrier.arrive is a net zero change of the pending count
 *   (.noinc: one arrival), the copies before it being complete already.
 * - Clusters are one block (what a launch without cluster dimensions gives): a .shared::cluster
 *   mbarrier or destination is the block's own shared memory; barrier.cluster and mapa are
 *   al_cluster's (lower_target.c). */
#include "amdgpu/lower.h"

#include <string.h>

#define B (c->b)

#define MB_COUNT_MASK 0xfffffull
#define MB_TX_SHIFT 40
#define MB_TX_MASK 0x7fffffull

static bool mod_prefix(const ir_insn *in, const char *prefix)
{
	for (unsigned i = 0; i < in->nmods; i++)
		if (!strncmp(in->mods[i], prefix, strlen(prefix)))
			return true;
	return false;
}

/* The mbarrier's pointer: shared (any .shared form, .shared::cluster being the block's own) or
 * generic without a state space. */
static LLVMValueRef mbar_ptr(al *c, const ir_insn *in, const ir_operand *a)
{
	return al_address(c, a, mod_prefix(in, ".shared") ? IR_SPACE_SHARED : IR_SPACE_GENERIC);
}

/* The object's state, read as lower_mem.c reads a .relaxed value: a monotonic atomic on amdgcn, a
 * volatile load on nvptx (LLVM 19's NVPTX backend selects no atomic loads). */
static LLVMValueRef load_state(al *c, LLVMValueRef p)
{
	LLVMValueRef v = LLVMBuildLoad2(B, al_ity(c, 64), p, "mbar");
	LLVMSetAlignment(v, 8);
	LLVMSetVolatile(v, 1);
	if (c->target != AMDGPU_TARGET_NVPTX)
		LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
	return v;
}

static LLVMValueRef field(al *c, LLVMValueRef s, unsigned shift, uint64_t mask)
{
	if (shift)
		s = LLVMBuildLShr(B, s, al_ci(c, 64, shift), "");
	return LLVMBuildAnd(B, s, al_ci(c, 64, mask), "");
}

/* One change of the object at p: pending -= arrive, expected -= drop, tx += dtx (all i64 values),
 * completing the phase where may_complete and pending and tx are both 0 after it. Returns the
 * state before the change. */
static LLVMValueRef mbar_update(al *c, LLVMValueRef p, LLVMValueRef arrive, LLVMValueRef drop, LLVMValueRef dtx,
				bool may_complete)
{
	LLVMTypeRef i64 = al_ity(c, 64);
	if (c->target == AMDGPU_TARGET_NVPTX)
		al_fence(c, 0);   /* LLVM 19's NVPTX backend gives the cmpxchg's ordering no fence */
	LLVMValueRef first = load_state(c, p);
	LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
	LLVMBasicBlockRef loop = al_new_block(c, "mbar.cas"), done = al_new_block(c, "mbar.done");
	LLVMBuildBr(B, loop);
	LLVMPositionBuilderAtEnd(B, loop);
	LLVMValueRef cur = LLVMBuildPhi(B, i64, "mbar.cur");
	LLVMValueRef pend = field(c, cur, 0, MB_COUNT_MASK), exp = field(c, cur, 20, MB_COUNT_MASK);
	LLVMValueRef tx = field(c, cur, MB_TX_SHIFT, MB_TX_MASK), ph = LLVMBuildLShr(B, cur, al_ci(c, 64, 63), "");
	exp = LLVMBuildAnd(B, LLVMBuildSub(B, exp, drop, ""), al_ci(c, 64, MB_COUNT_MASK), "");
	tx = LLVMBuildAnd(B, LLVMBuildAdd(B, tx, dtx, ""), al_ci(c, 64, MB_TX_MASK), "");
	pend = LLVMBuildAnd(B, LLVMBuildSub(B, pend, arrive, ""), al_ci(c, 64, MB_COUNT_MASK), "");
	if (may_complete) {
		LLVMValueRef zero = al_ci(c, 64, 0);
		LLVMValueRef complete = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, pend, zero, ""),
						     LLVMBuildICmp(B, LLVMIntEQ, tx, zero, ""), "mbar.complete");
		pend = LLVMBuildSelect(B, complete, exp, pend, "");
		ph = LLVMBuildXor(B, ph, LLVMBuildZExt(B, complete, i64, ""), "");
	}
	LLVMValueRef nv = LLVMBuildOr(B, pend, LLVMBuildShl(B, exp, al_ci(c, 64, 20), ""), "");
	nv = LLVMBuildOr(B, nv, LLVMBuildShl(B, tx, al_ci(c, 64, MB_TX_SHIFT), ""), "");
	nv = LLVMBuildOr(B, nv, LLVMBuildShl(B, ph, al_ci(c, 64, 63), ""), "");
	LLVMValueRef x = LLVMBuildAtomicCmpXchg(B, p, cur, nv, LLVMAtomicOrderingAcquireRelease, LLVMAtomicOrderingMonotonic, 0);
	LLVMValueRef prev = LLVMBuildExtractValue(B, x, 0, ""), ok = LLVMBuildExtractValue(B, x, 1, "");
	LLVMBuildCondBr(B, ok, done, loop);
	LLVMValueRef in_v[2] = {first, prev};
	LLVMBasicBlockRef in_b[2] = {from, loop};
	LLVMAddIncoming(cur, in_v, in_b, 2);
	LLVMPositionBuilderAtEnd(B, done);
	return cur;
}

static bool is_sink(const ir_operand *o) { return o->kind == IR_OPND_SYMBOL && !strcmp(o->name, "_"); }

static int mbarrier(al *c, const ir_insn *in)
{
	const char *k = in->nmods ? in->mods[0] : "";
	const ir_operand *o = in->ops;
	unsigned n = in->nops;
	LLVMTypeRef i64 = al_ity(c, 64);
	LLVMValueRef zero = al_ci(c, 64, 0), one = al_ci(c, 64, 1);
	if (!strcmp(k, ".inval"))
		return 1;
	if (!strcmp(k, ".init")) {
		if (n != 2 || o[0].kind != IR_OPND_ADDR)
			return al_unsupported(c, in, "expected [bar], count");
		LLVMValueRef p = mbar_ptr(c, in, &o[0]), cnt = p ? al_read(c, &o[1], AT('u', 32)) : NULL;
		if (!cnt)
			return -1;
		cnt = LLVMBuildAnd(B, LLVMBuildZExt(B, cnt, i64, ""), al_ci(c, 64, MB_COUNT_MASK), "");
		LLVMValueRef v = LLVMBuildOr(B, cnt, LLVMBuildShl(B, cnt, al_ci(c, 64, 20), ""), "");
		LLVMValueRef st = LLVMBuildStore(B, v, p);
		LLVMSetAlignment(st, 8);
		LLVMSetVolatile(st, 1);
		if (c->target != AMDGPU_TARGET_NVPTX)
			LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
		return 1;
	}
	if (!strcmp(k, ".arrive") || !strcmp(k, ".arrive_drop") || !strcmp(k, ".expect_tx") || !strcmp(k, ".complete_tx")) {
		bool tx_op = !strcmp(k, ".expect_tx") || !strcmp(k, ".complete_tx");
		bool expect = !strcmp(k, ".expect_tx") || al_mod(in, ".expect_tx");
		/* operands: [state,] [bar] [, count or tx-count] */
		unsigned ai = 0;
		while (ai < n && o[ai].kind != IR_OPND_ADDR)
			ai++;
		if (ai == n || ai > 1 || (tx_op && ai != 0) || (tx_op && ai + 2 != n) || ai + 2 < n)
			return al_unsupported(c, in, tx_op ? "expected [bar], tx-count" : "expected state, [bar] (, count)");
		LLVMValueRef p = mbar_ptr(c, in, &o[ai]);
		if (!p)
			return -1;
		LLVMValueRef val = one;
		if (ai + 1 < n) {
			LLVMValueRef v = al_read(c, &o[ai + 1], AT('u', 32));
			if (!v)
				return -1;
			val = LLVMBuildZExt(B, v, i64, "");
		}
		LLVMValueRef old, arrive = expect ? one : val;
		if (!strcmp(k, ".expect_tx")) {
			mbar_update(c, p, zero, zero, val, false);
			return 1;
		}
		if (!strcmp(k, ".complete_tx")) {
			mbar_update(c, p, zero, zero, LLVMBuildNeg(B, val, ""), true);
			return 1;
		}
		LLVMValueRef drop = !strcmp(k, ".arrive_drop") ? arrive : zero;
		if (expect)   /* arrive.expect_tx: the transactions first, then the arrival */
			mbar_update(c, p, zero, zero, val, false);
		old = mbar_update(c, p, arrive, drop, zero, true);
		if (ai == 0 || is_sink(&o[0]))
			return 1;
		LLVMValueRef left = LLVMBuildAnd(B, LLVMBuildSub(B, field(c, old, 0, MB_COUNT_MASK), arrive, ""),
						 al_ci(c, 64, MB_COUNT_MASK), "");
		LLVMValueRef tok = LLVMBuildOr(B, LLVMBuildLShr(B, old, al_ci(c, 64, 63), ""), LLVMBuildShl(B, left, one, ""), "mbar.tok");
		return al_write(c, &o[0], AT('b', 64), tok) < 0 ? -1 : 1;
	}
	if (!strcmp(k, ".test_wait") || !strcmp(k, ".try_wait")) {
		/* p, [bar], state or parity (, suspend-time hint) */
		if (n < 3 || n > 4 || o[1].kind != IR_OPND_ADDR)
			return al_unsupported(c, in, "expected p, [bar], state");
		LLVMValueRef p = mbar_ptr(c, in, &o[1]);
		LLVMValueRef tok = p ? al_read(c, &o[2], al_mod(in, ".parity") ? AT('u', 32) : AT('b', 64)) : NULL;
		if (!tok)
			return -1;
		al_mbar_wait(c);
		LLVMValueRef st = load_state(c, p);
		al_fence(c, 0);   /* what the completed phase wrote is seen after the wait */
		LLVMValueRef ph = LLVMBuildTrunc(B, LLVMBuildLShr(B, st, al_ci(c, 64, 63), ""), al_ity(c, 1), "");
		LLVMValueRef want = LLVMBuildTrunc(B, tok, al_ity(c, 1), "");
		return al_write(c, &o[0], AT('p', 1), LLVMBuildICmp(B, LLVMIntNE, ph, want, "mbar.waited")) < 0 ? -1 : 1;
	}
	if (!strcmp(k, ".pending_count")) {
		if (n != 2)
			return al_unsupported(c, in, "expected count, state");
		LLVMValueRef tok = al_read(c, &o[1], AT('b', 64));
		if (!tok)
			return -1;
		LLVMValueRef cnt = LLVMBuildTrunc(B, field(c, tok, 1, MB_COUNT_MASK), al_ity(c, 32), "");
		return al_write(c, &o[0], AT('u', 32), cnt) < 0 ? -1 : 1;
	}
	return al_unsupported(c, in, "this mbarrier operation is not lowered");
}

/* size bytes from src to dst, by 32-bit words (PTX has a bulk copy's size a multiple of 16 and its
 * addresses 16-byte aligned), in a loop of the issuing thread. */
static void copy_words(al *c, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef size)
{
	LLVMTypeRef i32 = al_ity(c, 32);
	LLVMValueRef words = LLVMBuildLShr(B, size, al_ci(c, 32, 2), "");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
	LLVMBasicBlockRef head = al_new_block(c, "bulk.head"), body = al_new_block(c, "bulk.body"), done = al_new_block(c, "bulk.done");
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, head);
	LLVMValueRef i = LLVMBuildPhi(B, i32, "bulk.i");
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntULT, i, words, ""), body, done);
	LLVMPositionBuilderAtEnd(B, body);
	LLVMValueRef i64v = LLVMBuildZExt(B, i, al_ity(c, 64), "");
	LLVMValueRef sp = LLVMBuildGEP2(B, i32, src, &i64v, 1, ""), dp = LLVMBuildGEP2(B, i32, dst, &i64v, 1, "");
	LLVMValueRef v = LLVMBuildLoad2(B, i32, sp, "");
	LLVMSetAlignment(v, 4);
	LLVMSetAlignment(LLVMBuildStore(B, v, dp), 4);
	LLVMValueRef next = LLVMBuildAdd(B, i, al_ci(c, 32, 1), "");
	LLVMBasicBlockRef body_end = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, head);
	LLVMValueRef in_v[2] = {al_ci(c, 32, 0), next};
	LLVMBasicBlockRef in_b[2] = {from, body_end};
	LLVMAddIncoming(i, in_v, in_b, 2);
	LLVMPositionBuilderAtEnd(B, done);
}

static enum ir_space bulk_space(const char *m)
{
	if (!strncmp(m, ".shared", 7))
		return IR_SPACE_SHARED;
	if (!strcmp(m, ".global"))
		return IR_SPACE_GLOBAL;
	return IR_SPACE_GENERIC;
}

/* cp.async.bulk.dst.src.completion [dst], [src], size (, [mbar]) (, cache policy) */
static int bulk_copy(al *c, const ir_insn *in)
{
	if (in->nmods < 4)
		return al_unsupported(c, in, "expected cp.async.bulk.dst.src");
	if (al_mod(in, ".tensor") || mod_prefix(in, ".dim"))
		return al_unsupported(c, in, "tensor bulk copies (cp.async.bulk.tensor) are not lowered");
	if (mod_prefix(in, ".multicast") || mod_prefix(in, ".cp_mask"))
		return al_unsupported(c, in, "multicast and byte-masked bulk copies are not lowered");
	enum ir_space dsp = bulk_space(in->mods[2]), ssp = bulk_space(in->mods[3]);
	bool mbar = al_mod(in, ".mbarrier::complete_tx::bytes");
	bool to_shared = dsp == IR_SPACE_SHARED && (ssp == IR_SPACE_GLOBAL || ssp == IR_SPACE_SHARED) && mbar;
	bool to_global = dsp == IR_SPACE_GLOBAL && ssp == IR_SPACE_SHARED && al_mod(in, ".bulk_group");
	if (!to_shared && !to_global)
		return al_unsupported(c, in, "only global/shared to shared (completing on an mbarrier) and shared to global "
					     "(in a bulk group) bulk copies are lowered");
	unsigned need = to_shared ? 4 : 3;
	if (in->nops < need || in->ops[0].kind != IR_OPND_ADDR || in->ops[1].kind != IR_OPND_ADDR ||
	    (to_shared && in->ops[3].kind != IR_OPND_ADDR))
		return al_unsupported(c, in, to_shared ? "expected [dst], [src], size, [mbar]" : "expected [dst], [src], size");
	LLVMValueRef dst = al_address(c, &in->ops[0], dsp);
	LLVMValueRef src = dst ? al_address(c, &in->ops[1], ssp) : NULL;
	LLVMValueRef size = src ? al_read(c, &in->ops[2], AT('u', 32)) : NULL;
	if (!size)
		return -1;
	copy_words(c, dst, src, size);
	if (to_global)
		return 1;
	LLVMValueRef p = mbar_ptr(c, in, &in->ops[3]);
	if (!p)
		return -1;
	mbar_update(c, p, al_ci(c, 64, 0), al_ci(c, 64, 0), LLVMBuildNeg(B, LLVMBuildZExt(B, size, al_ity(c, 64), ""), ""), true);
	return 1;
}

int al_async(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "mbarrier"))
		return mbarrier(c, in);
	if (!strcmp(op, "mapa") || (!strcmp(op, "barrier") && al_mod(in, ".cluster")))
		return al_cluster(c, in);
	if (strcmp(op, "cp") || in->nmods < 2 || strcmp(in->mods[0], ".async"))
		return 0;
	if (!strcmp(in->mods[1], ".mbarrier")) {   /* cp.async.mbarrier.arrive(.noinc) [bar] */
		if (in->nops != 1 || in->ops[0].kind != IR_OPND_ADDR)
			return al_unsupported(c, in, "expected [bar]");
		if (!al_mod(in, ".noinc"))
			return 1;   /* one more pending arrival, and its arrival: no change */
		LLVMValueRef p = mbar_ptr(c, in, &in->ops[0]);
		if (!p)
			return -1;
		mbar_update(c, p, al_ci(c, 64, 1), al_ci(c, 64, 0), al_ci(c, 64, 0), true);
		return 1;
	}
	if (strcmp(in->mods[1], ".bulk"))
		return 0;
	if (in->nmods >= 3 && (!strcmp(in->mods[2], ".commit_group") || !strcmp(in->mods[2], ".wait_group")))
		return 1;   /* bulk copies complete when issued */
	if (in->nmods >= 3 && !strcmp(in->mods[2], ".prefetch"))
		return 1;   /* a hint */
	return bulk_copy(c, in);
}
