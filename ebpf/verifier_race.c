/* Racy read-modify-write of map values: `v = lookup(k); *v += 1;` verifies (it is safe) but on a
 * GPU thousands of threads run it at once, and every load-add-store that interleaves with another
 * loses an update. The verifier says so once per instruction, as a warning, not an error (a
 * probe may mean it: a value only one thread writes, a flag set to a constant).
 *
 * How it is seen: a map value pointer carries a vid (the lookup that returned it, or the global
 * variable); a scalar loaded through it carries that vid, the offset and the load; arithmetic on
 * the scalar keeps the tag; a plain store of a tagged scalar through a pointer with the same vid
 * at the same offset is the read-modify-write. Per-thread maps (bpftime's 1502) have one copy per
 * thread: nothing races there. */
#include "ebpf/verifier_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool tagged(const struct gpv_reg *r)
{
	return r->type == T_SCALAR && r->vid;
}

static struct gpv_vtag tag_of(const struct gpv_reg *r)
{
	return tagged(r) ? (struct gpv_vtag){r->vid, r->voff, r->vinsn} : (struct gpv_vtag){0};
}

/* The tag an ALU instruction's result should carry, taken before it runs (it rebuilds dst):
 * a move copies its source's, any other operation keeps dst's, or takes the source's
 * (`r2 = 1; r2 += r1` still computes from the loaded value). */
struct gpv_vtag gpv_race_alu_tag(struct gpv_env *env, const struct bpf_insn *insn)
{
	const struct gpv_reg *regs = cur_regs(env);
	bool x = BPF_SRC(insn->code) == BPF_X && insn->src_reg <= BPF_REG_10;
	struct gpv_vtag s = x ? tag_of(&regs[insn->src_reg]) : (struct gpv_vtag){0};
	if (BPF_OP(insn->code) == BPF_MOV)
		return s;
	struct gpv_vtag d = insn->dst_reg <= BPF_REG_10 ? tag_of(&regs[insn->dst_reg]) : (struct gpv_vtag){0};
	return d.vid ? d : s;
}

void gpv_race_alu_done(struct gpv_env *env, const struct bpf_insn *insn, struct gpv_vtag t)
{
	struct gpv_reg *d = &cur_regs(env)[insn->dst_reg];
	if (d->type != T_SCALAR)
		return;   /* pointer arithmetic: the pointer keeps its own vid */
	d->vid = t.vid;
	d->voff = t.voff;
	d->vinsn = t.vinsn;
}

/* Offset of [ptr + off] in the value, or -1 when the pointer's offset is not one number. */
static int32_t value_off(const struct gpv_reg *ptr, int off)
{
	if (!tnum_is_const(ptr->var))
		return -1;
	return (int32_t)((int64_t)ptr->off + off + (int64_t)ptr->var.value);
}

void gpv_race_load(struct gpv_env *env, const struct gpv_reg *ptr, int off, struct gpv_reg *out)
{
	int32_t o = value_off(ptr, off);
	if (!out || out->type != T_SCALAR || !ptr->vid || o < 0)
		return;
	out->vid = ptr->vid;
	out->voff = o;
	out->vinsn = env->idx;
}

static void warn(struct gpv_env *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct gpv_env *env, const char *fmt, ...)
{
	struct gp_verify_opts *o = env->opts;
	o->nwarnings++;
	if (!o->warnings || !o->warnings_size || env->warn_len + 1 >= o->warnings_size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->warnings + env->warn_len, o->warnings_size - env->warn_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		env->warn_len += (size_t)n < o->warnings_size - env->warn_len ? (size_t)n
									: o->warnings_size - env->warn_len - 1;
}

void gpv_race_store(struct gpv_env *env, const struct gpv_reg *ptr, int off, const struct gpv_reg *val)
{
	if (!val || !tagged(val) || val->vid != ptr->vid || val->voff != value_off(ptr, off))
		return;
	const struct gp_map *m = &env->opts->maps[ptr->map];
	if (m->type == 1502 || m->type == 1512 /* bpftime's per-thread arrays: a copy per thread */)
		return;
	if (!env->warned)
		env->warned = calloc((size_t)env->n, 1);
	if (!env->warned || env->warned[env->idx])
		return;
	env->warned[env->idx] = 1;
	const struct bpf_insn *insn = &env->insns[env->idx];
	char text[160];
	gp_disasm_insn(insn, text, sizeof(text));
	warn(env,
	     "warning: %d: (%02x) %s: read-modify-write of map '%s' value (off %d, read at insn %d) is "
	     "not atomic: threads running it together lose updates; use __sync_fetch_and_add()\n",
	     env->idx, insn->code, text, m->name ? m->name : "?", val->voff, val->vinsn);
}
