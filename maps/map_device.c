/* Device helpers for maps, rings and printk, emitted into the IR (see map_device.h). Each
 * public helper is a .func (.param .b64 ret) f(.param .b64 a1..a5); internal pieces they share
 * (shard index, byte copy, value store, hash probe, ring reserve) are .funcs of their own.
 * Registers: %rd1..%rd5 hold the arguments, %rd6 the result; the rest are temporaries.
 * Descriptor fields never change while kernels run (only its element count, always reached by
 * atomics), so they are read through the non-coherent read-only path (ld.global.nc). */
#include "maps/map_device.h"
#include "maps/map_device_internal.h"
#include "ebpf/lower.h"
#include "maps/map_emit.h"
#include "maps/maps.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#define F_SHARD GP_EMIT_PREFIX "shard"
#define F_COPY GP_EMIT_PREFIX "copy"
#define F_STORE GP_EMIT_PREFIX "store"
#define F_FIND GP_EMIT_PREFIX "hash_find"
#define F_COMMIT GP_MD_F_COMMIT

/* Two variants of the ring reservation. The lossless and sampled rings' code (include/gpuprobe/
 * warp.h) adds about 60 instructions to every inlined reservation, which pushed the memory
 * trace's 218 sites in bench/overhead's module past the inliner's budget (ptx-frontend/inline.h)
 * into out-of-line calls: so only the helpers of a probe object that has such a ring get it
 * (names ending in _modes); every other object gets the reservation as it was. The variant is
 * chosen per call of gp_maps_helper_func (thread-local: modules are instrumented on several
 * threads at once). */
static _Thread_local int modes_variant;
#define F_RESERVE (modes_variant ? GP_EMIT_PREFIX "ring_reserve_modes" : GP_EMIT_PREFIX "ring_reserve")
#define F_RESERVE1 (modes_variant ? GP_EMIT_PREFIX "ring_reserve1_modes" : GP_EMIT_PREFIX "ring_reserve1")

static void load_args(struct gp_emit *e, unsigned n)
{
	for (unsigned i = 1; i <= n; i++)
		gp_em(e, "ld.param.u64 %%rd%u, [gp_a%u]", i, i);
}

static void ret_reg(struct gp_emit *e, const char *reg)
{
	gp_em(e, "st.param.b64 [gp_ret], %s", reg);
	gp_em(e, "ret");
}

static void ret_imm(struct gp_emit *e, long long v)
{
	gp_em(e, "mov.u64 %%rd6, %lld", v);
	ret_reg(e, "%rd6");
}

static void call(struct gp_emit *e, const char *fn, const char *ret, unsigned n, ...)
{
	const char *args[5];
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		args[i] = va_arg(ap, const char *);
	va_end(ap);
	gp_em_call(e, fn, ret, n, args);
}

/* ---- internal functions ------------------------------------------------------------------- */

/* shard(desc) -> copy index: 0 without copies, %smid % nshards per SM, the global linear thread
 * id % nshards per thread slot. */
static void def_shard(struct gp_emit *e)
{
	load_args(e, 1);
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_NSHARDS);
	gp_em(e, "setp.le.u32 %%p1, %%r1, 1");
	gp_em(e, "@%%p1 bra $L_zero");
	gp_em(e, "ld.global.nc.u32 %%r2, [%%rd1+%d]", GP_MD_FLAGS);
	gp_em(e, "and.b32 %%r2, %%r2, %d", GP_MAPF_PERTHREAD);
	gp_em(e, "setp.ne.u32 %%p1, %%r2, 0");
	gp_em(e, "@%%p1 bra $L_thread");
	gp_em(e, "mov.u32 %%r3, %%smid");
	gp_em(e, "setp.lt.u32 %%p2, %%r3, %%r1");
	gp_em(e, "@!%%p2 rem.u32 %%r3, %%r3, %%r1");
	gp_em(e, "cvt.u64.u32 %%rd6, %%r3");
	ret_reg(e, "%rd6");
	gp_em_label(e, "$L_thread");
	/* block = (ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x */
	gp_em(e, "mov.u32 %%r4, %%ctaid.z");
	gp_em(e, "mov.u32 %%r5, %%nctaid.y");
	gp_em(e, "mov.u32 %%r6, %%ctaid.y");
	gp_em(e, "mad.lo.u32 %%r4, %%r4, %%r5, %%r6");
	gp_em(e, "mov.u32 %%r5, %%nctaid.x");
	gp_em(e, "mov.u32 %%r6, %%ctaid.x");
	gp_em(e, "mad.lo.u32 %%r4, %%r4, %%r5, %%r6");
	/* threads per block, and the thread within it */
	gp_em(e, "mov.u32 %%r7, %%ntid.x");
	gp_em(e, "mov.u32 %%r8, %%ntid.y");
	gp_em(e, "mov.u32 %%r9, %%ntid.z");
	gp_em(e, "mul.lo.u32 %%r10, %%r7, %%r8");
	gp_em(e, "mul.lo.u32 %%r10, %%r10, %%r9");
	gp_em(e, "mov.u32 %%r11, %%tid.z");
	gp_em(e, "mov.u32 %%r12, %%tid.y");
	gp_em(e, "mad.lo.u32 %%r11, %%r11, %%r8, %%r12");
	gp_em(e, "mov.u32 %%r12, %%tid.x");
	gp_em(e, "mad.lo.u32 %%r11, %%r11, %%r7, %%r12");
	gp_em(e, "mul.wide.u32 %%rd7, %%r4, %%r10");
	gp_em(e, "cvt.u64.u32 %%rd8, %%r11");
	gp_em(e, "add.u64 %%rd7, %%rd7, %%rd8");
	gp_em(e, "cvt.u64.u32 %%rd8, %%r1");
	gp_em(e, "rem.u64 %%rd6, %%rd7, %%rd8");
	ret_reg(e, "%rd6");
	gp_em_label(e, "$L_zero");
	ret_imm(e, 0);
}

/* copy(dst, src, n): n bytes from src (generic) to dst; src 0 writes zeros. 8 bytes at a time
 * when dst, src and n allow it, bytes otherwise (probe stacks give any alignment). */
static void def_copy(struct gp_emit *e)
{
	load_args(e, 3);
	gp_em(e, "mov.u64 %%rd7, 0");
	gp_em(e, "or.b64 %%rd8, %%rd1, %%rd2");
	gp_em(e, "or.b64 %%rd8, %%rd8, %%rd3");
	gp_em(e, "and.b64 %%rd8, %%rd8, 7");
	gp_em(e, "setp.ne.u64 %%p1, %%rd8, 0");
	gp_em(e, "@%%p1 bra $L_bytes");
	gp_em_label(e, "$L_w");
	gp_em(e, "setp.ge.u64 %%p2, %%rd7, %%rd3");
	gp_em(e, "@%%p2 bra $L_done");
	gp_em(e, "mov.u64 %%rd9, 0");
	gp_em(e, "setp.eq.u64 %%p3, %%rd2, 0");
	gp_em(e, "add.u64 %%rd10, %%rd2, %%rd7");
	gp_em(e, "@!%%p3 ld.u64 %%rd9, [%%rd10]");
	gp_em(e, "add.u64 %%rd11, %%rd1, %%rd7");
	gp_em(e, "st.u64 [%%rd11], %%rd9");
	gp_em(e, "add.u64 %%rd7, %%rd7, 8");
	gp_em(e, "bra.uni $L_w");
	gp_em_label(e, "$L_bytes");
	gp_em(e, "setp.ge.u64 %%p2, %%rd7, %%rd3");
	gp_em(e, "@%%p2 bra $L_done");
	gp_em(e, "mov.u32 %%r1, 0");
	gp_em(e, "setp.eq.u64 %%p3, %%rd2, 0");
	gp_em(e, "add.u64 %%rd10, %%rd2, %%rd7");
	gp_em(e, "@!%%p3 ld.u8 %%r1, [%%rd10]");
	gp_em(e, "add.u64 %%rd11, %%rd1, %%rd7");
	gp_em(e, "st.u8 [%%rd11], %%r1");
	gp_em(e, "add.u64 %%rd7, %%rd7, 1");
	gp_em(e, "bra.uni $L_bytes");
	gp_em_label(e, "$L_done");
	ret_imm(e, 0);
}

/* store(desc, slot0, value, zero_others): write the value into this thread's copy of the slot
 * whose copy 0 is at slot0; with zero_others, zero every other copy (a new element, or a
 * sharded map whose sum must become the value). */
static void def_store(struct gp_emit *e)
{
	load_args(e, 4);
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_NSHARDS);
	gp_em(e, "ld.global.nc.u32 %%r2, [%%rd1+%d]", GP_MD_VALUE_SIZE);
	gp_em(e, "cvt.u64.u32 %%rd9, %%r2");
	gp_em(e, "setp.gt.u32 %%p1, %%r1, 1");
	gp_em(e, "@%%p1 bra $L_sharded");
	call(e, F_COPY, "%rd6", 3, "%rd2", "%rd3", "%rd9");
	ret_imm(e, 0);
	gp_em_label(e, "$L_sharded");
	call(e, F_SHARD, "%rd7", 1, "%rd1");
	gp_em(e, "ld.global.nc.u64 %%rd8, [%%rd1+%d]", GP_MD_SHARD_STRIDE);
	gp_em(e, "setp.ne.u64 %%p2, %%rd4, 0");
	gp_em(e, "@%%p2 bra $L_all");
	gp_em(e, "mad.lo.u64 %%rd11, %%rd7, %%rd8, %%rd2");
	call(e, F_COPY, "%rd6", 3, "%rd11", "%rd3", "%rd9");
	ret_imm(e, 0);
	gp_em_label(e, "$L_all");
	gp_em(e, "mov.u64 %%rd12, 0");
	gp_em(e, "mov.u32 %%r3, 0");
	gp_em_label(e, "$L_loop");
	gp_em(e, "setp.ge.u32 %%p3, %%r3, %%r1");
	gp_em(e, "@%%p3 bra $L_done");
	gp_em(e, "cvt.u64.u32 %%rd10, %%r3");
	gp_em(e, "mad.lo.u64 %%rd11, %%rd10, %%rd8, %%rd2");
	gp_em(e, "setp.eq.u64 %%p4, %%rd10, %%rd7");
	gp_em(e, "selp.b64 %%rd13, %%rd3, %%rd12, %%p4");
	call(e, F_COPY, "%rd6", 3, "%rd11", "%rd13", "%rd9");
	gp_em(e, "add.u32 %%r3, %%r3, 1");
	gp_em(e, "bra.uni $L_loop");
	gp_em_label(e, "$L_done");
	ret_imm(e, 0);
}

/* FNV-1a of the key at %rd2 (key_size into %r2) into %r3. */
static void emit_hash(struct gp_emit *e)
{
	gp_em(e, "ld.global.nc.u32 %%r2, [%%rd1+%d]", GP_MD_KEY_SIZE);
	gp_em(e, "mov.u32 %%r3, %u", GP_FNV_OFFSET);
	gp_em(e, "mov.u32 %%r4, 0");
	gp_em_label(e, "$L_h");
	gp_em(e, "setp.ge.u32 %%p1, %%r4, %%r2");
	gp_em(e, "@%%p1 bra $L_hdone");
	gp_em(e, "cvt.u64.u32 %%rd7, %%r4");
	gp_em(e, "add.u64 %%rd7, %%rd2, %%rd7");
	gp_em(e, "ld.u8 %%r5, [%%rd7]");
	gp_em(e, "xor.b32 %%r3, %%r3, %%r5");
	gp_em(e, "mul.lo.u32 %%r3, %%r3, %u", GP_FNV_PRIME);
	gp_em(e, "add.u32 %%r4, %%r4, 1");
	gp_em(e, "bra.uni $L_h");
	gp_em_label(e, "$L_hdone");
}

/* The probe loop over buckets for the key at %rd2 (hash in %r3, size in %r2). Leaves at:
 * $L_p_end (every bucket seen), $L_p_busy (a bucket stayed BUSY too long), $L_p_empty (an EMPTY
 * bucket), $L_p_match (FULL or DELETED holding the key); there %r11 = bucket, %rd9 = its
 * address, %r12 = its state. $L_p re-reads the current bucket; $L_p_next moves on. */
static void emit_probe(struct gp_emit *e)
{
	gp_em(e, "ld.global.nc.u32 %%r6, [%%rd1+%d]", GP_MD_CAPACITY);
	gp_em(e, "sub.u32 %%r7, %%r6, 1");
	gp_em(e, "mov.u32 %%r8, 0");
	gp_em(e, "mov.u32 %%r9, 0");
	gp_em(e, "ld.global.nc.u32 %%r10, [%%rd1+%d]", GP_MD_BUCKET_STRIDE);
	gp_em(e, "ld.global.nc.u64 %%rd8, [%%rd1+%d]", GP_MD_DATA);
	gp_em_label(e, "$L_p");
	gp_em(e, "setp.gt.u32 %%p1, %%r8, %%r7");
	gp_em(e, "@%%p1 bra $L_p_end");
	gp_em(e, "add.u32 %%r11, %%r3, %%r8");
	gp_em(e, "and.b32 %%r11, %%r11, %%r7");
	gp_em(e, "mul.wide.u32 %%rd9, %%r11, %%r10");
	gp_em(e, "add.u64 %%rd9, %%rd8, %%rd9");
	gp_em(e, "ld.acquire.gpu.global.u32 %%r12, [%%rd9]");
	gp_em(e, "setp.ne.u32 %%p1, %%r12, %d", GP_HASH_BUSY);
	gp_em(e, "@%%p1 bra $L_p_nb");
	gp_em(e, "add.u32 %%r9, %%r9, 1");
	gp_em(e, "setp.gt.u32 %%p1, %%r9, %d", GP_HASH_SPIN_LIMIT);
	gp_em(e, "@%%p1 bra $L_p_busy");
	gp_em(e, "bra.uni $L_p");
	gp_em_label(e, "$L_p_nb");
	gp_em(e, "setp.eq.u32 %%p1, %%r12, %d", GP_HASH_EMPTY);
	gp_em(e, "@%%p1 bra $L_p_empty");
	gp_em(e, "ld.global.u32 %%r13, [%%rd9+%d]", GP_HB_HASH);
	gp_em(e, "setp.ne.u32 %%p1, %%r13, %%r3");
	gp_em(e, "@%%p1 bra $L_p_next");
	gp_em(e, "mov.u32 %%r14, 0");
	gp_em_label(e, "$L_c");
	gp_em(e, "setp.ge.u32 %%p1, %%r14, %%r2");
	gp_em(e, "@%%p1 bra $L_p_match");
	gp_em(e, "cvt.u64.u32 %%rd10, %%r14");
	gp_em(e, "add.u64 %%rd11, %%rd2, %%rd10");
	gp_em(e, "ld.u8 %%r15, [%%rd11]");
	gp_em(e, "add.u64 %%rd11, %%rd9, %%rd10");
	gp_em(e, "ld.global.u8 %%r16, [%%rd11+%d]", GP_HB_KEY);
	gp_em(e, "setp.ne.u32 %%p1, %%r15, %%r16");
	gp_em(e, "@%%p1 bra $L_p_next");
	gp_em(e, "add.u32 %%r14, %%r14, 1");
	gp_em(e, "bra.uni $L_c");
	gp_em_label(e, "$L_p_next");
	gp_em(e, "add.u32 %%r8, %%r8, 1");
	gp_em(e, "bra.uni $L_p");
}

/* hash_find(desc, key) -> the FULL bucket holding key, or -1. */
static void def_find(struct gp_emit *e)
{
	load_args(e, 2);
	emit_hash(e);
	emit_probe(e);
	gp_em_label(e, "$L_p_match");
	gp_em(e, "setp.ne.u32 %%p1, %%r12, %d", GP_HASH_FULL);
	gp_em(e, "@%%p1 bra $L_p_end");
	gp_em(e, "cvt.u64.u32 %%rd6, %%r11");
	ret_reg(e, "%rd6");
	gp_em_label(e, "$L_p_empty");
	gp_em_label(e, "$L_p_busy");
	gp_em_label(e, "$L_p_end");
	ret_imm(e, -1);
}

/* Address of copy 0 of the value of hash bucket %r11 (bucket address %rd9) into %rd12. */
static void emit_hash_slot0(struct gp_emit *e, int tag)
{
	gp_em(e, "ld.global.nc.u32 %%r21, [%%rd1+%d]", GP_MD_NSHARDS);
	gp_em(e, "setp.gt.u32 %%p4, %%r21, 1");
	gp_em(e, "@%%p4 bra $L_sv%d", tag);
	gp_em(e, "ld.global.nc.u32 %%r22, [%%rd1+%d]", GP_MD_KEY_SIZE);
	gp_em(e, "add.u32 %%r22, %%r22, %d", GP_HB_KEY + 7);
	gp_em(e, "and.b32 %%r22, %%r22, -8");
	gp_em(e, "cvt.u64.u32 %%rd14, %%r22");
	gp_em(e, "add.u64 %%rd12, %%rd9, %%rd14");
	gp_em(e, "bra.uni $L_sdone%d", tag);
	gp_em_label(e, ir_strfmt(e->m, "$L_sv%d", tag));
	gp_em(e, "ld.global.nc.u64 %%rd13, [%%rd1+%d]", GP_MD_VDATA);
	gp_em(e, "ld.global.nc.u32 %%r22, [%%rd1+%d]", GP_MD_VALUE_STRIDE);
	gp_em(e, "mul.wide.u32 %%rd14, %%r11, %%r22");
	gp_em(e, "add.u64 %%rd12, %%rd13, %%rd14");
	gp_em_label(e, ir_strfmt(e->m, "$L_sdone%d", tag));
}

/* The u32 array index at the key %rd2 into %r11: one load when it is 4-byte aligned (stack keys
 * nearly always are), bytes otherwise. */
static void emit_array_index(struct gp_emit *e)
{
	gp_em(e, "and.b64 %%rd30, %%rd2, 3");
	gp_em(e, "setp.ne.u64 %%p5, %%rd30, 0");
	gp_em(e, "@%%p5 bra $L_ix_bytes");
	gp_em(e, "ld.u32 %%r11, [%%rd2]");
	gp_em(e, "bra.uni $L_ix_done");
	gp_em_label(e, "$L_ix_bytes");
	gp_em(e, "ld.u8 %%r11, [%%rd2]");
	for (int i = 1; i < 4; i++) {
		gp_em(e, "ld.u8 %%r12, [%%rd2+%d]", i);
		gp_em(e, "shl.b32 %%r12, %%r12, %d", 8 * i);
		gp_em(e, "or.b32 %%r11, %%r11, %%r12");
	}
	gp_em_label(e, "$L_ix_done");
}

/* Address of copy 0 of array element %r11 into %rd12. */
static void emit_array_slot0(struct gp_emit *e)
{
	gp_em(e, "ld.global.nc.u32 %%r22, [%%rd1+%d]", GP_MD_VALUE_STRIDE);
	gp_em(e, "ld.global.nc.u64 %%rd13, [%%rd1+%d]", GP_MD_DATA);
	gp_em(e, "mul.wide.u32 %%rd14, %%r11, %%r22");
	gp_em(e, "add.u64 %%rd12, %%rd13, %%rd14");
}

/* %rd12 += this thread's copy index * shard_stride. Per-SM copies (the hot path of counting
 * probes) are computed here without a call; per-thread slots call shard(). */
static void emit_add_shard(struct gp_emit *e)
{
	gp_em(e, "ld.global.nc.u32 %%r21, [%%rd1+%d]", GP_MD_NSHARDS);
	gp_em(e, "setp.le.u32 %%p4, %%r21, 1");
	gp_em(e, "@%%p4 bra $L_noshard");
	gp_em(e, "ld.global.nc.u64 %%rd16, [%%rd1+%d]", GP_MD_SHARD_STRIDE);
	gp_em(e, "ld.global.nc.u32 %%r23, [%%rd1+%d]", GP_MD_FLAGS);
	gp_em(e, "and.b32 %%r23, %%r23, %d", GP_MAPF_PERTHREAD);
	gp_em(e, "setp.ne.u32 %%p4, %%r23, 0");
	gp_em(e, "@%%p4 bra $L_thread_shard");
	gp_em(e, "mov.u32 %%r24, %%smid");
	gp_em(e, "setp.lt.u32 %%p4, %%r24, %%r21");
	gp_em(e, "@!%%p4 rem.u32 %%r24, %%r24, %%r21");
	gp_em(e, "cvt.u64.u32 %%rd15, %%r24");
	gp_em(e, "bra.uni $L_shard_add");
	gp_em_label(e, "$L_thread_shard");
	call(e, F_SHARD, "%rd15", 1, "%rd1");
	gp_em_label(e, "$L_shard_add");
	gp_em(e, "mad.lo.u64 %%rd12, %%rd15, %%rd16, %%rd12");
	gp_em_label(e, "$L_noshard");
}

/* Whether the module can use the warp-synchronous instructions the ring uses (activemask with
 * match.any.sync, shfl.sync, fence.acq_rel): target sm_70 and later, PTX ISA 6.2 and later (when
 * the module says). Others reserve one record per lane with the same code (a group of one). */
static int ring_warp_target(const struct gp_emit *e)
{
	const char *v = e->m->version;
	if (v) {
		int major = atoi(v), minor = 0;
		const char *dot = strchr(v, '.');
		if (dot)
			minor = atoi(dot + 1);
		if (major < 6 || (major == 6 && minor < 2))
			return 0;
	}
	return e->m->target && !strncmp(e->m->target, "sm_", 3) && atoi(e->m->target + 3) >= 70;
}

/* Whether nanosleep exists: sm_70 and PTX ISA 6.3 (when the module says). */
static int ring_sleep_target(const struct gp_emit *e)
{
	const char *v = e->m->version;
	if (v && (atoi(v) < 6 || (atoi(v) == 6 && strchr(v, '.') && atoi(strchr(v, '.') + 1) < 3)))
		return 0;
	return ring_warp_target(e);
}

/* ring_reserve(desc, size) -> payload address in this SM's ring, 0 (the record is counted as
 * dropped) or 1 (a sampled ring left the batch out: not a drop).
 *
 * One reservation per warp: the lanes that reserve together into the same ring with the same
 * record size (match.any.sync on both; at an inlined site that is every active lane) form a
 * group; its lowest lane, the leader, claims k <= n records with one CAS on the ring's head and
 * gives the position to the others with shfl.sync; lane `rank` takes record `rank` if rank < k,
 * and the leader adds n - k to the drop counter once. bench/overhead measured the per-lane CAS
 * loop this replaces at 430x on a 16M vector add (H200): 32 lanes of a warp CASing one head
 * succeed one per round, and the warp, diverged by the loop, then ran the copy, the fence and
 * the commit once per lane.
 *
 * A batch that crosses the end of the ring is split: k1 records up to the end, a PAD record over
 * what is left of the tail, the other k - k1 from offset 0 (one CAS covers all of it). When the
 * free space by the device's copy of the consumer position is short, the leader rereads the
 * host's position, at most once per GP_RING_REFRESH_NS per ring (claimed with a CAS on the
 * refresh time, so one warp pays the PCIe read), then takes what fits: nothing waits for the host.
 *
 * A sampled ring (GP_MAPF_SAMPLED) counts each batch offered (GP_RP_SAMPLE_SEQ, one atomic per
 * warp batch, on this SM's state) and keeps batch number s when s % sample_rate == 0: the
 * lanes of a warp access stay together, and the host scales by the rate it finds in the
 * descriptor, with the records offered counted exactly beside it (GP_RP_OFFERED). A lossless
 * ring (GP_MAPF_LOSSLESS) waits for space instead of dropping: map_layout.h, "Lossless rings".
 * Registers: %r8 rank, %r9 n, %r10 the leader's lane, %r6 the group, %r14 the record size,
 * %r11 k, %r12 k1, %r13 the batch's offset in the ring, %r26 the map's flags, %r28 sampled
 * out, %r29 the wait's next sleep, %rd35 when the wait began (0: none).
 * warp = 0: every calling lane reserves for itself (a group of one); sleep: nanosleep exists. */
static void def_reserve_impl(struct gp_emit *e, int warp, int sleep, int modes)
{
	load_args(e, 2);
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_KIND);
	gp_em(e, "setp.ne.u32 %%p1, %%r1, %d", GP_MAP_KIND_RING);
	gp_em(e, "@%%p1 bra $L_none");
	/* this SM's ring (rings are never per-thread) */
	gp_em(e, "ld.global.nc.u32 %%r2, [%%rd1+%d]", GP_MD_NSHARDS);
	gp_em(e, "mov.u32 %%r3, %%smid");
	gp_em(e, "setp.lt.u32 %%p2, %%r3, %%r2");
	gp_em(e, "@!%%p2 rem.u32 %%r3, %%r3, %%r2");
	gp_em(e, "cvt.u64.u32 %%rd7, %%r3");
	gp_em(e, "ld.global.nc.u32 %%r4, [%%rd1+%d]", GP_MD_CAPACITY);
	gp_em(e, "cvt.u64.u32 %%rd8, %%r4");                  /* cap */
	gp_em(e, "add.u64 %%rd9, %%rd2, %d", GP_RING_HDR + 7);
	gp_em(e, "and.b64 %%rd9, %%rd9, -8");                 /* rec = header + payload rounded */
	gp_em(e, "ld.global.nc.u64 %%rd10, [%%rd1+%d]", GP_MD_DATA);
	gp_em(e, "mad.lo.u64 %%rd10, %%rd7, %d, %%rd10", GP_RING_STATE_STRIDE); /* producer */
	gp_em(e, "ld.global.nc.u64 %%rd11, [%%rd1+%d]", GP_MD_VDATA);
	gp_em(e, "mad.lo.u64 %%rd11, %%rd7, %%rd8, %%rd11");  /* ring bytes */
	gp_em(e, "ld.global.nc.u64 %%rd12, [%%rd1+%d]", GP_MD_CONS);
	gp_em(e, "mad.lo.u64 %%rd12, %%rd7, %d, %%rd12", GP_RING_STATE_STRIDE); /* consumer */
	gp_em(e, "setp.gt.u64 %%p3, %%rd9, %%rd8");           /* never fits: the group drops */
	gp_em(e, "cvt.u32.u64 %%r14, %%rd9");
	gp_em(e, "mov.u32 %%r11, 0");
	gp_em(e, "mov.u32 %%r12, 0");
	gp_em(e, "mov.u32 %%r13, 0");
	if (modes)
		gp_em(e, "mov.u32 %%r28, 0");
	if (warp) {
		gp_em(e, "activemask.b32 %%r5");
		gp_em(e, "match.any.sync.b64 %%r6, %%rd10, %%r5");
		gp_em(e, "match.any.sync.b64 %%r7, %%rd9, %%r5");
		gp_em(e, "and.b32 %%r6, %%r6, %%r7");
		gp_em(e, "mov.u32 %%r8, %%lanemask_lt");
		gp_em(e, "and.b32 %%r8, %%r8, %%r6");
		gp_em(e, "popc.b32 %%r8, %%r8");
		gp_em(e, "popc.b32 %%r9, %%r6");
		gp_em(e, "neg.s32 %%r10, %%r6");
		gp_em(e, "and.b32 %%r10, %%r10, %%r6");
		gp_em(e, "bfind.u32 %%r10, %%r10");
		gp_em(e, "setp.ne.u32 %%p4, %%r8, 0");
		gp_em(e, "@%%p4 bra $L_bcast");                   /* only the leader reserves */
	} else {
		gp_em(e, "mov.u32 %%r8, 0");
		gp_em(e, "mov.u32 %%r9, 1");
	}
	if (modes) {
		gp_em(e, "mov.u64 %%rd35, 0");
		gp_em(e, "ld.global.nc.u32 %%r26, [%%rd1+%d]", GP_MD_FLAGS);
		gp_em(e, "and.b32 %%r27, %%r26, %d", GP_MAPF_SAMPLED);
		gp_em(e, "setp.eq.u32 %%p8, %%r27, 0");
		gp_em(e, "@%%p8 bra $L_sampled_in");
		gp_em(e, "cvt.u64.u32 %%rd30, %%r9");
		gp_em(e, "red.global.add.u64 [%%rd10+%d], %%rd30", GP_RP_OFFERED);
		gp_em(e, "atom.global.add.u64 %%rd31, [%%rd10+%d], 1", GP_RP_SAMPLE_SEQ);
		/* 32-bit remainder (a 64-bit one is a long software sequence): the phase moves once
		 * per 2^32 batches of one SM */
		gp_em(e, "ld.global.nc.u32 %%r27, [%%rd1+%d]", GP_MD_SAMPLE_RATE);
		gp_em(e, "max.u32 %%r27, %%r27, 1");
		gp_em(e, "cvt.u32.u64 %%r31, %%rd31");
		gp_em(e, "rem.u32 %%r31, %%r31, %%r27");
		gp_em(e, "setp.eq.u32 %%p8, %%r31, 0");
		gp_em(e, "@%%p8 bra $L_sampled_in");
		gp_em(e, "mov.u32 %%r28, 1");                         /* left out: no record, no drop */
		gp_em(e, "bra.uni $L_bcast");
		gp_em_label(e, "$L_sampled_in");
	}
	gp_em(e, "@%%p3 bra $L_decided");
	if (modes) {
		gp_em(e, "mov.u32 %%r29, %d", GP_RING_WAIT_MIN_NS);
		gp_em(e, "mov.u32 %%r30, 0");
	}
	gp_em(e, "sub.u32 %%r15, %%r4, 1");                   /* offset mask */
	gp_em(e, "mov.u32 %%r16, 0");                         /* attempts */
	gp_em(e, "mov.u32 %%r17, 0");                         /* host position reread once */
	gp_em(e, "mov.u64 %%rd29, 0");                        /* the host position this call read */
	gp_em_label(e, "$L_try");
	/* head, the consumer position as last seen on the device (the host's copy is a PCIe read)
	 * and the time of its last reread, in one round trip: a full ring needs all three (scalar
	 * loads: ptx-frontend/inline.c does not rename registers inside vector braces) */
	gp_em(e, "ld.volatile.global.u64 %%rd14, [%%rd10+%d]", GP_RP_HEAD);
	gp_em(e, "ld.volatile.global.u64 %%rd15, [%%rd10+%d]", GP_RP_CONS_SEEN);
	gp_em(e, "ld.volatile.global.u64 %%rd27, [%%rd10+%d]", GP_RP_REFRESHED);
	gp_em(e, "max.u64 %%rd15, %%rd15, %%rd29");          /* our red.max may not show yet */
	gp_em_label(e, "$L_again");                          /* a lost CAS comes back with head */
	gp_em(e, "mov.u32 %%r11, 0");
	gp_em(e, "mov.u32 %%r12, 0");
	gp_em(e, "setp.ge.u32 %%p1, %%r16, %d", GP_RING_CAS_LIMIT);
	gp_em(e, modes ? "@%%p1 bra $L_cas_limit" : "@%%p1 bra $L_decided");
	gp_em(e, "add.u32 %%r16, %%r16, 1");
	gp_em(e, "sub.u64 %%rd16, %%rd14, %%rd15");
	gp_em(e, "min.u64 %%rd16, %%rd16, %%rd8");            /* used */
	gp_em(e, "sub.u64 %%rd17, %%rd8, %%rd16");
	gp_em(e, "cvt.u32.u64 %%r18, %%rd17");                /* free */
	gp_em(e, "cvt.u32.u64 %%r13, %%rd14");
	gp_em(e, "and.b32 %%r13, %%r13, %%r15");              /* off */
	gp_em(e, "sub.u32 %%r19, %%r4, %%r13");               /* tail: bytes up to the end */
	gp_em(e, "div.u32 %%r12, %%r19, %%r14");
	gp_em(e, "min.u32 %%r12, %%r12, %%r9");               /* k1 = min(n, tail / rec) */
	gp_em(e, "div.u32 %%r11, %%r18, %%r14");
	gp_em(e, "min.u32 %%r11, %%r11, %%r9");               /* k = min(n, free / rec) */
	gp_em(e, "mul.lo.u32 %%r20, %%r11, %%r14");           /* bytes claimed */
	gp_em(e, "setp.le.u32 %%p5, %%r11, %%r12");
	gp_em(e, "@%%p5 bra $L_fitted");
	/* Crosses the end (then free > tail): k1 up to the end, the PAD, k2 from offset 0. */
	gp_em(e, "sub.u32 %%r21, %%r18, %%r19");
	gp_em(e, "div.u32 %%r21, %%r21, %%r14");
	gp_em(e, "sub.u32 %%r22, %%r9, %%r12");
	gp_em(e, "min.u32 %%r21, %%r21, %%r22");              /* k2 */
	gp_em(e, "add.u32 %%r11, %%r12, %%r21");
	gp_em(e, "mad.lo.u32 %%r20, %%r21, %%r14, %%r19");
	gp_em(e, "setp.eq.u32 %%p6, %%r21, 0");               /* none after the end: no PAD */
	gp_em(e, "mul.lo.u32 %%r22, %%r12, %%r14");
	gp_em(e, "selp.b32 %%r20, %%r22, %%r20, %%p6");
	gp_em_label(e, "$L_fitted");
	gp_em(e, "setp.ge.u32 %%p1, %%r11, %%r9");
	gp_em(e, "@%%p1 bra $L_claim");
	/* Short of space by the device's copy: reread the host's position (see above). */
	gp_em(e, "setp.ne.u32 %%p1, %%r17, 0");
	gp_em(e, "@%%p1 bra $L_claim");
	gp_em(e, "mov.u32 %%r17, 1");
	gp_em(e, "mov.u64 %%rd26, %%globaltimer");
	gp_em(e, "sub.u64 %%rd28, %%rd26, %%rd27");
	gp_em(e, "setp.lt.u64 %%p1, %%rd28, %d", GP_RING_REFRESH_NS);
	gp_em(e, "@%%p1 bra $L_claim");
	gp_em(e, "atom.global.cas.b64 %%rd28, [%%rd10+%d], %%rd27, %%rd26", GP_RP_REFRESHED);
	gp_em(e, "setp.ne.u64 %%p1, %%rd28, %%rd27");
	gp_em(e, "@%%p1 bra $L_claim");                      /* another warp rereads it */
	gp_em(e, "ld.volatile.global.u64 %%rd29, [%%rd12+%d]", GP_RC_POS);
	gp_em(e, "red.global.max.u64 [%%rd10+%d], %%rd29", GP_RP_CONS_SEEN);
	gp_em(e, "bra.uni $L_try");
	gp_em_label(e, "$L_claim");
	if (modes) {
		/* Lossless: short of space for the whole batch, wait (sleep, reread, try again) unless
		 * the ring is empty (the batch is larger than the ring) or a producer gave up on it. */
		gp_em(e, "setp.ge.u32 %%p1, %%r11, %%r9");
		gp_em(e, "@%%p1 bra $L_cas");
		gp_em(e, "and.b32 %%r27, %%r26, %d", GP_MAPF_LOSSLESS);
		gp_em(e, "setp.eq.u32 %%p1, %%r27, 0");
		gp_em(e, "@%%p1 bra $L_cas");
		gp_em(e, "setp.eq.u64 %%p1, %%rd16, 0");
		gp_em(e, "@%%p1 bra $L_cas");
		gp_em(e, "ld.volatile.global.u64 %%rd33, [%%rd10+%d]", GP_RP_GAVE_UP);
		gp_em(e, "setp.ne.u64 %%p1, %%rd33, 0");
		gp_em(e, "@%%p1 bra $L_cas");
		/* The give-up clock (%rd38) restarts whenever the consumer's position (%rd39) moved: only
		 * a consumer that stopped for the whole timeout turns the ring lossy. */
		gp_em(e, "mov.u64 %%rd34, %%globaltimer");
		gp_em(e, "setp.eq.u64 %%p1, %%rd35, 0");
		gp_em(e, "@%%p1 mov.u64 %%rd35, %%rd34");
		gp_em(e, "@%%p1 mov.u64 %%rd38, %%rd34");
		gp_em(e, "@%%p1 mov.u64 %%rd39, %%rd15");
		gp_em(e, "setp.ne.u64 %%p1, %%rd15, %%rd39");
		gp_em(e, "@%%p1 mov.u64 %%rd38, %%rd34");
		gp_em(e, "@%%p1 mov.u64 %%rd39, %%rd15");
		gp_em(e, "sub.u64 %%rd36, %%rd34, %%rd38");
		gp_em(e, "setp.gt.u64 %%p1, %%rd36, %llu", (unsigned long long)GP_RING_LOSSLESS_TIMEOUT_NS);
		gp_em(e, "@%%p1 bra $L_giveup");
		if (sleep)
			gp_em(e, "nanosleep.u32 %%r29");
		gp_em(e, "shl.b32 %%r29, %%r29, 1");
		gp_em(e, "min.u32 %%r29, %%r29, %d", GP_RING_WAIT_MAX_NS);
		gp_em(e, "mov.u32 %%r16, 0");                         /* CAS attempts start again */
		gp_em(e, "mov.u32 %%r17, 0");                         /* may reread the host's position */
		/* Every GP_RING_WAIT_REREAD waits this warp rereads the host's position itself, past the
		 * per-ring rate limit: that limit runs on %globaltimer, which a backend without a clock
		 * (spirv/ on PoCL counts reads) cannot be trusted to advance as time does. */
		gp_em(e, "add.u32 %%r30, %%r30, 1");
		gp_em(e, "and.b32 %%r27, %%r30, %d", GP_RING_WAIT_REREAD - 1);
		gp_em(e, "setp.ne.u32 %%p1, %%r27, 0");
		gp_em(e, "@%%p1 bra $L_try");
		gp_em(e, "ld.volatile.global.u64 %%rd29, [%%rd12+%d]", GP_RC_POS);
		gp_em(e, "red.global.max.u64 [%%rd10+%d], %%rd29", GP_RP_CONS_SEEN);
		gp_em(e, "bra.uni $L_try");
		gp_em_label(e, "$L_giveup");
		gp_em(e, "st.volatile.global.u64 [%%rd10+%d], %%rd34", GP_RP_GAVE_UP);
		gp_em(e, "bra.uni $L_cas");
		/* Lost the head's CAS GP_RING_CAS_LIMIT times in a row: a lossy ring drops the batch,
		 * a lossless one backs off and tries again (the give-up clock still runs). */
		gp_em_label(e, "$L_cas_limit");
		gp_em(e, "mov.u32 %%r11, 0");
		gp_em(e, "and.b32 %%r27, %%r26, %d", GP_MAPF_LOSSLESS);
		gp_em(e, "setp.eq.u32 %%p1, %%r27, 0");
		gp_em(e, "@%%p1 bra $L_decided");
		if (sleep)
			gp_em(e, "nanosleep.u32 %%r29");
		gp_em(e, "mov.u32 %%r16, 0");
		gp_em(e, "bra.uni $L_try");
		gp_em_label(e, "$L_cas");
	}
	gp_em(e, "setp.eq.u32 %%p1, %%r11, 0");
	gp_em(e, "@%%p1 bra $L_decided");
	gp_em(e, "cvt.u64.u32 %%rd18, %%r20");
	gp_em(e, "add.u64 %%rd18, %%rd14, %%rd18");
	gp_em(e, "atom.global.cas.b64 %%rd19, [%%rd10+%d], %%rd14, %%rd18", GP_RP_HEAD);
	gp_em(e, "setp.ne.u64 %%p1, %%rd19, %%rd14");
	gp_em(e, "mov.u64 %%rd14, %%rd19");
	gp_em(e, "@%%p1 bra $L_again");
	gp_em(e, "setp.le.u32 %%p1, %%r11, %%r12");
	gp_em(e, "@%%p1 bra $L_decided");                    /* no wrap */
	gp_em(e, "mul.lo.u32 %%r21, %%r12, %%r14");
	gp_em(e, "sub.u32 %%r22, %%r19, %%r21");              /* tail bytes the k1 records leave */
	gp_em(e, "setp.eq.u32 %%p1, %%r22, 0");
	gp_em(e, "@%%p1 bra $L_decided");
	gp_em(e, "add.u32 %%r21, %%r13, %%r21");
	gp_em(e, "cvt.u64.u32 %%rd20, %%r21");
	gp_em(e, "add.u64 %%rd20, %%rd11, %%rd20");
	gp_em(e, "sub.u32 %%r22, %%r22, %d", GP_RING_HDR);
	gp_em(e, "cvt.u64.u32 %%rd21, %%r22");
	gp_em(e, "or.b64 %%rd21, %%rd21, %lld", (long long)GP_REC_PAD << 32);
	gp_em(e, "st.volatile.global.u64 [%%rd20], %%rd21");
	gp_em_label(e, "$L_decided");
	if (modes) {
		gp_em(e, "setp.eq.u64 %%p1, %%rd35, 0");
		gp_em(e, "@%%p1 bra $L_nowait");
		gp_em(e, "mov.u64 %%rd34, %%globaltimer");
		gp_em(e, "sub.u64 %%rd36, %%rd34, %%rd35");
		gp_em(e, "red.global.add.u64 [%%rd10+%d], %%rd36", GP_RP_WAIT_NS);
		gp_em_label(e, "$L_nowait");
	}
	gp_em(e, "setp.ge.u32 %%p1, %%r11, %%r9");
	gp_em(e, "@%%p1 bra $L_bcast");
	gp_em(e, "sub.u32 %%r21, %%r9, %%r11");               /* the group's lost records, once */
	gp_em(e, "cvt.u64.u32 %%rd22, %%r21");
	gp_em(e, "red.global.add.u64 [%%rd10+%d], %%rd22", GP_RP_DROPS);
	gp_em_label(e, "$L_bcast");
	if (warp) {
		gp_em(e, "shfl.sync.idx.b32 %%r13, %%r13, %%r10, 31, %%r6");
		gp_em(e, "shl.b32 %%r23, %%r12, 8");
		gp_em(e, "or.b32 %%r23, %%r23, %%r11");
		if (modes) {
			gp_em(e, "shl.b32 %%r27, %%r28, 16");
			gp_em(e, "or.b32 %%r23, %%r23, %%r27");
		}
		gp_em(e, "shfl.sync.idx.b32 %%r23, %%r23, %%r10, 31, %%r6");
		gp_em(e, "and.b32 %%r11, %%r23, 255");
		gp_em(e, "shr.u32 %%r12, %%r23, 8");
		if (modes) {
			gp_em(e, "and.b32 %%r12, %%r12, 255");
			gp_em(e, "shr.u32 %%r28, %%r23, 16");
		}
	}
	/* this lane's record (rank < k): rank < k1 at off + rank * rec, the others from 0. No
	 * branch: with one, the SPIR-V warp emulation (spirv/lower_warp.c on PoCL) let lanes past k
	 * store and return a record anyway (tests/maps/ring_pocl: helper successes > delivered). */
	gp_em(e, "setp.lt.u32 %%p7, %%r8, %%r11");
	gp_em(e, "setp.lt.u32 %%p1, %%r8, %%r12");
	gp_em(e, "sub.u32 %%r24, %%r8, %%r12");
	gp_em(e, "selp.b32 %%r24, %%r8, %%r24, %%p1");
	gp_em(e, "selp.b32 %%r25, %%r13, 0, %%p1");
	gp_em(e, "mad.lo.u32 %%r24, %%r24, %%r14, %%r25");
	gp_em(e, "cvt.u64.u32 %%rd23, %%r24");
	gp_em(e, "add.u64 %%rd23, %%rd11, %%rd23");
	gp_em(e, "cvt.u32.u64 %%r25, %%rd2");
	gp_em(e, "@%%p7 st.global.u32 [%%rd23], %%r25");      /* length now; state at commit */
	gp_em(e, "add.u64 %%rd6, %%rd23, %d", GP_RING_HDR);
	if (modes) {
		gp_em(e, "cvt.u64.u32 %%rd37, %%r28");
		gp_em(e, "selp.b64 %%rd6, %%rd6, %%rd37, %%p7");
	} else {
		gp_em(e, "selp.b64 %%rd6, %%rd6, 0, %%p7");
	}
	ret_reg(e, "%rd6");
	gp_em_label(e, "$L_none");
	ret_imm(e, 0);
}

static void def_reserve(struct gp_emit *e)
{
	def_reserve_impl(e, ring_warp_target(e), ring_sleep_target(e), modes_variant);
}
/* One lane reserves for itself alone (the leader of bpf_gpu_warp_output, in code only it runs). */
static void def_reserve1(struct gp_emit *e) { def_reserve_impl(e, 0, ring_sleep_target(e), modes_variant); }

/* ring_commit(payload, state): publish a reserved record to the host: the record's bytes are
 * ordered before its state by a system-scope release (fence + relaxed store). Lanes that commit
 * together (every lane of a warp's batch) issue the fence once, as one warp instruction. */
static void def_commit(struct gp_emit *e)
{
	load_args(e, 2);
	gp_em(e, "cvt.u32.u64 %%r1, %%rd2");
	if (ring_warp_target(e))
		gp_em(e, "fence.acq_rel.sys");
	else
		gp_em(e, "membar.sys");
	gp_em(e, "sub.u64 %%rd7, %%rd1, %d", GP_RING_HDR - 4);
	gp_em(e, "st.volatile.global.u32 [%%rd7], %%r1");
	ret_imm(e, 0);
}

/* ---- public helpers ------------------------------------------------------------------------ */

/* map_lookup_elem(map, key) -> value address (this thread's copy) or 0. */
static void def_lookup(struct gp_emit *e)
{
	load_args(e, 2);
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_KIND);
	gp_em(e, "setp.eq.u32 %%p1, %%r1, %d", GP_MAP_KIND_ARRAY);
	gp_em(e, "@%%p1 bra $L_array");
	gp_em(e, "setp.ne.u32 %%p1, %%r1, %d", GP_MAP_KIND_HASH);
	gp_em(e, "@%%p1 bra $L_null");
	call(e, F_FIND, "%rd7", 2, "%rd1", "%rd2");
	gp_em(e, "setp.eq.s64 %%p1, %%rd7, -1");
	gp_em(e, "@%%p1 bra $L_null");
	gp_em(e, "cvt.u32.u64 %%r11, %%rd7");
	gp_em(e, "ld.global.nc.u32 %%r10, [%%rd1+%d]", GP_MD_BUCKET_STRIDE);
	gp_em(e, "ld.global.nc.u64 %%rd8, [%%rd1+%d]", GP_MD_DATA);
	gp_em(e, "mul.wide.u32 %%rd9, %%r11, %%r10");
	gp_em(e, "add.u64 %%rd9, %%rd8, %%rd9");
	emit_hash_slot0(e, 1);
	gp_em(e, "bra.uni $L_found");
	gp_em_label(e, "$L_array");
	emit_array_index(e);
	gp_em(e, "ld.global.nc.u32 %%r13, [%%rd1+%d]", GP_MD_MAX_ENTRIES);
	gp_em(e, "setp.ge.u32 %%p1, %%r11, %%r13");
	gp_em(e, "@%%p1 bra $L_null");
	emit_array_slot0(e);
	gp_em_label(e, "$L_found");
	emit_add_shard(e);
	ret_reg(e, "%rd12");
	gp_em_label(e, "$L_null");
	ret_imm(e, 0);
}

/* map_update_elem(map, key, value, flags) -> 0 or -errno (maps/maps.h has the semantics). */
static void def_update(struct gp_emit *e)
{
	load_args(e, 4);
	gp_em(e, "setp.gt.u64 %%p1, %%rd4, %d", BPF_EXIST);
	gp_em(e, "@%%p1 bra $L_einval");
	gp_em(e, "ld.global.nc.u32 %%r17, [%%rd1+%d]", GP_MD_FLAGS);
	gp_em(e, "and.b32 %%r18, %%r17, %d", GP_MAPF_RDONLY);
	gp_em(e, "setp.ne.u32 %%p1, %%r18, 0");
	gp_em(e, "@%%p1 bra $L_eperm");
	/* a sharded map's value becomes the sum: zero the other copies */
	gp_em(e, "and.b32 %%r18, %%r17, %d", GP_MAPF_SHARDED);
	gp_em(e, "cvt.u64.u32 %%rd20, %%r18");
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_KIND);
	gp_em(e, "setp.eq.u32 %%p1, %%r1, %d", GP_MAP_KIND_ARRAY);
	gp_em(e, "@%%p1 bra $L_array");
	gp_em(e, "setp.ne.u32 %%p1, %%r1, %d", GP_MAP_KIND_HASH);
	gp_em(e, "@%%p1 bra $L_einval");
	emit_hash(e);
	emit_probe(e);
	gp_em_label(e, "$L_p_match");
	gp_em(e, "setp.ne.u32 %%p1, %%r12, %d", GP_HASH_FULL);
	gp_em(e, "@%%p1 bra $L_insert");   /* DELETED holding this key: revive it */
	gp_em(e, "setp.eq.u64 %%p1, %%rd4, %d", BPF_NOEXIST);
	gp_em(e, "@%%p1 bra $L_eexist");
	emit_hash_slot0(e, 2);
	call(e, F_STORE, "%rd6", 4, "%rd1", "%rd12", "%rd3", "%rd20");
	ret_imm(e, 0);
	gp_em_label(e, "$L_p_empty");
	gp_em_label(e, "$L_insert");
	gp_em(e, "setp.eq.u64 %%p1, %%rd4, %d", BPF_EXIST);
	gp_em(e, "@%%p1 bra $L_enoent");
	/* Claim the bucket first, count second: counting every racing inserter before its claim
	 * pushed count past max_entries while only 1,000 keys existed (65,536 threads inserting
	 * 1,000 keys on the H200: half the keys never inserted, all their inserters told E2BIG).
	 * Counted after the claim, count never exceeds the buckets really claimed. */
	gp_em(e, "atom.global.cas.b32 %%r20, [%%rd9], %%r12, %d", GP_HASH_BUSY);
	gp_em(e, "setp.ne.u32 %%p1, %%r20, %%r12");
	gp_em(e, "@%%p1 bra $L_p");        /* someone else took it: look at it again */
	gp_em(e, "ld.global.nc.u32 %%r19, [%%rd1+%d]", GP_MD_MAX_ENTRIES);
	gp_em(e, "atom.global.add.u32 %%r20, [%%rd1+%d], 1", GP_MD_COUNT);
	gp_em(e, "setp.ge.u32 %%p1, %%r20, %%r19");
	gp_em(e, "@%%p1 bra $L_full");
	gp_em(e, "st.global.u32 [%%rd9+%d], %%r3", GP_HB_HASH);
	gp_em(e, "add.u64 %%rd21, %%rd9, %d", GP_HB_KEY);
	gp_em(e, "cvt.u64.u32 %%rd22, %%r2");
	call(e, F_COPY, "%rd6", 3, "%rd21", "%rd2", "%rd22");
	emit_hash_slot0(e, 3);
	gp_em(e, "mov.u64 %%rd23, 1");
	call(e, F_STORE, "%rd6", 4, "%rd1", "%rd12", "%rd3", "%rd23");
	gp_em(e, "st.release.gpu.global.u32 [%%rd9], %d", GP_HASH_FULL);
	ret_imm(e, 0);
	/* Over max_entries: give the bucket back as it was (EMPTY or DELETED with its key); no
	 * reader saw it FULL, waiters on BUSY look at it again. */
	gp_em_label(e, "$L_full");
	gp_em(e, "atom.global.add.u32 %%r20, [%%rd1+%d], -1", GP_MD_COUNT);
	gp_em(e, "st.release.gpu.global.u32 [%%rd9], %%r12");
	gp_em_label(e, "$L_p_end");
	ret_imm(e, -GP_DEV_E2BIG);
	gp_em_label(e, "$L_p_busy");
	ret_imm(e, -GP_DEV_EBUSY);
	gp_em_label(e, "$L_array");
	emit_array_index(e);
	gp_em(e, "ld.global.nc.u32 %%r13, [%%rd1+%d]", GP_MD_MAX_ENTRIES);
	gp_em(e, "setp.ge.u32 %%p1, %%r11, %%r13");
	gp_em(e, "@%%p1 bra $L_p_end");
	gp_em(e, "setp.eq.u64 %%p1, %%rd4, %d", BPF_NOEXIST);
	gp_em(e, "@%%p1 bra $L_eexist");
	emit_array_slot0(e);
	call(e, F_STORE, "%rd6", 4, "%rd1", "%rd12", "%rd3", "%rd20");
	ret_imm(e, 0);
	gp_em_label(e, "$L_eexist");
	ret_imm(e, -GP_DEV_EEXIST);
	gp_em_label(e, "$L_enoent");
	ret_imm(e, -GP_DEV_ENOENT);
	gp_em_label(e, "$L_eperm");
	ret_imm(e, -GP_DEV_EPERM);
	gp_em_label(e, "$L_einval");
	ret_imm(e, -GP_DEV_EINVAL);
}

/* map_delete_elem(map, key) -> 0, -ENOENT, -EINVAL (arrays). */
static void def_delete(struct gp_emit *e)
{
	load_args(e, 2);
	gp_em(e, "ld.global.nc.u32 %%r1, [%%rd1+%d]", GP_MD_KIND);
	gp_em(e, "setp.ne.u32 %%p1, %%r1, %d", GP_MAP_KIND_HASH);
	gp_em(e, "@%%p1 bra $L_einval");
	gp_em(e, "mov.u32 %%r9, 0");
	gp_em_label(e, "$L_again");
	call(e, F_FIND, "%rd7", 2, "%rd1", "%rd2");
	gp_em(e, "setp.eq.s64 %%p1, %%rd7, -1");
	gp_em(e, "@%%p1 bra $L_enoent");
	gp_em(e, "cvt.u32.u64 %%r11, %%rd7");
	gp_em(e, "ld.global.nc.u32 %%r10, [%%rd1+%d]", GP_MD_BUCKET_STRIDE);
	gp_em(e, "ld.global.nc.u64 %%rd8, [%%rd1+%d]", GP_MD_DATA);
	gp_em(e, "mul.wide.u32 %%rd9, %%r11, %%r10");
	gp_em(e, "add.u64 %%rd9, %%rd8, %%rd9");
	gp_em(e, "atom.global.cas.b32 %%r12, [%%rd9], %d, %d", GP_HASH_FULL, GP_HASH_BUSY);
	gp_em(e, "setp.eq.u32 %%p1, %%r12, %d", GP_HASH_FULL);
	gp_em(e, "@%%p1 bra $L_claimed");
	gp_em(e, "add.u32 %%r9, %%r9, 1");
	gp_em(e, "setp.lt.u32 %%p1, %%r9, %d", GP_HASH_SPIN_LIMIT);
	gp_em(e, "@%%p1 bra $L_again");
	ret_imm(e, -GP_DEV_EBUSY);
	gp_em_label(e, "$L_claimed");
	gp_em(e, "st.release.gpu.global.u32 [%%rd9], %d", GP_HASH_DELETED);
	gp_em(e, "atom.global.add.u32 %%r12, [%%rd1+%d], -1", GP_MD_COUNT);
	ret_imm(e, 0);
	gp_em_label(e, "$L_enoent");
	ret_imm(e, -GP_DEV_ENOENT);
	gp_em_label(e, "$L_einval");
	ret_imm(e, -GP_DEV_EINVAL);
}

/* ringbuf_output(map, data, size, flags) / perf_event_output(ctx, map, flags, data, size). */
static void def_output(struct gp_emit *e, const char *map, const char *data, const char *size,
		       int fail)
{
	load_args(e, 5);
	call(e, F_RESERVE, "%rd7", 2, map, size);
	gp_em(e, "setp.eq.u64 %%p1, %%rd7, 0");
	gp_em(e, "@%%p1 bra $L_fail");
	if (modes_variant) {   /* only a sampled ring leaves a batch out */
		gp_em(e, "setp.eq.u64 %%p1, %%rd7, 1");
		gp_em(e, "@%%p1 bra $L_ok");                 /* sampled out */
	}
	call(e, F_COPY, "%rd8", 3, "%rd7", data, size);
	gp_em(e, "mov.u64 %%rd9, %d", GP_REC_COMMITTED);
	call(e, F_COMMIT, "%rd8", 2, "%rd7", "%rd9");
	if (modes_variant)
		gp_em_label(e, "$L_ok");
	ret_imm(e, 0);
	gp_em_label(e, "$L_fail");
	ret_imm(e, -fail);
}

static void def_ring_reserve(struct gp_emit *e)
{
	load_args(e, 2);
	call(e, F_RESERVE, "%rd6", 2, "%rd1", "%rd2");
	if (modes_variant) {
		gp_em(e, "setp.eq.u64 %%p1, %%rd6, 1");       /* sampled out: no record */
		gp_em(e, "selp.b64 %%rd6, 0, %%rd6, %%p1");
	}
	ret_reg(e, "%rd6");
}

static void def_ring_finish(struct gp_emit *e, int state)
{
	load_args(e, 1);
	gp_em(e, "mov.u64 %%rd9, %d", state);
	call(e, F_COMMIT, "%rd6", 2, "%rd1", "%rd9");
	ret_imm(e, 0);
}

/* A printk record: fmt bytes at %rd1 (length %rd2, capped), args %rd3..%rd5, nargs %rd10. */
static void emit_printk_record(struct gp_emit *e, uint64_t ring)
{
	gp_em(e, "min.u64 %%rd2, %%rd2, %d", GP_PRINTK_MAX_FMT);
	gp_em(e, "mov.u64 %%rd7, %llu", (unsigned long long)ring);
	gp_em(e, "add.u64 %%rd8, %%rd2, %d", GP_PRINTK_FMT);
	call(e, F_RESERVE, "%rd9", 2, "%rd7", "%rd8");
	gp_em(e, "setp.eq.u64 %%p1, %%rd9, 0");
	gp_em(e, "@%%p1 bra $L_fail");
	gp_em(e, "cvt.u32.u64 %%r1, %%rd2");
	gp_em(e, "st.global.u32 [%%rd9], %%r1");
	gp_em(e, "cvt.u32.u64 %%r2, %%rd10");
	gp_em(e, "st.global.u32 [%%rd9+4], %%r2");
	gp_em(e, "st.global.u64 [%%rd9+%d], %%rd3", GP_PRINTK_ARGS);
	gp_em(e, "st.global.u64 [%%rd9+%d], %%rd4", GP_PRINTK_ARGS + 8);
	gp_em(e, "st.global.u64 [%%rd9+%d], %%rd5", GP_PRINTK_ARGS + 16);
	gp_em(e, "add.u64 %%rd11, %%rd9, %d", GP_PRINTK_FMT);
	call(e, F_COPY, "%rd12", 3, "%rd11", "%rd1", "%rd2");
	gp_em(e, "mov.u64 %%rd12, %d", GP_REC_COMMITTED);
	call(e, F_COMMIT, "%rd13", 2, "%rd9", "%rd12");
	ret_reg(e, "%rd2");
	gp_em_label(e, "$L_fail");
	ret_imm(e, -GP_DEV_EAGAIN);
}

static void def_printk(struct gp_emit *e, uint64_t ring)
{
	load_args(e, 5);
	gp_em(e, "mov.u64 %%rd10, 3");
	emit_printk_record(e, ring);
}

/* puts(str): the string up to its NUL (at most 255 bytes), printed as it is. */
static void def_puts(struct gp_emit *e, uint64_t ring)
{
	load_args(e, 1);
	gp_em(e, "mov.u64 %%rd2, 0");
	gp_em_label(e, "$L_len");
	gp_em(e, "setp.ge.u64 %%p1, %%rd2, %d", GP_PRINTK_MAX_FMT - 1);
	gp_em(e, "@%%p1 bra $L_have");
	gp_em(e, "add.u64 %%rd7, %%rd1, %%rd2");
	gp_em(e, "ld.u8 %%r1, [%%rd7]");
	gp_em(e, "setp.eq.u32 %%p1, %%r1, 0");
	gp_em(e, "@%%p1 bra $L_have");
	gp_em(e, "add.u64 %%rd2, %%rd2, 1");
	gp_em(e, "bra.uni $L_len");
	gp_em_label(e, "$L_have");
	gp_em(e, "mov.u64 %%rd3, 0");
	gp_em(e, "mov.u64 %%rd4, 0");
	gp_em(e, "mov.u64 %%rd5, 0");
	gp_em(e, "mov.u64 %%rd10, %d", GP_PRINTK_LITERAL);
	emit_printk_record(e, ring);
}

/* ---- for the helpers in other files (map_device_internal.h) ----------------------------- */

void gp_md_load_args(struct gp_emit *e, unsigned n) { load_args(e, n); }
void gp_md_ret_reg(struct gp_emit *e, const char *reg) { ret_reg(e, reg); }
void gp_md_ret_imm(struct gp_emit *e, long long v) { ret_imm(e, v); }
void gp_md_call(struct gp_emit *e, const char *fn, const char *ret, unsigned n, const char *const *args)
{
	gp_em_call(e, fn, ret, n, args);
}
int gp_md_ring_warp_target(const struct gp_emit *e) { return ring_warp_target(e); }
const char *gp_md_reserve1_name(void) { return F_RESERVE1; }

/* ---- adding them to a module -------------------------------------------------------------- */

typedef void (*def_fn)(struct gp_emit *e);

/* Add one function to m (it must not exist yet). */
static const char *define(ir_module *m, const char *name, unsigned nparams, def_fn def,
			  void (*def_ring)(struct gp_emit *, uint64_t), uint64_t ring)
{
	struct gp_emit e = {.m = m, .f = gp_em_func(m, name, nparams)};
	if (def)
		def(&e);
	else
		def_ring(&e, ring);
	return e.failed ? NULL : e.f->name;
}

/* The internal functions, callees before callers (a .func must precede its callers). */
static int need_internals(ir_module *m)
{
	const struct { const char *name; unsigned n; def_fn def; } fns[] = {   /* F_RESERVE*: the variant */
		{F_COPY, 3, def_copy}, {F_SHARD, 1, def_shard}, {F_STORE, 4, def_store},
		{F_FIND, 2, def_find}, {F_RESERVE, 2, def_reserve}, {F_COMMIT, 2, def_commit},
		{F_RESERVE1, 2, def_reserve1},
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!ir_module_find_func(m, fns[i].name) && !define(m, fns[i].name, fns[i].n, fns[i].def, NULL, 0))
			return -1;
	return 0;
}

static const char *ensure(ir_module *m, const char *name, unsigned nparams, def_fn def,
			  void (*def_ring)(struct gp_emit *, uint64_t), uint64_t ring)
{
	ir_func *f = ir_module_find_func(m, name);
	if (f)
		return f->name;
	if (need_internals(m))
		return NULL;
	return define(m, name, nparams, def, def_ring, ring);
}

static void def_ring_output(struct gp_emit *e) { def_output(e, "%rd1", "%rd2", "%rd3", GP_DEV_EAGAIN); }
static void def_perf_output(struct gp_emit *e) { def_output(e, "%rd2", "%rd4", "%rd5", GP_DEV_ENOSPC); }
static void def_submit(struct gp_emit *e) { def_ring_finish(e, GP_REC_COMMITTED); }
static void def_discard(struct gp_emit *e) { def_ring_finish(e, GP_REC_DISCARDED); }

/* A helper that runs rarely: a counting probe inserts each key once and then only looks it up
 * and adds (the counting idiom), so the insert's probe loop, bucket claim and value stores stay
 * in one shared out-of-line body however many sites call it (ptx-frontend/inline.c). */
static const char *cold(ir_module *m, const char *name)
{
	ir_func *f = name ? ir_module_find_func(m, name) : NULL;
	if (f)
		f->cold = true;
	return name;
}

/* Whether a ring of this object is lossless or sampled (the _modes variant of the helpers). */
static int dev_has_modes(const struct gp_maps_device *dev)
{
	for (size_t i = 0; dev && i < dev->nmaps; i++)
		if (dev->descs[i].kind == GP_MAP_KIND_RING &&
		    (dev->descs[i].flags & (GP_MAPF_LOSSLESS | GP_MAPF_SAMPLED)))
			return 1;
	return 0;
}

static const char *helper_func(struct gp_maps_device *dev, ir_module *m, int helper_id);

const char *gp_maps_helper_func(void *user, ir_module *m, int helper_id)
{
	struct gp_maps_device *dev = user;
	modes_variant = helper_id != 6 && dev_has_modes(dev);   /* printk's ring has no modes */
	const char *f = helper_func(dev, m, helper_id);
	modes_variant = 0;
	return f;
}

#define M(name) (modes_variant ? GP_EMIT_PREFIX name "_modes" : GP_EMIT_PREFIX name)

static const char *helper_func(struct gp_maps_device *dev, ir_module *m, int helper_id)
{
	switch (helper_id) {
	case 1: return ensure(m, GP_EMIT_PREFIX "map_lookup_elem", 5, def_lookup, NULL, 0);
	case 2: return cold(m, ensure(m, GP_EMIT_PREFIX "map_update_elem", 5, def_update, NULL, 0));
	case 3: return cold(m, ensure(m, GP_EMIT_PREFIX "map_delete_elem", 5, def_delete, NULL, 0));
	case 25: return ensure(m, M("perf_event_output"), 5, def_perf_output, NULL, 0);
	case 130: return ensure(m, M("ringbuf_output"), 5, def_ring_output, NULL, 0);
	case 131: return ensure(m, M("ringbuf_reserve"), 5, def_ring_reserve, NULL, 0);
	case 132: return ensure(m, GP_EMIT_PREFIX "ringbuf_submit", 5, def_submit, NULL, 0);
	case 133: return ensure(m, GP_EMIT_PREFIX "ringbuf_discard", 5, def_discard, NULL, 0);
	case 517: return ensure(m, M("gpu_warp_output"), 5, gp_md_def_warp_output, NULL, 0);
	case 6:
		if (!dev || !dev->printk_desc)
			return NULL;
		/* the ring's address is part of the code: one function per printk ring */
		return ensure(m, ir_strfmt(m, GP_EMIT_PREFIX "trace_printk_%llx",
					   (unsigned long long)dev->printk_desc),
			      5, NULL, def_printk, dev->printk_desc);
	}
	return NULL;
}

/* update_by_value's body: the key and the value into this function's own frame, then the
 * update helper on their addresses. The caller's frame then has no address taken, and ptxas
 * keeps it in registers (ebpf/lower.h, update_by_value). */
static void def_update_kv(struct gp_emit *e)
{
	ir_stmt *d = ir_stmt_new(e->m, IR_STMT_DECL);
	d->generated = true;
	d->decl = (ir_decl){.space = ".local", .align = 8, .type = ".b8", .name = "gp_kv",
			    .count = -1, .dims = "[16]"};
	ir_stmt_append(e->f, d);
	load_args(e, 4);
	gp_em(e, "st.local.u64 [gp_kv], %%rd2");
	gp_em(e, "st.local.u64 [gp_kv+8], %%rd3");
	gp_em(e, "mov.u64 %%rd7, gp_kv");
	gp_em(e, "cvta.local.u64 %%rd7, %%rd7");
	gp_em(e, "add.u64 %%rd8, %%rd7, 8");
	call(e, GP_EMIT_PREFIX "map_update_elem", "%rd6", 5, "%rd1", "%rd7", "%rd8", "%rd4", "%rd4");
	ret_reg(e, "%rd6");
}

const char *gp_maps_update_by_value(void *user, ir_module *m, int map_index, unsigned *key_size,
				    unsigned *value_size)
{
	struct gp_maps_device *dev = user;
	if (!dev || map_index < 0 || (size_t)map_index >= dev->nmaps)
		return NULL;
	const struct gp_map_desc *d = &dev->descs[map_index];
	if ((d->kind != GP_MAP_KIND_HASH && d->kind != GP_MAP_KIND_ARRAY) ||
	    (d->key_size != 4 && d->key_size != 8) || (d->value_size != 4 && d->value_size != 8))
		return NULL;
	/* the update helper first: a .func precedes its callers */
	if (!helper_func(dev, m, 2))
		return NULL;
	*key_size = d->key_size;
	*value_size = d->value_size;
	return cold(m, ensure(m, GP_EMIT_PREFIX "map_update_kv", 5, def_update_kv, NULL, 0));
}

const char *gp_maps_puts_func(struct gp_maps_device *dev, ir_module *m)
{
	if (!dev || !dev->printk_desc)
		return NULL;
	return ensure(m, ir_strfmt(m, GP_EMIT_PREFIX "puts_%llx", (unsigned long long)dev->printk_desc),
		      1, NULL, def_puts, dev->printk_desc);
}

/* ---- map references --------------------------------------------------------------------- */

static int emit_value_addr_at(ir_module *m, ir_func *f, const char *dst,
			      const struct gp_map_desc *d, const char *base);
static int emit_value_addr(ir_module *m, ir_func *f, const char *dst, const struct gp_map_desc *d,
			   uint64_t base);
static int emit_hash_lookup_var(struct gp_maps_device *dev, ir_module *m, ir_func *f,
				const char *dst, const struct gp_map_desc *d, const char *key);

/* bench/overhead measured the generic lookup helper (descriptor loads, the key through the
 * stack, two calls) on every memory access of a counting probe: a constant key into an array
 * needs none of it. */
int gp_maps_emit_map_lookup(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			    uint32_t key)
{
	struct gp_maps_device *dev = user;
	if (!dev || map_index < 0 || (size_t)map_index >= dev->nmaps)
		return -ENOENT;
	const struct gp_map_desc *d = &dev->descs[map_index];
	if (d->kind != GP_MAP_KIND_ARRAY || (d->flags & GP_MAPF_PERTHREAD))
		return -ENOTSUP;
	/* Every lane of a warp runs on one SM: the element's address (base + this SM's shard) is
	 * the same in all of them (ptxas then aggregates an atomic add through it itself), and
	 * never 0 (the probe's null test folds). */
	if (key >= d->max_entries) {
		struct gp_emit e = {.m = m, .f = f};
		gp_em(&e, "mov.u64 %s, 0", dst);
		return e.failed ? -EINVAL : GP_LOWER_WARP_UNIFORM;
	}
	int rc = emit_value_addr(m, f, dst, d, d->data + (uint64_t)key * d->value_stride);
	return rc ? rc : GP_LOWER_WARP_UNIFORM | (d->data ? GP_LOWER_NONNULL : 0);
}

/* A variable index into an array: the element's address from constants (base, stride, bound)
 * and %smid, with no call, no descriptor load and no stack, so ptxas sees the whole counter. */
int gp_maps_emit_map_lookup_var(void *user, ir_module *m, ir_func *f, const char *dst,
				int map_index, const char *key, uint32_t key_max)
{
	struct gp_maps_device *dev = user;
	if (!dev || map_index < 0 || (size_t)map_index >= dev->nmaps)
		return -ENOENT;
	const struct gp_map_desc *d = &dev->descs[map_index];
	if (d->kind == GP_MAP_KIND_HASH)
		return emit_hash_lookup_var(dev, m, f, dst, d, key);
	if (d->kind != GP_MAP_KIND_ARRAY || (d->flags & GP_MAPF_PERTHREAD))
		return -ENOTSUP;
	struct gp_emit e = {.m = m, .f = f};
	bool in_bounds = key_max < d->max_entries;   /* `ctx->dir & 3` into 4 entries */
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_OPEN));
	ir_stmt_append(f, ir_reg_decl_new(m, ".u64", "%gpm_k", -1));
	if (!in_bounds)
		ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%gpm_p", -1));
	int rc = emit_value_addr(m, f, dst, d, d->data);   /* this SM's copy of element 0 */
	gp_em(&e, "mul.lo.u64 %%gpm_k, %s, %u", key, d->value_stride);
	gp_em(&e, "add.u64 %s, %s, %%gpm_k", dst, dst);
	if (!in_bounds) {
		gp_em(&e, "setp.ge.u64 %%gpm_p, %s, %u", key, d->max_entries);
		gp_em(&e, "selp.b64 %s, 0, %s, %%gpm_p", dst, dst);
	}
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_CLOSE));
	return rc ? rc : e.failed ? -EINVAL
		       : GP_LOWER_KEY_UNIFORM | (in_bounds && d->data ? GP_LOWER_NONNULL : 0);
}

int gp_maps_emit_map_ref(void *user, ir_module *m, ir_func *f, const char *dst, int map_index,
			 int value_form, int32_t off)
{
	struct gp_maps_device *dev = user;
	if (!dev || map_index < 0 || (size_t)map_index >= dev->nmaps)
		return -ENOENT;
	struct gp_emit e = {.m = m, .f = f};
	const struct gp_map_desc *d = &dev->descs[map_index];
	if (!value_form) {
		gp_em(&e, "mov.u64 %s, %llu", dst, (unsigned long long)dev->desc_addrs[map_index]);
		return e.failed ? -EINVAL : 0;
	}
	if (d->kind != GP_MAP_KIND_ARRAY || off < 0 || (uint32_t)off >= d->value_size)
		return -EINVAL;
	return emit_value_addr(m, f, dst, d, d->data + (uint64_t)off);
}

/* dst = base in this SM's copy of d's values (base itself when there is one copy). Per-CPU maps
 * keep copy %smid % nshards, the index the host shows as the CPU. A sharded map (the host only
 * ever sums its copies) uses the copies [0, 2^k) for the largest 2^k <= nshards, picked by
 * %smid & (2^k - 1): an `and` instead of a division on every access (bench/overhead's memory
 * counter); SMs past 2^k share a copy with another SM, and every sum stays exact. */
static int emit_value_addr(ir_module *m, ir_func *f, const char *dst, const struct gp_map_desc *d,
			   uint64_t base)
{
	return emit_value_addr_at(m, f, dst, d, ir_strfmt(m, "%llu", (unsigned long long)base));
}

/* The same with the base as an operand: an immediate, or a register (a hash bucket's value). */
static int emit_value_addr_at(ir_module *m, ir_func *f, const char *dst,
			      const struct gp_map_desc *d, const char *base)
{
	struct gp_emit e = {.m = m, .f = f};
	if (d->nshards <= 1 || (d->flags & GP_MAPF_PERTHREAD)) {
		gp_em(&e, "mov.u64 %s, %s", dst, base);
		return e.failed ? -EINVAL : 0;
	}
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_OPEN));
	ir_stmt_append(f, ir_reg_decl_new(m, ".u32", "%gpm_s", -1));
	ir_stmt_append(f, ir_reg_decl_new(m, ".u64", "%gpm_o", -1));
	gp_em(&e, "mov.u32 %%gpm_s, %%smid");
	uint32_t copies = 1;
	while (copies <= d->nshards / 2)
		copies *= 2;
	if (copies == d->nshards || !(d->flags & GP_MAPF_PERCPU))   /* ptxas keeps rem by 2^k */
		gp_em(&e, "and.b32 %%gpm_s, %%gpm_s, %u", copies - 1);
	else
		gp_em(&e, "rem.u32 %%gpm_s, %%gpm_s, %u", d->nshards);
	if (d->shard_stride <= UINT32_MAX) {
		gp_em(&e, "mul.wide.u32 %%gpm_o, %%gpm_s, %llu", (unsigned long long)d->shard_stride);
	} else {
		gp_em(&e, "cvt.u64.u32 %%gpm_o, %%gpm_s");
		gp_em(&e, "mul.lo.u64 %%gpm_o, %%gpm_o, %llu", (unsigned long long)d->shard_stride);
	}
	gp_em(&e, "add.u64 %s, %%gpm_o, %s", dst, base);
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_CLOSE));
	return e.failed ? -EINVAL : 0;
}

/* A lookup in a HASH map with a 4-byte key, emitted in place with the descriptor's fields as
 * constants: the hash of the four bytes unrolled, the probe loop over buckets comparing the key
 * as one word, and the value's address. The generic helper (hash_find) reads every field from
 * the descriptor, hashes and compares byte by byte in loops and is reached through two calls:
 * in a counter keyed by kernel (the issue-11 probe on every kernel) it was most of what the
 * driver's JIT compiled per instrumented kernel. Same table, same order, same answers as
 * hash_find: FNV-1a of the key's bytes in memory order, buckets (hash + i) & (capacity - 1), a
 * BUSY bucket re-read up to GP_HASH_SPIN_LIMIT times, an EMPTY one ends the search, the key's
 * bucket found only while FULL. Labels are the lowering's to make unique at the call
 * (ebpf/lower_plan.c renames them per call). */
static bool module_declares(const ir_module *m, const char *name)
{
	for (const ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_DECL && t->decl.name && !strcmp(t->decl.name, name))
			return true;
	return false;
}

static int emit_hash_lookup_var(struct gp_maps_device *dev, ir_module *m, ir_func *f,
				const char *dst, const struct gp_map_desc *d, const char *key)
{
	if (d->key_size != 4 || (d->flags & GP_MAPF_PERTHREAD) || !d->data || !d->capacity ||
	    (d->capacity & (d->capacity - 1)) || (d->nshards > 1 && !d->vdata))
		return -ENOTSUP;
	struct gp_emit e = {.m = m, .f = f};
	/* The site cache: one global word, key << 32 | bucket + 1, 0 at first. A key's bucket
	 * never changes while no program deletes (gp_maps_device.hash_site_cache): a word that
	 * names this key names its bucket, found FULL by the search that wrote it. The word is
	 * read with a plain load, which the SM's L1 serves: the table's own search reads its
	 * bucket's state with ld.acquire (an L2 round trip, and CCTL.IVALL, which empties the L1
	 * of the SM for every load of the application's after it) and then its key, two dependent
	 * L2 loads before the add. zoom-cuda, 1.4e11 threads of a few instructions under the
	 * entry+exit counter, ran 4.2-5x native that way, 1.1x with an array counter (H100,
	 * 2026-11-26). A word read stale names another key or no bucket: the search runs, exact as
	 * before. The word is one aligned 8-byte access each way, which the GPU does not split (cub's
	 * decoupled look-back packs a tile's status and value in one such word on the same
	 * ground), so key and bucket are never read from two different writes. */
	const char *cache = NULL;
	if (dev->hash_site_cache) {
		/* a name no other object's lookups took in this module (each has its own count) */
		do
			cache = ir_strfmt(m, GP_EMIT_PREFIX "hc%u", dev->ncaches++);
		while (module_declares(m, cache));
		ir_top *t = ir_top_new(m, IR_TOP_DECL);
		t->generated = true;
		t->decl = (ir_decl){.space = ".global", .align = 8, .type = ".u64", .name = cache,
				    .count = -1};
		ir_top *pos = m->first;   /* before every function */
		while (pos && pos->kind != IR_TOP_FUNC)
			pos = pos->next;
		ir_top_insert_before(m, pos, t);
	}
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_OPEN));
	static const char *const u32s[] = {"%gph_k", "%gph_h", "%gph_t", "%gph_i", "%gph_n", "%gph_s",
					   "%gph_q"};
	for (size_t i = 0; i < sizeof(u32s) / sizeof(*u32s); i++)
		ir_stmt_append(f, ir_reg_decl_new(m, ".u32", u32s[i], -1));
	ir_stmt_append(f, ir_reg_decl_new(m, ".u64", "%gph_b", -1));
	ir_stmt_append(f, ir_reg_decl_new(m, ".u64", "%gph_w", -1));
	ir_stmt_append(f, ir_reg_decl_new(m, ".pred", "%gph_p", -1));
	gp_em(&e, "cvt.u32.u64 %%gph_k, %s", key);
	if (cache) {
		gp_em(&e, "ld.global.u64 %%gph_b, [%s]", cache);
		gp_em(&e, "cvt.u32.u64 %%gph_s, %%gph_b");
		gp_em(&e, "shr.u64 %%gph_b, %%gph_b, 32");
		gp_em(&e, "cvt.u32.u64 %%gph_t, %%gph_b");
		gp_em(&e, "setp.ne.u32 %%gph_p, %%gph_t, %%gph_k");
		gp_em(&e, "@%%gph_p bra $Lgph_search");
		gp_em(&e, "setp.eq.u32 %%gph_p, %%gph_s, 0");
		gp_em(&e, "@%%gph_p bra $Lgph_search");
		gp_em(&e, "add.u32 %%gph_s, %%gph_s, -1");
		gp_em(&e, "bra.uni $Lgph_addr");
		gp_em_label(&e, "$Lgph_search");
	}
	gp_em(&e, "mov.u32 %%gph_h, %u", GP_FNV_OFFSET);
	for (int byte = 0; byte < 4; byte++) {
		if (byte)
			gp_em(&e, "shr.u32 %%gph_t, %%gph_k, %d", 8 * byte);
		gp_em(&e, "and.b32 %%gph_t, %s, 255", byte ? "%gph_t" : "%gph_k");
		gp_em(&e, "xor.b32 %%gph_h, %%gph_h, %%gph_t");
		gp_em(&e, "mul.lo.u32 %%gph_h, %%gph_h, %u", GP_FNV_PRIME);
	}
	gp_em(&e, "mov.u32 %%gph_i, 0");
	gp_em(&e, "mov.u32 %%gph_n, 0");
	gp_em_label(&e, "$Lgph_probe");
	gp_em(&e, "setp.ge.u32 %%gph_p, %%gph_i, %u", d->capacity);
	gp_em(&e, "@%%gph_p bra $Lgph_miss");
	gp_em(&e, "add.u32 %%gph_s, %%gph_h, %%gph_i");
	gp_em(&e, "and.b32 %%gph_s, %%gph_s, %u", d->capacity - 1);
	gp_em(&e, "mul.wide.u32 %%gph_b, %%gph_s, %u", d->bucket_stride);
	gp_em(&e, "add.u64 %%gph_b, %%gph_b, %llu", (unsigned long long)d->data);
	gp_em(&e, "ld.acquire.gpu.global.u32 %%gph_t, [%%gph_b]");
	gp_em(&e, "setp.eq.u32 %%gph_p, %%gph_t, %d", GP_HASH_EMPTY);
	gp_em(&e, "@%%gph_p bra $Lgph_miss");
	gp_em(&e, "setp.ne.u32 %%gph_p, %%gph_t, %d", GP_HASH_BUSY);
	gp_em(&e, "@%%gph_p bra $Lgph_settled");
	gp_em(&e, "add.u32 %%gph_n, %%gph_n, 1");
	gp_em(&e, "setp.gt.u32 %%gph_p, %%gph_n, %d", GP_HASH_SPIN_LIMIT);
	gp_em(&e, "@%%gph_p bra $Lgph_miss");
	gp_em(&e, "bra.uni $Lgph_probe");
	gp_em_label(&e, "$Lgph_settled");
	/* a 4-byte key decides alone: equal keys have equal hashes */
	gp_em(&e, "ld.global.u32 %%gph_q, [%%gph_b+%d]", GP_HB_KEY);
	gp_em(&e, "setp.eq.u32 %%gph_p, %%gph_q, %%gph_k");
	gp_em(&e, "@%%gph_p bra $Lgph_match");
	gp_em(&e, "add.u32 %%gph_i, %%gph_i, 1");
	gp_em(&e, "bra.uni $Lgph_probe");
	gp_em_label(&e, "$Lgph_match");
	gp_em(&e, "setp.ne.u32 %%gph_p, %%gph_t, %d", GP_HASH_FULL);
	gp_em(&e, "@%%gph_p bra $Lgph_miss");
	if (cache) {   /* remember the bucket (%gph_s) for the next lookup of this key here */
		gp_em(&e, "cvt.u64.u32 %%gph_w, %%gph_k");
		gp_em(&e, "shl.b64 %%gph_w, %%gph_w, 32");
		gp_em(&e, "add.u32 %%gph_t, %%gph_s, 1");
		gp_em(&e, "cvt.u64.u32 %%gph_b, %%gph_t");
		gp_em(&e, "or.b64 %%gph_w, %%gph_w, %%gph_b");
		gp_em(&e, "st.global.u64 [%s], %%gph_w", cache);
	}
	gp_em_label(&e, "$Lgph_addr");
	/* the value of bucket %gph_s */
	if (d->nshards > 1) {
		gp_em(&e, "mul.wide.u32 %%gph_b, %%gph_s, %u", d->value_stride);
		gp_em(&e, "add.u64 %%gph_b, %%gph_b, %llu", (unsigned long long)d->vdata);
	} else {
		gp_em(&e, "mul.wide.u32 %%gph_b, %%gph_s, %u", d->bucket_stride);
		gp_em(&e, "add.u64 %%gph_b, %%gph_b, %llu",
		      (unsigned long long)d->data + GP_HB_KEY + 8);   /* round_up(4, 8) */
	}
	int rc = emit_value_addr_at(m, f, dst, d, "%gph_b");
	gp_em(&e, "bra.uni $Lgph_done");
	gp_em_label(&e, "$Lgph_miss");
	gp_em(&e, "mov.u64 %s, 0", dst);
	gp_em_label(&e, "$Lgph_done");
	ir_stmt_append(f, ir_stmt_new(m, IR_STMT_BLOCK_CLOSE));
	return rc ? rc : e.failed ? -EINVAL : GP_LOWER_KEY_UNIFORM | GP_LOWER_OPAQUE;
}

/* ---- from a map set --------------------------------------------------------------------- */

int gp_maps_device__init_from_set(struct gp_maps_device *dev, const struct gp_map_set *set)
{
	memset(dev, 0, sizeof(*dev));
	size_t n = gp_map_set__count(set);
	struct gp_map_desc *descs = calloc(n ? n : 1, sizeof(*descs) + sizeof(uint64_t));
	if (!descs)
		return -ENOMEM;
	uint64_t *addrs = (uint64_t *)(descs + (n ? n : 1));
	for (size_t i = 0; i < n; i++) {
		descs[i] = *gp_map_inst__desc(gp_map_set__map(set, i));
		addrs[i] = gp_map_inst__desc_addr(gp_map_set__map(set, i));
	}
	dev->descs = descs;
	dev->desc_addrs = addrs;
	dev->nmaps = n;
	dev->owned = descs;
	struct gp_map_inst *pk = gp_map_set__printk(set);
	dev->printk_desc = pk ? gp_map_inst__desc_addr(pk) : 0;
	return 0;
}

void gp_maps_device__release(struct gp_maps_device *dev)
{
	free(dev->owned);
	memset(dev, 0, sizeof(*dev));
}
