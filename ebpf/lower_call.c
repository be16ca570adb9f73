/* Calls (RFC 9669 section 4.3.1-4.3.2): helpers, BPF-to-BPF calls, callx.
 * - GPU helpers (bpftime's 501-511, gpuprobe's 512-513 and the warp helpers 515-516) and the Linux ones that mean something
 *   on a GPU (ktime_get_ns, get_smp_processor_id, get_current_pid_tgid) are a few instructions
 *   on special registers, emitted inline.
 * - Map, ring buffer and printk helpers call the .func the maps runtime names (helper_func).
 * - A BPF-to-BPF call passes r1-r5 and gets r0 back; r6-r9 and the caller's stack stay as they
 *   are because the callee is another .func with its own registers and frame. */
#include "ebpf/lower_internal.h"
#include "ebpf/lower_param.h"

#include <errno.h>
#include <string.h>

#define R(x) lo_reg(c, (x))
#define IMM(v) lo_imm(c, (uint64_t)(v))

const char *lower_helper_name(int id)
{
	switch (id) {
#define HELPER(hid, name, ...) case hid: return #name;
#include "ebpf/helpers.def"
#undef HELPER
	}
	return NULL;
}

/* call.uni (ret), fn, (args[0..nargs)) with registers as arguments; r0 = ret. */
static void emit_call_regs(struct lower_ctx *c, const char *fn, unsigned nargs,
			   const char *const *args)
{
	const char *P = c->prefix;
	const char *names[7];
	const char *ret = ir_strfmt(c->m, "%scret", P);
	lo_block_open(c);
	for (unsigned i = 0; i < nargs; i++) {
		names[i] = i < 5 ? ir_strfmt(c->m, "%sca%u", P, i + 1) : ir_strfmt(c->m, "%scaxf", P);
		lo_decl_stmt(c, ".param", 0, ".b64", names[i], NULL);
		lo_emit(c, "st", ".param.b64", 2, lo_addr(c, names[i], 0), R(args[i]));
	}
	lo_decl_stmt(c, ".param", 0, ".b64", ret, NULL);
	lo_emit(c, "call", ".uni", 3, lo_list(c, 1, &ret), lo_sym(c, fn), lo_list(c, nargs, names));
	lo_emit(c, "ld", ".param.b64", 2, R(c->r[0]), lo_addr(c, ret, 0));
	lo_block_close(c);
}

/* The same with r1..rn as arguments (and extra after them). */
static void emit_call(struct lower_ctx *c, const char *fn, unsigned nargs, const char *extra)
{
	const char *args[6];
	unsigned n = 0;
	for (unsigned i = 0; i < nargs && n < 5; i++)
		args[n++] = c->r[i + 1];
	if (extra)
		args[n++] = extra;
	emit_call_regs(c, fn, n, args);
}

int lower_emit_update_fold(struct lower_ctx *c, size_t pc)
{
	const struct lower_fold *fo = &c->folds[pc];
	int rc = c->opts->emit_map_ref(c->opts->user, c->m, c->f, c->t[5], fo->map, 0, 0);
	if (rc)
		return lower_fail(c, -rc, "map %d: no descriptor address", fo->map);
	lower_load_frame(c, fo->key_off, fo->key_size, c->t[6]);
	lower_load_frame(c, fo->value_off, fo->value_size, c->t[7]);
	const char *args[5] = {c->t[5], c->t[6], c->t[7], c->r[4], c->t[6]};
	emit_call_regs(c, fo->update_fn, 5, args);
	return 0;
}

/* x, y, z of a special register into the u64 out-pointers r1, r2, r3; r0 = 0. */
static void emit_dim3(struct lower_ctx *c, const char *sreg)
{
	static const char xyz[] = "xyz";
	for (int i = 0; i < 3; i++) {
		lo_emit(c, "mov", ".u32", 2, R(c->w[4]), R(ir_strfmt(c->m, "%%%s.%c", sreg, xyz[i])));
		lo_zext32(c, c->t[4], c->w[4]);
		lower_store_at(c, c->r[i + 1], false, 0, 8, R(c->t[4]));
	}
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
}

static void emit_sreg32(struct lower_ctx *c, const char *sreg)
{
	lo_emit(c, "mov", ".u32", 2, R(c->w[0]), R(sreg));
	lo_zext32(c, c->r[0], c->w[0]);
}

/* Warp-wide view of a 64-bit value r1 (sm_70+: match.any.sync over the lanes executing the
 * probe together): 515 gives 1 in the lowest such lane holding each distinct value (so summing
 * it counts distinct values per warp access), 516 the number of those lanes holding r1.
 * The lanes are the site's (the caller's mask, opts->site_mask) where every lane that entered
 * reaches this call once: an activemask here names only the lanes that happen to run together
 * at this point, and on the H200 a warp reached the second site of coalescing's load_random
 * in two groups after the first site's map update (384 requests for 256 warp loads). */
static void emit_warp_match(struct lower_ctx *c, bool unique)
{
	const char *mask = c->w[4], *grp = c->w[5], *tmp = c->w[6];
	if (c->site_mask && c->sub == 0 && c->pc < c->prefix_end) {
		/* CUDA guarantees lanes converged only at synchronizing warp operations: meet here
		 * (ptxas's own out-of-line path for a .sync op is this same warpsync first) */
		mask = c->site_mask;
		lo_emit(c, "bar", ".warp.sync", 1, R(mask));
	} else {
		lo_emit(c, "activemask", ".b32", 1, R(mask));
	}
	lo_emit(c, "match", ".any.sync.b64", 3, R(grp), R(c->r[1]), R(mask));
	if (unique) {
		lo_emit(c, "mov", ".u32", 2, R(tmp), R("%lanemask_lt"));
		lo_emit(c, "and", ".b32", 3, R(tmp), R(tmp), R(grp));
		lo_emit(c, "setp", ".eq.u32", 3, R(c->p[2]), R(tmp), IMM(0));
		lo_emit(c, "selp", ".u32", 4, R(c->w[0]), IMM(1), IMM(0), R(c->p[2]));
	} else {
		lo_emit(c, "popc", ".b32", 2, R(c->w[0]), R(grp));
	}
	lo_zext32(c, c->r[0], c->w[0]);
}

/* gpu_warp_output (517) gets the lanes that call it together as its fifth argument (r5, which
 * a call clobbers anyway): the site's mask where every entering lane reaches the call once, as
 * for 515/516, else an activemask here; the maps runtime's .func writes one record for them. */
static void emit_warp_lanes(struct lower_ctx *c)
{
	const char *mask = c->w[4];
	if (c->site_mask && c->sub == 0 && c->pc < c->prefix_end) {
		mask = c->site_mask;
		lo_emit(c, "bar", ".warp.sync", 1, R(mask));
	} else {
		lo_emit(c, "activemask", ".b32", 1, R(mask));
	}
	lo_zext32(c, c->r[5], mask);
}

/* bpftime's puts: vprintf("%s\n", str), unless the caller gave a puts function. */
static int emit_puts(struct lower_ctx *c)
{
	if (c->opts->puts_func) {
		emit_call(c, c->opts->puts_func, 1, NULL);
		return 0;
	}
	ir_module *m = c->m;
	const char *P = c->prefix;
	if (!ir_module_find_func(m, "vprintf")) {
		ir_top *t = ir_top_new(m, IR_TOP_FUNC);
		t->generated = true;
		ir_func *f = &t->func;
		f->linkage = ".extern";
		f->name = "vprintf";
		f->has_rets = f->has_params = true;
		f->rets = ir_alloc(m, sizeof(ir_decl));
		f->rets[0] = (ir_decl){.space = ".param", .type = ".b32", .name = "vprintf_ret", .count = -1};
		f->nrets = 1;
		f->params = ir_alloc(m, 2 * sizeof(ir_decl));
		f->params[0] = (ir_decl){.space = ".param", .type = ".b64", .name = "vprintf_fmt", .count = -1};
		f->params[1] = (ir_decl){.space = ".param", .type = ".b64", .name = "vprintf_args", .count = -1};
		f->nparams = 2;
		ir_top_append(m, t);
	}
	if (!c->vprintf_fmt) {
		c->vprintf_fmt = ir_strfmt(m, "%sputs_fmt", P);
		ir_top *t = ir_top_new(m, IR_TOP_DECL);
		t->generated = true;
		t->decl = (ir_decl){.space = ".global", .align = 1, .type = ".b8", .name = c->vprintf_fmt,
				    .count = -1, .dims = "[4]", .init = "{37, 115, 10, 0}"};
		ir_top_append(m, t);
	}
	const char *args = ir_strfmt(m, "%sputs_args", P), *a0 = ir_strfmt(m, "%spa0", P),
		   *a1 = ir_strfmt(m, "%spa1", P), *ret = ir_strfmt(m, "%spret", P);
	lo_block_open(c);
	lo_decl_stmt(c, ".local", 8, ".b8", args, "[8]");
	lo_decl_stmt(c, ".param", 0, ".b64", a0, NULL);
	lo_decl_stmt(c, ".param", 0, ".b64", a1, NULL);
	lo_decl_stmt(c, ".param", 0, ".b32", ret, NULL);
	lo_emit(c, "mov", ".u64", 2, R(c->t[0]), lo_sym(c, args));
	lo_emit(c, "cvta", ".local.u64", 2, R(c->t[0]), R(c->t[0]));
	lo_emit(c, "st", ".u64", 2, lo_addr(c, c->t[0], 0), R(c->r[1]));
	lo_emit(c, "mov", ".u64", 2, R(c->t[1]), lo_sym(c, c->vprintf_fmt));
	lo_emit(c, "cvta", ".global.u64", 2, R(c->t[1]), R(c->t[1]));
	lo_emit(c, "st", ".param.b64", 2, lo_addr(c, a0, 0), R(c->t[1]));
	lo_emit(c, "st", ".param.b64", 2, lo_addr(c, a1, 0), R(c->t[0]));
	const char *names[2] = {a0, a1};
	lo_emit(c, "call", ".uni", 3, lo_list(c, 1, &ret), lo_sym(c, "vprintf"), lo_list(c, 2, names));
	lo_emit(c, "ld", ".param.b32", 2, R(c->w[0]), lo_addr(c, ret, 0));
	lo_block_close(c);
	lo_emit(c, "cvt", ".s64.s32", 2, R(c->r[0]), R(c->w[0]));
	return 0;
}

/* bpftime's exit: leave the probe now, returning 0. From a subprogram, raise the exit flag
 * first so that each caller returns too (see lower_frame.c). */
static void emit_probe_exit(struct lower_ctx *c)
{
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
	if (c->sub && c->exit_flag)
		lo_emit(c, "st", ".u32", 2, lo_addr(c, c->exit_flag, 0), IMM(1));
	lower_frame_return(c);
}

/* r0 = %globaltimer, plus the host's offset from it in the word at clock_addr + off when the
 * probe runtime gave one (lower.h): host and device probes then compare times directly. The
 * offset is loaded, not an immediate, so re-checks need no new code and the PTX repeats. */
static void emit_clock(struct lower_ctx *c, unsigned off)
{
	lo_emit(c, "mov", ".u64", 2, R(c->r[0]), R("%globaltimer"));
	if (!c->opts->clock_addr)
		return;
	lo_emit(c, "mov", ".u64", 2, R(c->t[0]), IMM(c->opts->clock_addr + off));
	lo_emit(c, "ld", ".global.nc.u64", 2, R(c->t[0]), lo_addr(c, c->t[0], 0));
	lo_emit(c, "add", ".s64", 3, R(c->r[0]), R(c->r[0]), R(c->t[0]));
}

/* One helper call by id, inline or through the maps runtime; r0 gets the result. */
static int emit_helper(struct lower_ctx *c, int id)
{
	switch (id) {
	case 5:   /* ktime_get_ns: the GPU's nanosecond clock, on CLOCK_MONOTONIC's timeline */
		emit_clock(c, GP_CLOCK_WORD_KTIME);
		return 0;
	case 502: /* get_globaltimer, on CLOCK_REALTIME's timeline */
		emit_clock(c, GP_CLOCK_WORD_REALTIME);
		return 0;
	case 8:   /* get_smp_processor_id: the GPU's "CPU" is the SM (docs/architecture.md) */
	case 509: /* get_sm_id */
		emit_sreg32(c, "%smid");
		return 0;
	case 14:  /* get_current_pid_tgid */
		if (c->opts->pid_tgid_addr) {   /* the same PTX in every process (lower.h) */
			lo_emit(c, "mov", ".u64", 2, R(c->t[0]), IMM(c->opts->pid_tgid_addr));
			lo_emit(c, "ld", ".global.nc.u64", 2, R(c->r[0]), lo_addr(c, c->t[0], 0));
		} else {
			lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(c->opts->pid_tgid));
		}
		return 0;
	case 501:
		return emit_puts(c);
	case 503: emit_dim3(c, "ctaid"); return 0;
	case 504: emit_dim3(c, "ntid"); return 0;
	case 505: emit_dim3(c, "tid"); return 0;
	case 508: emit_dim3(c, "nctaid"); return 0;
	case 506:
		lo_emit(c, "membar", ".gl", 0);
		lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
		return 0;
	case 507:
		emit_probe_exit(c);
		return 0;
	case 510: emit_sreg32(c, "%warpid"); return 0;
	case 511: emit_sreg32(c, "%laneid"); return 0;
	case 512:
		lo_emit(c, "mov", ".u64", 2, R(c->r[0]), R("%clock64"));
		return 0;
	case 513:
		lo_emit(c, "activemask", ".b32", 1, R(c->w[0]));
		lo_zext32(c, c->r[0], c->w[0]);
		return 0;
	case 515: emit_warp_match(c, true); return 0;
	case 516: emit_warp_match(c, false); return 0;
	case 514: return lower_param_read(c);   /* gpu_read_param: lower_param.c */
	}
	const char *name = lower_helper_name(id);
	if (!name)
		return lower_fail(c, EINVAL, "unknown helper %d", id);
	const char *fn = c->opts->helper_func ? c->opts->helper_func(c->opts->user, c->m, id) : NULL;
	if (!fn)
		return lower_fail(c, EINVAL, "helper %s (%d) needs the maps runtime, which was not given",
				  name, id);
	if (id == 517)
		emit_warp_lanes(c);
	emit_call(c, fn, 5, NULL);
	return 0;
}

/* After a call into a subprogram: if it called exit, return at once. */
static void emit_exit_check(struct lower_ctx *c)
{
	if (!c->exit_flag)
		return;
	const char *cont = lo_new_label(c);
	lo_emit(c, "ld", ".u32", 2, R(c->w[0]), lo_addr(c, c->exit_flag, 0));
	lo_emit(c, "setp", ".eq.u32", 3, R(c->p[0]), R(c->w[0]), IMM(0));
	lo_emit_if(c, c->p[0], false, "bra", "", 1, lo_sym(c, cont));
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
	lower_frame_return(c);
	lo_label(c, cont);
}

/* callx: the helper id is in a register. Dispatch over every helper this lowering can emit
 * (the maps ones only with a maps runtime); an id that is none of them yields r0 = 0. */
static int emit_callx(struct lower_ctx *c, const char *reg)
{
	static const int ids[] = {
#define HELPER(hid, ...) hid,
#include "ebpf/helpers.def"
#undef HELPER
	};
	const char *done = lo_new_label(c);
	const char *labels[sizeof(ids) / sizeof(ids[0])];
	lo_emit(c, "mov", ".b64", 2, R(c->t[5]), R(reg));
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		labels[i] = NULL;
		bool inline_helper = (ids[i] >= 501 && ids[i] <= 516) || ids[i] == 5 || ids[i] == 8 ||
				     ids[i] == 14;
		if (!inline_helper && !c->opts->helper_func)
			continue;
		labels[i] = lo_new_label(c);
		lo_emit(c, "setp", ".eq.u64", 3, R(c->p[1]), R(c->t[5]), IMM(ids[i]));
		lo_emit_if(c, c->p[1], false, "bra", "", 1, lo_sym(c, labels[i]));
	}
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, done));
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (!labels[i])
			continue;
		lo_label(c, labels[i]);
		int rc = emit_helper(c, ids[i]);
		if (rc)
			return rc;
		lo_emit(c, "bra", ".uni", 1, lo_sym(c, done));
	}
	lo_label(c, done);
	return 0;
}

int lower_call(struct lower_ctx *c, const struct bpf_insn *in)
{
	if (in->code == (BPF_JMP | BPF_CALL | BPF_X)) {
		/* The register is in dst_reg (Linux, LLVM); some assemblers put it in imm. */
		unsigned reg = in->dst_reg ? in->dst_reg : (unsigned)in->imm;
		if (reg > 10)
			return lower_fail(c, EINVAL, "callx through r%u, which does not exist", reg);
		return emit_callx(c, c->r[reg]);
	}
	if (in->code != (BPF_JMP | BPF_CALL))
		return lower_fail(c, EINVAL, "unknown opcode 0x%02x", in->code);
	if (in->src_reg == BPF_PSEUDO_CALL) {
		size_t target = (size_t)((long long)c->pc + 1 + in->imm);
		const char *fn = NULL;
		for (size_t s = 1; s < c->nsubs; s++)
			if (c->subs[s].start == target)
				fn = c->subs[s].name;
		if (!fn)
			return lower_fail(c, EINVAL, "call to %zu, which is not a subprogram", target);
		emit_call(c, fn, 5, c->exit_flag);
		emit_exit_check(c);
		return 0;
	}
	if (in->src_reg != 0)
		return lower_fail(c, EINVAL, "call with source %u (kfuncs are not supported)", in->src_reg);
	if (in->imm == 1 && c->folds[c->pc].folded) {   /* a constant key: lower_plan.c */
		lower_emit_fold(c, c->pc);
		return 0;
	}
	if (in->imm == 2 && c->folds[c->pc].folded)     /* key and value by value: lower_plan.c */
		return lower_emit_update_fold(c, c->pc);
	return emit_helper(c, in->imm);
}
