/* The name under which an LLVM-lowered module waits in a cache directory (GPUPROBE_LLVM_CACHE):
 * a 64-bit FNV-1a hash and the length of the original PTX text (up to its first NUL), as
 * "<16 hex digits>-<length>.ptx". Header-only and free of LLVM: the shim computes it where no
 * LLVM is installed, `gpuprobe ptx llvm --cache` where it is. */
#ifndef GPUPROBE_AMDGPU_PTX_KEY_H
#define GPUPROBE_AMDGPU_PTX_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static inline void amdgpu_ptx_key(const char *ptx, size_t len, char out[48])
{
	uint64_t h = 1469598103934665603ull;
	size_t n = 0;
	for (; n < len && ptx[n]; n++)
		h = (h ^ (unsigned char)ptx[n]) * 1099511628211ull;
	snprintf(out, 48, "%016llx-%zu.ptx", (unsigned long long)h, n);
}

#endif
