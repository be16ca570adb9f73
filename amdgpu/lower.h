/* Internal to amdgpu/: the state of one lowering (IR -> LLVM IR).
 *
 * Every PTX register is an alloca of its width (predicates i1); instructions load operands and
 * store results, and LLVM's SROA/mem2reg makes SSA of it, so PTX's unstructured control flow needs
 * nothing more than one basic block per label. Addresses are integers, as in PTX: an access turns
 * its address into a pointer of its state space (inttoptr), and cvta is an addrspacecast. The
 * address spaces are the same numbers on both targets: 0 generic (flat), 1 global, 3 shared (LDS),
 * 4 constant, 5 local (private). */
#ifndef GPUPROBE_AMDGPU_LOWER_H
#define GPUPROBE_AMDGPU_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "amdgpu/amdgpu.h"
#include "ptx-frontend/ir.h"

enum { AS_GENERIC = 0, AS_GLOBAL = 1, AS_SHARED = 3, AS_CONST = 4, AS_LOCAL = 5 };

/* A PTX scalar type: kind 'u', 's', 'b', 'f' or 'p' (predicate), width in bits. */
typedef struct atype {
	char k;
	unsigned bits;
} atype;
static inline atype AT(char k, unsigned bits) { return (atype){k, bits}; }
atype al_type_parse(const char *s);     /* ".u32" -> {'u',32}; unknown: bits 0 */

struct al_var {          /* a register, or a variable (param, local, shared, global, const) */
	const char *name;
	atype t;
	bool is_reg;
	int space;           /* variables: AS_* (params: AS_LOCAL, they live in allocas) */
	bool is_param;
	LLVMValueRef slot;   /* register: its alloca (made at first use); variable: its pointer */
	LLVMTypeRef slot_ty;
	const ir_decl *decl;     /* a function-scope .param: its declaration */
	struct al_var *shadow;   /* the declaration of the same name this one hides */
	unsigned depth;          /* block depth of the declaration (0: module) */
};

struct al_func {
	const ir_func *f;
	LLVMValueRef fn;
	LLVMTypeRef fty;
	LLVMTypeRef ret_ty;      /* void, one type, or a struct of the return parameters' types */
	LLVMTypeRef param_ty[64];
};

struct ir_skip;

typedef struct al {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b, ab;    /* ab: allocas, at the end of the entry block */
	enum amdgpu_target target;
	const struct amdgpu_options *opts;
	const ir_module *m;
	char *err;
	size_t errlen;
	int failed;
	const struct ir_skip *skip; /* functions left out of this pass (ptx-frontend/ir_skip.h) */
	const ir_stmt *cur;
	bool wave64;

	/* names: one open hash over registers and variables, with shadowing by block */
	struct al_var **tab;
	size_t cap, n;
	struct al_var **stack;   /* declarations in order, popped at '}' */
	size_t nstack, capstack;
	unsigned depth;

	struct al_func *funcs;
	size_t nfuncs;
	struct { LLVMValueRef g; const ir_decl *d; } *pending;   /* initializers holding addresses */
	size_t npending;
	unsigned uniq;

	/* function scope */
	struct al_func *fn;
	LLVMBasicBlockRef entry;
	struct { const char *name; LLVMBasicBlockRef bb; } *labels;
	size_t nlabels;
	LLVMValueRef carry;      /* i1 alloca: the carry flag of add.cc chains */
	LLVMValueRef arena, arena_top; /* alloca on amdgcn: a private arena and its bump offset */
	LLVMValueRef *ret_slots; /* the function's return parameters */
} al;

int al_fail(al *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int al_unsupported(al *c, const ir_insn *in, const char *why);

/* Types and constants. */
LLVMTypeRef al_ty(al *c, atype t);            /* i1, iN, half? no: f16 lives in i16; float, double */
LLVMTypeRef al_ity(al *c, unsigned bits);
LLVMValueRef al_ci(al *c, unsigned bits, uint64_t v);
LLVMValueRef al_ptr_ty_v(al *c, int as);
LLVMTypeRef al_ptr(al *c, int as);

/* Operands. */
struct al_var *al_lookup(al *c, const char *name);
LLVMValueRef al_read(al *c, const ir_operand *op, atype want);   /* NULL on error (reported) */
int al_write(al *c, const ir_operand *op, atype t, LLVMValueRef v);
LLVMValueRef al_read_pred(al *c, const ir_operand *op);
/* The pointer an address operand designates, for an access in space (IR_SPACE_*). */
LLVMValueRef al_address(al *c, const ir_operand *op, enum ir_space sp);
LLVMValueRef al_to_ptr(al *c, LLVMValueRef addr_i64, int as);
int al_space_as(enum ir_space sp);
/* Value conversions between PTX types of the same or different widths (bits, ext, trunc). */
LLVMValueRef al_bits(al *c, LLVMValueRef v, atype from, atype to);

atype al_insn_type(const ir_insn *in);            /* the last type modifier */
atype al_insn_type_n(const ir_insn *in, int n);   /* the n-th type modifier */
bool al_mod(const ir_insn *in, const char *mod);

LLVMTypeRef al_param_type(al *c, const ir_decl *d);   /* a .param's LLVM type (scalar or byte array) */
LLVMValueRef al_call(al *c, const char *name, LLVMTypeRef ret, unsigned n, LLVMValueRef *args);
LLVMValueRef al_intr(al *c, const char *name, LLVMTypeRef *ovl, unsigned novl, unsigned n, LLVMValueRef *args);
void al_ensure_block(al *c);
LLVMBasicBlockRef al_new_block(al *c, const char *name);
void al_goto(al *c, LLVMBasicBlockRef bb);       /* branch (if open) and continue there */

/* Families: 1 handled, 0 not this family's, -1 error. */
int al_int(al *c, const ir_insn *in);
int al_float(al *c, const ir_insn *in);
int al_convert(al *c, const ir_insn *in);
int al_memory(al *c, const ir_insn *in);
int al_control(al *c, const ir_insn *in);
int al_warp(al *c, const ir_insn *in);
int al_extra(al *c, const ir_insn *in);   /* bf16/tf32 cvt, dp4a, f16x2 compares, cp.async, alloca */
int al_async(al *c, const ir_insn *in);   /* mbarrier, cp.async.bulk (lower_async.c; through al_extra) */
int al_texture(al *c, const ir_insn *in); /* tex, tld4, txq, suq, sust, suld (lower_tex.c) */
int al_mma(al *c, const ir_insn *in);     /* wmma, mma.sync, ldmatrix, stmatrix (lower_mma.c) */

/* Target-specific (lower_target.c). */
bool al_generic(void);   /* GPUPROBE_LLVM_GENERIC: amdgcn's target-independent lowerings on nvptx too */
int al_special_reg(al *c, const char *name, LLVMValueRef *v, atype *t); /* 1 not special */
LLVMValueRef al_linear_tid(al *c);
LLVMValueRef al_lane(al *c);             /* i32 0..31 */
void al_barrier(al *c);
int al_cluster(al *c, const ir_insn *in);   /* barrier.cluster, mapa: 1 done, -1 error */
/* nvptx: in as inline PTX, its first nout operands written (lower_native.c): 1 done, -1 error */
int al_inline_ptx(al *c, const ir_insn *in, unsigned nout);
void al_fence(al *c, int scope);        /* 0 cta, 1 gpu, 2 sys */
void al_mbar_wait(al *c);               /* before an mbarrier's test_wait/try_wait tests */
/* A directed-rounding float op (rnd 'z','m','p'; op "add","sub","mul","div","fma","sqrt","rcp"),
 * NULL when the target has none (caller reports). */
LLVMValueRef al_round_op(al *c, const char *op, char rnd, atype t, LLVMValueRef *a);
/* sin/cos/lg2/ex2 .approx of a[0] (type ft, bits wide; ftz: the .ftz form) for the target */
LLVMValueRef al_approx(al *c, const char *op, unsigned bits, bool ftz, LLVMTypeRef ft, LLVMValueRef *a);
/* Directed rounding from round-to-nearest's result r: gt/lt say r is above/below the exact value
 * (i1), xneg that the exact value is negative; r moves one step where rnd ('z','m','p') wants. */
LLVMValueRef al_directed_fix(al *c, LLVMValueRef r, char rnd, LLVMValueRef gt, LLVMValueRef lt, LLVMValueRef xneg);

#endif
