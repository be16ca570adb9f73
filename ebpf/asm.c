/* The assembler for the bpf_conformance text syntax (see asm.h for the grammar).
 * Two passes: the first finds labels and instruction indexes (lddw takes two slots), the second
 * encodes. Every error names the line and stops assembly. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"

#define ASM_MAX_OPERANDS 4
#define ASM_MAX_LINE 512

enum asm_kind {
	K_ALU,      /* binary ALU: reg or imm source */
	K_NEG,
	K_MOVSX,    /* register source, off = source width */
	K_END,      /* be/le/bswap: imm = width */
	K_LDDW,
	K_LDX,
	K_STX,
	K_ST,
	K_JA,
	K_JA32,
	K_JCOND,
	K_CALL,
	K_EXIT,
	K_LOCK,
};

struct asm_op {
	const char *name;
	enum asm_kind kind;
	uint8_t code;
	int16_t off;     /* sdiv/smod (1), movsx widths */
	int32_t imm;     /* be/le/bswap widths */
};

/* Every mnemonic of the corpus. ALU names without a suffix are 64-bit; "64" is accepted too. */
static const struct asm_op asm_ops[] = {
#define ALU(n, op)                                                          \
	{ n, K_ALU, BPF_ALU64 | (op), 0, 0 }, { n "64", K_ALU, BPF_ALU64 | (op), 0, 0 }, \
	{ n "32", K_ALU, BPF_ALU | (op), 0, 0 }
	ALU("add", BPF_ADD), ALU("sub", BPF_SUB), ALU("mul", BPF_MUL), ALU("div", BPF_DIV),
	ALU("or", BPF_OR), ALU("and", BPF_AND), ALU("lsh", BPF_LSH), ALU("rsh", BPF_RSH),
	ALU("mod", BPF_MOD), ALU("xor", BPF_XOR), ALU("mov", BPF_MOV), ALU("arsh", BPF_ARSH),
#undef ALU
	{ "sdiv", K_ALU, BPF_ALU64 | BPF_DIV, 1, 0 }, { "sdiv64", K_ALU, BPF_ALU64 | BPF_DIV, 1, 0 },
	{ "sdiv32", K_ALU, BPF_ALU | BPF_DIV, 1, 0 },
	{ "smod", K_ALU, BPF_ALU64 | BPF_MOD, 1, 0 }, { "smod64", K_ALU, BPF_ALU64 | BPF_MOD, 1, 0 },
	{ "smod32", K_ALU, BPF_ALU | BPF_MOD, 1, 0 },
	{ "neg", K_NEG, BPF_ALU64 | BPF_NEG, 0, 0 }, { "neg64", K_NEG, BPF_ALU64 | BPF_NEG, 0, 0 },
	{ "neg32", K_NEG, BPF_ALU | BPF_NEG, 0, 0 },
	{ "movsx864", K_MOVSX, BPF_ALU64 | BPF_MOV | BPF_X, 8, 0 },
	{ "movsx1664", K_MOVSX, BPF_ALU64 | BPF_MOV | BPF_X, 16, 0 },
	{ "movsx3264", K_MOVSX, BPF_ALU64 | BPF_MOV | BPF_X, 32, 0 },
	{ "movsx832", K_MOVSX, BPF_ALU | BPF_MOV | BPF_X, 8, 0 },
	{ "movsx1632", K_MOVSX, BPF_ALU | BPF_MOV | BPF_X, 16, 0 },
	{ "be16", K_END, BPF_ALU | BPF_END | BPF_TO_BE, 0, 16 },
	{ "be32", K_END, BPF_ALU | BPF_END | BPF_TO_BE, 0, 32 },
	{ "be64", K_END, BPF_ALU | BPF_END | BPF_TO_BE, 0, 64 },
	{ "le16", K_END, BPF_ALU | BPF_END | BPF_TO_LE, 0, 16 },
	{ "le32", K_END, BPF_ALU | BPF_END | BPF_TO_LE, 0, 32 },
	{ "le64", K_END, BPF_ALU | BPF_END | BPF_TO_LE, 0, 64 },
	{ "bswap16", K_END, BPF_ALU64 | BPF_END, 0, 16 },
	{ "bswap32", K_END, BPF_ALU64 | BPF_END, 0, 32 },
	{ "bswap64", K_END, BPF_ALU64 | BPF_END, 0, 64 },
	{ "swap16", K_END, BPF_ALU64 | BPF_END, 0, 16 },   /* the corpus's older bswap names */
	{ "swap32", K_END, BPF_ALU64 | BPF_END, 0, 32 },
	{ "swap64", K_END, BPF_ALU64 | BPF_END, 0, 64 },
	{ "lddw", K_LDDW, BPF_LD | BPF_IMM | BPF_DW, 0, 0 },
	{ "ldxb", K_LDX, BPF_LDX | BPF_MEM | BPF_B, 0, 0 },
	{ "ldxh", K_LDX, BPF_LDX | BPF_MEM | BPF_H, 0, 0 },
	{ "ldxw", K_LDX, BPF_LDX | BPF_MEM | BPF_W, 0, 0 },
	{ "ldxdw", K_LDX, BPF_LDX | BPF_MEM | BPF_DW, 0, 0 },
	{ "ldxsb", K_LDX, BPF_LDX | BPF_MEMSX | BPF_B, 0, 0 },
	{ "ldxsh", K_LDX, BPF_LDX | BPF_MEMSX | BPF_H, 0, 0 },
	{ "ldxsw", K_LDX, BPF_LDX | BPF_MEMSX | BPF_W, 0, 0 },
	{ "stxb", K_STX, BPF_STX | BPF_MEM | BPF_B, 0, 0 },
	{ "stxh", K_STX, BPF_STX | BPF_MEM | BPF_H, 0, 0 },
	{ "stxw", K_STX, BPF_STX | BPF_MEM | BPF_W, 0, 0 },
	{ "stxdw", K_STX, BPF_STX | BPF_MEM | BPF_DW, 0, 0 },
	{ "stb", K_ST, BPF_ST | BPF_MEM | BPF_B, 0, 0 },
	{ "sth", K_ST, BPF_ST | BPF_MEM | BPF_H, 0, 0 },
	{ "stw", K_ST, BPF_ST | BPF_MEM | BPF_W, 0, 0 },
	{ "stdw", K_ST, BPF_ST | BPF_MEM | BPF_DW, 0, 0 },
	{ "ja", K_JA, BPF_JMP | BPF_JA, 0, 0 },
	{ "ja32", K_JA32, BPF_JMP32 | BPF_JA, 0, 0 },
#define JC(n, op) { n, K_JCOND, BPF_JMP | (op), 0, 0 }, { n "32", K_JCOND, BPF_JMP32 | (op), 0, 0 }
	JC("jeq", BPF_JEQ), JC("jne", BPF_JNE), JC("jgt", BPF_JGT), JC("jge", BPF_JGE),
	JC("jlt", BPF_JLT), JC("jle", BPF_JLE), JC("jsgt", BPF_JSGT), JC("jsge", BPF_JSGE),
	JC("jslt", BPF_JSLT), JC("jsle", BPF_JSLE), JC("jset", BPF_JSET),
#undef JC
	{ "call", K_CALL, BPF_JMP | BPF_CALL, 0, 0 },
	{ "exit", K_EXIT, BPF_JMP | BPF_EXIT, 0, 0 },
	{ "lock", K_LOCK, BPF_STX | BPF_ATOMIC, 0, 0 },
};

struct asm_label {
	char *name;
	size_t index;
};

struct asm_state {
	char *err;
	size_t errlen;
	int line;
	struct asm_label *labels;
	size_t nlabels, cap_labels;
	struct bpf_insn *insns;
	size_t ninsns, cap_insns;
	/* Instruction index of each line's first instruction, and whether it is an exit (for the
	 * corpus's "exit" pseudo-label). */
	bool *is_exit;
};

static int asm_fail(struct asm_state *st, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (st->err && st->errlen) {
		snprintf(st->err, st->errlen, "line %d: %s", st->line, msg);
		for (char *c = st->err; *c; c++)   /* echoed input stays one printable line */
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static bool is_ident_start(int c) { return isalpha(c) || c == '_' || c == '.'; }
static bool is_ident_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

/* A label definition "name:" alone on the line (possibly followed by an instruction). Returns the
 * rest of the line after the colon, or NULL when the line holds no label. */
static char *split_label(char *s, char **label)
{
	char *p = s;
	if (!is_ident_start((unsigned char)*p))
		return NULL;
	while (is_ident_char((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	*p = '\0';
	*label = s;
	return trim(p + 1);
}

/* Parse an integer: optional sign, then hex (0x) or decimal. Sets *neg and the magnitude. */
static bool parse_magnitude(const char *s, bool *neg, uint64_t *mag, bool *hex)
{
	*neg = false;
	if (*s == '+' || *s == '-') {
		*neg = *s == '-';
		s++;
	}
	if (!*s)
		return false;
	*hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (*hex)
		s += 2;
	if (!*s)
		return false;
	uint64_t v = 0;
	for (; *s; s++) {
		int d;
		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (*hex && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			return false;
		uint64_t base = *hex ? 16 : 10;
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return false;   /* beyond 64 bits */
		v = v * base + (uint64_t)d;
	}
	*mag = v;
	return true;
}

static bool looks_numeric(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return isdigit((unsigned char)*s);
}

/* A 32-bit immediate: decimal in [-2^31, 2^31), hex magnitude up to 0xffffffff. */
static int parse_imm32(struct asm_state *st, const char *s, int32_t *out)
{
	bool neg, hex;
	uint64_t mag;
	if (!parse_magnitude(s, &neg, &mag, &hex))
		return asm_fail(st, "invalid immediate '%s'", s);
	if (hex) {
		if (mag > 0xffffffffull)
			return asm_fail(st, "immediate %s does not fit in 32 bits", s);
		uint32_t v = (uint32_t)mag;
		*out = (int32_t)(neg ? (uint32_t)0 - v : v);
		return 0;
	}
	if ((!neg && mag > INT32_MAX) || (neg && mag > (uint64_t)INT32_MAX + 1))
		return asm_fail(st, "immediate %s out of 32-bit signed range", s);
	*out = (int32_t)(neg ? -(int64_t)mag : (int64_t)mag);
	return 0;
}

static int parse_imm64(struct asm_state *st, const char *s, uint64_t *out)
{
	bool neg, hex;
	uint64_t mag;
	if (!parse_magnitude(s, &neg, &mag, &hex))
		return asm_fail(st, "invalid 64-bit immediate '%s'", s);
	if (neg && !hex && mag > (uint64_t)INT64_MAX + 1)
		return asm_fail(st, "immediate %s out of 64-bit range", s);
	*out = neg ? (uint64_t)0 - mag : mag;
	return 0;
}

static int parse_off16(struct asm_state *st, const char *s, int16_t *out)
{
	bool neg, hex;
	uint64_t mag;
	if (!parse_magnitude(s, &neg, &mag, &hex))
		return asm_fail(st, "invalid offset '%s'", s);
	if ((!neg && mag > INT16_MAX) || (neg && mag > (uint64_t)INT16_MAX + 1))
		return asm_fail(st, "offset %s out of 16-bit signed range", s);
	*out = (int16_t)(neg ? -(int64_t)mag : (int64_t)mag);
	return 0;
}

static bool is_register_syntax(const char *s)
{
	return (s[0] == '%' && s[1] == 'r') || (s[0] == 'r' && isdigit((unsigned char)s[1]));
}

static int parse_reg(struct asm_state *st, const char *s, uint8_t *out)
{
	const char *p = s;
	if (*p == '%')
		p++;
	if (*p != 'r' || !isdigit((unsigned char)p[1]))
		return asm_fail(st, "Invalid register '%s' (expected %%r0..%%r10)", s);
	p++;
	long v = 0;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > 10)
			break;
	}
	if (*p || v > 10)
		return asm_fail(st, "Invalid register '%s' (expected %%r0..%%r10)", s);
	*out = (uint8_t)v;
	return 0;
}

/* "[%rN]", "[%rN+off]", "[%rN-off]". */
static int parse_mem(struct asm_state *st, const char *s, uint8_t *reg, int16_t *off)
{
	size_t len = strlen(s);
	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return asm_fail(st, "expected a memory operand [%%rN+offset], got '%s'", s);
	char buf[ASM_MAX_LINE];
	if (len - 2 >= sizeof buf)
		return asm_fail(st, "memory operand too long");
	memcpy(buf, s + 1, len - 2);
	buf[len - 2] = '\0';
	char *inner = trim(buf);
	char *sign = strpbrk(inner, "+-");
	*off = 0;
	if (sign) {
		char num[64];
		snprintf(num, sizeof num, "%s", sign);
		/* remove blanks inside "+ 4" */
		char *w = num;
		for (char *r = num; *r; r++)
			if (!isspace((unsigned char)*r))
				*w++ = *r;
		*w = '\0';
		*sign = '\0';
		if (parse_off16(st, num, off))
			return -EINVAL;
	}
	return parse_reg(st, trim(inner), reg);
}

static int find_label(const struct asm_state *st, const char *name, size_t *index)
{
	for (size_t i = 0; i < st->nlabels; i++)
		if (strcmp(st->labels[i].name, name) == 0) {
			*index = st->labels[i].index;
			return 0;
		}
	return -ENOENT;
}

/* Jump target as an offset relative to the next instruction (pc + 1). */
static int parse_target(struct asm_state *st, const char *s, size_t pc, size_t total, int64_t *rel)
{
	if (looks_numeric(s)) {
		bool neg, hex;
		uint64_t mag;
		if (!parse_magnitude(s, &neg, &mag, &hex) || mag > INT32_MAX)
			return asm_fail(st, "invalid jump offset '%s'", s);
		*rel = neg ? -(int64_t)mag : (int64_t)mag;
		return 0;
	}
	size_t idx;
	if (find_label(st, s, &idx) == 0) {
		*rel = (int64_t)idx - (int64_t)(pc + 1);
		return 0;
	}
	if (strcmp(s, "exit") == 0) {
		/* The corpus jumps to "exit" without defining it: the next exit instruction. */
		for (size_t i = pc + 1; i < total; i++)
			if (st->is_exit[i]) {
				*rel = (int64_t)i - (int64_t)(pc + 1);
				return 0;
			}
		for (size_t i = total; i-- > 0;)
			if (st->is_exit[i]) {
				*rel = (int64_t)i - (int64_t)(pc + 1);
				return 0;
			}
	}
	return asm_fail(st, "undefined label '%s'", s);
}

static const struct asm_op *find_op(const char *name)
{
	for (size_t i = 0; i < sizeof asm_ops / sizeof asm_ops[0]; i++)
		if (strcmp(asm_ops[i].name, name) == 0)
			return &asm_ops[i];
	return NULL;
}

/* Split "mnemonic op1, op2, op3" into words. The mnemonic ends at the first blank; operands
 * are separated by commas. Returns the operand count or -1 when there are too many. */
static int split_operands(char *rest, char *ops[ASM_MAX_OPERANDS])
{
	int n = 0;
	rest = trim(rest);
	if (!*rest)
		return 0;
	for (;;) {
		char *comma = strchr(rest, ',');
		if (comma)
			*comma = '\0';
		if (n == ASM_MAX_OPERANDS)
			return -1;
		ops[n++] = trim(rest);
		if (!comma)
			break;
		rest = comma + 1;
	}
	return n;
}

static int want_operands(struct asm_state *st, const char *name, int have, int want)
{
	if (have != want)
		return asm_fail(st, "%s takes %d operand%s, got %d", name, want, want == 1 ? "" : "s", have);
	return 0;
}

static int emit(struct asm_state *st, struct bpf_insn insn)
{
	if (st->ninsns == st->cap_insns) {
		size_t cap = st->cap_insns ? st->cap_insns * 2 : 64;
		struct bpf_insn *p = realloc(st->insns, cap * sizeof *p);
		if (!p)
			return asm_fail(st, "out of memory");
		st->insns = p;
		st->cap_insns = cap;
	}
	st->insns[st->ninsns++] = insn;
	return 0;
}

static struct bpf_insn mk(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i;
	memset(&i, 0, sizeof i);
	i.code = code;
	i.dst_reg = dst & 0xf;
	i.src_reg = src & 0xf;
	i.off = off;
	i.imm = imm;
	return i;
}

/* The lock form: words after "lock" are [fetch] op[32], then "[mem], %rS". */
static int encode_lock(struct asm_state *st, char *rest)
{
	char *words[3];
	int nw = 0;
	char *p = trim(rest);
	while (nw < 3 && *p && *p != '[') {
		char *e = p;
		while (*e && !isspace((unsigned char)*e) && *e != '[')
			e++;
		char save = *e;
		*e = '\0';
		words[nw++] = p;
		if (!save)
			p = e;
		else if (save == '[') {
			*e = '[';
			p = e;
			break;
		} else
			p = trim(e + 1);
	}
	char *ops[ASM_MAX_OPERANDS];
	int nops = split_operands(p, ops);
	if (nw < 1 || nops != 2)
		return asm_fail(st, "Invalid number of operands for lock (expected: lock [fetch] op [%%rD+off], %%rS)");
	bool fetch = false;
	int wi = 0;
	if (strcmp(words[0], "fetch") == 0) {
		fetch = true;
		wi = 1;
	}
	if (wi >= nw || nw - wi != 1)
		return asm_fail(st, "Invalid number of operands for lock");
	char opname[32];
	snprintf(opname, sizeof opname, "%s", words[wi]);
	size_t ol = strlen(opname);
	uint8_t size = BPF_DW;
	if (ol > 2 && strcmp(opname + ol - 2, "32") == 0) {
		size = BPF_W;
		opname[ol - 2] = '\0';
	} else if (ol > 2 && strcmp(opname + ol - 2, "64") == 0) {
		opname[ol - 2] = '\0';
	}
	int32_t imm;
	if (strcmp(opname, "add") == 0)
		imm = BPF_ADD;
	else if (strcmp(opname, "or") == 0)
		imm = BPF_OR;
	else if (strcmp(opname, "and") == 0)
		imm = BPF_AND;
	else if (strcmp(opname, "xor") == 0)
		imm = BPF_XOR;
	else if (strcmp(opname, "xchg") == 0 && !fetch)
		imm = BPF_XCHG;
	else if (strcmp(opname, "cmpxchg") == 0 && !fetch)
		imm = BPF_CMPXCHG;
	else
		return asm_fail(st, "unknown atomic operation 'lock %s%s'", fetch ? "fetch " : "", words[wi]);
	if (fetch)
		imm |= BPF_FETCH;
	uint8_t dst, src;
	int16_t off;
	if (parse_mem(st, ops[0], &dst, &off) || parse_reg(st, ops[1], &src))
		return -EINVAL;
	return emit(st, mk(BPF_STX | BPF_ATOMIC | size, dst, src, off, imm));
}

static int encode(struct asm_state *st, char *text, size_t total)
{
	char *mn = text;
	char *rest = text;
	while (*rest && !isspace((unsigned char)*rest))
		rest++;
	if (*rest)
		*rest++ = '\0';
	const struct asm_op *op = find_op(mn);
	if (!op)
		return asm_fail(st, "unknown mnemonic '%s'", mn);
	if (op->kind == K_LOCK)
		return encode_lock(st, rest);

	char *ops[ASM_MAX_OPERANDS];
	int n = split_operands(rest, ops);
	if (n < 0)
		return asm_fail(st, "%s: too many operands", mn);
	size_t pc = st->ninsns;
	uint8_t dst = 0, src = 0;
	int16_t off = 0;
	int32_t imm = 0;
	int64_t rel;

	switch (op->kind) {
	case K_ALU:
		if (want_operands(st, mn, n, 2) || parse_reg(st, ops[0], &dst))
			return -EINVAL;
		if (is_register_syntax(ops[1])) {
			if (parse_reg(st, ops[1], &src))
				return -EINVAL;
			return emit(st, mk(op->code | BPF_X, dst, src, op->off, 0));
		}
		if (parse_imm32(st, ops[1], &imm))
			return -EINVAL;
		return emit(st, mk(op->code | BPF_K, dst, 0, op->off, imm));
	case K_NEG:
		if (want_operands(st, mn, n, 1) || parse_reg(st, ops[0], &dst))
			return -EINVAL;
		return emit(st, mk(op->code, dst, 0, 0, 0));
	case K_MOVSX:
		if (want_operands(st, mn, n, 2) || parse_reg(st, ops[0], &dst) || parse_reg(st, ops[1], &src))
			return -EINVAL;
		return emit(st, mk(op->code, dst, src, op->off, 0));
	case K_END:
		if (want_operands(st, mn, n, 1) || parse_reg(st, ops[0], &dst))
			return -EINVAL;
		return emit(st, mk(op->code, dst, 0, 0, op->imm));
	case K_LDDW: {
		uint64_t v = 0;
		if (want_operands(st, mn, n, 2) || parse_reg(st, ops[0], &dst) || parse_imm64(st, ops[1], &v))
			return -EINVAL;
		if (emit(st, mk(op->code, dst, 0, 0, (int32_t)(uint32_t)v)))
			return -EINVAL;
		return emit(st, mk(0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32)));
	}
	case K_LDX:
		if (want_operands(st, mn, n, 2) || parse_reg(st, ops[0], &dst) || parse_mem(st, ops[1], &src, &off))
			return -EINVAL;
		return emit(st, mk(op->code, dst, src, off, 0));
	case K_STX:
		if (want_operands(st, mn, n, 2) || parse_mem(st, ops[0], &dst, &off) || parse_reg(st, ops[1], &src))
			return -EINVAL;
		return emit(st, mk(op->code, dst, src, off, 0));
	case K_ST:
		if (want_operands(st, mn, n, 2) || parse_mem(st, ops[0], &dst, &off) || parse_imm32(st, ops[1], &imm))
			return -EINVAL;
		return emit(st, mk(op->code, dst, 0, off, imm));
	case K_JA:
		if (want_operands(st, mn, n, 1) || parse_target(st, ops[0], pc, total, &rel))
			return -EINVAL;
		if (rel < INT16_MIN || rel > INT16_MAX)
			return asm_fail(st, "jump offset %lld out of 16-bit range (use ja32)", (long long)rel);
		return emit(st, mk(op->code, 0, 0, (int16_t)rel, 0));
	case K_JA32:
		if (want_operands(st, mn, n, 1) || parse_target(st, ops[0], pc, total, &rel))
			return -EINVAL;
		return emit(st, mk(op->code, 0, 0, 0, (int32_t)rel));
	case K_JCOND:
		if (want_operands(st, mn, n, 3) || parse_reg(st, ops[0], &dst) ||
		    parse_target(st, ops[2], pc, total, &rel))
			return -EINVAL;
		if (rel < INT16_MIN || rel > INT16_MAX)
			return asm_fail(st, "jump offset %lld out of 16-bit range", (long long)rel);
		if (is_register_syntax(ops[1])) {
			if (parse_reg(st, ops[1], &src))
				return -EINVAL;
			return emit(st, mk(op->code | BPF_X, dst, src, (int16_t)rel, 0));
		}
		if (parse_imm32(st, ops[1], &imm))
			return -EINVAL;
		return emit(st, mk(op->code | BPF_K, dst, 0, (int16_t)rel, imm));
	case K_CALL:
		if (n != 1)
			return asm_fail(st, "call takes 1 operand (helper id, local label or %%rN), got %d", n);
		if (strncmp(ops[0], "local", 5) == 0 && isspace((unsigned char)ops[0][5])) {
			if (parse_target(st, trim(ops[0] + 5), pc, total, &rel))
				return -EINVAL;
			return emit(st, mk(op->code, 0, BPF_PSEUDO_CALL, 0, (int32_t)rel));
		}
		if (is_register_syntax(ops[0])) {
			if (parse_reg(st, ops[0], &dst))
				return -EINVAL;
			return emit(st, mk(BPF_JMP | BPF_CALL | BPF_X, dst, 0, 0, 0));
		}
		if (parse_imm32(st, ops[0], &imm))
			return -EINVAL;
		return emit(st, mk(op->code, 0, 0, 0, imm));
	case K_EXIT:
		if (want_operands(st, mn, n, 0))
			return -EINVAL;
		return emit(st, mk(op->code, 0, 0, 0, 0));
	case K_LOCK:
		break;
	}
	return asm_fail(st, "internal: unhandled mnemonic '%s'", mn);
}

/* The instruction text of a line with comment and label removed; NULL when nothing remains.
 * Records a label definition into *label. */
static char *line_body(char *line, char **label)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *s = trim(line);
	*label = NULL;
	char *after = split_label(s, label);
	if (after)
		s = after;
	return *s ? s : NULL;
}

static int add_label(struct asm_state *st, const char *name, size_t index)
{
	size_t dummy;
	if (find_label(st, name, &dummy) == 0)
		return asm_fail(st, "label '%s' defined twice", name);
	if (st->nlabels == st->cap_labels) {
		size_t cap = st->cap_labels ? st->cap_labels * 2 : 16;
		struct asm_label *p = realloc(st->labels, cap * sizeof *p);
		if (!p)
			return asm_fail(st, "out of memory");
		st->labels = p;
		st->cap_labels = cap;
	}
	st->labels[st->nlabels].name = strdup(name);
	if (!st->labels[st->nlabels].name)
		return asm_fail(st, "out of memory");
	st->labels[st->nlabels++].index = index;
	return 0;
}

/* Slots an instruction line takes: lddw 2, everything else 1. */
static size_t line_slots(const char *body)
{
	return strncmp(body, "lddw", 4) == 0 && (body[4] == '\0' || isspace((unsigned char)body[4])) ? 2 : 1;
}

static bool line_is_exit(const char *body)
{
	return strcmp(body, "exit") == 0;
}

int bpf_asm(const char *text, struct bpf_insn **out, size_t *n, char *err, size_t errlen)
{
	struct asm_state st = { .err = err, .errlen = errlen };
	int rc = 0;
	*out = NULL;
	*n = 0;
	if (err && errlen)
		err[0] = '\0';
	if (!text)
		text = "";

	/* Pass 1: labels and slot counts. */
	size_t total = 0;
	size_t cap_exit = 64;
	st.is_exit = calloc(cap_exit, sizeof *st.is_exit);
	if (!st.is_exit)
		return -ENOMEM;
	char line[ASM_MAX_LINE];
	const char *p = text;
	for (st.line = 1; *p; st.line++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof line) {
			rc = asm_fail(&st, "line longer than %d characters", ASM_MAX_LINE - 1);
			goto out;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		char *label;
		char *body = line_body(line, &label);
		if (label && (rc = add_label(&st, label, total)))
			goto out;
		if (body) {
			size_t slots = line_slots(body);
			if (total + slots >= cap_exit) {
				size_t cap = cap_exit * 2 + slots;
				bool *q = realloc(st.is_exit, cap * sizeof *q);
				if (!q) {
					rc = -ENOMEM;
					goto out;
				}
				memset(q + cap_exit, 0, (cap - cap_exit) * sizeof *q);
				st.is_exit = q;
				cap_exit = cap;
			}
			st.is_exit[total] = line_is_exit(body);
			total += slots;
		}
		p = e ? e + 1 : p + len;
	}
	if (total == 0) {
		st.line = 1;
		rc = asm_fail(&st, "no instructions");
		goto out;
	}

	/* Pass 2: encode. */
	p = text;
	for (st.line = 1; *p; st.line++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		memcpy(line, p, len);
		line[len] = '\0';
		char *label;
		char *body = line_body(line, &label);
		if (body && (rc = encode(&st, body, total)))
			goto out;
		p = e ? e + 1 : p + len;
	}
	*out = st.insns;
	*n = st.ninsns;
	st.insns = NULL;
out:
	free(st.insns);
	for (size_t i = 0; i < st.nlabels; i++)
		free(st.labels[i].name);
	free(st.labels);
	free(st.is_exit);
	return rc;
}
