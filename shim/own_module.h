/* The own driver's modules and kernels, shared by own_module.c and own_launch.c. */
#ifndef GPUPROBE_SHIM_OWN_MODULE_H
#define GPUPROBE_SHIM_OWN_MODULE_H

#include "shim/own.h"

struct own_kparam { size_t size, offset; };

struct own_func {
	uint32_t magic;
	struct own_module *mod;
	char *name;
	unsigned nparams;
	struct own_kparam *params;
	size_t param_bytes;
	unsigned maxntid;          /* .maxntid product, 0 when absent */
	unsigned max_dyn_shared;   /* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) */
	pthread_mutex_t lock;      /* the first launch's build */
	gp_bk_kernel *k;           /* built (acquire/release) */
	gp_bk_prog *prog;
	unsigned dyn_shared;       /* bytes of dynamic shared memory it was built with (0: default) */
	int failed;
	char why[512];
};

struct own_var {
	char *name;
	size_t size, offset;       /* in the module's variables' allocation */
	int is_const, init;
	char *src;                 /* the declaration's text, when it has an initializer */
};

struct own_module {
	uint32_t magic;
	unsigned seq;
	char *ptx;
	size_t len;
	int split;                 /* kernels built one at a time */
	char whole_why[512];       /* why not */
	struct ptx_split_src *src;
	struct own_func *funcs;
	unsigned nfuncs;
	struct own_var *vars;
	unsigned nvars;
	size_t vars_bytes;
	uint64_t vars_addr;
	gp_bk_prog *whole;
	pthread_mutex_t lock;
	int launches;              /* its kernels launch kernels (dynamic parallelism) */
	struct own_module *next;   /* the live modules, newest first */
};

struct own_module *own_module_of(const void *h);
struct own_func *own_func_of(const void *h);
int own_func_build(struct own_func *f, unsigned dyn_shared);
/* The kernel a device launch names (spirv_kernel_token): in prefer's module, else the newest
 * live module that has it. NULL when none. */
struct own_func *own_func_by_token(struct own_module *prefer, uint64_t token);
/* Run the launches the kernels of m just made on the device (own_device_launch.c), after the
 * launch that made them has finished. */
CUresult own_device_launches_run(struct own_module *m);

#endif
