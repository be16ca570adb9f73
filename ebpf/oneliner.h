/* One-liners: gpuprobe run -e 'gpu/entry/vecAdd* { @[kernel] = count(); }', a small language for the
 * common probes (docs/oneliners.md has the grammar), compiled by gpuprobe itself into an ordinary
 * BPF ELF object: programs in their attach points' sections, BTF-defined maps whose key types
 * (gp_kernel_id_t, gp_api_id_t, gp_log2_key_t, gp_lhist_key_t) decide how they print, and the
 * counting idiom of gp_count() (lookup, BPF_NOEXIST insert of 0, atomic add), so every map stays
 * on the per-SM sharded fast path. The object is verified and attached as any -p object.
 *
 * Files, one job each: oneliner_lex.c (tokens), oneliner_parse.c (syntax tree and the checks
 * of names and types), oneliner_gen.c (eBPF instructions), oneliner_elf.c (BTF and the ELF
 * image), oneliner.c (these entry points). */
#ifndef GPUPROBE_EBPF_ONELINER_H
#define GPUPROBE_EBPF_ONELINER_H

#include <stddef.h>
#include <stdio.h>

/* Compile src into a BPF ELF image (*elf, *size: malloc'd). On a mistake in src returns -EINVAL
 * with one line in err: "column N: expected X, got Y" ("line L, column N: ..." when src has
 * several lines); other failures a negative errno with one line. */
int gp_oneliner_compile(const char *src, void **elf, size_t *size, char *err, size_t errlen);

/* Print what src compiles to (bpftrace's -d): each map (name, type, key and value, how it
 * prints) and each program (section, then its instructions as the verifier's log shows them,
 * map references resolved). Returns 0 or as gp_oneliner_compile. */
int gp_oneliner_dump(const char *src, FILE *out, char *err, size_t errlen);

#endif
