/* A small assembler for the bpf_conformance text syntax (uBPF-style assembly), and the reader of
 * its test files ("-- asm", "-- mem" hex bytes, "-- result", "-- error").
 * Corpus convention: r1 = pointer to mem (0 without mem), r2 = mem length, result = r0. */
#ifndef GPUPROBE_EBPF_ASM_H
#define GPUPROBE_EBPF_ASM_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

/* Newer than Debian 12's <linux/bpf.h> (Linux 6.1): sign-extending loads (BPF_LDX | BPF_MEMSX). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

/* Syntax: one instruction per line, '#' starts a comment, "name:" defines a label.
 *   add/sub/mul/div/sdiv/mod/smod/or/and/xor/lsh/rsh/arsh/mov[32|64] %rD, %rS|imm
 *   neg[32|64] %rD; movsx{8,16}{32,64} movsx3264 %rD, %rS; be/le{16,32,64}, bswap{16,32,64} (alias swap*) %rD
 *   lddw %rD, imm64; ldx{b,h,w,dw} ldxs{b,h,w} %rD, [%rS+off]; stx{b,h,w,dw} [%rD+off], %rS;
 *   st{b,h,w,dw} [%rD+off], imm; lock [fetch] {add,or,and,xor}[32] [%rD+off], %rS;
 *   lock {xchg,cmpxchg}[32] [%rD+off], %rS;
 *   ja label|+off; ja32 label|+off (offset in imm); j{eq,ne,gt,ge,lt,le,sgt,sge,slt,sle,set}[32]
 *   %rD, %rS|imm, label|+off; call imm (helper); call local label (BPF_PSEUDO_CALL, imm = pc-relative);
 *   call %rN (callx: opcode 0x8d, register in dst_reg); exit.
 * A jump to an undefined label "exit" goes to the next exit instruction (the corpus uses it).
 * 32-bit immediates: decimal in [-2^31, 2^31), hex up to 0xffffffff (stored as its bit pattern). */
/* Assemble text into malloc'd instructions (*out, *n). On error returns -EINVAL and writes one
 * line "line N: message" into err; *out is then NULL. */
int bpf_asm(const char *text, struct bpf_insn **out, size_t *n, char *err, size_t errlen);

struct bpf_conformance_case {
	char *asm_text;     /* the "-- asm" section */
	uint8_t *mem;       /* the "-- mem" bytes, or NULL */
	size_t mem_len;
	int has_result;     /* a "-- result" section was present */
	uint64_t result;
	char *error;        /* the "-- error" text, or NULL */
	uint8_t *raw;       /* the "-- raw" instruction bytes (8 per instruction), or NULL */
	size_t raw_len;
};

/* Read one conformance file. Returns 0, or a negative errno with one line in err. */
int bpf_conformance_read(const char *path, struct bpf_conformance_case *c, char *err, size_t errlen);
/* Same, from text already in memory (NUL-terminated). */
int bpf_conformance_parse(const char *text, struct bpf_conformance_case *c, char *err, size_t errlen);
void bpf_conformance_free(struct bpf_conformance_case *c);

#endif
