/* The verifier's words: a disassembler in the Linux verifier's syntax ("r2 = *(u32 *)(r1 +64)")
 * and the log. The log always ends with the rejected instruction and the reason, even when the
 * verbose trace before them had to be cut to fit the caller's buffer. */
#include "ebpf/verifier_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LOG_RESERVE 1600  /* kept free for the final lines (source line, instruction, reason) */

const char *gpv_type_name(int type)
{
	switch (type) {
	case T_NOT_INIT: return "?";
	case T_SCALAR: return "scalar";
	case T_PTR_CTX: return "ctx";
	case T_PTR_STACK: return "fp";
	case T_PTR_MAP_VALUE: return "map_value";
	case T_PTR_MAP_VALUE_OR_NULL: return "map_value_or_null";
	case T_CONST_MAP_PTR: return "map_ptr";
	case T_PTR_MEM: return "ringbuf_mem";
	case T_PTR_MEM_OR_NULL: return "ringbuf_mem_or_null";
	}
	return "invalid";
}

static const char *size_name(uint8_t code, bool sx)
{
	static const char *u[] = {"u32", "u16", "u8", "u64"}, *s[] = {"s32", "s16", "s8", "s64"};
	return (sx ? s : u)[BPF_SIZE(code) >> 3];
}

static const char *alu_op(uint8_t op, int16_t off)
{
	switch (op) {
	case BPF_ADD: return "+=";
	case BPF_SUB: return "-=";
	case BPF_MUL: return "*=";
	case BPF_DIV: return off == 1 ? "s/=" : "/=";
	case BPF_OR: return "|=";
	case BPF_AND: return "&=";
	case BPF_LSH: return "<<=";
	case BPF_RSH: return ">>=";
	case BPF_MOD: return off == 1 ? "s%=" : "%=";
	case BPF_XOR: return "^=";
	case BPF_MOV: return "=";
	case BPF_ARSH: return "s>>=";
	}
	return "?=";
}

static const char *jmp_op(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return "==";
	case BPF_JGT: return ">";
	case BPF_JGE: return ">=";
	case BPF_JSET: return "&";
	case BPF_JNE: return "!=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JLT: return "<";
	case BPF_JLE: return "<=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	}
	return "?";
}

static const char *atomic_name(int op)
{
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: return "add";
	case BPF_AND: return "and";
	case BPF_OR: return "or";
	case BPF_XOR: return "xor";
	}
	return "?";
}

static const char *atomic_sym(int op)
{
	switch (op & ~BPF_FETCH) {
	case BPF_ADD: return "+=";
	case BPF_AND: return "&=";
	case BPF_OR: return "|=";
	case BPF_XOR: return "^=";
	}
	return "?=";
}

int gp_disasm_insn(const struct bpf_insn *insn, char *buf, size_t size)
{
	uint8_t code = insn->code, cls = BPF_CLASS(code), op = BPF_OP(code);
	int d = insn->dst_reg, s = insn->src_reg, off = insn->off, imm = insn->imm;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64: {
		char r = cls == BPF_ALU64 ? 'r' : 'w';
		if (op > BPF_END)
			break;
		if (op == BPF_END) {
			if (cls == BPF_ALU64)
				return snprintf(buf, size, "r%d = bswap%d r%d", d, imm, d);
			return snprintf(buf, size, "r%d = %s%d r%d", d,
					BPF_SRC(code) == BPF_TO_BE ? "be" : "le", imm, d);
		}
		if (op == BPF_NEG)
			return snprintf(buf, size, "%c%d = -%c%d", r, d, r, d);
		if (op == BPF_MOV && BPF_SRC(code) == BPF_X && off)
			return snprintf(buf, size, "%c%d = (s%d)%c%d", r, d, off, r, s);
		if (BPF_SRC(code) == BPF_X)
			return snprintf(buf, size, "%c%d %s %c%d", r, d, alu_op(op, off), r, s);
		return snprintf(buf, size, "%c%d %s %d", r, d, alu_op(op, off), imm);
	}
	case BPF_LDX:
		return snprintf(buf, size, "r%d = *(%s *)(r%d %+d)", d,
				size_name(code, BPF_MODE(code) == BPF_MEMSX), s, off);
	case BPF_ST:
		return snprintf(buf, size, "*(%s *)(r%d %+d) = %d", size_name(code, false), d, off, imm);
	case BPF_STX:
		if (BPF_MODE(code) == BPF_ATOMIC) {
			const char *w = BPF_SIZE(code) == BPF_DW ? "64" : "";
			const char *sz = size_name(code, false);
			if (imm == BPF_XCHG)
				return snprintf(buf, size, "r%d = atomic%s_xchg((%s *)(r%d %+d), r%d)", s, w, sz, d, off, s);
			if (imm == BPF_CMPXCHG)
				return snprintf(buf, size, "r0 = atomic%s_cmpxchg((%s *)(r%d %+d), r0, r%d)", w, sz, d, off, s);
			if (imm & BPF_FETCH)
				return snprintf(buf, size, "r%d = atomic%s_fetch_%s((%s *)(r%d %+d), r%d)", s, w,
						atomic_name(imm), sz, d, off, s);
			return snprintf(buf, size, "lock *(%s *)(r%d %+d) %s r%d", sz, d, off, atomic_sym(imm), s);
		}
		return snprintf(buf, size, "*(%s *)(r%d %+d) = r%d", size_name(code, false), d, off, s);
	case BPF_LD:
		if (code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (s == BPF_PSEUDO_MAP_FD)
				return snprintf(buf, size, "r%d = map[id:%d]", d, imm);
			if (s == BPF_PSEUDO_MAP_VALUE)
				return snprintf(buf, size, "r%d = map[id:%d][0]+%d", d, imm, insn[1].imm);
			uint64_t v = (uint32_t)imm | ((uint64_t)(uint32_t)insn[1].imm << 32);
			return snprintf(buf, size, "r%d = 0x%" PRIx64 " ll", d, v);
		}
		break;
	case BPF_JMP:
	case BPF_JMP32: {
		char r = cls == BPF_JMP32 ? 'w' : 'r';
		if (op == BPF_JA)
			return cls == BPF_JMP32 ? snprintf(buf, size, "gotol pc%+d", imm)
						: snprintf(buf, size, "goto pc%+d", off);
		if (op == BPF_CALL) {
			if (s == BPF_PSEUDO_CALL)
				return snprintf(buf, size, "call pc%+d", imm);
			if (BPF_SRC(code) == BPF_X)
				return snprintf(buf, size, "callx r%d", d);
			const char *n = gpv_helper_name(imm);
			return n ? snprintf(buf, size, "call bpf_%s#%d", n, imm) : snprintf(buf, size, "call unknown#%d", imm);
		}
		if (op == BPF_EXIT)
			return snprintf(buf, size, "exit");
		if (BPF_SRC(code) == BPF_X)
			return snprintf(buf, size, "if %c%d %s %c%d goto pc%+d", r, d, jmp_op(op), r, s, off);
		return snprintf(buf, size, "if %c%d %s 0x%x goto pc%+d", r, d, jmp_op(op), (unsigned)imm, off);
	}
	}
	return snprintf(buf, size, "(invalid)");
}

static void log_vappend(struct gpv_env *env, bool final, const char *fmt, va_list ap)
{
	if (!env->log || !env->log_size)
		return;
	size_t limit = env->log_size - 1;
	if (!final)
		limit = env->log_size > LOG_RESERVE ? env->log_size - LOG_RESERVE : 0;
	if (env->log_len >= limit)
		return;
	int n = vsnprintf(env->log + env->log_len, limit - env->log_len + 1, fmt, ap);
	if (n < 0)
		return;
	env->log_len += (size_t)n < limit - env->log_len ? (size_t)n : limit - env->log_len;
	env->log[env->log_len] = 0;
}

void gpv_log(struct gpv_env *env, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vappend(env, false, fmt, ap);
	va_end(ap);
}

static void log_final(struct gpv_env *env, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vappend(env, true, fmt, ap);
	va_end(ap);
}

int gpv_reject(struct gpv_env *env, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(env->reason, sizeof(env->reason), fmt, ap);
	va_end(ap);
	env->err_idx = env->idx;
	return err;
}

static void insn_line(struct gpv_env *env, int idx, char *buf, size_t size)
{
	char text[160];
	if (idx < 0 || idx >= env->n) {
		snprintf(buf, size, "%d: (end of program)", idx);
		return;
	}
	const struct bpf_insn *insn = &env->insns[idx];
	if (insn->code == (BPF_LD | BPF_IMM | BPF_DW) && idx + 1 >= env->n)
		snprintf(text, sizeof(text), "r%d = <truncated ld_imm64>", insn->dst_reg);
	else
		gp_disasm_insn(insn, text, sizeof(text));
	snprintf(buf, size, "%d: (%02x) %s", idx, insn->code, text);
}

/* The source line of instruction idx, NULL when none is known. */
static const struct gp_verify_line *src_line(struct gpv_env *env, int idx)
{
	const struct gp_verify_srcinfo *si = env->opts->src;
	if (!si || si->n != (size_t)env->n || !si->lines || idx < 0 || idx >= env->n)
		return NULL;
	const struct gp_verify_line *l = &si->lines[idx];
	return l->text ? l : NULL;
}

/* "; if (!v) @ probe.bpf.c:12", as Linux prints it: the line without its indentation. */
static void src_text(const struct gp_verify_line *l, char *buf, size_t size)
{
	const char *t = l->text;
	while (*t == ' ' || *t == '\t')
		t++;
	size_t len = strcspn(t, "\n");
	while (len && (t[len - 1] == ' ' || t[len - 1] == '\t' || t[len - 1] == '\r'))
		len--;
	if (len > 200)
		len = 200;
	snprintf(buf, size, "; %.*s @ %s:%u", (int)len, t, l->file ? l->file : "?", l->line);
}

void gpv_log_insn(struct gpv_env *env, int idx)
{
	char line[200];
	const struct gp_verify_line *l = src_line(env, idx);
	const struct gp_verify_line *last = env->src_printed;
	if (l && !(last && last->line == l->line && last->file == l->file && last->text == l->text)) {
		char text[300];
		src_text(l, text, sizeof(text));
		gpv_log(env, "%s\n", text);
		env->src_printed = l;
	}
	insn_line(env, idx, line, sizeof(line));
	size_t before = env->log_len;
	gpv_log(env, "%s\n", line);
	env->insn_logged = idx;
	env->insn_logged_at = env->log_len > before ? env->log_len : 0;
}

const char *gpv_subprog_name(struct gpv_env *env, int subprog, char *buf, size_t size)
{
	const struct gp_verify_srcinfo *si = env->opts->src;
	int start = subprog >= 0 && subprog < env->nsubs ? env->subs[subprog].start : -1;
	if (si && si->n == (size_t)env->n && si->func_names && start >= 0 && si->func_names[start])
		snprintf(buf, size, "%s", si->func_names[start]);
	else
		snprintf(buf, size, "func#%d", subprog);
	return buf;
}

static void log_reg(struct gpv_env *env, const char *name, const struct gpv_reg *r)
{
	switch (r->type) {
	case T_NOT_INIT:
		return;
	case T_SCALAR:
		if (tnum_is_const(r->var)) {
			gpv_log(env, " %s=%lld", name, (long long)r->var.value);
			return;
		}
		gpv_log(env, " %s=scalar(", name);
		if (r->smin != INT64_MIN || r->smax != INT64_MAX)
			gpv_log(env, "smin=%lld,smax=%lld,", (long long)r->smin, (long long)r->smax);
		if (r->umin || r->umax != UINT64_MAX)
			gpv_log(env, "umin=%llu,umax=%llu,", (unsigned long long)r->umin,
				(unsigned long long)r->umax);
		if (r->has32)
			gpv_log(env, "u32_min=%u,u32_max=%u,", r->u32min, r->u32max);
		gpv_log(env, "var_off=(%#llx; %#llx)%s%s)", (unsigned long long)r->var.value,
			(unsigned long long)r->var.mask, r->id ? ",id" : "", r->released_at ? ",released" : "");
		return;
	case T_PTR_STACK:
		if (tnum_is_const(r->var)) {
			gpv_log(env, " %s=fp%d", name, r->off + (int)r->var.value);
			return;
		}
		break;
	default:
		break;
	}
	gpv_log(env, " %s=%s(off=%d", name, gpv_type_name(r->type), r->off);
	if (r->type == T_PTR_MAP_VALUE || r->type == T_PTR_MAP_VALUE_OR_NULL || r->type == T_CONST_MAP_PTR)
		gpv_log(env, ",map=%d", r->map);
	if (r->type == T_PTR_MEM || r->type == T_PTR_MEM_OR_NULL)
		gpv_log(env, ",size=%u", r->mem_size);
	if (r->id)
		gpv_log(env, ",id=%u", r->id);
	if (!tnum_is_const(r->var))
		gpv_log(env, ",var_off=(%#llx; %#llx),smin=%lld,smax=%lld", (unsigned long long)r->var.value,
			(unsigned long long)r->var.mask, (long long)r->smin, (long long)r->smax);
	gpv_log(env, ")");
}

void gpv_log_state(struct gpv_env *env, const struct gpv_state *st)
{
	for (int f = 0; f <= st->curframe; f++) {
		const struct gpv_frame *fr = st->frame[f];
		if (st->curframe)
			gpv_log(env, " frame%d:", f);
		char name[16];
		for (int i = 0; i < 11; i++) {
			snprintf(name, sizeof(name), "R%d", i);
			log_reg(env, name, &fr->regs[i]);
		}
		for (int i = 0; i < fr->nslots; i++) {
			const struct gpv_slot *s = &fr->slots[i];
			snprintf(name, sizeof(name), "fp%d", -8 * (i + 1));
			if (s->type[0] == S_SPILL) {
				log_reg(env, name, &s->spill);
				continue;
			}
			char m[9];
			bool any = false;
			for (int j = 0; j < 8; j++) {
				m[7 - j] = s->type[j] == S_MISC ? 'm' : '?';
				any |= s->type[j] != S_INVALID;
			}
			m[8] = 0;
			if (any)
				gpv_log(env, " %s=%s", name, m);
		}
	}
	gpv_log(env, "\n");
}

void gpv_finish_log(struct gpv_env *env, int ret)
{
	if (!ret) {
		log_final(env, "processed %lu insns (limit %lu), %u states stored, stack depth %u\n",
			  env->processed, env->max_insns, env->nstates, env->opts->stack_depth);
		return;
	}
	char line[200];
	/* -v: the trace already ends with the rejected instruction (and its source line) */
	bool traced = env->log_level && env->err_idx >= 0 && env->insn_logged == env->err_idx &&
		      env->insn_logged_at && env->insn_logged_at == env->log_len;
	if (env->err_idx >= 0 && !traced) {
		const struct gp_verify_line *l = src_line(env, env->err_idx);
		if (l) {
			char text[300];
			src_text(l, text, sizeof(text));
			log_final(env, "%s\n", text);
		}
		insn_line(env, env->err_idx, line, sizeof(line));
		log_final(env, "%s\n", line);
	}
	log_final(env, "%s\n", env->reason);
}
