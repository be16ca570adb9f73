/* Shared by the one-liner compiler's files (ebpf/oneliner.h). Not part of the public API. */
#ifndef GPUPROBE_EBPF_ONELINER_INTERNAL_H
#define GPUPROBE_EBPF_ONELINER_INTERNAL_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

#include "ebpf/object.h"

#define OL_MAX_PROBES 64
#define OL_MAX_STMTS 64       /* per probe */
#define OL_MAX_MAPS 64
#define OL_MAX_KEYS 8         /* expressions in @map[k1, ..., k8] */
#define OL_MAX_DEPTH 32       /* expression nesting (each level one stack slot) */
#define OL_MAX_LHIST_BUCKETS 1000
#define OL_HASH_ENTRIES 10240 /* keys of a keyed map */

/* ---- tokens (oneliner_lex.c) ------------------------------------------------------------- */
enum ol_tok {
	T_EOF, T_ATTACH, T_IDENT, T_INT, T_AT,   /* T_AT: "@" or "@name" (text: the name) */
	T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_LPAREN, T_RPAREN, T_COMMA, T_SEMI, T_ASSIGN,
	T_SLASH, T_PLUS, T_MINUS, T_STAR, T_PERCENT, T_AMP, T_PIPE, T_CARET, T_TILDE, T_BANG,
	T_LT, T_GT, T_LE, T_GE, T_EQ, T_NE, T_ANDAND, T_OROR, T_SHL, T_SHR,
};

struct ol_token {
	enum ol_tok kind;
	size_t pos;            /* byte offset in the source */
	size_t len;
	uint64_t value;        /* T_INT */
	char text[128];        /* T_ATTACH, T_IDENT, T_AT: the text (T_ATTACH unquoted) */
};

struct ol_lexer {
	const char *src;
	size_t pos;
	char *err;
	size_t errlen;
};

/* The next token. mode_attach: at the start of a probe, where an attach point is read (up to
 * blanks or '{'; or a "quoted" one). Returns 0, or -EINVAL with the message in err. */
int ol_lex(struct ol_lexer *lx, int mode_attach, struct ol_token *t);
/* "what" for messages: "'{'", "end of input", "number 12", "'count'". */
void ol_tok_describe(const struct ol_token *t, char *buf, size_t len);
/* "column N: " / "line L, column N: " + message into err; returns -EINVAL. */
int ol_error(const char *src, size_t pos, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* ---- syntax tree (oneliner_parse.c) ------------------------------------------------------ */
enum ol_builtin_load { OL_LOAD_CTX, OL_LOAD_HELPER };

/* A builtin as read at one attach point: a context field, or a helper's r0. */
struct ol_builtin {
	const char *name;
	enum ol_builtin_load how;
	uint32_t off, size;     /* OL_LOAD_CTX: bytes at r1 + off (1, 2, 4, 8), zero-extended */
	int helper;             /* OL_LOAD_HELPER */
	int key_type;           /* enum ol_key_type when used alone as a key */
};

enum ol_key_type { OL_KEY_U64 = 0, OL_KEY_KERNEL, OL_KEY_API };

enum ol_expr_kind { E_INT, E_BUILTIN, E_UNARY, E_BINARY };

struct ol_expr {
	enum ol_expr_kind kind;
	size_t pos;
	enum ol_tok op;          /* E_UNARY (T_MINUS, T_TILDE, T_BANG), E_BINARY */
	uint64_t value;          /* E_INT */
	struct ol_builtin b;     /* E_BUILTIN */
	struct ol_expr *l, *r;
};

enum ol_agg { A_COUNT, A_SUM, A_HIST, A_LHIST };

struct ol_map {
	char name[64];
	enum ol_agg agg;
	size_t nkeys;
	int key_type;            /* enum ol_key_type, one key only */
	/* several keys: a struct, each member naturally aligned (kernel and api: u32 typedefs,
	 * the others u64), padding zeroed */
	int key_types[OL_MAX_KEYS];
	uint32_t key_off[OL_MAX_KEYS];
	char key_names[OL_MAX_KEYS][16];
	uint32_t key_size;
	uint32_t type;           /* BPF_MAP_TYPE_ARRAY or _HASH */
	uint32_t max_entries;
	uint64_t lmin, lmax, lstep;   /* A_LHIST */
	size_t pos;              /* first use */
};

struct ol_stmt {
	size_t map;              /* index into ol_program.maps */
	struct ol_expr *keys[OL_MAX_KEYS];
	size_t nkeys;
	struct ol_expr *arg;     /* sum/hist/lhist */
	size_t pos;
};

struct ol_probe {
	char section[128];
	enum gp_attach_kind attach;
	struct ol_expr *filter;  /* or NULL */
	struct ol_stmt stmts[OL_MAX_STMTS];
	size_t nstmts;
};

struct ol_program {
	struct ol_probe probes[OL_MAX_PROBES];
	size_t nprobes;
	struct ol_map maps[OL_MAX_MAPS];
	size_t nmaps;
	/* every expression node, freed together */
	struct ol_expr **nodes;
	size_t nnodes, capnodes;
};

/* Parse and check src. Returns 0 or -EINVAL/-ENOMEM with one line in err. */
int ol_parse(const char *src, struct ol_program *p, char *err, size_t errlen);
void ol_program_free(struct ol_program *p);

/* ---- code (oneliner_gen.c) --------------------------------------------------------------- */
/* One map reference per ld_imm64: instruction index and map index, for the ELF relocations. */
struct ol_reloc {
	size_t insn;
	size_t map;
};

struct ol_code {
	struct bpf_insn *insns;
	size_t n, cap;
	struct ol_reloc *relocs;
	size_t nrelocs, caprelocs;
};

/* The instructions of probe i. Returns 0 or -ENOMEM / -E2BIG with one line in err. */
int ol_gen_probe(const struct ol_program *p, size_t i, struct ol_code *c, char *err, size_t errlen);
void ol_code_free(struct ol_code *c);

/* ---- object (oneliner_elf.c) ------------------------------------------------------------- */
/* The ELF image: one section per distinct attach point (its programs ol_<n> global functions),
 * .maps with BTF definitions, .BTF, license. */
int ol_write_elf(const struct ol_program *p, const struct ol_code *codes, void **out, size_t *size,
		 char *err, size_t errlen);

#endif
