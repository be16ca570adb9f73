/* What a file given to a gpuprobe command is, from its first bytes: one sniffer for every
 * command, so that each says in one line what it got when it cannot read it. */
#ifndef GPUPROBE_CLI_FILE_KIND_H
#define GPUPROBE_CLI_FILE_KIND_H

#include <stddef.h>

enum cli_file_kind {
	CLI_FILE_UNREADABLE,   /* cannot be opened or read (the reason is in the description) */
	CLI_FILE_UNKNOWN,      /* none of the below */
	CLI_FILE_EMPTY,
	CLI_FILE_HOST_ELF,     /* executable, shared library or object file (may hold fatbins) */
	CLI_FILE_ARCHIVE,      /* static library (ar; may hold fatbins) */
	CLI_FILE_FATBIN,       /* fatbin container or wrapper */
	CLI_FILE_CUBIN,        /* ELF for EM_CUDA */
	CLI_FILE_PTX,
	CLI_FILE_BPF,          /* ELF for EM_BPF: a probe object */
};

/* Sets of kinds a command reads. */
#define CLI_READS(k) (1u << (k))
#define CLI_READS_BINARIES (CLI_READS(CLI_FILE_HOST_ELF) | CLI_READS(CLI_FILE_ARCHIVE) | CLI_READS(CLI_FILE_FATBIN))
#define CLI_READS_GPU_CODE (CLI_READS_BINARIES | CLI_READS(CLI_FILE_CUBIN) | CLI_READS(CLI_FILE_PTX))

/* The kind of path; desc (cap bytes) gets a short description: "an x86-64 executable", "a BPF
 * object", "a PTX file", "an empty file"; for an unreadable one the reason ("No such file or directory"). */
enum cli_file_kind cli_file_kind(const char *path, char *desc, size_t cap);

/* When path's kind is not in `reads` (CLI_READS bits): prints one line, "gpuprobe: CMD: PATH is
 * DESC, not WANTS[; HINT]", and returns 2 (the exit status for bad usage); else 0. *kind gets the
 * kind either way (may be NULL). */
int cli_expect_kind(const char *cmd, const char *path, unsigned reads, const char *wants,
		    enum cli_file_kind *kind);

/* --target's test: want NULL keeps all; sm_90 keeps sm_90, sm_90a and compute_90; sm_90a only
 * sm_90a. */
int cli_target_kept(const char *want, const char *target);

#endif
