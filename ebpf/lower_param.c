/* Helper 514, bpf_gpu_read_param(ctx, dst, size, offset): copies size bytes of the launched
 * kernel's parameter buffer, from byte offset, into probe memory at dst. The instrumentation
 * puts the buffer's generic address (cvta.param, PTX 7.7+) and its size in struct gp_kernel_ctx
 * (params, params_size): the helper reads both through r1, so it needs no knowledge of the
 * kernel. r0 = 0, or -ERANGE when [offset, offset + size) is not inside the buffer, -ENOENT when
 * the kernel's buffer is unknown (params 0: a device function, no parameters, PTX before 7.7);
 * on an error dst is zero-filled, as bpf_probe_read does. The verifier (verifier_helpers.c) has
 * checked that r1 is the unmodified context and dst/size a writable probe region of a constant
 * size; the parameter buffer is only read. */
#include "ebpf/lower_param.h"

#include <errno.h>

#define R(x) lo_reg(c, (x))
#define IMM(v) lo_imm(c, (uint64_t)(v))

/* for (i = 0; i < n; i++) dst[i] = src ? src[i] : 0, byte by byte (any alignment). */
static void copy_bytes(struct lower_ctx *c, const char *dst, const char *src, const char *n)
{
	const char *i = c->t[6], *a = c->t[7], *byte = c->w[1];
	const char *loop = lo_new_label(c), *done = lo_new_label(c);
	lo_emit(c, "mov", ".b64", 2, R(i), IMM(0));
	lo_label(c, loop);
	lo_emit(c, "setp", ".ge.u64", 3, R(c->p[2]), R(i), R(n));
	lo_emit_if(c, c->p[2], false, "bra", "", 1, lo_sym(c, done));
	if (src) {
		lo_emit(c, "add", ".s64", 3, R(a), R(src), R(i));
		lo_emit(c, "ld", ".u8", 2, R(byte), lo_addr(c, a, 0));
	} else {
		lo_emit(c, "mov", ".u32", 2, R(byte), IMM(0));
	}
	lo_emit(c, "add", ".s64", 3, R(a), R(dst), R(i));
	lo_emit(c, "st", ".u8", 2, lo_addr(c, a, 0), R(byte));
	lo_emit(c, "add", ".s64", 3, R(i), R(i), IMM(1));
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, loop));
	lo_label(c, done);
}

/* One aligned load/store of size bytes when src, dst and size allow it, else fall through. */
static void copy_word(struct lower_ctx *c, const char *dst, const char *src, const char *n, unsigned size,
		      const char *ok)
{
	const char *next = lo_new_label(c), *v = c->t[6];
	lo_emit(c, "setp", ".ne.u64", 3, R(c->p[2]), R(n), IMM(size));
	lo_emit_if(c, c->p[2], false, "bra", "", 1, lo_sym(c, next));
	lo_emit(c, "or", ".b64", 3, R(c->t[7]), R(dst), R(src));
	lo_emit(c, "and", ".b64", 3, R(c->t[7]), R(c->t[7]), IMM(size - 1));
	lo_emit(c, "setp", ".ne.u64", 3, R(c->p[2]), R(c->t[7]), IMM(0));
	lo_emit_if(c, c->p[2], false, "bra", "", 1, lo_sym(c, next));
	const char *ty = size == 8 ? ".u64" : ".u32";
	const char *reg = size == 8 ? v : c->w[1];
	lo_emit(c, "ld", ty, 2, R(reg), lo_addr(c, src, 0));
	lo_emit(c, "st", ty, 2, lo_addr(c, dst, 0), R(reg));
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, ok));
	lo_label(c, next);
}

int lower_param_read(struct lower_ctx *c)
{
	const char *buf = c->t[0], *n = c->t[1], *off = c->t[2], *end = c->t[3], *limit = c->t[4];
	const char *dst = c->r[2];
	const char *fail = lo_new_label(c), *range = lo_new_label(c), *ok = lo_new_label(c),
		   *out = lo_new_label(c);
	/* size and offset are __u32: only their low halves count */
	lo_emit(c, "and", ".b64", 3, R(n), R(c->r[3]), IMM(0xffffffffu));
	lo_emit(c, "and", ".b64", 3, R(off), R(c->r[4]), IMM(0xffffffffu));
	lo_emit(c, "ld", ".u64", 2, R(buf), lo_addr(c, c->r[1], 0));          /* ctx->params */
	lo_emit(c, "ld", ".u32", 2, R(c->w[0]), lo_addr(c, c->r[1], 8));      /* ctx->params_size */
	lo_emit(c, "cvt", ".u64.u32", 2, R(limit), R(c->w[0]));
	lo_emit(c, "setp", ".eq.u64", 3, R(c->p[0]), R(buf), IMM(0));
	lo_emit_if(c, c->p[0], false, "bra", "", 1, lo_sym(c, fail));
	lo_emit(c, "add", ".s64", 3, R(end), R(off), R(n));   /* both < 2^32: no wrap */
	lo_emit(c, "setp", ".gt.u64", 3, R(c->p[0]), R(end), R(limit));
	lo_emit_if(c, c->p[0], false, "bra", "", 1, lo_sym(c, range));
	lo_emit(c, "add", ".s64", 3, R(buf), R(buf), R(off));
	copy_word(c, dst, buf, n, 8, ok);
	copy_word(c, dst, buf, n, 4, ok);
	copy_bytes(c, dst, buf, n);
	lo_label(c, ok);
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM(0));
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, out));
	lo_label(c, fail);
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM((uint64_t)-(int64_t)ENOENT));
	copy_bytes(c, dst, NULL, n);
	lo_emit(c, "bra", ".uni", 1, lo_sym(c, out));
	lo_label(c, range);
	lo_emit(c, "mov", ".b64", 2, R(c->r[0]), IMM((uint64_t)-(int64_t)ERANGE));
	copy_bytes(c, dst, NULL, n);
	lo_label(c, out);
	return 0;
}
