/* Asynchronous copies as ordinary ones: cp.async.{ca,cg}.shared.global copies its bytes at once
 * (zero-filling past src-size, or all of them under ignore-src), so commit_group, wait_group and
 * wait_all have nothing left to wait for, and cp.async.mbarrier.arrive (without .noinc: a net
 * zero change of the barrier's pending count) nothing to signal. A thread sees its own copies at
 * once, others' after the barrier the program has anyway, as on the GPU. Bulk copies (TMA),
 * .noinc arrivals and mbarriers themselves stay unlowered. */
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

int lw_async(lw *c, const ir_insn *in)
{
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
