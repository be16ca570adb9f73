/* CUDA's device printf and assert on amdgcn (amdgpu/printf.c). */
#ifndef GPUPROBE_AMDGPU_PRINTF_H
#define GPUPROBE_AMDGPU_PRINTF_H

#include <stddef.h>

#include <llvm-c/Core.h>

/* Rewrite the calls to CUDA's `vprintf(format, argument buffer)` and `__assertfail(message,
 * file, line, function, char size)` in an optimised amdgcn module into calls of a variadic
 * `printf` with a constant format string in the constant address space, which LLVM's AMDGPU
 * backend turns into stores to the kernel's printf buffer (its hidden_printf_buffer argument,
 * the formats in the code object's amdhsa.printf metadata), as it does for OpenCL and HIP's
 * buffered printf; an assert prints CUDA's message and traps. The backend's stores reserve
 * their record with `__printf_alloc(bytes)`, which this defines for code-object version cov (4:
 * the buffer's address is the kernel's hidden argument 3; 5 and later: at byte 72 of the hidden
 * arguments). Returns the number of calls
 * rewritten (the caller then lets SROA and instcombine make constant strings of %s arguments
 * read back from the argument buffer), or -1 with one line in err: a format string that is not a
 * constant of the module. */
int amdgpu_printf_lower(LLVMModuleRef mod, unsigned cov, char *err, size_t errlen);

/* After the optimiser has made the %s arguments read back from vprintf's buffer the pointers
 * stored there: those that are nvcc's string literals or __func__ as constants of the constant
 * address space, so the backend copies the strings into the printf buffer. */
void amdgpu_printf_strings(LLVMModuleRef mod);

#endif
