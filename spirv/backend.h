/* The backend interface of gpuprobe's own driver: what the shim needs from a device when it
 * implements the CUDA driver API itself (GPUPROBE_BACKEND=opencl, or no NVIDIA driver).
 *
 * One table of operations per backend: device query, memory, copy, queue, event, program build,
 * launch. A backend owns its code generator: program_build takes the module's IR (probes already
 * spliced in) and lowers it itself (SPIR-V for OpenCL and Level Zero here in spirv/; AMDGCN for
 * HIP in amdgpu/). Every operation returns 0 or a negative errno with one line in err.
 *
 * Addresses are what PTX sees: device memory is a plain 64-bit address (OpenCL SVM, Level Zero
 * USM), passed to kernels as an integer. Queues are in order. */
#ifndef GPUPROBE_SPIRV_BACKEND_H
#define GPUPROBE_SPIRV_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ptx-frontend/ir.h"

typedef struct gp_bk gp_bk;             /* one opened device */
typedef struct gp_bk_queue gp_bk_queue; /* an in-order queue */
typedef struct gp_bk_event gp_bk_event; /* a point in a queue */
typedef struct gp_bk_prog gp_bk_prog;   /* a built module */
typedef struct gp_bk_kernel gp_bk_kernel;

struct gp_bk_info {
	char name[256];          /* the device's own name */
	char vendor[128];
	char backend[32];        /* "opencl", "levelzero" */
	char route[64];          /* how programs are built ("IL", "llvm-spirv") */
	uint64_t global_mem;     /* bytes */
	uint64_t local_mem;      /* bytes of work-group memory */
	unsigned compute_units;
	unsigned clock_mhz;
	size_t max_wg_size;      /* threads per block */
	size_t max_wg_dims[3];
	int fine_grain;          /* the host may touch device memory directly */
	unsigned resident_groups; /* work-groups the device is known to run at once (a CPU: one per
				   * compute unit; what grid-wide sync needs); 0: unknown */
};

struct gp_bk_arg {
	const void *data;        /* the argument's bytes (a struct's bytes for a byte-array param) */
	size_t size;
};

enum gp_bk_mem { GP_BK_MEM_DEVICE, GP_BK_MEM_HOST };

/* How a program is built. */
struct gp_bk_build {
	unsigned dyn_shared;     /* bytes reserved for `.extern .shared` arrays (0: the generator's default) */
	uint64_t trap_word;      /* spirv_options.trap_word: where failed asserts and traps are noted */
	uint64_t grid_workspace; /* spirv_options.grid_workspace: cooperative groups' grid workspace */
	uint64_t launch_queue;   /* spirv_options.launch_queue: where device launches are queued (0: none) */
	uint64_t clock_word;     /* spirv_options.clock_word: the host's clock for %globaltimer (0: none) */
	/* Called once for each kernel the code generator left out, with why (spirv_options.skipped). */
	void (*skipped)(void *arg, const char *kernel, const char *why);
	void *skipped_arg;
	/* spirv_options.noted (called with skipped_arg). */
	void (*noted)(void *arg, const char *func, const char *note);
	int check_shared;        /* spirv_options.check_shared (GPUPROBE_SHARED_CHECK) */
};

struct gp_bk_ops {
	const char *name;
	int (*open)(gp_bk **out, char *err, size_t errlen);
	void (*close)(gp_bk *b);
	void (*info)(gp_bk *b, struct gp_bk_info *out);

	int (*mem_alloc)(gp_bk *b, size_t size, enum gp_bk_mem kind, uint64_t *addr, char *err, size_t errlen);
	void (*mem_free)(gp_bk *b, uint64_t addr);

	int (*queue_create)(gp_bk *b, gp_bk_queue **q, char *err, size_t errlen);
	void (*queue_destroy)(gp_bk *b, gp_bk_queue *q);
	int (*queue_finish)(gp_bk *b, gp_bk_queue *q, char *err, size_t errlen);
	/* Any direction: host and device addresses alike (unified addressing). blocking: wait. */
	int (*copy)(gp_bk *b, gp_bk_queue *q, uint64_t dst, uint64_t src, size_t n, int blocking, char *err,
		    size_t errlen);
	/* n bytes at dst filled with the psize-byte (1, 2 or 4) pattern. */
	int (*fill)(gp_bk *b, gp_bk_queue *q, uint64_t dst, const void *pattern, size_t psize, size_t n, char *err,
		    size_t errlen);

	/* A marker after everything enqueued so far; *ev must be released. */
	int (*event_record)(gp_bk *b, gp_bk_queue *q, gp_bk_event **ev, char *err, size_t errlen);
	int (*event_query)(gp_bk *b, gp_bk_event *ev);   /* 1 done, 0 pending, <0 failed */
	int (*event_wait)(gp_bk *b, gp_bk_event *ev, char *err, size_t errlen);
	/* Nanoseconds at which the marker completed (device or host clock: only differences count). */
	int (*event_time)(gp_bk *b, gp_bk_event *ev, uint64_t *ns);
	int (*queue_wait)(gp_bk *b, gp_bk_queue *q, gp_bk_event *ev, char *err, size_t errlen);
	void (*event_release)(gp_bk *b, gp_bk_event *ev);

	/* Lower m (the backend's own code generator) and build it for the device, as o says. */
	int (*program_build)(gp_bk *b, const ir_module *m, const struct gp_bk_build *o, gp_bk_prog **p, char *err,
			     size_t errlen);
	void (*program_release)(gp_bk *b, gp_bk_prog *p);
	int (*kernel_create)(gp_bk *b, gp_bk_prog *p, const char *name, gp_bk_kernel **k, char *err, size_t errlen);
	void (*kernel_release)(gp_bk *b, gp_bk_kernel *k);
	/* Enqueue k over grid x block (CUDA's meaning). */
	int (*launch)(gp_bk *b, gp_bk_queue *q, gp_bk_kernel *k, const unsigned grid[3], const unsigned block[3],
		      const struct gp_bk_arg *args, unsigned nargs, char *err, size_t errlen);
};

extern const struct gp_bk_ops gp_bk_opencl;
extern const struct gp_bk_ops gp_bk_levelzero;

#endif
