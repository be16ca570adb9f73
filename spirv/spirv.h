/* IR to SPIR-V for the OpenCL environment (Kernel capability, Physical64 addressing,
 * OpenCL.std), validated with SPIRV-Tools, and run through OpenCL or Level Zero.
 *
 * Every PTX kernel (.entry) becomes an OpEntryPoint Kernel of the same name whose arguments are
 * the kernel's .param values in order, as plain integers/floats: pointers travel as 64-bit
 * integers (device addresses, e.g. OpenCL SVM or Level Zero USM), exactly as PTX sees them.
 *
 * Warp-collective instructions (shfl, vote, redux, activemask, %laneid) are lowered by emulating
 * a 32-lane warp with work-group memory and barriers, so they give PTX's results on any target
 * whatever its sub-group size, provided every thread of the block reaches them together (as in
 * a warp-shuffle reduction). Divergent warp collectives cannot be emulated that way. */
#ifndef GPUPROBE_SPIRV_H
#define GPUPROBE_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#include "ptx-frontend/ir.h"

struct spirv_options {
	unsigned dynamic_shared_bytes; /* room for `.extern .shared x[]`; 0: 48 KiB */
	int no_validate;               /* skip the SPIRV-Tools validator (tests of the validator) */
	/* Called once for each kernel left out of the module (see below): its name and the reason,
	 * "LINE: message" or "needs F, not lowered: LINE: message". */
	void (*skipped)(void *arg, const char *kernel, const char *why);
	void *skipped_arg;
	/* Called once for each function that lowered with something whose result may be undefined
	 * on the device (a warp collective some threads of a block may not reach): its name and
	 * "LINE: message". Called with skipped_arg. */
	void (*noted)(void *arg, const char *func, const char *note);
	/* Device address of a 32-bit word a kernel sets when a thread fails an assert() (1) or
	 * executes trap (2), for the driver to report (CUDA_ERROR_ASSERT, _ILLEGAL_INSTRUCTION);
	 * 0: none. Either way the thread goes on (see lower_ctrl.c). */
	uint64_t trap_word;
};

/* Lower every function of m. A function that cannot be lowered is left out of the module, with
 * every function that calls it or takes its address: the module's other kernels still lower.
 * On success returns 0 and a malloc'd word array (*words, *nwords); when functions were left
 * out, err then holds one line naming them and why ("N function(s) left out: K (LINE: msg); ..."),
 * and opts->skipped is called for each kernel among them (err is "" when nothing was left out).
 * When nothing is left to lower, or on any other failure, returns a negative errno and writes one
 * line into err: "LINE: message" naming the instruction that could not be lowered (the first
 * function's), or the validator's complaint. */
int spirv_lower_module(const ir_module *m, const struct spirv_options *opts, uint32_t **words,
		       size_t *nwords, char *err, size_t errlen);

/* Validate with SPIRV-Tools for OpenCL 2.0 (SPV_ENV_OPENCL_2_0: generic pointers, 64-bit atomics). 0 or -EINVAL with the message. */
int spirv_validate(const uint32_t *words, size_t nwords, char *err, size_t errlen);

/* Disassemble (SPIRV-Tools) into a malloc'd string, for tests and debugging. */
char *spirv_disassemble(const uint32_t *words, size_t nwords);

#endif
