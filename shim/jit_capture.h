/* PTX kept for cubins that a JIT compiler made at run time (issue 16): Triton and XLA run ptxas
 * (gpuprobe-ptxas records for them), NVRTC and nvJitLink compile in-process (build/lib's
 * libnvrtc.so.13 and libnvJitLink.so.13 record for them). Each record is the input PTX with the
 * options that decide its code, keyed by the SHA-256 of the cubin that came out: when the shim
 * sees that very cubin loaded (an image with no PTX), it instruments the recorded PTX instead.
 *
 * Records live in the cubin cache's directory (cubin_cache.h: GPUPROBE_CACHE_DIR, else
 * $XDG_CACHE_HOME/gpuprobe, else ~/.cache/gpuprobe; 0700, the user's, writable by nobody else) as
 * HEX.jitptx (HEX: the cubin's SHA-256), mode 0600, written to a private temporary file and
 * renamed. A file is a few text lines, a blank line, then the PTX:
 *
 *   gpuprobe jit ptx 1
 *   source ptxas                (ptxas, nvrtc, nvJitLink)
 *   arch sm_90a                 (the target the cubin is for; "" when not given)
 *   opt 3                       (-O level; -1 when not given: ptxas's default is 3)
 *   maxrregcount 0              (0: no limit given)
 *   lineinfo 0
 *   debug 0                     (-g / --device-debug)
 *   relocatable 0               (-c / --compile-only: the cubin is relocatable)
 *   options -lineinfo --gpu-name sm_90a ...   (the whole command line, for people)
 *   ptx_bytes N
 *   ptx_sha256 HEX              (of the PTX: a torn or altered record is ignored)
 *
 * GPUPROBE_CACHE=0 does not apply: without records these kernels get no probes at all.
 * Nothing here prints: callers decide (a recording failure never changes a compiler's output). */
#ifndef GPUPROBE_SHIM_JIT_CAPTURE_H
#define GPUPROBE_SHIM_JIT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

struct jit_record {
	char source[16];
	char arch[32];
	int opt;              /* -1: not given */
	int maxrregcount;     /* 0: not given */
	int lineinfo, debug, relocatable;
	char *options;        /* malloc'd, one line; NULL when none */
	char *ptx;            /* malloc'd, NUL after ptx_len bytes */
	size_t ptx_len;
};

/* SHA-256 of a cubin's bytes. */
void jit_capture_hash(const void *cubin, size_t size, uint8_t out[32]);

/* Store r (ptx, options copied) under cubin's hash. 0, or -errno with a reason in why. */
int jit_capture_put(const uint8_t hash[32], const struct jit_record *r, char *why, size_t whylen);

/* The record of a cubin: 0 and *r filled (free with jit_record_free); -ENOENT when none;
 * -EBADMSG for a record that does not check out; other -errno. path (may be NULL) gets the
 * record's file name. */
int jit_capture_get(const uint8_t hash[32], struct jit_record *r, char *path, size_t pathlen);

void jit_record_free(struct jit_record *r);

/* Parse a ptxas command line (argv[1..argc-1]) for what decides code: fills r's arch, opt,
 * maxrregcount, lineinfo, debug, relocatable and options (malloc'd); *input gets the PTX file
 * argument (NULL when none: --input-as-string gives *ptx_string instead), *output the -o file
 * ("elf.o", ptxas's default, when none). 0, or -1 for a line we cannot follow (nothing to
 * record). */
int jit_capture_parse_ptxas(int argc, char *const argv[], struct jit_record *r, const char **input,
			    const char **ptx_string, const char **output);

/* Options given as separate strings (NVRTC's, nvJitLink's "-arch=sm_90", "-O3", ...): the same
 * fields. */
void jit_capture_parse_opts(int n, const char *const *opts, struct jit_record *r);

#endif
