/* lib/libgpuprobe-amdgpu.so: amdgpu/ and LLVM 19 as a module the gpuprobe command opens when a
 * subcommand needs it (ptx llvm, ptx amdgpu), so that the command itself runs where LLVM 19 is not
 * installed (the GPU machines). amdgpu_module_api() is its one entry point. */
#include "amdgpu/module.h"

static const struct amdgpu_module_api api = {
	.version = AMDGPU_MODULE_API_VERSION,
	.target_parse = amdgpu_target_parse,
	.arch_ok = amdgpu_arch_ok,
	.lower_ll = amdgpu_lower_ll,
	.lower_ptx = amdgpu_lower_ptx,
	.lower_code_object = amdgpu_lower_code_object,
};

__attribute__((visibility("default"))) const struct amdgpu_module_api *amdgpu_module_api(void) { return &api; }
