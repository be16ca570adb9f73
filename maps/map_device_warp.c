/* bpf_gpu_warp_output (helper 517): one ring record per warp access (include/gpuprobe/warp.h,
 * docs/event-streams.md), written as an IR .func with map_device.c's pieces
 * (map_device_internal.h). */
#include "maps/map_device_internal.h"
#include "maps/map_layout.h"
#include "maps/map_device.h"
#include "gpuprobe/warp.h"

#define load_args gp_md_load_args
#define ret_reg gp_md_ret_reg
#define ret_imm gp_md_ret_imm
#define ring_warp_target gp_md_ring_warp_target
#define F_RESERVE1 gp_md_reserve1_name()
#define F_COMMIT GP_MD_F_COMMIT

static void call(struct gp_emit *e, const char *fn, const char *ret, unsigned n, const char *a1,
		 const char *a2)
{
	const char *args[2] = {a1, a2};
	gp_md_call(e, fn, ret, n, args);
}

/* The header of a warp record at %rd20: tag %rd3, base %rd8, mask %r1, stride %r17, nvals
 * %r18, flags %rd4; then the commit. */
static void emit_warp_header(struct gp_emit *e)
{
	gp_em(e, "st.global.u64 [%%rd20], %%rd3");            /* tag */
	gp_em(e, "st.global.u64 [%%rd20+8], %%rd8");          /* base */
	gp_em(e, "st.global.u32 [%%rd20+16], %%r1");          /* mask */
	gp_em(e, "st.global.u32 [%%rd20+20], %%r17");         /* stride */
	/* block = (ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x; warp = linear tid / 32 */
	gp_em(e, "mov.u32 %%r22, %%ctaid.z");
	gp_em(e, "mov.u32 %%r23, %%nctaid.y");
	gp_em(e, "mov.u32 %%r24, %%ctaid.y");
	gp_em(e, "mad.lo.u32 %%r22, %%r22, %%r23, %%r24");
	gp_em(e, "mov.u32 %%r23, %%nctaid.x");
	gp_em(e, "mov.u32 %%r24, %%ctaid.x");
	gp_em(e, "mad.lo.u32 %%r22, %%r22, %%r23, %%r24");
	gp_em(e, "st.global.u32 [%%rd20+24], %%r22");
	gp_em(e, "mov.u32 %%r22, %%tid.z");
	gp_em(e, "mov.u32 %%r23, %%ntid.y");
	gp_em(e, "mov.u32 %%r24, %%tid.y");
	gp_em(e, "mad.lo.u32 %%r22, %%r22, %%r23, %%r24");
	gp_em(e, "mov.u32 %%r23, %%ntid.x");
	gp_em(e, "mov.u32 %%r24, %%tid.x");
	gp_em(e, "mad.lo.u32 %%r22, %%r22, %%r23, %%r24");
	gp_em(e, "shr.u32 %%r22, %%r22, 5");
	gp_em(e, "st.global.u16 [%%rd20+28], %%r22");
	gp_em(e, "st.global.u8 [%%rd20+30], %%r18");          /* nvals */
	gp_em(e, "cvt.u32.u64 %%r25, %%rd4");
	gp_em(e, "st.global.u8 [%%rd20+31], %%r25");          /* flags */
	gp_em(e, "mov.u64 %%rd22, %d", GP_REC_COMMITTED);
	call(e, F_COMMIT, "%rd23", 2, "%rd20", "%rd22");
}

/* gpu_warp_output(map, value, tag, flags, mask): one record per warp access
 * (include/gpuprobe/warp.h, struct gp_warp_record). mask is the lanes that call together: the
 * site's mask when the probe runs straight to the call, else activemask (ebpf/lower_call.c).
 * The lanes read the lowest lane's value (base) and the next lane's, derive a stride per lane
 * and vote whether every lane's value is base + stride * (lane - lowest): then the record is
 * 32 bytes whatever the number of lanes (nvals 0); otherwise each lane writes its own value
 * after the header, in lane order. Only the lowest lane reserves (one CAS per warp access,
 * ring_reserve1) and commits; the others write their values between the shfl that hands out
 * the record and the warp barrier before the commit. Returns 0 (also when a sampled ring left
 * the access out) or -EAGAIN (dropped, counted) in every lane.
 * Without the warp instructions (before sm_70) each lane writes a record of its own. */
void gp_md_def_warp_output(struct gp_emit *e)
{
	load_args(e, 5);
	if (!ring_warp_target(e)) {
		gp_em(e, "mov.u64 %%rd18, %d", GP_WARP_REC_BYTES);
		call(e, F_RESERVE1, "%rd20", 2, "%rd1", "%rd18");
		gp_em(e, "setp.eq.u64 %%p6, %%rd20, 0");
		gp_em(e, "@%%p6 bra $L_fail");
		gp_em(e, "setp.eq.u64 %%p6, %%rd20, 1");
		gp_em(e, "@%%p6 bra $L_ok");
		gp_em(e, "mov.u32 %%r15, %%laneid");
		gp_em(e, "mov.u32 %%r1, 1");
		gp_em(e, "shl.b32 %%r1, %%r1, %%r15");
		gp_em(e, "mov.u32 %%r17, 0");
		gp_em(e, "mov.u32 %%r18, 0");
		gp_em(e, "mov.u64 %%rd8, %%rd2");
		emit_warp_header(e);
		gp_em_label(e, "$L_ok");
		ret_imm(e, 0);
		gp_em_label(e, "$L_fail");
		ret_imm(e, -GP_DEV_EAGAIN);
		return;
	}
	gp_em(e, "cvt.u32.u64 %%r1, %%rd5");                  /* the lanes */
	gp_em(e, "mov.u32 %%r2, %%lanemask_lt");
	gp_em(e, "and.b32 %%r2, %%r2, %%r1");
	gp_em(e, "popc.b32 %%r3, %%r2");                      /* rank */
	gp_em(e, "popc.b32 %%r4, %%r1");                      /* n */
	gp_em(e, "neg.s32 %%r5, %%r1");
	gp_em(e, "and.b32 %%r5, %%r5, %%r1");
	gp_em(e, "bfind.u32 %%r5, %%r5");                     /* the lowest lane */
	gp_em(e, "sub.u32 %%r6, %%r1, 1");
	gp_em(e, "and.b32 %%r6, %%r6, %%r1");                 /* the others */
	gp_em(e, "neg.s32 %%r7, %%r6");
	gp_em(e, "and.b32 %%r7, %%r7, %%r6");
	gp_em(e, "bfind.u32 %%r7, %%r7");                     /* the next lane */
	gp_em(e, "setp.eq.u32 %%p1, %%r6, 0");
	gp_em(e, "selp.b32 %%r7, %%r5, %%r7, %%p1");          /* alone: itself */
	/* base and the next lane's value, 64 bits as two halves (no vector braces: inline.c) */
	gp_em(e, "cvt.u32.u64 %%r8, %%rd2");
	gp_em(e, "shr.u64 %%rd7, %%rd2, 32");
	gp_em(e, "cvt.u32.u64 %%r9, %%rd7");
	gp_em(e, "shfl.sync.idx.b32 %%r10, %%r8, %%r5, 31, %%r1");
	gp_em(e, "shfl.sync.idx.b32 %%r11, %%r9, %%r5, 31, %%r1");
	gp_em(e, "shfl.sync.idx.b32 %%r12, %%r8, %%r7, 31, %%r1");
	gp_em(e, "shfl.sync.idx.b32 %%r13, %%r9, %%r7, 31, %%r1");
	gp_em(e, "cvt.u64.u32 %%rd8, %%r10");
	gp_em(e, "cvt.u64.u32 %%rd9, %%r11");
	gp_em(e, "shl.b64 %%rd9, %%rd9, 32");
	gp_em(e, "or.b64 %%rd8, %%rd8, %%rd9");               /* base */
	gp_em(e, "cvt.u64.u32 %%rd10, %%r12");
	gp_em(e, "cvt.u64.u32 %%rd9, %%r13");
	gp_em(e, "shl.b64 %%rd9, %%rd9, 32");
	gp_em(e, "or.b64 %%rd10, %%rd10, %%rd9");
	gp_em(e, "sub.u64 %%rd11, %%rd10, %%rd8");
	gp_em(e, "sub.u32 %%r14, %%r7, %%r5");
	gp_em(e, "max.u32 %%r14, %%r14, 1");
	gp_em(e, "cvt.u64.u32 %%rd12, %%r14");
	/* stride per lane: the next lane is usually the one after (no 64-bit division then) */
	gp_em(e, "mov.u64 %%rd13, %%rd11");
	gp_em(e, "setp.ne.u32 %%p1, %%r14, 1");
	gp_em(e, "@%%p1 div.s64 %%rd13, %%rd11, %%rd12");
	gp_em(e, "mov.u32 %%r15, %%laneid");
	gp_em(e, "sub.u32 %%r16, %%r15, %%r5");
	gp_em(e, "cvt.u64.u32 %%rd14, %%r16");
	gp_em(e, "mad.lo.u64 %%rd15, %%rd13, %%rd14, %%rd8");
	gp_em(e, "setp.eq.u64 %%p2, %%rd15, %%rd2");          /* this lane fits the line */
	gp_em(e, "cvt.u32.u64 %%r17, %%rd13");
	gp_em(e, "cvt.s64.s32 %%rd16, %%r17");
	gp_em(e, "setp.eq.s64 %%p3, %%rd16, %%rd13");         /* the stride fits 32 bits */
	gp_em(e, "and.pred %%p2, %%p2, %%p3");
	gp_em(e, "and.b64 %%rd17, %%rd4, %d", GP_WARP_VALUES);
	gp_em(e, "setp.eq.u64 %%p3, %%rd17, 0");
	gp_em(e, "and.pred %%p2, %%p2, %%p3");
	gp_em(e, "vote.sync.all.pred %%p4, %%p2, %%r1");      /* regular */
	gp_em(e, "selp.b32 %%r18, 0, %%r4, %%p4");            /* nvals */
	gp_em(e, "selp.b32 %%r17, %%r17, 0, %%p4");           /* stride (0 with values) */
	gp_em(e, "shl.b32 %%r19, %%r18, 3");
	gp_em(e, "add.u32 %%r19, %%r19, %d", GP_WARP_REC_BYTES);
	gp_em(e, "cvt.u64.u32 %%rd18, %%r19");
	gp_em(e, "mov.u64 %%rd19, 0");
	gp_em(e, "setp.ne.u32 %%p5, %%r3, 0");
	gp_em(e, "@%%p5 bra $L_reserved");
	call(e, F_RESERVE1, "%rd19", 2, "%rd1", "%rd18");
	gp_em_label(e, "$L_reserved");
	gp_em(e, "cvt.u32.u64 %%r20, %%rd19");
	gp_em(e, "shr.u64 %%rd7, %%rd19, 32");
	gp_em(e, "cvt.u32.u64 %%r21, %%rd7");
	gp_em(e, "shfl.sync.idx.b32 %%r20, %%r20, %%r5, 31, %%r1");
	gp_em(e, "shfl.sync.idx.b32 %%r21, %%r21, %%r5, 31, %%r1");
	gp_em(e, "cvt.u64.u32 %%rd20, %%r20");
	gp_em(e, "cvt.u64.u32 %%rd9, %%r21");
	gp_em(e, "shl.b64 %%rd9, %%rd9, 32");
	gp_em(e, "or.b64 %%rd20, %%rd20, %%rd9");             /* the record, in every lane */
	/* No lane branches away before the last collective, whatever the reservation gave: where
	 * warps are emulated (spirv/lower_warp.c) a collective is a work-group barrier, which
	 * every thread of the block must reach (a dropped record skipping the vote crashed PoCL). */
	gp_em(e, "setp.gt.u64 %%p6, %%rd20, 1");              /* a record to write */
	gp_em(e, "not.pred %%p8, %%p4");
	gp_em(e, "and.pred %%p7, %%p8, %%p6");
	/* values (irregular): lane of rank r at 32 + 8r, one coalesced store per warp */
	gp_em(e, "mul.wide.u32 %%rd21, %%r3, 8");
	gp_em(e, "add.u64 %%rd21, %%rd21, %%rd20");
	gp_em(e, "@%%p7 st.global.u64 [%%rd21+%d], %%rd2", GP_WARP_REC_BYTES);
	/* __syncwarp orders the lanes' stores before the lowest lane's commit on NVIDIA; the vote
	 * does it where warps are emulated (a collective is a work-group barrier there, and the
	 * instrumentation's own bar.warp.sync is not) */
	gp_em(e, "bar.warp.sync %%r1");
	gp_em(e, "vote.sync.any.pred %%p9, %%p4, %%r1");
	gp_em(e, "not.pred %%p8, %%p5");                       /* the lowest lane ... */
	gp_em(e, "and.pred %%p8, %%p8, %%p6");                 /* ... with a record */
	gp_em(e, "@!%%p8 bra $L_done");
	emit_warp_header(e);
	gp_em_label(e, "$L_done");
	gp_em(e, "setp.eq.u64 %%p1, %%rd20, 0");
	gp_em(e, "selp.b64 %%rd6, %d, 0, %%p1", -GP_DEV_EAGAIN);
	ret_reg(e, "%rd6");
}

