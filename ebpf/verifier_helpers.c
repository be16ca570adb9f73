/* Helper calls, checked against the one helper table (ebpf/helpers.def): the helper exists and
 * may run at this attach point, each argument has the type the table names, maps suit the helper,
 * ring-buffer reservations are released exactly once; then r1-r5 are clobbered and r0 typed. */
#include "ebpf/verifier_priv.h"
#include "gpuprobe/warp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { RET_INTEGER, RET_VOID, RET_MAP_VALUE_OR_NULL, RET_ALLOC_MEM_OR_NULL };
enum {
	ARG_NONE, ARG_ANYTHING, ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_VALUE,
	ARG_PTR_TO_MEM, ARG_CONST_SIZE, ARG_PTR_TO_CTX, ARG_PTR_TO_ALLOC_MEM, ARG_PTR_TO_U64_OUT,
	ARG_PTR_TO_CONST_STR, ARG_PTR_TO_UNINIT_MEM,
};
enum { HELPER_DEVICE, HELPER_HOST, HELPER_BOTH };

struct helper_proto {
	int id;
	const char *name;
	int ret;
	int args[5];
	int where;
};

static const struct helper_proto helpers[] = {
#define HELPER(id, name, ret, a1, a2, a3, a4, a5, where) {id, #name, ret, {a1, a2, a3, a4, a5}, where},
#include "ebpf/helpers.def"
#undef HELPER
};

#define MAP_TYPE_PERF_EVENT_ARRAY 4
#define MAP_TYPE_RINGBUF 27
#define MAP_TYPE_GPU_RINGBUF 1527

static const struct helper_proto *find_helper(int id)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (helpers[i].id == id)
			return &helpers[i];
	return NULL;
}

struct linux_helper {
	int id;
	const char *name;
};

static const struct linux_helper linux_helpers[] = {
#define HELPER(...)
#define LINUX_HELPER(id, name) {id, #name},
#include "ebpf/helpers.def"
#undef LINUX_HELPER
#undef HELPER
};

/* Where gpuprobe.h declares a helper under another name than helpers.def's. */
static const char *header_name(const struct helper_proto *h)
{
	switch (h->id) {
	case 506: return "gpu_membar";
	case 507: return "gpu_exit";
	default: return h->name;
	}
}

const char *gpv_helper_name(int id)
{
	const struct helper_proto *h = find_helper(id);
	if (h)
		return header_name(h);
	for (size_t i = 0; i < sizeof(linux_helpers) / sizeof(linux_helpers[0]); i++)
		if (linux_helpers[i].id == id)
			return linux_helpers[i].name;
	return NULL;
}

static bool is_host_attach(enum gp_attach_kind k)
{
	return k == GP_ATTACH_HOST_ENTRY || k == GP_ATTACH_HOST_EXIT;
}

void gpv_helper_list(enum gp_attach_kind at, char *buf, size_t size)
{
	size_t o = 0;
	if (!size)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		const struct helper_proto *h = &helpers[i];
		if (at != GP_ATTACH_NONE && h->where != HELPER_BOTH &&
		    (h->where == HELPER_HOST) != is_host_attach(at))
			continue;
		int n = snprintf(buf + o, size - o, "%sbpf_%s", o ? ", " : "", header_name(h));
		if (n < 0 || (size_t)n >= size - o) {
			buf[o] = 0;
			return;
		}
		o += (size_t)n;
	}
}

/* A helper id gpuprobe does not have: say which helper it is (Linux's name) and which helpers
 * this attach point has. */
static int unknown_helper(struct gpv_env *env, int id)
{
	enum gp_attach_kind at = env->opts->attach;
	const char *name = gpv_helper_name(id);
	char list[768];
	gpv_helper_list(at, list, sizeof(list));
	const char *where = at == GP_ATTACH_NONE ? "in gpuprobe" : is_host_attach(at) ? "in host probes" : "on the GPU";
	const char *which = at == GP_ATTACH_NONE ? "helpers" : is_host_attach(at) ? "host helpers" : "GPU helpers";
	if (name)
		return gpv_reject(env, -EACCES, "bpf_%s is not available %s; %s: %s", name, where, which, list);
	return gpv_reject(env, -EACCES, "invalid func unknown#%d; %s: %s", id, which, list);
}

/* Rings: BPF ring buffers, perf event arrays and bpftime's GPU ring buffer are all rings of
 * records on the GPU (maps/), written by ringbuf_output/reserve or perf_event_output alike. */
static bool is_ringbuf(uint32_t type)
{
	return type == MAP_TYPE_RINGBUF || type == MAP_TYPE_GPU_RINGBUF || type == MAP_TYPE_PERF_EVENT_ARRAY;
}

static int check_map_fits(struct gpv_env *env, const struct helper_proto *h, int map)
{
	uint32_t type = env->opts->maps[map].type;
	bool ok;
	switch (h->id) {
	case 130: case 131: case 25: case 517: ok = is_ringbuf(type); break;
	default: ok = !is_ringbuf(type); break;
	}
	if (!ok)
		return gpv_reject(env, -EACCES, "cannot pass map_type %u into func bpf_%s#%d", type, h->name,
				  h->id);
	return 0;
}

static int arg_type_error(struct gpv_env *env, int regno, const struct gpv_reg *r, const char *expected)
{
	return gpv_reject(env, -EACCES, "R%d type=%s expected=%s", regno, gpv_type_name(r->type), expected);
}

static int check_const_str(struct gpv_env *env, int regno, const struct gpv_reg *r)
{
	if (r->type != T_PTR_MAP_VALUE || !env->opts->maps[r->map].readonly)
		return gpv_reject(env, -EACCES, "R%d does not point to a readonly map value (a string constant)",
				  regno);
	if (!tnum_is_const(r->var))
		return gpv_reject(env, -EACCES, "R%d the string pointer must have a constant offset", regno);
	const struct gp_map *m = &env->opts->maps[r->map];
	int64_t o = (int64_t)r->off + (int64_t)r->var.value;
	if (o < 0 || o >= (int64_t)m->value_size)
		return gpv_reject(env, -EACCES, "R%d the string offset %lld is outside the map value (size %u)",
				  regno, (long long)o, m->value_size);
	if (m->initial && (size_t)o < m->initial_size &&
	    !memchr((const char *)m->initial + o, 0, m->initial_size - (size_t)o))
		return gpv_reject(env, -EACCES, "string is not zero-terminated");
	return 0;
}

struct release_ref {
	uint32_t ref;
	int at;
};

/* Copies of a released record become unknown scalars that remember the release (messages). */
static void drop_ref(struct gpv_reg *r, void *arg)
{
	const struct release_ref *rr = arg;
	if (r->type != T_NOT_INIT && r->ref_obj_id == rr->ref) {
		reg_mark_unknown(r);
		r->released_at = rr->at + 1;
	}
}

static void release_reference(struct gpv_env *env, uint32_t ref)
{
	struct gpv_state *st = &env->cur;
	for (int i = 0; i < st->nrefs; i++) {
		if (st->refs[i] != ref)
			continue;
		st->nrefs--;
		st->refs[i] = st->refs[st->nrefs];
		st->ref_insn[i] = st->ref_insn[st->nrefs];
		break;
	}
	struct release_ref rr = {ref, env->idx};
	gpv_for_each_reg(st, drop_ref, &rr);
}

/* The size argument after memory argument i (ARG_CONST_SIZE in the table): initialised, a
 * scalar, and precise (the memory check's outcome rests on its range). */
static int check_size_arg(struct gpv_env *env, const struct helper_proto *h, int i,
			  struct gpv_reg *sz)
{
	int regno = i + 1;
	if (i + 1 >= 5 || h->args[i + 1] != ARG_CONST_SIZE)
		return gpv_reject(env, -EACCES, "helper table: memory argument without a size");
	if (sz->type == T_NOT_INIT)
		return gpv_reject(env, -EACCES, "R%d !read_ok", regno + 1);
	if (sz->type != T_SCALAR)
		return arg_type_error(env, regno + 1, sz, "scalar");
	gpv_mark_precise(env, regno + 1);
	return 0;
}

/* map_update_elem(map, key, value, BPF_NOEXIST) with the flags a known constant: it creates a
 * value no copy of a sharded map holds yet and never changes one, so it keeps the map summable
 * (verifier.h, map_atomic_only). r4 becomes precise: a path with other flags must not be pruned
 * against this one. */
static bool noexist_insert(struct gpv_env *env, int helper)
{
	if (helper != 2)
		return false;
	gpv_mark_precise(env, BPF_REG_4);
	const struct gpv_reg *f = &cur_regs(env)[BPF_REG_4];
	return reg_is_const(f) && f->var.value == BPF_NOEXIST;
}

/* gpu_warp_output(ring, value, tag, flags): the flags decide the record's shape, so they must
 * be a known constant of defined bits (include/gpuprobe/warp.h). */
static int check_warp_output_flags(struct gpv_env *env)
{
	const struct gpv_reg *f = &cur_regs(env)[BPF_REG_4];
	gpv_mark_precise(env, BPF_REG_4);
	if (!reg_is_const(f))
		return gpv_reject(env, -EACCES,
				  "R4 bpf_gpu_warp_output#517: flags must be a known constant (0 or GP_WARP_VALUES)");
	if (f->var.value & ~(uint64_t)GP_WARP_FLAGS_ALL)
		return gpv_reject(env, -EACCES,
				  "R4 bpf_gpu_warp_output#517: flags 0x%llx has undefined bits 0x%llx (defined: GP_WARP_VALUES 0x%x)",
				  (unsigned long long)f->var.value,
				  (unsigned long long)(f->var.value & ~(uint64_t)GP_WARP_FLAGS_ALL), GP_WARP_VALUES);
	return 0;
}

int gpv_check_helper_call(struct gpv_env *env, const struct bpf_insn *insn)
{
	int id = insn->imm;
	if (BPF_SRC(insn->code) == BPF_X) {
		const struct gpv_reg *r = &cur_regs(env)[insn->dst_reg];
		if (r->type == T_NOT_INIT)
			return gpv_reject(env, -EACCES, "R%d !read_ok", insn->dst_reg);
		if (!reg_is_const(r) || r->var.value > INT32_MAX)
			return gpv_reject(env, -EACCES, "callx R%d: the helper id must be a known constant",
					  insn->dst_reg);
		id = (int)r->var.value;
		gpv_mark_precise(env, insn->dst_reg);
	}
	const struct helper_proto *h = find_helper(id);
	if (!h)
		return unknown_helper(env, id);
	enum gp_attach_kind at = env->opts->attach;
	if (at != GP_ATTACH_NONE) {
		char list[768];
		gpv_helper_list(at, list, sizeof(list));
		if (h->where == HELPER_DEVICE && is_host_attach(at))
			return gpv_reject(env, -EACCES,
					  "helper bpf_%s#%d runs only on the GPU: not allowed at a host attach point; host helpers: %s",
					  header_name(h), h->id, list);
		if (h->where == HELPER_HOST && !is_host_attach(at))
			return gpv_reject(env, -EACCES,
					  "helper bpf_%s#%d runs only on the host: not allowed at a GPU attach point; GPU helpers: %s",
					  header_name(h), h->id, list);
	}
	/* gpu_read_param reads the kernel's parameter buffer through struct gp_kernel_ctx: only the
	 * kernel entry/exit context has one */
	if (h->id == 514 && at != GP_ATTACH_NONE && at != GP_ATTACH_KERNEL_ENTRY && at != GP_ATTACH_KERNEL_EXIT)
		return gpv_reject(env, -EACCES,
				  "helper bpf_%s#%d reads the kernel's parameters: only at gpu/entry, gpu/exit,"
				  " kprobe and kretprobe (struct gp_kernel_ctx)", h->name, h->id);
	struct gpv_reg *regs = cur_regs(env);
	int map = -1;
	uint32_t release = 0;
	int err;
	for (int i = 0; i < 5 && h->args[i] != ARG_NONE; i++) {
		int regno = i + 1;
		regs = cur_regs(env);   /* a stack check may have grown (moved) the frame */
		struct gpv_reg *r = &regs[regno];
		if (r->type == T_NOT_INIT) {
			/* trace_printk's values are optional (Linux leaves r3-r5 unchecked): libbpf's
			 * bpf_printk passes only as many as the format uses. */
			if (h->id == 6 && i >= 2)
				continue;
			return gpv_reject(env, -EACCES, "R%d !read_ok", regno);
		}
		switch (h->args[i]) {
		case ARG_ANYTHING:
			break;
		case ARG_CONST_MAP_PTR:
			if (r->type != T_CONST_MAP_PTR)
				return arg_type_error(env, regno, r, "map_ptr");
			map = r->map;
			if ((err = check_map_fits(env, h, map)))
				return err;
			break;
		case ARG_PTR_TO_MAP_KEY:
		case ARG_PTR_TO_MAP_VALUE: {
			bool key = h->args[i] == ARG_PTR_TO_MAP_KEY;
			if (map < 0)
				return gpv_reject(env, -EACCES, "R%d: map pointer argument missing before the %s",
						  regno, key ? "key" : "value");
			if (r->type != T_PTR_STACK && r->type != T_PTR_MAP_VALUE)
				return arg_type_error(env, regno, r, "fp, map_value");
			const struct gp_map *m = &env->opts->maps[map];
			if ((err = gpv_check_helper_mem(env, regno, 0, key ? m->key_size : m->value_size,
							false, true)))
				return err;
			break;
		}
		case ARG_PTR_TO_MEM: {
			if (r->type != T_PTR_STACK && r->type != T_PTR_MAP_VALUE && r->type != T_PTR_MEM &&
			    r->type != T_PTR_CTX)
				return arg_type_error(env, regno, r, "fp, map_value, mem, ctx");
			struct gpv_reg *sz = &regs[regno + 1];
			if ((err = check_size_arg(env, h, i, sz)))
				return err;
			if (sz->smin < 0)
				return gpv_reject(env, -EACCES,
						  "R%d min value is negative, either use unsigned or 'var &= const'",
						  regno + 1);
			if (sz->umax == 0)
				return gpv_reject(env, -EACCES, "R%d invalid zero-sized read", regno + 1);
			if ((err = gpv_check_helper_mem(env, regno, (int64_t)sz->umin, sz->umax, false, true)))
				return err;
			break;
		}
		case ARG_PTR_TO_UNINIT_MEM: {
			/* like bpf_probe_read's destination: probe memory the helper fills (never
			 * the read-only context), the size a known constant so that exactly those
			 * stack bytes become initialized */
			if (r->type != T_PTR_STACK && r->type != T_PTR_MAP_VALUE && r->type != T_PTR_MEM)
				return arg_type_error(env, regno, r, "fp, map_value, mem");
			struct gpv_reg *sz = &regs[regno + 1];
			if ((err = check_size_arg(env, h, i, sz)))
				return err;
			if (!reg_is_const(sz))
				return gpv_reject(env, -EACCES, "R%d is not a known constant: bpf_%s#%d needs a constant size",
						  regno + 1, h->name, h->id);
			if (sz->var.value == 0)
				return gpv_reject(env, -EACCES, "R%d invalid zero-sized write", regno + 1);
			if ((err = gpv_check_helper_mem(env, regno, (int64_t)sz->var.value, sz->var.value, true,
							false)))
				return err;
			break;
		}
		case ARG_CONST_SIZE:
			break;   /* checked with the memory argument before it */
		case ARG_PTR_TO_CTX:
			/* bpftime's GPU probes call perf_event_output(NULL, ...): the GPU ring
			 * ignores the context, so a known 0 is accepted there. */
			if (h->id == 25 && r->type == T_SCALAR && tnum_is_const(r->var) && !r->var.value) {
				gpv_mark_precise(env, regno);   /* the decision rests on the value 0 */
				break;
			}
			if (r->type != T_PTR_CTX)
				return arg_type_error(env, regno, r, "ctx");
			if (r->off || !tnum_is_const(r->var) || r->var.value)
				return gpv_reject(env, -EACCES, "dereference of modified ctx ptr R%d off=%d disallowed",
						  regno, r->off);
			break;
		case ARG_PTR_TO_ALLOC_MEM:
			if (r->type == T_SCALAR && r->released_at)
				return gpv_reject(env, -EACCES,
						  "R%d reference has been released: the ring-buffer record was %s at insn %d",
						  regno, gpv_release_verb(env, r->released_at - 1), r->released_at - 1);
			if (r->type != T_PTR_MEM || !r->ref_obj_id)
				return arg_type_error(env, regno, r, "ringbuf_mem");
			if (r->off || !tnum_is_const(r->var) || r->var.value)
				return gpv_reject(env, -EACCES, "R%d must have zero offset when passed to release func",
						  regno);
			release = r->ref_obj_id;
			break;
		case ARG_PTR_TO_U64_OUT:
			if (r->type != T_PTR_STACK && r->type != T_PTR_MAP_VALUE)
				return arg_type_error(env, regno, r, "fp, map_value");
			/* the GPU stores 8 bytes at once: a misaligned pointer would fault */
			if (!env->generic &&
			    !tnum_is_aligned(tnum_add(r->var, tnum_const((uint64_t)(int64_t)r->off)), 8))
				return gpv_reject(env, -EACCES, "R%d misaligned u64 output pointer (off=%d)", regno,
						  r->off);
			if ((err = gpv_check_helper_mem(env, regno, 8, 8, true, false)))
				return err;
			break;
		case ARG_PTR_TO_CONST_STR:
			if ((err = check_const_str(env, regno, r)))
				return err;
			break;
		}
	}
	if (h->id == 517 && (err = check_warp_output_flags(env)))
		return err;
	regs = cur_regs(env);
	struct gpv_reg r0;
	reg_mark_unknown(&r0);
	if (h->ret == RET_VOID) {
		reg_mark_not_init(&r0);
	} else if (h->ret == RET_MAP_VALUE_OR_NULL) {
		r0 = (struct gpv_reg){0};
		r0.type = T_PTR_MAP_VALUE_OR_NULL;
		r0.map = (int16_t)map;
		r0.var = tnum_const(0);
		r0.id = ++env->next_id;
	} else if (h->ret == RET_ALLOC_MEM_OR_NULL) {
		struct gpv_reg *sz = &regs[BPF_REG_2];
		gpv_mark_precise(env, BPF_REG_2);
		if (!reg_is_const(sz))
			return gpv_reject(env, -EACCES, "R2 is not a known constant: the record size must be constant");
		if (sz->var.value == 0 || sz->var.value > (1u << 24))
			return gpv_reject(env, -EACCES, "R2 record size %llu out of range",
					  (unsigned long long)sz->var.value);
		if (env->cur.nrefs >= GPV_MAX_REFS)
			return gpv_reject(env, -EACCES, "too many unreleased ring-buffer reservations");
		r0 = (struct gpv_reg){0};
		r0.type = T_PTR_MEM_OR_NULL;
		r0.mem_size = (uint32_t)sz->var.value;
		r0.var = tnum_const(0);
		r0.id = ++env->next_id;
		r0.ref_obj_id = r0.id;
		env->cur.refs[env->cur.nrefs] = r0.id;
		env->cur.ref_insn[env->cur.nrefs++] = env->idx;
	}
	if (map >= 0 && (h->id == 2 || h->id == 3) && !noexist_insert(env, h->id))
		env->map_plain_write[map] = 1;
	if (r0.type == T_PTR_MAP_VALUE_OR_NULL)
		r0.vid = r0.id;   /* verifier_race.c: this lookup's value */
	if (release)
		release_reference(env, release);
	regs = cur_regs(env);
	for (int i = BPF_REG_1; i <= BPF_REG_5; i++)
		reg_mark_not_init(&regs[i]);
	regs[BPF_REG_0] = r0;
	return 0;
}

/* "submitted" or "discarded": what the release at insn did. */
const char *gpv_release_verb(struct gpv_env *env, int insn)
{
	if (insn >= 0 && insn < env->n) {
		const struct bpf_insn *i = &env->insns[insn];
		if (i->code == (BPF_JMP | BPF_CALL) && i->src_reg == 0 && i->imm == 133)
			return "discarded";
		if (i->code == (BPF_JMP | BPF_CALL) && i->src_reg == 0 && i->imm == 132)
			return "submitted";
	}
	return "released";
}

/* Registers a helper reads (r1..rN), for the liveness analysis; 5 for an unknown id. */
int gpv_helper_nargs(int id)
{
	const struct helper_proto *h = find_helper(id);
	if (!h)
		return 5;
	int n = 0;
	while (n < 5 && h->args[n] != ARG_NONE)
		n++;
	return n;
}
