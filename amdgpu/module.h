/* The interface of lib/libgpuprobe-amdgpu.so (amdgpu/module.c): amdgpu.h's functions in one
 * table, found with dlsym(h, "amdgpu_module_api"). The caller and the module each have their own
 * copy of ptx-frontend; the IR passes between them as it is (the same code built from the same
 * sources). */
#ifndef GPUPROBE_AMDGPU_MODULE_H
#define GPUPROBE_AMDGPU_MODULE_H

#include "amdgpu/amdgpu.h"

#define AMDGPU_MODULE_API_VERSION 1
#define AMDGPU_MODULE_NAME "libgpuprobe-amdgpu.so"

struct amdgpu_module_api {
	int version;
	int (*target_parse)(const char *name);
	int (*arch_ok)(enum amdgpu_target t, const char *arch);
	int (*lower_ll)(const ir_module *m, const struct amdgpu_options *opts, char **ll, char *err, size_t errlen);
	int (*lower_ptx)(const ir_module *m, const struct amdgpu_options *opts, char **ptx, size_t *len, char *err,
			 size_t errlen);
	int (*lower_code_object)(const ir_module *m, const struct amdgpu_options *opts, void **co, size_t *len,
				 char *err, size_t errlen);
};

typedef const struct amdgpu_module_api *(*amdgpu_module_api_fn)(void);

#endif
