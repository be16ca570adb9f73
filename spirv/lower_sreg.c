/* Special registers: %tid, %ntid, %ctaid, %nctaid through OpenCL's BuiltIns; %laneid, %warpid
 * and the lane masks from the linear thread index (the warp emulation's 32-lane warps); clocks
 * as far as OpenCL allows (it has no clock: a per-thread counter that only grows). */
#include "spirv/lower.h"

#include <string.h>

/* How far %clock and %clock64 move at each read of a work-item (lw_special_reg): a few of a GPU loop
 * iteration's cycles. */
#define CYCLES_PER_READ 32

static const SpvBuiltIn builtin_of[LW_B_COUNT] = {
	[LW_B_LOCAL_ID] = SpvBuiltInLocalInvocationId,
	[LW_B_WG_SIZE] = SpvBuiltInWorkgroupSize,
	[LW_B_WG_ID] = SpvBuiltInWorkgroupId,
	[LW_B_NUM_WG] = SpvBuiltInNumWorkgroups,
};
static const char *const builtin_name[LW_B_COUNT] = {
	"__spirv_BuiltInLocalInvocationId", "__spirv_BuiltInWorkgroupSize",
	"__spirv_BuiltInWorkgroupId", "__spirv_BuiltInNumWorkgroups",
};

uint32_t lw_builtin_load(lw *c, enum lw_builtin b, unsigned comp)
{
	uint32_t i64 = spv_t_int(c->e, 64);
	uint32_t v3 = spv_t_vec(c->e, i64, 3);
	if (!c->builtins[b]) {
		uint32_t pt = spv_t_ptr(c->e, SpvStorageClassInput, v3);
		c->builtins[b] = spv_id(c->e);
		spv_op(&c->e->globals, SpvOpVariable, 3, pt, c->builtins[b], (uint32_t)SpvStorageClassInput);
		spv_decorate(c->e, c->builtins[b], SpvDecorationBuiltIn, 1, (uint32_t)builtin_of[b]);
		spv_decorate(c->e, c->builtins[b], SpvDecorationConstant, 0);
		spv_name(c->e, c->builtins[b], builtin_name[b]);
	}
	uint32_t v = lw_op1(c, SpvOpLoad, v3, c->builtins[b]);
	lw_ensure_block(c);
	uint32_t x = spv_id(c->e);
	spv_op(&c->body, SpvOpCompositeExtract, 4, i64, x, v, comp);
	return lw_op1(c, SpvOpUConvert, spv_t_int(c->e, 32), x);
}

uint32_t lw_linear_tid(lw *c)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t tx = lw_builtin_load(c, LW_B_LOCAL_ID, 0), ty = lw_builtin_load(c, LW_B_LOCAL_ID, 1),
		 tz = lw_builtin_load(c, LW_B_LOCAL_ID, 2);
	uint32_t nx = lw_builtin_load(c, LW_B_WG_SIZE, 0), ny = lw_builtin_load(c, LW_B_WG_SIZE, 1);
	uint32_t yz = lw_op2(c, SpvOpIAdd, u32, ty, lw_op2(c, SpvOpIMul, u32, tz, ny));
	return lw_op2(c, SpvOpIAdd, u32, tx, lw_op2(c, SpvOpIMul, u32, yz, nx));
}

uint32_t lw_block_threads(lw *c)
{
	uint32_t u32 = spv_t_int(c->e, 32);
	uint32_t nx = lw_builtin_load(c, LW_B_WG_SIZE, 0), ny = lw_builtin_load(c, LW_B_WG_SIZE, 1),
		 nz = lw_builtin_load(c, LW_B_WG_SIZE, 2);
	return lw_op2(c, SpvOpIMul, u32, nx, lw_op2(c, SpvOpIMul, u32, ny, nz));
}

void lw_barrier(lw *c)
{
	lw_ensure_block(c);
	uint32_t sem = SpvMemorySemanticsSequentiallyConsistentMask | SpvMemorySemanticsWorkgroupMemoryMask |
		       SpvMemorySemanticsCrossWorkgroupMemoryMask;
	spv_op(&c->body, SpvOpControlBarrier, 3, lw_u32(c, SpvScopeWorkgroup), lw_u32(c, SpvScopeWorkgroup),
	       lw_u32(c, sem));
	lw_region_after_barrier(c);
}

static int comp_of(const char *suffix)
{
	if (!strcmp(suffix, ".x"))
		return 0;
	if (!strcmp(suffix, ".y"))
		return 1;
	if (!strcmp(suffix, ".z"))
		return 2;
	return -1;
}

int lw_special_reg(lw *c, const char *name, uint32_t *v, ptype *t)
{
	static const struct { const char *p; enum lw_builtin b; } vec[] = {
		{"%tid", LW_B_LOCAL_ID}, {"%ntid", LW_B_WG_SIZE}, {"%ctaid", LW_B_WG_ID}, {"%nctaid", LW_B_NUM_WG},
	};
	uint32_t u32 = spv_t_int(c->e, 32);
	*t = PT('u', 32);
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t n = strlen(vec[i].p);
		if (!strncmp(name, vec[i].p, n) && (name[n] == '.' || !name[n])) {
			int comp = name[n] ? comp_of(name + n) : 0;
			if (comp < 0)
				return lw_fail(c, "unknown special register %s", name);
			*v = lw_builtin_load(c, vec[i].b, (unsigned)comp);
			return 0;
		}
	}
	if (!strcmp(name, "%laneid")) {
		*v = lw_op2(c, SpvOpBitwiseAnd, u32, lw_linear_tid(c), lw_u32(c, 31));
		return 0;
	}
	if (!strcmp(name, "%warpid")) {
		*v = lw_op2(c, SpvOpShiftRightLogical, u32, lw_linear_tid(c), lw_u32(c, 5));
		return 0;
	}
	if (!strcmp(name, "%nwarpid")) {
		*v = lw_op2(c, SpvOpShiftRightLogical, u32,
			    lw_op2(c, SpvOpIAdd, u32, lw_block_threads(c), lw_u32(c, 31)), lw_u32(c, 5));
		return 0;
	}
	if (!strncmp(name, "%lanemask_", 10)) {
		const char *k = name + 10;
		uint32_t lane = lw_op2(c, SpvOpBitwiseAnd, u32, lw_linear_tid(c), lw_u32(c, 31));
		uint32_t bit = lw_op2(c, SpvOpShiftLeftLogical, u32, lw_u32(c, 1), lane);
		uint32_t lt = lw_op2(c, SpvOpISub, u32, bit, lw_u32(c, 1));
		if (!strcmp(k, "eq"))
			*v = bit;
		else if (!strcmp(k, "lt"))
			*v = lt;
		else if (!strcmp(k, "le"))
			*v = lw_op2(c, SpvOpBitwiseOr, u32, lt, bit);
		else if (!strcmp(k, "gt"))
			*v = lw_op1(c, SpvOpNot, u32, lw_op2(c, SpvOpBitwiseOr, u32, lt, bit));
		else if (!strcmp(k, "ge"))
			*v = lw_op1(c, SpvOpNot, u32, lt);
		else
			return lw_fail(c, "unknown special register %s", name);
		return 0;
	}
	if (!strcmp(name, "%smid") || !strcmp(name, "%gridid")) {
		/* one "SM" on this target: per-SM map shards collapse into shard 0 */
		*v = lw_u32(c, 0);
		return 0;
	}
	if (!strcmp(name, "%nsmid")) {
		*v = lw_u32(c, 1);
		return 0;
	}
	if (!strcmp(name, "%clock") || !strcmp(name, "%clock64") || !strcmp(name, "%globaltimer") ||
	    !strcmp(name, "%globaltimer_lo") || !strcmp(name, "%globaltimer_hi")) {
		/* OpenCL gives kernels no clock. The driver's word of the host's clock where it keeps
		 * one (spirv_options.clock_word), and a per-thread value that grows by at least one per
		 * read keeps what probes rely on (later reads are larger, differences are
		 * non-negative). The cycle counters (%clock, %clock64) grow by CYCLES_PER_READ: a
		 * spin loop `while (clock() - start < n)` ends after n / 32 reads of its own, as on a
		 * GPU after n cycles, instead of waiting for the host's word, which moves every 100 us:
		 * on a CPU the work-items of a block run one after another, and cuda-samples'
		 * graphMemoryFootprint (16M threads of 5 us spins) took hours so. */
		uint32_t i64 = spv_t_int(c->e, 64);
		if (!c->clock_var) {
			c->clock_var = spv_id(c->e);
			spv_op(&c->vars, SpvOpVariable, 3, spv_t_ptr(c->e, SpvStorageClassFunction, i64), c->clock_var,
			       (uint32_t)SpvStorageClassFunction);
			spv_op(&c->prologue, SpvOpStore, 2, c->clock_var, lw_u64(c, 0));
		}
		uint32_t old = lw_op1(c, SpvOpLoad, i64, c->clock_var);
		bool cycles = !strcmp(name, "%clock") || !strcmp(name, "%clock64");
		uint32_t nv = lw_op2(c, SpvOpIAdd, i64, old, lw_u64(c, cycles ? CYCLES_PER_READ : 1));
		if (c->opts && c->opts->clock_word) {
			uint32_t p = lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, i64),
					    lw_u64(c, c->opts->clock_word));
			uint32_t host = spv_id(c->e);
			spv_op(&c->body, SpvOpLoad, 5, i64, host, p,
			       (uint32_t)(SpvMemoryAccessVolatileMask | SpvMemoryAccessAlignedMask), 8u);
			uint32_t later = lw_op2(c, SpvOpUGreaterThan, spv_t_bool(c->e), host, nv);
			nv = lw_op3(c, SpvOpSelect, i64, later, host, nv);
		}
		spv_op(&c->body, SpvOpStore, 2, c->clock_var, nv);
		*v = nv;
		*t = PT('u', 64);
		if (!strcmp(name, "%clock") || !strcmp(name, "%globaltimer_lo")) {
			*v = lw_op1(c, SpvOpUConvert, u32, nv);
			*t = PT('u', 32);
		} else if (!strcmp(name, "%globaltimer_hi")) {
			*v = lw_u32(c, 0);
			*t = PT('u', 32);
		}
		return 0;
	}
	/* A grid launched without cluster dimensions is made of one-block clusters. */
	if (!strncmp(name, "%clusterid", 10) || !strncmp(name, "%nclusterid", 11)) {
		int comp = name[name[1] == 'n' ? 11 : 10] ? comp_of(name + (name[1] == 'n' ? 11 : 10)) : 0;
		if (comp < 0)
			return lw_fail(c, "unknown special register %s", name);
		*v = lw_builtin_load(c, name[1] == 'n' ? LW_B_NUM_WG : LW_B_WG_ID, (unsigned)comp);
		return 0;
	}
	if (!strcmp(name, "%cluster_ctarank") || !strncmp(name, "%cluster_ctaid", 14)) {
		*v = lw_u32(c, 0);
		return 0;
	}
	if (!strcmp(name, "%cluster_nctarank") || !strncmp(name, "%cluster_nctaid", 15)) {
		*v = lw_u32(c, 1);
		return 0;
	}
	if (!strcmp(name, "%warpsize") || !strcmp(name, "WARP_SZ")) {
		*v = lw_u32(c, 32);
		return 0;
	}
	if (!strcmp(name, "%envreg1") || !strcmp(name, "%envreg2")) {
		/* cooperative groups' grid workspace (its address: envreg1 high, envreg2 low), which
		 * NVIDIA's driver provides for cooperative launches: {u32 size, u32 barrier}, here the
		 * driver's (spirv_options.grid_workspace) or else one zeroed module variable.
		 * grid.sync() then counts arrivals on its barrier word; it
		 * completes when every block of the grid runs at once, as cooperative launches promise */
		if (c->opts && c->opts->grid_workspace) {
			uint64_t a = c->opts->grid_workspace;
			*v = lw_u32(c, name[7] == '1' ? (uint32_t)(a >> 32) : (uint32_t)a);
			return 0;
		}
		if (!c->grid_ws) {
			uint32_t at = spv_t_array(c->e, u32, spv_c_int(c->e, 32, 2));
			c->grid_ws = spv_id(c->e);
			spv_op(&c->e->globals, SpvOpVariable, 4, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, at), c->grid_ws,
			       (uint32_t)SpvStorageClassCrossWorkgroup, spv_c_null(c->e, at));
			spv_decorate(c->e, c->grid_ws, SpvDecorationAlignment, 1, 8u);
			spv_name(c->e, c->grid_ws, "gpuprobe_grid_workspace");
		}
		uint32_t u64 = spv_t_int(c->e, 64);
		uint32_t a = lw_op1(c, SpvOpConvertPtrToU, u64, c->grid_ws);
		if (name[7] == '1')
			a = lw_op2(c, SpvOpShiftRightLogical, u64, a, lw_u64(c, 32));
		*v = lw_op1(c, SpvOpUConvert, u32, a);
		return 0;
	}
	if (!strncmp(name, "%reserved_smem_offset_", 22) && c->shared_window) {
		/* 1 KiB of the window: _begin/_0 its start, _1 half-way (cooperative groups' scratch),
		 * _end its end, _cap its size */
		const char *k = name + 22;
		uint64_t v0 = c->reserved_smem;
		if (!strcmp(k, "begin") || !strcmp(k, "0"))
			*v = lw_u32(c, (uint32_t)v0);
		else if (!strcmp(k, "1"))
			*v = lw_u32(c, (uint32_t)(v0 + LW_RESERVED_SMEM / 2));
		else if (!strcmp(k, "end"))
			*v = lw_u32(c, (uint32_t)(v0 + LW_RESERVED_SMEM));
		else if (!strcmp(k, "cap"))
			*v = lw_u32(c, LW_RESERVED_SMEM);
		else
			return lw_fail(c, "unknown special register %s", name);
		return 0;
	}
	if (name[0] == '%' && (!strncmp(name, "%envreg", 7) || !strncmp(name, "%pm", 3) ||
			       !strncmp(name, "%cluster", 8) || !strncmp(name, "%dynamic_smem", 13) ||
			       !strncmp(name, "%total_smem", 11) || !strncmp(name, "%aggr_smem", 10) ||
			       !strncmp(name, "%reserved_smem", 14) || !strncmp(name, "%is_explicit", 12) ||
			       !strncmp(name, "%current_graph", 14)))
		return lw_fail(c, "special register %s has no SPIR-V equivalent", name);
	return 1;
}
