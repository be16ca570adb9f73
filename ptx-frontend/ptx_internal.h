/* Shared by the PTX lexer, parser and printer; not part of the public IR API. */
#ifndef GPUPROBE_PTX_INTERNAL_H
#define GPUPROBE_PTX_INTERNAL_H

#include "ptx-frontend/ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- lexer ---- */

enum ptx_tok_kind {
	TK_EOF,
	TK_IDENT,   /* foo, %r1, $L__BB0_1, _ */
	TK_DOT,     /* .global, .u32, .L1::evict_last, .shared::cluster */
	TK_INT,     /* 42, 0x1F, 017, 7U */
	TK_FLOAT,   /* 0f3F800000, 0d3FF0000000000000, 1.5, 1e-3 */
	TK_STRING,  /* "..." including the quotes */
	TK_PUNCT,   /* one character: , ; : { } ( ) [ ] < > + - ! @ | = ... */
	TK_ERROR,   /* text holds the message */
};

struct ptx_tok {
	enum ptx_tok_kind kind;
	const char *p;        /* start in the source */
	uint32_t len;
	uint32_t line, col;
	bool nl_before;       /* a newline separates it from the previous token */
	bool space_before;    /* whitespace or a comment separates it from the previous token */
};

struct ptx_lexer {
	const char *src, *cur, *end;
	const char *line_start;
	uint32_t line;
	const char *error;    /* set with a TK_ERROR token */
};

void ptx_lex_init(struct ptx_lexer *lx, const char *src, size_t len);
void ptx_lex_next(struct ptx_lexer *lx, struct ptx_tok *t);
/* The current token was '{': skip raw text through its matching '}' (comments and strings
 * respected, lines counted) without making tokens. Returns the end of the '}', NULL when the
 * text ends first. Fast path for the big .section .debug_* blocks of -G modules. */
const char *ptx_lex_skip_block(struct ptx_lexer *lx);
/* End of the trailing trivia after position p: past the newline when only blanks and comments
 * follow p on its line, else p itself. */
const char *ptx_lex_trailing_end(const char *p, const char *end);

/* ---- printer ---- */

struct ptx_outbuf {
	char *p;
	size_t len, cap;
};

void ptx_ob_free(struct ptx_outbuf *b);
/* Canonical text of one node, appended to b. */
void ptx_print_stmt_canonical(struct ptx_outbuf *b, const ir_stmt *s);
void ptx_print_top_canonical(struct ptx_outbuf *b, const ir_top *t);
/* Fingerprints of a node's fields: a parsed node is printed from its source text only while its
 * fingerprint still matches the one taken at parse time. */
uint32_t ptx_stmt_fingerprint(const ir_stmt *s);
uint32_t ptx_top_fingerprint(const ir_top *t);

/* ir.c: let the module's next arena chunk hold at least bytes (the parser, which knows the
 * text's size: one big chunk instead of a geometric series of fresh ones, each faulted in). */
void ir_arena_expect(ir_module *m, size_t bytes);

#endif
