/* amdgpu/: the IR lowered to LLVM IR through the LLVM C API (LLVM 19), for two targets:
 *   amdgcn-amd-amdhsa   code objects for AMD GPUs (gfx90a, gfx942, gfx1100), linked by ld.lld-19
 *   nvptx64-nvidia-cuda PTX again, to check the lowering on NVIDIA GPUs and (through our own
 *                       frontend and spirv/) on PoCL
 * One lowering serves both; only special registers, warp collectives, barriers and directed
 * rounding differ by target (amdgpu/lower_target.c).
 *
 * The PTX model is kept: a warp is 32 lanes. On wave64 devices two warps share a wavefront and
 * every collective stays within its 32-lane half. Results CUDA defines (x/0, shifts past the width,
 * float to integer, NaN) are PTX's, as spirv/ gives them. */
#ifndef GPUPROBE_AMDGPU_H
#define GPUPROBE_AMDGPU_H

#include <stddef.h>
#include <stdint.h>

#include "ptx-frontend/ir.h"

enum amdgpu_target {
	AMDGPU_TARGET_NVPTX,   /* nvptx64-nvidia-cuda */
	AMDGPU_TARGET_AMDGCN,  /* amdgcn-amd-amdhsa */
};

struct amdgpu_options {
	enum amdgpu_target target;
	const char *arch;       /* amdgcn: "gfx90a" (default), "gfx942", "gfx1100"; nvptx: "sm_80" (default) */
	unsigned cov;           /* amdgcn code-object version: 4 or 5 (default 5) */
	int opt_level;          /* 0..3; default (0 here means 2 unless no_opt) */
	int no_opt;             /* skip LLVM's optimisation pipeline (the IR as lowered) */
	/* Called once for each kernel left out because it (or a function it needs) cannot be
	 * lowered, with why ("LINE: message" or "needs F, not lowered: ..."); the module's other
	 * kernels are lowered. NULL: not told (err still lists what was left out). */
	void (*skipped)(void *arg, const char *kernel, const char *why);
	void *skipped_arg;
	/* Every function or nothing: the first that cannot be lowered fails the module. For output
	 * that replaces the original module (GPUPROBE_LLVM_ROUNDTRIP, the --cache of ptx llvm),
	 * where a kernel left out would be a kernel missing. */
	int whole_module;
};

/* Parse a target name: "amdgcn" or "nvptx" (also the full triples). -1 when unknown. */
int amdgpu_target_parse(const char *name);
/* True when arch is an architecture of target (gfx90a, gfx942, gfx1100 for amdgcn; sm_NN for nvptx). */
int amdgpu_arch_ok(enum amdgpu_target t, const char *arch);

/* The module as LLVM IR text (after the optimisation pipeline unless opts->no_opt).
 * Returns 0 and a malloc'd string, or a negative errno with one line in err: "LINE: message"
 * naming the instruction that could not be lowered. A kernel that cannot be lowered while others
 * can is left out (opts->skipped); the result is then 0 and err says what was left out. */
int amdgpu_lower_ll(const ir_module *m, const struct amdgpu_options *opts, char **ll, char *err, size_t errlen);

/* nvptx64 target: the PTX LLVM's NVPTX backend makes (malloc'd, NUL-terminated). */
int amdgpu_lower_ptx(const ir_module *m, const struct amdgpu_options *opts, char **ptx, size_t *len,
		     char *err, size_t errlen);

/* amdgcn target: a code object (ELF shared object, linked by ld.lld-19; malloc'd). */
int amdgpu_lower_code_object(const ir_module *m, const struct amdgpu_options *opts, void **co, size_t *len,
			     char *err, size_t errlen);

/* PTX text in, PTX text out through the nvptx64 lowering (parse, lower, LLVM): what the shim's
 * GPUPROBE_LLVM_ROUNDTRIP mode loads and the CPU check runs on PoCL. */
int amdgpu_ptx_roundtrip(const char *ptx, size_t len, char **out, size_t *out_len, char *err, size_t errlen);

#endif
