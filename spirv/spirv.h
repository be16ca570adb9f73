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
	/* Device address of a 32-bit word a kernel sets when a thread fails an assert() (1),
	 * executes trap (2) or accesses shared memory outside its block's window (3: the access
	 * goes to a sink past the window instead), for the driver to report (CUDA_ERROR_ASSERT,
	 * _ILLEGAL_INSTRUCTION, _ILLEGAL_ADDRESS); 0: none. Either way the thread goes on (see
	 * lower_ctrl.c). */
	uint64_t trap_word;
	/* Device address (8 zeroed bytes) of cooperative groups' grid workspace, which %envreg1/2
	 * name (lower_sreg.c); 0: a variable of the module. With the variable, PoCL's code took the
	 * `address == 0` side of the grid sync's `@p bra; trap;` guard in some threads after a
	 * thread-dependent branch, while a select on the same comparison in the same threads saw
	 * the address (tests/own_driver/grid_sync.cu; simpleAWBarrier); a constant has no such side. */
	uint64_t grid_workspace;
	/* Device address (host-visible) of the device launch queue, SPIRV_LAUNCH_QUEUE_BYTES long,
	 * zeroed, where kernels that launch kernels (dynamic parallelism) leave their launches for
	 * the driver to run after them (spirv/lower_launch.c); 0: such kernels are left out. */
	uint64_t launch_queue;
	/* Device address (host memory) of a u64 the driver keeps at the host's CLOCK_REALTIME in
	 * nanoseconds, while kernels may run (shim/own_clock.c), which %globaltimer and %clock64
	 * read: OpenCL gives kernels no clock of their own. Each thread's reads still grow by at
	 * least one, so differences are never negative. 0: each thread counts its reads from 0. */
	uint64_t clock_word;
	/* Check every shared-memory access through a register against the block's window: one
	 * outside it goes to a sink past the window and notes the trap word (3), so the launch fails
	 * with CUDA_ERROR_ILLEGAL_ADDRESS instead of reaching whatever lies there (on a CPU device:
	 * other memory, or a fault that kills the process). Off by default: the per-access compare
	 * stops PoCL vectorising across work-items (matrixMul's GEMM 6-8x slower). */
	int check_shared;
};

/* The device launch queue: a u32 count of bytes taken at 0, a u32 count of launches refused for
 * want of room at 4, records from SPIRV_LAUNCH_QUEUE_HEAD. A record: the kernel's token
 * (spirv_kernel_token) at 0, grid x y z at 8, block x y z at 20, dynamic shared bytes at 32, a u32
 * at 36 that is 1 once the launch is made (0: its parameters asked for, never launched), and at
 * SPIRV_LAUNCH_PARAMS the kernel's parameters as CUDA lays them out (each at its aligned offset,
 * SPIRV_LAUNCH_PARAM_BYTES at most, CUDA's limit for a device launch). Token 0 is a device-side
 * cudaMemcpyAsync: destination, source and byte count, u64 each, as its parameters. */
#define SPIRV_LAUNCH_QUEUE_BYTES (8u << 20)
#define SPIRV_LAUNCH_QUEUE_HEAD 64u
#define SPIRV_LAUNCH_PARAMS 64u
#define SPIRV_LAUNCH_PARAM_BYTES 4096u
#define SPIRV_LAUNCH_RECORD (SPIRV_LAUNCH_PARAMS + SPIRV_LAUNCH_PARAM_BYTES)

/* A kernel's address as the lowering makes it (`mov.u64 %rd, KERNEL`): from its name, so that
 * a kernel built alone and its module agree. */
uint64_t spirv_kernel_token(const char *name);

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
