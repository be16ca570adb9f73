/* The IR every stage meets on: the PTX frontend produces it, ebpf/ lowers probes into it, the
 * backends (nvidia/ prints it back to PTX, spirv/ lowers it further) consume it.
 *
 * It is faithful first: a parsed module printed again must give ptxas a byte-identical cubin, so
 * every construct is kept, and anything the structured part does not model survives as raw text.
 * Instructions are generic (opcode, modifiers in written order, guard, operands); what an
 * instruction means comes from the semantic table (ir_insn_info), looked up by opcode.
 *
 * Memory: one arena per module owns every node and string. Nothing is freed on its own;
 * ir_module_free releases everything at once. Nodes are plain structs so that passes can walk
 * them directly; build new nodes with the constructors below so they land in the right arena. */
#ifndef GPUPROBE_IR_H
#define GPUPROBE_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ir_module ir_module;
typedef struct ir_func ir_func;
typedef struct ir_stmt ir_stmt;
typedef struct ir_insn ir_insn;
typedef struct ir_operand ir_operand;
typedef struct ir_decl ir_decl;
typedef struct ir_top ir_top;
typedef struct ir_insn_info ir_insn_info;

/* ---- operands ------------------------------------------------------------------------- */

enum ir_operand_kind {
	IR_OPND_REG,       /* %r1, %tid.x, %p3: name holds the full spelling */
	IR_OPND_SYMBOL,    /* a label, variable, function or prototype name; `_` sink too */
	IR_OPND_INT,       /* integer literal: ival, and text as written (hex, octal, U suffix) */
	IR_OPND_FLOAT,     /* float literal: text as written (0f3F800000, 0d..., 1.5) */
	IR_OPND_ADDR,      /* [base+offset]: base (register or symbol, or NULL), ival = offset */
	IR_OPND_VEC,       /* {a, b, c, d}: elems */
	IR_OPND_LIST,      /* (a, b) of call: elems */
	IR_OPND_PAIR,      /* a|b (setp, shfl): elems[0], elems[1] */
	IR_OPND_RAW,       /* anything else, printed exactly as text */
};

struct ir_operand {
	enum ir_operand_kind kind;
	const char *name;       /* REG, SYMBOL: the name; ADDR: base name or NULL; RAW: the text */
	const char *text;       /* INT, FLOAT: literal as written (printed verbatim when set) */
	int64_t ival;           /* INT: value; ADDR: byte offset added to base */
	bool neg;               /* `!p` (predicate negation) or unary `-` written before a REG */
	ir_operand *elems;      /* VEC, LIST, PAIR; ADDR with a vector part (tex [t, {x,y}]) */
	unsigned nelems;
};

/* ---- declarations (.reg, .global, .shared, .param, ...) -------------------------------- */

struct ir_decl {
	const char *linkage;    /* ".visible", ".extern", ".weak", ".common" or NULL */
	const char *space;      /* ".reg", ".local", ".shared", ".global", ".const", ".param", ".tex", ... */
	const char **attrs;     /* in written order, each with its dot: ".align 8" is ".align" then "8" kept in align */
	unsigned nattrs;
	unsigned align;         /* 0 when no .align */
	const char *vec;        /* ".v2", ".v4" or NULL */
	const char *type;       /* ".b32", ".u64", ".f32", ".pred", ".texref", ... */
	const char *name;       /* "%r" for a parameterized declaration, else the full name */
	int count;              /* %r<5>: 5; -1 (or 0) when not parameterized: <N> is printed for N > 0 */
	const char *dims;       /* array dimensions exactly as written, "[16][4]" or "[]", or NULL */
	const char *init;       /* initializer text after '=' exactly as written, or NULL */
	const char *ptr_attrs;  /* kernel param ".ptr .global .align 8" etc. as written, or NULL */
};

/* ---- instructions ----------------------------------------------------------------------- */

struct ir_insn {
	const char *opcode;     /* "ld", "add", "setp", "bra", ... */
	const char **mods;      /* every ".xxx" after the opcode, with the dot, in written order */
	unsigned nmods;
	const char *guard;      /* "%p1" for @%p1, NULL when unguarded */
	bool guard_neg;         /* @!%p1 */
	ir_operand *ops;
	unsigned nops;
	const ir_insn_info *info; /* semantic table entry, NULL for an instruction it does not know */
};

enum ir_stmt_kind {
	IR_STMT_INSN,
	IR_STMT_LABEL,          /* text = label name */
	IR_STMT_DECL,           /* decl: .reg/.local/.shared/.param ... inside a body */
	IR_STMT_DIRECTIVE,      /* text = a whole directive as written: ".loc 1 5 3", ".pragma \"nounroll\";" */
	IR_STMT_BLOCK_OPEN,     /* { */
	IR_STMT_BLOCK_CLOSE,    /* } */
};

struct ir_stmt {
	enum ir_stmt_kind kind;
	ir_stmt *prev, *next;
	uint32_t line, col;     /* where it was parsed (0 for generated statements) */
	uint32_t src_line;      /* source line from the latest .loc before it, 0 if none */
	uint16_t src_file;      /* .file index from that .loc */
	bool generated;         /* inserted by a pass (probes), not from the application */
	union {
		ir_insn insn;
		ir_decl decl;
		const char *text;
	};
	/* Source text of a parsed statement, with the blank lines and comments around it. ptxas
	 * embeds the PTX text itself in the cubin of a module with .loc lines, so the printer writes
	 * this text verbatim while the statement still matches src_hash (a fingerprint of its
	 * fields taken at parse time, strings by address): edit a parsed statement in place freely
	 * (new operand values, other strings, other arrays), it is then printed from its fields.
	 * Only writing into the characters of a parsed string goes unnoticed: don't. NULL for
	 * generated statements. */
	const char *src;
	uint32_t src_len;
	uint32_t src_hash;
};

/* ---- functions and modules ------------------------------------------------------------- */

struct ir_func {
	bool is_entry;          /* .entry (kernel) vs .func */
	const char *linkage;    /* ".visible", ".extern", ".weak" or NULL */
	const char *name;
	ir_decl *rets;          /* .func (.param .b32 r) f(...): the return parameters */
	unsigned nrets;
	bool has_rets;          /* "()" written even when empty */
	ir_decl *params;
	unsigned nparams;
	bool has_params;
	const char **perf;      /* performance directives after the signature, each as written:
	                         * ".maxntid 256, 1, 1", ".noreturn", ".pragma \"nounroll\";" */
	unsigned nperf;
	bool has_body;          /* false for a prototype ending in ';' */
	bool cold;              /* generated code that runs rarely (a map insert): kept out of line
	                           by ptx-frontend/inline.c wherever it is called */
	ir_stmt *first, *last;  /* body statements, outer braces excluded */
	const char *end_src;    /* parsed: the closing '}' with the text around it, or NULL */
	uint32_t end_len;
};

enum ir_top_kind {
	IR_TOP_DIRECTIVE,       /* text as written: ".version 8.8", ".target sm_90", ".file 1 \"a.cu\"",
	                         * a whole ".section .debug_info { ... }" */
	IR_TOP_DECL,            /* module-scope variable */
	IR_TOP_FUNC,
};

struct ir_top {
	enum ir_top_kind kind;
	ir_top *prev, *next;
	uint32_t line;
	bool generated;
	union {
		const char *text;
		ir_decl decl;
		ir_func func;
	};
	/* As for ir_stmt: source text (for a function, its header through the opening '{' or the
	 * closing ';'), printed verbatim while the node matches src_hash. */
	const char *src;
	uint32_t src_len;
	uint32_t src_hash;
};

struct ir_module {
	ir_top *first, *last;
	const char *version;    /* "8.8" from .version, or NULL */
	const char *target;     /* "sm_90" (first target), or NULL */
	unsigned address_size;  /* 64 or 32; 0 when absent */
	struct ir_arena *arena;
	const char *tail_src;   /* parsed: comments and blank lines after the last node */
	uint32_t tail_len;
};

/* ---- construction and editing ----------------------------------------------------------- */

ir_module *ir_module_new(void);
void ir_module_free(ir_module *m);
void *ir_alloc(ir_module *m, size_t size);                 /* zeroed; aborts only on OOM */
const char *ir_strdup(ir_module *m, const char *s);
const char *ir_strndup(ir_module *m, const char *s, size_t n);
const char *ir_strfmt(ir_module *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

ir_top *ir_top_new(ir_module *m, enum ir_top_kind kind);
void ir_top_append(ir_module *m, ir_top *t);
void ir_top_insert_before(ir_module *m, ir_top *pos, ir_top *t);   /* pos NULL: append */
void ir_top_remove(ir_module *m, ir_top *t);   /* unlinks t from m's list; t stays allocated */
ir_top *ir_module_first_func(const ir_module *m);                  /* first IR_TOP_FUNC or NULL */
ir_func *ir_module_find_func(const ir_module *m, const char *name);

ir_stmt *ir_stmt_new(ir_module *m, enum ir_stmt_kind kind);
void ir_stmt_append(ir_func *f, ir_stmt *s);
void ir_stmt_insert_before(ir_func *f, ir_stmt *pos, ir_stmt *s);  /* pos NULL: append */
void ir_stmt_insert_after(ir_func *f, ir_stmt *pos, ir_stmt *s);   /* pos NULL: prepend */
void ir_stmt_remove(ir_func *f, ir_stmt *s);

/* Operands. */
ir_operand ir_reg(ir_module *m, const char *name);
ir_operand ir_sym(ir_module *m, const char *name);
ir_operand ir_int(int64_t v);
ir_operand ir_addr(ir_module *m, const char *base, int64_t offset);

/* A generated instruction: opcode, modifiers as one string (".global.u32", may be ""), and
 * operands. Example: ir_insn_new(m, "add", ".s64", 3, (ir_operand[]){ir_reg(m,"%rd1"), ...}). */
ir_stmt *ir_insn_new(ir_module *m, const char *opcode, const char *mods, unsigned nops,
		     const ir_operand *ops);
ir_stmt *ir_label_new(ir_module *m, const char *name);
/* The same from one line of PTX-like text ("@!%p1 add.u64 %rd1, %rd2, 8;", "ld.u64 %rd3, [%rd4+8]",
 * "call.uni (r), f, (a, b)"): guard, opcode, modifiers, and operands of the forms generated code
 * uses (%reg, integer, symbol, [base], [base+off], [imm], lists). NULL when the line is not of
 * that form (a bug in the generator) or memory runs out. ptx-frontend/ir_text.c. */
ir_stmt *ir_insn_from_text(ir_module *m, const char *text);
/* A declaration statement: ir_reg_decl_new(m, ".b64", "%gp_r", 11) is ".reg .b64 %gp_r<11>;";
 * count -1 declares one register named exactly name. */
ir_stmt *ir_reg_decl_new(ir_module *m, const char *type, const char *name, int count);

/* ---- the semantic table ----------------------------------------------------------------- */

enum ir_insn_flags {
	IR_F_BRANCH   = 1u << 0,  /* bra, brx.idx */
	IR_F_CALL     = 1u << 1,
	IR_F_RET      = 1u << 2,  /* ret */
	IR_F_EXIT     = 1u << 3,  /* exit, trap */
	IR_F_BARRIER  = 1u << 4,  /* bar, barrier, bar.warp.sync */
	IR_F_LOAD     = 1u << 5,
	IR_F_STORE    = 1u << 6,
	IR_F_ATOMIC   = 1u << 7,  /* atom, red: read-modify-write */
	IR_F_FENCE    = 1u << 8,  /* membar, fence */
	IR_F_WARP     = 1u << 9,  /* shfl, vote, match, redux, activemask: warp-collective */
	IR_F_TENSOR   = 1u << 10, /* mma, wgmma, ldmatrix, ...: needs a tensor unit */
	IR_F_ASYNC    = 1u << 11, /* cp.async, cp.async.bulk */
	IR_F_TEX      = 1u << 12, /* tex, tld4, suld, sust, txq, suq */
};

struct ir_insn_info {
	const char *opcode;
	unsigned flags;
	int ndst;                 /* leading operands written (0 for st, bra; 1 for most) */
};

/* Look up an opcode in the table; NULL when unknown. Dotted entries exist for instructions
 * whose meaning depends on their first modifiers: "cp.async.bulk", "wmma.load", "bar.red". */
const ir_insn_info *ir_insn_info_lookup(const char *opcode);
/* Enough operands: the common instructions' least counts as the PTX ISA writes them (shfl 4, fma
 * 4, st 2, ...); any other that writes a destination has it and a source (activemask and
 * stacksave only the destination). The parser takes any count; the code generators, which index
 * operands, ask this first. */
bool ir_insn_operands_ok(const ir_insn *in);
/* The entry for an instruction: the longest entry spelled by its opcode and leading modifiers
 * (cp + .async.bulk.tensor gives "cp.async.bulk.tensor"). The parser and ir_insn_new set
 * insn->info with this. */
const ir_insn_info *ir_insn_info_for(const ir_insn *insn);

enum ir_space {
	IR_SPACE_GENERIC, IR_SPACE_GLOBAL, IR_SPACE_SHARED, IR_SPACE_LOCAL,
	IR_SPACE_CONST, IR_SPACE_PARAM, IR_SPACE_OTHER,
};

enum ir_access_dir { IR_ACCESS_READ = 1, IR_ACCESS_WRITE = 2, IR_ACCESS_RMW = 3 };

struct ir_mem_access {
	enum ir_space space;
	enum ir_access_dir dir;
	unsigned size;            /* bytes moved by one thread (vector width included) */
	int addr_op;              /* index of the address operand in insn->ops */
	/* Copies (cp.async, cp.async.bulk) move data between two spaces: the access above is the
	 * read of the source (or the global write of a store-direction bulk copy); the other end: */
	enum ir_space dst_space;
	int dst_addr_op;          /* -1 when the instruction touches one space only */
};

/* For a memory instruction (ld, st, atom, red, cp.async, ldmatrix, ...), fill *out and return 1;
 * return 0 for any other instruction. */
int ir_insn_mem_access(const ir_insn *insn, struct ir_mem_access *out);

/* True when insn has modifier mod (with its dot), e.g. ir_insn_has_mod(i, ".global"). */
bool ir_insn_has_mod(const ir_insn *insn, const char *mod);
/* The blocks per cluster a kernel requires (`.reqnctapercluster X, Y, Z`: X*Y*Z), 1 without it:
 * a code generator whose clusters are one block leaves out a kernel that requires more. */
unsigned ir_func_required_cluster(const ir_func *f);

/* ---- text ------------------------------------------------------------------------------- */

/* Parse PTX text. On error returns NULL and writes "LINE:COL: message" into err.
 * Trailing NULs (PTX from a fatbin) end the text. The module keeps its own copy of the text
 * (parsed nodes point into it). Thread-safe: no global state. */
ir_module *ptx_parse(const char *text, size_t len, char *err, size_t errlen);
/* Print as PTX. Returns a malloc'd NUL-terminated string (caller frees), length in *len. */
char *ptx_print(const ir_module *m, size_t *len);
/* Print every node from its structured form, ignoring the source text of parsed nodes: clean,
 * uniformly formatted PTX (ptxas gives the same code; debug sections of modules with .loc then
 * differ, since they embed the PTX text). */
char *ptx_print_canonical(const ir_module *m, size_t *len);

#endif
