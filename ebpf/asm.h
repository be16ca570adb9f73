/* A small assembler for the bpf_conformance text syntax (uBPF-style assembly), and the reader of
 * its test files ("-- asm", "-- mem" hex bytes, "-- result", "-- error").
 * Corpus convention: r1 = pointer to mem (0 without mem), r2 = mem length, result = r0. */
#ifndef GPUPROBE_EBPF_ASM_H
#define GPUPROBE_EBPF_ASM_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

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
};

/* Read one conformance file. Returns 0, or a negative errno with one line in err. */
int bpf_conformance_read(const char *path, struct bpf_conformance_case *c, char *err, size_t errlen);
/* Same, from text already in memory (NUL-terminated). */
int bpf_conformance_parse(const char *text, struct bpf_conformance_case *c, char *err, size_t errlen);
void bpf_conformance_free(struct bpf_conformance_case *c);

#endif
