/* What differs by target: special registers, barriers and fences, warp collectives and directed
 * rounding. nvptx uses NVVM's intrinsics (which LLVM turns back into the same PTX); amdgcn builds a
 * 32-lane warp on its wavefront: lane = mbcnt & 31, and every collective reads the other lanes of
 * its own 32-lane half with ds_bpermute (wave64: the half is bit 5 of the wave lane). */
#include "common/env.h"
#include "amdgpu/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B (c->b)

static bool nv(al *c) { return c->target == AMDGPU_TARGET_NVPTX; }

/* GPUPROBE_LLVM_GENERIC=1: the target-independent lowerings amdgcn uses (directed rounding from
 * error terms, bar.red through a work-group word, malloc's bump allocator) on nvptx too, so that
 * the CPU check (nvptx64 -> PTX -> PoCL) runs them. */
bool al_generic(void)
{
	static int g = -1;
	if (g < 0) {
		g = gp_env_flag(GP_VAR_LLVM_GENERIC);
	}
	return g;
}

static LLVMValueRef nv_sreg(al *c, const char *reg, unsigned bits)
{
	char name[96];
	snprintf(name, sizeof(name), "llvm.nvvm.read.ptx.sreg.%s", reg);
	(void)bits;
	return al_intr(c, name, NULL, 0, 0, NULL);
}

/* Inline PTX reading one special register (those NVVM has no intrinsic for). */
static LLVMValueRef nv_asm_reg(al *c, const char *reg, unsigned bits)
{
	char text[96];
	snprintf(text, sizeof(text), "mov.u%u $0, %s;", bits, reg);
	LLVMTypeRef ty = al_ity(c, bits);
	LLVMTypeRef fty = LLVMFunctionType(ty, NULL, 0, 0);
	const char *cons = bits == 64 ? "=l" : "=r";
	LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(B, fty, a, NULL, 0, "");
}

static LLVMValueRef amd_wave_lane(al *c)   /* 0..63 (or 0..31 on wave32) */
{
	LLVMValueRef a[2] = {al_ci(c, 32, 0xffffffffu), al_ci(c, 32, 0)};
	LLVMValueRef lo = al_intr(c, "llvm.amdgcn.mbcnt.lo", NULL, 0, 2, a);
	if (!c->wave64)
		return lo;
	LLVMValueRef b[2] = {al_ci(c, 32, 0xffffffffu), lo};
	return al_intr(c, "llvm.amdgcn.mbcnt.hi", NULL, 0, 2, b);
}

static LLVMValueRef amd_dispatch_u(al *c, unsigned off, unsigned bits)
{
	LLVMValueRef p = al_intr(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, 0, NULL);
	LLVMValueRef o = al_ci(c, 64, off);
	p = LLVMBuildGEP2(B, al_ity(c, 8), p, &o, 1, "");
	LLVMValueRef v = LLVMBuildLoad2(B, al_ity(c, bits), p, "");
	LLVMSetAlignment(v, bits / 8);
	return bits == 32 ? v : LLVMBuildZExt(B, v, al_ity(c, 32), "");
}

static LLVMValueRef amd_ntid(al *c, int d) { return amd_dispatch_u(c, 4 + 2 * (unsigned)d, 16); }

LLVMValueRef al_lane(al *c)
{
	if (nv(c))
		return nv_sreg(c, "laneid", 32);
	return LLVMBuildAnd(B, amd_wave_lane(c), al_ci(c, 32, 31), "");
}

LLVMValueRef al_linear_tid(al *c)
{
	LLVMValueRef x, y, z, nx, ny;
	if (nv(c)) {
		x = nv_sreg(c, "tid.x", 32), y = nv_sreg(c, "tid.y", 32), z = nv_sreg(c, "tid.z", 32);
		nx = nv_sreg(c, "ntid.x", 32), ny = nv_sreg(c, "ntid.y", 32);
	} else {
		x = al_intr(c, "llvm.amdgcn.workitem.id.x", NULL, 0, 0, NULL);
		y = al_intr(c, "llvm.amdgcn.workitem.id.y", NULL, 0, 0, NULL);
		z = al_intr(c, "llvm.amdgcn.workitem.id.z", NULL, 0, 0, NULL);
		nx = amd_ntid(c, 0), ny = amd_ntid(c, 1);
	}
	return LLVMBuildAdd(B, x, LLVMBuildMul(B, nx, LLVMBuildAdd(B, y, LLVMBuildMul(B, ny, z, ""), ""), ""), "");
}

static int dim_of(const char *s)
{
	return !strcmp(s, ".x") ? 0 : !strcmp(s, ".y") ? 1 : !strcmp(s, ".z") ? 2 : -1;
}

int al_special_reg(al *c, const char *name, LLVMValueRef *v, atype *t)
{
	*t = AT('u', 32);
	static const char *const dimregs[] = {"%tid", "%ntid", "%ctaid", "%nctaid", NULL};
	for (int i = 0; dimregs[i]; i++) {
		size_t l = strlen(dimregs[i]);
		if (strncmp(name, dimregs[i], l) || dim_of(name + l) < 0)
			continue;
		int d = dim_of(name + l);
		if (nv(c)) {
			*v = nv_sreg(c, name + 1, 32);
			return *v ? 0 : -1;
		}
		static const char xyz[] = "xyz";
		char in[64];
		switch (i) {
		case 0:
			snprintf(in, sizeof(in), "llvm.amdgcn.workitem.id.%c", xyz[d]);
			*v = al_intr(c, in, NULL, 0, 0, NULL);
			break;
		case 1:
			*v = amd_ntid(c, d);
			break;
		case 2:
			snprintf(in, sizeof(in), "llvm.amdgcn.workgroup.id.%c", xyz[d]);
			*v = al_intr(c, in, NULL, 0, 0, NULL);
			break;
		default: {   /* grid size in work-items over the work-group size, rounded up */
			LLVMValueRef g = amd_dispatch_u(c, 12 + 4 * (unsigned)d, 32), w = amd_ntid(c, d);
			*v = LLVMBuildUDiv(B, LLVMBuildAdd(B, g, LLVMBuildSub(B, w, al_ci(c, 32, 1), ""), ""), w, "");
		}
		}
		return *v ? 0 : -1;
	}
	if (!strcmp(name, "%laneid")) {
		*v = al_lane(c);
		return 0;
	}
	if (!strcmp(name, "%warpid")) {
		*v = nv(c) ? nv_sreg(c, "warpid", 32) : LLVMBuildLShr(B, al_linear_tid(c), al_ci(c, 32, 5), "");
		return 0;
	}
	if (!strcmp(name, "%nwarpid")) {
		*v = nv(c) ? nv_sreg(c, "nwarpid", 32) : al_ci(c, 32, 32);
		return 0;
	}
	if (!strcmp(name, "%smid") || !strcmp(name, "%nsmid")) {
		*v = nv(c) ? nv_sreg(c, name + 1, 32) : al_ci(c, 32, name[1] == 'n' ? 1 : 0);
		return 0;
	}
	if (!strcmp(name, "%warpsize") || !strcmp(name, "WARP_SZ")) {
		*v = al_ci(c, 32, 32);
		return 0;
	}
	if (!strncmp(name, "%lanemask_", 10)) {
		const char *k = name + 10;
		if (nv(c)) {
			char r[32];
			snprintf(r, sizeof(r), "lanemask.%s", k);
			*v = nv_sreg(c, r, 32);
			return *v ? 0 : -1;
		}
		LLVMValueRef lane = al_lane(c);
		LLVMValueRef bit = LLVMBuildShl(B, al_ci(c, 32, 1), lane, "");
		LLVMValueRef lt = LLVMBuildSub(B, bit, al_ci(c, 32, 1), "");
		if (!strcmp(k, "eq"))
			*v = bit;
		else if (!strcmp(k, "lt"))
			*v = lt;
		else if (!strcmp(k, "le"))
			*v = LLVMBuildOr(B, lt, bit, "");
		else if (!strcmp(k, "gt"))
			*v = LLVMBuildNot(B, LLVMBuildOr(B, lt, bit, ""), "");
		else if (!strcmp(k, "ge"))
			*v = LLVMBuildNot(B, lt, "");
		else
			return 1;
		return 0;
	}
	if (!strcmp(name, "%clock") || !strcmp(name, "%clock64") || !strcmp(name, "%clock_hi")) {
		bool b64 = !strcmp(name, "%clock64");
		if (nv(c)) {
			*v = !strcmp(name, "%clock_hi") ? nv_asm_reg(c, name, 32) : nv_sreg(c, name + 1, b64 ? 64 : 32);
		} else {
			LLVMValueRef x = al_intr(c, "llvm.readcyclecounter", NULL, 0, 0, NULL);
			*v = b64 ? x : !strcmp(name, "%clock_hi") ? LLVMBuildTrunc(B, LLVMBuildLShr(B, x, al_ci(c, 64, 32), ""), al_ity(c, 32), "")
				     : LLVMBuildTrunc(B, x, al_ity(c, 32), "");
		}
		*t = AT('u', b64 ? 64 : 32);
		return *v ? 0 : -1;
	}
	if (!strcmp(name, "%globaltimer") || !strcmp(name, "%globaltimer_lo") || !strcmp(name, "%globaltimer_hi")) {
		LLVMValueRef x;
		if (nv(c)) {
			x = nv_sreg(c, "globaltimer", 64);
		} else {   /* the 100 MHz constant clock, in nanoseconds */
			x = al_intr(c, "llvm.readsteadycounter", NULL, 0, 0, NULL);
			if (x)
				x = LLVMBuildMul(B, x, al_ci(c, 64, 10), "");
		}
		if (!x)
			return -1;
		if (!strcmp(name, "%globaltimer")) {
			*v = x;
			*t = AT('u', 64);
		} else {
			*v = LLVMBuildTrunc(B, name[13] == 'h' ? LLVMBuildLShr(B, x, al_ci(c, 64, 32), "") : x, al_ity(c, 32), "");
		}
		return 0;
	}
	if (!strncmp(name, "%cluster", 8) || !strncmp(name, "%nclusterid", 11) || !strcmp(name, "%is_explicit_cluster")) {
		if (nv(c)) {   /* sm_90 clusters: the register as PTX has it */
			*v = nv_asm_reg(c, name, 32);
			return 0;
		}
		/* amdgcn: every block is a cluster of one */
		const char *dim = strrchr(name, '.');
		int d = dim ? dim_of(dim) : -1;
		if (!strncmp(name, "%clusterid.", 11) && d >= 0)
			return al_special_reg(c, d == 0 ? "%ctaid.x" : d == 1 ? "%ctaid.y" : "%ctaid.z", v, t);
		if (!strncmp(name, "%nclusterid.", 12) && d >= 0)
			return al_special_reg(c, d == 0 ? "%nctaid.x" : d == 1 ? "%nctaid.y" : "%nctaid.z", v, t);
		*v = al_ci(c, 32, !strncmp(name, "%cluster_nctaid.", 16) || !strcmp(name, "%cluster_nctarank") ? 1 : 0);
		return 0;
	}
	if (!strcmp(name, "%gridid")) {
		*v = nv(c) ? nv_asm_reg(c, "%gridid", 64) : al_ci(c, 64, 0);
		*t = AT('u', 64);
		return 0;
	}
	if (!strncmp(name, "%reserved_smem_offset_", 22) && !nv(c)) {
		/* 1 KiB of LDS stands for the block's reserved shared memory */
		LLVMValueRef g = LLVMGetNamedGlobal(c->mod, "gp.reserved_smem");
		if (!g) {
			LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 8), 1024);
			g = LLVMAddGlobalInAddressSpace(c->mod, ty, "gp.reserved_smem", AS_SHARED);
			LLVMSetInitializer(g, LLVMGetUndef(ty));
			LLVMSetLinkage(g, LLVMInternalLinkage);
			LLVMSetAlignment(g, 16);
		}
		LLVMValueRef at = LLVMBuildPtrToInt(B, g, al_ity(c, 32), "");
		const char *k = name + 22;
		*v = !strcmp(k, "cap") ? al_ci(c, 32, 1024) : !strcmp(k, "end") ? LLVMBuildAdd(B, at, al_ci(c, 32, 1024), "") : at;
		return 0;
	}
	if ((!strcmp(name, "%envreg1") || !strcmp(name, "%envreg2")) && (!nv(c) || al_generic())) {
		/* cooperative groups' grid workspace ({u32 size, u32 barrier}; its address: envreg1 high,
		 * envreg2 low), which NVIDIA's driver gives cooperative launches: one zeroed module
		 * variable. grid.sync() completes when every block of the grid runs at once. */
		LLVMValueRef g = LLVMGetNamedGlobal(c->mod, "gp.grid_ws");
		if (!g) {
			LLVMTypeRef ty = LLVMArrayType2(al_ity(c, 32), 2);
			g = LLVMAddGlobalInAddressSpace(c->mod, ty, "gp.grid_ws", AS_GLOBAL);
			LLVMSetInitializer(g, LLVMConstNull(ty));
			LLVMSetLinkage(g, LLVMInternalLinkage);
			LLVMSetAlignment(g, 8);
		}
		LLVMValueRef a = LLVMBuildPtrToInt(B, LLVMBuildAddrSpaceCast(B, g, al_ptr(c, AS_GENERIC), ""), al_ity(c, 64), "");
		if (name[7] == '1')
			a = LLVMBuildLShr(B, a, al_ci(c, 64, 32), "");
		*v = LLVMBuildTrunc(B, a, al_ity(c, 32), "");
		return 0;
	}
	if (!strcmp(name, "%dynamic_smem_size") || !strcmp(name, "%total_smem_size") ||
	    !strncmp(name, "%envreg", 7) || !strncmp(name, "%reserved_smem_offset", 21) || !strcmp(name, "%pm0")) {
		if (!nv(c)) {
			al_fail(c, "special register %s is not lowered for amdgcn", name);
			return -1;
		}
		*v = nv_asm_reg(c, name, 32);
		return 0;
	}
	return 1;
}

/* barrier.cluster.arrive/.wait and mapa. nvptx: the instruction as the module has it (inline
 * PTX), so that NVIDIA's clusters keep their meaning. amdgcn: clusters of one block (what a launch
 * without cluster dimensions gives; a kernel that requires more is left out, lower.c): arrive is
 * a release fence (none when .relaxed), the wait, which every thread reaches after its arrive, the
 * block's barrier, and mapa's rank 0, the block itself, leaves the address as it is. */
int al_cluster(al *c, const ir_insn *in)
{
	bool mapa = !strcmp(in->opcode, "mapa");
	atype t = mapa && in->nmods ? al_type_parse(in->mods[in->nmods - 1]) : AT(0, 0);
	if (mapa && (in->nops != 3 || (t.bits != 32 && t.bits != 64)))
		return al_unsupported(c, in, "expected mapa{.shared::cluster}.u32/.u64 d, a, rank");
	if (!mapa && !al_mod(in, ".arrive") && !al_mod(in, ".wait"))
		return al_unsupported(c, in, "expected barrier.cluster.arrive or .wait");
	if (nv(c)) {
		char text[160];
		size_t n = (size_t)snprintf(text, sizeof(text), "%s", in->opcode);
		for (unsigned i = 0; i < in->nmods && n < sizeof(text); i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", in->mods[i]);
		snprintf(text + n, n < sizeof(text) ? sizeof(text) - n : 0, "%s", mapa ? " $0, $1, $2;" : ";");
		if (!mapa) {
			LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), NULL, 0, 0);
			LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), "~{memory}", 9, 1, 0, LLVMInlineAsmDialectATT, 0);
			LLVMBuildCall2(B, fty, a, NULL, 0, "");
			return 1;
		}
		LLVMValueRef args[2] = {al_read(c, &in->ops[1], t), al_read(c, &in->ops[2], AT('u', 32))};
		if (!args[0] || !args[1])
			return -1;
		LLVMTypeRef ty = al_ity(c, t.bits), pt[2] = {ty, al_ity(c, 32)};
		LLVMTypeRef fty = LLVMFunctionType(ty, pt, 2, 0);
		const char *cons = t.bits == 64 ? "=l,l,r" : "=r,r,r";
		LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 0, 0, LLVMInlineAsmDialectATT, 0);
		return al_write(c, &in->ops[0], t, LLVMBuildCall2(B, fty, a, args, 2, "")) < 0 ? -1 : 1;
	}
	if (mapa) {
		LLVMValueRef v = al_read(c, &in->ops[1], t);
		return !v ? -1 : al_write(c, &in->ops[0], t, v) < 0 ? -1 : 1;
	}
	if (al_mod(in, ".arrive")) {
		if (!al_mod(in, ".relaxed"))
			al_fence(c, 0);
	} else {
		al_barrier(c);
	}
	return 1;
}

void al_barrier(al *c)
{
	if (nv(c)) {
		al_intr(c, "llvm.nvvm.barrier0", NULL, 0, 0, NULL);
		return;
	}
	LLVMBuildFence(B, LLVMAtomicOrderingRelease, 0, "");
	al_intr(c, "llvm.amdgcn.s.barrier", NULL, 0, 0, NULL);
	LLVMBuildFence(B, LLVMAtomicOrderingAcquire, 0, "");
}

/* Before an mbarrier's test_wait/try_wait tests its phase (lower_async.c). amdgcn: nothing; a
 * block's waves run concurrently on the hardware, so the program's own retry loop spins until the
 * other threads' arrivals (and the copies' bytes) complete the phase. nvptx: a block barrier first,
 * as spirv/ does. The CPU check runs this target's PTX through spirv/ on PoCL, where a work-group's
 * threads run one after the other up to a barrier: a thread spinning there for arrivals of threads
 * after it would spin for ever, while after the barrier every thread has arrived. That holds for
 * the common pattern (every thread arrives, then every thread waits); producer and consumer warps
 * that wait on each other would stop at that barrier (on an NVIDIA GPU too). */
void al_mbar_wait(al *c)
{
	if (nv(c))
		al_barrier(c);
}

void al_fence(al *c, int scope)
{
	if (nv(c)) {
		al_intr(c, scope == 0 ? "llvm.nvvm.membar.cta" : scope == 1 ? "llvm.nvvm.membar.gl" : "llvm.nvvm.membar.sys",
			NULL, 0, 0, NULL);
		return;
	}
	LLVMBuildFence(B, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
}

/* TwoSum: *s + *e = x + y exactly (round to nearest, no overflow). */
static void two_sum(al *c, LLVMValueRef x, LLVMValueRef y, LLVMValueRef *s, LLVMValueRef *e)
{
	*s = LLVMBuildFAdd(B, x, y, "");
	LLVMValueRef bb = LLVMBuildFSub(B, *s, x, "");
	*e = LLVMBuildFAdd(B, LLVMBuildFSub(B, x, LLVMBuildFSub(B, *s, bb, ""), ""), LLVMBuildFSub(B, y, bb, ""), "");
}

/* fma's exact error (a*b + c - r, r the round-to-nearest fma) as one float of the same sign
 * (zero only when r is exact). f32: a*b is exact in f64 and TwoSum there gives p + c = s + e
 * exactly; s - r is exact (Sterbenz: s and r are round-to-nearest of the same value in f64 and
 * f32, or r is 0), so the error's sign is that of (s - r) + e, which f64 cannot make zero or flip
 * (its subnormals cover every f32 product): exact for every f32 input, overflow included (r = inf
 * of a finite sum gives an error of -inf). f64: as spirv/ does, a*b = p + pe (fma), p + c = s + e
 * (TwoSum), error (s - r) + (e + pe); errors lost to underflow (products below 2^-969) are not seen. */
static LLVMValueRef fma_error(al *c, LLVMValueRef *a, LLVMValueRef r)
{
	LLVMTypeRef ft = LLVMTypeOf(a[0]);
	if (LLVMGetTypeKind(ft) == LLVMFloatTypeKind) {
		LLVMTypeRef dt = LLVMDoubleTypeInContext(c->ctx);
		LLVMValueRef x = LLVMBuildFPExt(B, a[0], dt, ""), y = LLVMBuildFPExt(B, a[1], dt, "");
		LLVMValueRef z = LLVMBuildFPExt(B, a[2], dt, ""), s, e;
		two_sum(c, LLVMBuildFMul(B, x, y, ""), z, &s, &e);
		return LLVMBuildFAdd(B, LLVMBuildFSub(B, s, LLVMBuildFPExt(B, r, dt, ""), ""), e, "");
	}
	LLVMValueRef p = LLVMBuildFMul(B, a[0], a[1], ""), s, e;
	LLVMValueRef f[3] = {a[0], a[1], LLVMBuildFNeg(B, p, "")};
	LLVMValueRef pe = al_intr(c, "llvm.fma", &ft, 1, 3, f);
	two_sum(c, p, a[2], &s, &e);
	return LLVMBuildFAdd(B, LLVMBuildFSub(B, s, r, ""), LLVMBuildFAdd(B, e, pe, ""), "");
}

/* Directed rounding on any target: the round-to-nearest result corrected by the sign of its exact
 * error (TwoSum for add/sub, fma residuals for mul, div, rcp and sqrt, fma_error for fma); an
 * overflow to infinity of finite operands counts as above (or below) the exact value, and an exact
 * zero sum (add, sub, fma) is -0 when rounding down unless both addends are +0. */
static LLVMValueRef round_generic(al *c, const char *op, char rnd, atype t, LLVMValueRef *a)
{
	LLVMTypeRef ft = LLVMTypeOf(a[0]);
	LLVMValueRef zero = LLVMConstReal(ft, 0.0), inf = LLVMConstReal(ft, 1.0 / 0.0);
	unsigned nin = !strcmp(op, "sqrt") || !strcmp(op, "rcp") ? 1 : !strcmp(op, "fma") ? 3 : 2;
	LLVMValueRef x = a[0], y = nin > 1 ? a[1] : NULL;
	if (!strcmp(op, "sub"))
		y = LLVMBuildFNeg(B, y, "");
	if (!strcmp(op, "rcp")) {
		y = x;
		x = LLVMConstReal(ft, 1.0);
	}
	LLVMValueRef fin = al_ci(c, 1, 1);
	LLVMValueRef ins[3] = {x, y, nin > 2 ? a[2] : NULL};
	for (unsigned i = 0; i < 3; i++)
		if (ins[i]) {
			LLVMValueRef ab = al_intr(c, "llvm.fabs", &ft, 1, 1, &ins[i]);
			fin = LLVMBuildAnd(B, fin, LLVMBuildFCmp(B, LLVMRealOLT, ab, inf, ""), "");
		}
	LLVMValueRef r, gt, lt;
	if (!strcmp(op, "add") || !strcmp(op, "sub")) {
		r = LLVMBuildFAdd(B, x, y, "");
		LLVMValueRef bb = LLVMBuildFSub(B, r, x, "");
		LLVMValueRef e = LLVMBuildFAdd(B, LLVMBuildFSub(B, x, LLVMBuildFSub(B, r, bb, ""), ""), LLVMBuildFSub(B, y, bb, ""), "");
		gt = LLVMBuildFCmp(B, LLVMRealOLT, e, zero, "");
		lt = LLVMBuildFCmp(B, LLVMRealOGT, e, zero, "");
		if (rnd == 'm') {   /* x + (-x) = -0 when rounding down; +0 + +0 stays +0 */
			LLVMTypeRef it = al_ity(c, LLVMGetTypeKind(ft) == LLVMDoubleTypeKind ? 64 : 32);
			LLVMValueRef bothp = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildBitCast(B, x, it, ""), LLVMConstNull(it), ""),
							  LLVMBuildICmp(B, LLVMIntEQ, LLVMBuildBitCast(B, y, it, ""), LLVMConstNull(it), ""), "");
			LLVMValueRef z = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealOEQ, r, zero, ""),
						      LLVMBuildFCmp(B, LLVMRealOEQ, e, zero, ""), "");
			r = LLVMBuildSelect(B, LLVMBuildAnd(B, z, LLVMBuildNot(B, bothp, ""), ""), LLVMConstReal(ft, -0.0), r, "");
		}
	} else if (!strcmp(op, "mul")) {
		r = LLVMBuildFMul(B, x, y, "");
		LLVMValueRef f[3] = {x, y, LLVMBuildFNeg(B, r, "")};
		LLVMValueRef e = al_intr(c, "llvm.fma", &ft, 1, 3, f);
		gt = LLVMBuildFCmp(B, LLVMRealOLT, e, zero, "");
		lt = LLVMBuildFCmp(B, LLVMRealOGT, e, zero, "");
	} else if (!strcmp(op, "div") || !strcmp(op, "rcp")) {
		r = LLVMBuildFDiv(B, x, y, "");
		LLVMValueRef f[3] = {LLVMBuildFNeg(B, r, ""), y, x};
		LLVMValueRef rem = al_intr(c, "llvm.fma", &ft, 1, 3, f);   /* x - r*y, exact */
		LLVMValueRef rpos = LLVMBuildFCmp(B, LLVMRealOGT, rem, zero, ""), rneg = LLVMBuildFCmp(B, LLVMRealOLT, rem, zero, "");
		LLVMValueRef ypos = LLVMBuildFCmp(B, LLVMRealOGT, y, zero, "");
		lt = LLVMBuildOr(B, LLVMBuildAnd(B, rpos, ypos, ""), LLVMBuildAnd(B, rneg, LLVMBuildNot(B, ypos, ""), ""), "");
		gt = LLVMBuildOr(B, LLVMBuildAnd(B, rneg, ypos, ""), LLVMBuildAnd(B, rpos, LLVMBuildNot(B, ypos, ""), ""), "");
		fin = LLVMBuildAnd(B, fin, LLVMBuildFCmp(B, LLVMRealONE, y, zero, ""), "");
	} else if (!strcmp(op, "fma")) {
		r = al_intr(c, "llvm.fma", &ft, 1, 3, a);
		LLVMValueRef e = fma_error(c, a, r);
		LLVMValueRef ez = LLVMConstNull(LLVMTypeOf(e));
		gt = LLVMBuildFCmp(B, LLVMRealOLT, e, ez, "");
		lt = LLVMBuildFCmp(B, LLVMRealOGT, e, ez, "");
		if (rnd == 'm') {   /* an exact zero: -0 unless a*b and c are both +0 (a*b's sign: a's xor b's) */
			LLVMTypeRef it = al_ity(c, t.bits);
			LLVMValueRef sb = al_ci(c, t.bits, 1ull << (t.bits - 1));
			LLVMValueRef sg = LLVMBuildOr(B, LLVMBuildXor(B, LLVMBuildBitCast(B, a[0], it, ""), LLVMBuildBitCast(B, a[1], it, ""), ""),
						      LLVMBuildBitCast(B, a[2], it, ""), "");
			LLVMValueRef z0 = LLVMBuildBitCast(B, LLVMBuildAnd(B, sg, sb, ""), ft, "");
			LLVMValueRef z = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealOEQ, r, zero, ""), LLVMBuildFCmp(B, LLVMRealOEQ, e, ez, ""), "");
			r = LLVMBuildSelect(B, z, z0, r, "");
		}
	} else if (!strcmp(op, "sqrt")) {
		r = al_intr(c, "llvm.sqrt", &ft, 1, 1, &x);
		LLVMValueRef f[3] = {LLVMBuildFNeg(B, r, ""), r, x};
		LLVMValueRef rem = al_intr(c, "llvm.fma", &ft, 1, 3, f);
		lt = LLVMBuildFCmp(B, LLVMRealOGT, rem, zero, "");
		gt = LLVMBuildFCmp(B, LLVMRealOLT, rem, zero, "");
	} else {
		return NULL;
	}
	/* an overflow of finite operands: infinity lies beyond the exact value */
	LLVMValueRef pinf = LLVMBuildFCmp(B, LLVMRealOEQ, r, inf, ""), ninf = LLVMBuildFCmp(B, LLVMRealOEQ, r, LLVMConstReal(ft, -1.0 / 0.0), "");
	gt = LLVMBuildAnd(B, fin, LLVMBuildOr(B, gt, pinf, ""), "");
	lt = LLVMBuildAnd(B, fin, LLVMBuildOr(B, lt, ninf, ""), "");
	LLVMValueRef xneg = LLVMBuildOr(B, LLVMBuildFCmp(B, LLVMRealOLT, r, zero, ""),
					LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealOEQ, r, zero, ""), gt, ""), "");
	return al_directed_fix(c, r, rnd, gt, lt, xneg);
}

/* sin, cos, lg2, ex2 (.approx: PTX has them in f32, ex2 in f16 too). nvptx: NVVM's intrinsics,
 * the same instruction again (LLVM 19's NVPTX backend selects no llvm.sin.f32 without fast-math
 * flags and has no libcall for llvm.exp2/log2.f32: BlackScholes, binomialOptions, cuRAND's
 * Box-Muller did not compile); amdgcn: LLVM's generic intrinsics, which its backend selects. */
LLVMValueRef al_approx(al *c, const char *op, unsigned bits, bool ftz, LLVMTypeRef ft, LLVMValueRef *a)
{
	char name[64];
	if (nv(c) && bits == 32) {
		snprintf(name, sizeof(name), "llvm.nvvm.%s.approx%s.f", op, ftz ? ".ftz" : "");
		return al_intr(c, name, NULL, 0, 1, a);
	}
	const char *g = !strcmp(op, "sin") ? "llvm.sin" : !strcmp(op, "cos") ? "llvm.cos"
		      : !strcmp(op, "lg2") ? "llvm.log2" : "llvm.exp2";
	return al_intr(c, g, &ft, 1, 1, a);
}

LLVMValueRef al_round_op(al *c, const char *op, char rnd, atype t, LLVMValueRef *a)
{
	if (!nv(c) || al_generic())
		return round_generic(c, op, rnd, t, a);
	char name[64];
	const char *m = rnd == 'z' ? "rz" : rnd == 'm' ? "rm" : "rp";
	if (!strcmp(op, "sitofp") || !strcmp(op, "uitofp")) {
		unsigned sb = t.bits >> 8, db = t.bits & 0xff;
		snprintf(name, sizeof(name), "llvm.nvvm.%s%s2%s.%s", op[0] == 'u' ? "u" : "", sb == 64 ? "ll" : "i",
			 db == 64 ? "d" : "f", m);
		return al_intr(c, name, NULL, 0, 1, a);
	}
	if (!strcmp(op, "cvt")) {   /* f64 -> f32 */
		if (t.bits != 32)
			return NULL;
		snprintf(name, sizeof(name), "llvm.nvvm.d2f.%s", m);
		return al_intr(c, name, NULL, 0, 1, a);
	}
	const char *sfx = t.bits == 64 ? "d" : "f";
	if (!strcmp(op, "sub")) {
		LLVMValueRef b[2] = {a[0], LLVMBuildFNeg(B, a[1], "")};
		snprintf(name, sizeof(name), "llvm.nvvm.add.%s.%s", m, sfx);
		return al_intr(c, name, NULL, 0, 2, b);
	}
	unsigned n = !strcmp(op, "fma") ? 3 : !strcmp(op, "sqrt") || !strcmp(op, "rcp") ? 1 : 2;
	if (strcmp(op, "add") && strcmp(op, "mul") && strcmp(op, "fma") && strcmp(op, "div") && strcmp(op, "sqrt") &&
	    strcmp(op, "rcp"))
		return NULL;
	snprintf(name, sizeof(name), "llvm.nvvm.%s.%s.%s", op, m, sfx);
	return al_intr(c, name, NULL, 0, n, a);
}

/* ---- warp collectives ------------------------------------------------------------------- */

/* amdgcn: the value of lane src (0..31) of the caller's 32-lane warp. */
static LLVMValueRef amd_shfl32(al *c, LLVMValueRef v, LLVMValueRef src)
{
	LLVMValueRef base = c->wave64 ? LLVMBuildAnd(B, amd_wave_lane(c), al_ci(c, 32, 32), "") : al_ci(c, 32, 0);
	LLVMValueRef addr = LLVMBuildShl(B, LLVMBuildOr(B, base, src, ""), al_ci(c, 32, 2), "");
	LLVMValueRef a[2] = {addr, v};
	return al_intr(c, "llvm.amdgcn.ds.bpermute", NULL, 0, 2, a);
}

/* amdgcn: the ballot of p over the caller's 32-lane warp. */
static LLVMValueRef amd_ballot32(al *c, LLVMValueRef p)
{
	LLVMTypeRef i64 = al_ity(c, 64);
	LLVMValueRef b = al_intr(c, "llvm.amdgcn.ballot", &i64, 1, 1, &p);
	if (c->wave64) {
		LLVMValueRef half = LLVMBuildZExt(B, LLVMBuildAnd(B, amd_wave_lane(c), al_ci(c, 32, 32), ""), i64, "");
		b = LLVMBuildLShr(B, b, half, "");
	}
	return LLVMBuildTrunc(B, b, al_ity(c, 32), "");
}

static int shfl(al *c, const ir_insn *in)
{
	const ir_operand *d = &in->ops[0];
	const ir_operand *dv = d->kind == IR_OPND_PAIR ? &d->elems[0] : d;
	const ir_operand *dp = d->kind == IR_OPND_PAIR ? &d->elems[1] : NULL;
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', 32));
	LLVMValueRef b = al_read(c, &in->ops[2], AT('u', 32));
	LLVMValueRef cc = al_read(c, &in->ops[3], AT('u', 32));
	LLVMValueRef mask = in->nops > 4 ? al_read(c, &in->ops[4], AT('u', 32)) : al_ci(c, 32, 0xffffffffu);
	if (!a || !b || !cc || !mask)
		return -1;
	const char *mode = al_mod(in, ".up") ? "up" : al_mod(in, ".down") ? "down" : al_mod(in, ".bfly") ? "bfly" : "idx";
	LLVMValueRef r, p;
	if (nv(c)) {
		char name[64];
		snprintf(name, sizeof(name), "llvm.nvvm.shfl.sync.%s.i32p", mode);
		LLVMValueRef args[4] = {mask, a, b, cc};
		LLVMValueRef s = al_intr(c, name, NULL, 0, 4, args);
		if (!s)
			return -1;
		r = LLVMBuildExtractValue(B, s, 0, "");
		p = LLVMBuildExtractValue(B, s, 1, "");
	} else {
		LLVMValueRef lane = al_lane(c);
		LLVMValueRef clamp = LLVMBuildAnd(B, cc, al_ci(c, 32, 31), "");
		LLVMValueRef seg = LLVMBuildAnd(B, LLVMBuildLShr(B, cc, al_ci(c, 32, 8), ""), al_ci(c, 32, 31), "");
		LLVMValueRef minl = LLVMBuildAnd(B, lane, seg, "");
		LLVMValueRef maxl = LLVMBuildOr(B, minl, LLVMBuildAnd(B, clamp, LLVMBuildNot(B, seg, ""), ""), "");
		LLVMValueRef j;
		if (!strcmp(mode, "up")) {
			j = LLVMBuildSub(B, lane, b, "");
			p = LLVMBuildICmp(B, LLVMIntSGE, j, maxl, "");
		} else if (!strcmp(mode, "down")) {
			j = LLVMBuildAdd(B, lane, b, "");
			p = LLVMBuildICmp(B, LLVMIntULE, j, maxl, "");
		} else if (!strcmp(mode, "bfly")) {
			j = LLVMBuildXor(B, lane, b, "");
			p = LLVMBuildICmp(B, LLVMIntULE, j, maxl, "");
		} else {
			j = LLVMBuildOr(B, minl, LLVMBuildAnd(B, b, LLVMBuildNot(B, seg, ""), ""), "");
			p = LLVMBuildICmp(B, LLVMIntULE, j, maxl, "");
		}
		j = LLVMBuildSelect(B, p, LLVMBuildAnd(B, j, al_ci(c, 32, 31), ""), lane, "");
		r = amd_shfl32(c, a, j);
	}
	if (al_write(c, dv, AT('b', 32), r) < 0)
		return -1;
	if (dp && al_write(c, dp, AT('p', 1), p) < 0)
		return -1;
	return 1;
}

static LLVMValueRef activemask(al *c)
{
	if (nv(c))
		return al_intr(c, "llvm.nvvm.activemask", NULL, 0, 0, NULL);
	return amd_ballot32(c, al_ci(c, 1, 1));
}

static int vote(al *c, const ir_insn *in)
{
	bool ballot = al_mod(in, ".ballot");
	LLVMValueRef p = al_read_pred(c, &in->ops[1]);
	LLVMValueRef mask = in->nops > 2 ? al_read(c, &in->ops[2], AT('u', 32)) : al_ci(c, 32, 0xffffffffu);
	if (!p || !mask)
		return -1;
	LLVMValueRef r;
	if (nv(c)) {
		const char *m = ballot ? "ballot" : al_mod(in, ".all") ? "all" : al_mod(in, ".any") ? "any" : "uni";
		char name[64];
		snprintf(name, sizeof(name), "llvm.nvvm.vote.%s.sync", m);
		LLVMValueRef args[2] = {mask, p};
		r = al_intr(c, name, NULL, 0, 2, args);
	} else {
		LLVMValueRef bal = amd_ballot32(c, p);
		if (ballot) {
			r = LLVMBuildAnd(B, bal, mask, "");
		} else {
			LLVMValueRef act = LLVMBuildAnd(B, activemask(c), mask, "");
			LLVMValueRef on = LLVMBuildAnd(B, bal, act, "");
			if (al_mod(in, ".all"))
				r = LLVMBuildICmp(B, LLVMIntEQ, on, act, "");
			else if (al_mod(in, ".any"))
				r = LLVMBuildICmp(B, LLVMIntNE, on, al_ci(c, 32, 0), "");
			else
				r = LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntEQ, on, act, ""),
						LLVMBuildICmp(B, LLVMIntEQ, on, al_ci(c, 32, 0), ""), "");
		}
	}
	if (!r)
		return -1;
	return al_write(c, &in->ops[0], ballot ? AT('b', 32) : AT('p', 1), r) < 0 ? -1 : 1;
}

static int match(al *c, const ir_insn *in)
{
	atype t = al_insn_type(in);
	bool all = al_mod(in, ".all");
	const ir_operand *d = &in->ops[0];
	const ir_operand *dv = d->kind == IR_OPND_PAIR ? &d->elems[0] : d;
	const ir_operand *dp = d->kind == IR_OPND_PAIR ? &d->elems[1] : NULL;
	LLVMValueRef a = al_read(c, &in->ops[1], AT('b', t.bits));
	LLVMValueRef mask = al_read(c, &in->ops[2], AT('u', 32));
	if (!a || !mask)
		return -1;
	LLVMValueRef r, p = NULL;
	if (nv(c)) {
		char name[64];
		snprintf(name, sizeof(name), "llvm.nvvm.match.%s.sync.i%u%s", all ? "all" : "any", t.bits, all ? "p" : "");
		LLVMValueRef args[2] = {mask, a};
		LLVMValueRef s = al_intr(c, name, NULL, 0, 2, args);
		if (!s)
			return -1;
		r = all ? LLVMBuildExtractValue(B, s, 0, "") : s;
		if (all)
			p = LLVMBuildExtractValue(B, s, 1, "");
	} else {   /* compare with every lane's value in turn */
		LLVMValueRef lo = t.bits == 64 ? LLVMBuildTrunc(B, a, al_ity(c, 32), "") : a;
		LLVMValueRef hi = t.bits == 64 ? LLVMBuildTrunc(B, LLVMBuildLShr(B, a, al_ci(c, 64, 32), ""), al_ity(c, 32), "") : NULL;
		LLVMValueRef act = LLVMBuildAnd(B, activemask(c), mask, "");
		r = al_ci(c, 32, 0);
		for (unsigned j = 0; j < 32; j++) {
			LLVMValueRef eq = LLVMBuildICmp(B, LLVMIntEQ, amd_shfl32(c, lo, al_ci(c, 32, j)), lo, "");
			if (hi)
				eq = LLVMBuildAnd(B, eq, LLVMBuildICmp(B, LLVMIntEQ, amd_shfl32(c, hi, al_ci(c, 32, j)), hi, ""), "");
			r = LLVMBuildOr(B, r, LLVMBuildSelect(B, eq, al_ci(c, 32, 1u << j), al_ci(c, 32, 0), ""), "");
		}
		r = LLVMBuildAnd(B, r, act, "");
		if (all) {
			p = LLVMBuildICmp(B, LLVMIntEQ, r, act, "");
			r = LLVMBuildSelect(B, p, act, al_ci(c, 32, 0), "");
		}
	}
	if (al_write(c, dv, AT('b', 32), r) < 0)
		return -1;
	if (dp && al_write(c, dp, AT('p', 1), p) < 0)
		return -1;
	return 1;
}

static int redux(al *c, const ir_insn *in)
{
	atype t = al_insn_type(in);
	if (t.k == 'f' || t.bits != 32)
		return al_unsupported(c, in, "this type is not lowered");
	LLVMValueRef a = al_read(c, &in->ops[1], t), mask = al_read(c, &in->ops[2], AT('u', 32));
	if (!a || !mask)
		return -1;
	const char *op = al_mod(in, ".add") ? "add" : al_mod(in, ".and") ? "and" : al_mod(in, ".or") ? "or"
		: al_mod(in, ".xor") ? "xor" : al_mod(in, ".min") ? "min" : al_mod(in, ".max") ? "max" : NULL;
	if (!op)
		return al_unsupported(c, in, "no such reduction");
	LLVMValueRef r;
	if (nv(c)) {
		char name[64];
		bool mm = op[0] == 'm';
		snprintf(name, sizeof(name), "llvm.nvvm.redux.sync.%s%s", mm && t.k == 'u' ? "u" : "", op);
		LLVMValueRef args[2] = {a, mask};
		r = al_intr(c, name, NULL, 0, 2, args);
	} else {   /* butterfly over the 32 lanes (every lane of the warp takes part) */
		r = a;
		for (unsigned s = 1; s < 32; s <<= 1) {
			LLVMValueRef o = amd_shfl32(c, r, LLVMBuildXor(B, al_lane(c), al_ci(c, 32, s), ""));
			if (!strcmp(op, "add"))
				r = LLVMBuildAdd(B, r, o, "");
			else if (!strcmp(op, "and"))
				r = LLVMBuildAnd(B, r, o, "");
			else if (!strcmp(op, "or"))
				r = LLVMBuildOr(B, r, o, "");
			else if (!strcmp(op, "xor"))
				r = LLVMBuildXor(B, r, o, "");
			else {
				LLVMIntPredicate pr = op[1] == 'i' ? (t.k == 's' ? LLVMIntSLT : LLVMIntULT)
								   : (t.k == 's' ? LLVMIntSGT : LLVMIntUGT);
				r = LLVMBuildSelect(B, LLVMBuildICmp(B, pr, r, o, ""), r, o, "");
			}
		}
	}
	if (!r)
		return -1;
	return al_write(c, &in->ops[0], t, r) < 0 ? -1 : 1;
}

/* bar.red.{popc,and,or}: a block-wide reduction at a barrier. */
static int bar_red(al *c, const ir_insn *in)
{
	bool popc = al_mod(in, ".popc");
	if (in->nops < 3)   /* d, barrier, [count,] predicate */
		return al_unsupported(c, in, "too few operands");
	const ir_operand *pop = &in->ops[in->nops - 1];
	LLVMValueRef p = al_read_pred(c, pop);
	if (!p)
		return -1;
	if (in->nops > 3 || (in->ops[1].kind != IR_OPND_INT || in->ops[1].ival != 0))
		return al_unsupported(c, in, "barriers other than 0 or with a thread count are not lowered");
	LLVMValueRef x = LLVMBuildZExt(B, p, al_ity(c, 32), "");
	if (!nv(c) || al_generic()) {   /* a work-group word: reset, barrier, atomic add, barrier, read, barrier */
		LLVMValueRef w = LLVMGetNamedGlobal(c->mod, "gp.bar_red");
		if (!w) {
			w = LLVMAddGlobalInAddressSpace(c->mod, al_ity(c, 32), "gp.bar_red", AS_SHARED);
			LLVMSetInitializer(w, LLVMGetUndef(al_ity(c, 32)));
			LLVMSetLinkage(w, LLVMInternalLinkage);
			LLVMSetAlignment(w, 4);
		}
		bool and = al_mod(in, ".and");
		al_barrier(c);
		LLVMValueRef first = LLVMBuildICmp(B, LLVMIntEQ, al_linear_tid(c), al_ci(c, 32, 0), "");
		LLVMBasicBlockRef reset = al_new_block(c, "barred.reset"), go = al_new_block(c, "barred.go");
		LLVMBuildCondBr(B, first, reset, go);
		LLVMPositionBuilderAtEnd(B, reset);
		LLVMBuildStore(B, al_ci(c, 32, 0), w);
		LLVMBuildBr(B, go);
		LLVMPositionBuilderAtEnd(B, go);
		al_barrier(c);
		LLVMValueRef add = and ? LLVMBuildXor(B, x, al_ci(c, 32, 1), "") : x;   /* .and counts the false */
		LLVMBuildAtomicRMW(B, LLVMAtomicRMWBinOpAdd, w, add, LLVMAtomicOrderingMonotonic, 0);
		al_barrier(c);
		LLVMValueRef n = LLVMBuildLoad2(B, al_ity(c, 32), w, "");
		LLVMSetVolatile(n, 1);
		al_barrier(c);
		if (popc)
			return al_write(c, &in->ops[0], AT('u', 32), n) < 0 ? -1 : 1;
		LLVMValueRef r = LLVMBuildICmp(B, and ? LLVMIntEQ : LLVMIntNE, n, al_ci(c, 32, 0), "");
		return al_write(c, &in->ops[0], AT('p', 1), r) < 0 ? -1 : 1;
	}
	const char *name = popc ? "llvm.nvvm.barrier0.popc" : al_mod(in, ".and") ? "llvm.nvvm.barrier0.and" : "llvm.nvvm.barrier0.or";
	LLVMValueRef r = al_intr(c, name, NULL, 0, 1, &x);
	if (!r)
		return -1;
	if (popc)
		return al_write(c, &in->ops[0], AT('u', 32), r) < 0 ? -1 : 1;
	return al_write(c, &in->ops[0], AT('p', 1), LLVMBuildICmp(B, LLVMIntNE, r, al_ci(c, 32, 0), "")) < 0 ? -1 : 1;
}

int al_warp(al *c, const ir_insn *in)
{
	const char *op = in->opcode;
	if (!strcmp(op, "shfl"))
		return shfl(c, in);
	if (!strcmp(op, "vote"))
		return vote(c, in);
	if (!strcmp(op, "match"))
		return match(c, in);
	if (!strcmp(op, "redux"))
		return redux(c, in);
	if (!strcmp(op, "activemask"))
		return al_write(c, &in->ops[0], AT('b', 32), activemask(c)) < 0 ? -1 : 1;
	if ((!strcmp(op, "bar") || !strcmp(op, "barrier")) && al_mod(in, ".red"))
		return bar_red(c, in);
	if ((!strcmp(op, "bar") || !strcmp(op, "barrier")) && al_mod(in, ".warp")) {
		if (nv(c)) {
			LLVMValueRef m = al_read(c, &in->ops[0], AT('u', 32));
			if (!m)
				return -1;
			al_intr(c, "llvm.nvvm.bar.warp.sync", NULL, 0, 1, &m);
		}
		return 1;
	}
	return 0;
}
