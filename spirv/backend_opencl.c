/* The OpenCL backend of gpuprobe's own driver (backend.h): one device, fine-grained SVM where
 * the device has it (the host then reads and writes device memory directly, as CUDA's managed
 * and mapped memory need), in-order queues with profiling for event times, programs lowered to
 * SPIR-V and built through clCreateProgramWithIL or, on PoCL 3.1, llvm-spirv -r. */
#define CL_TARGET_OPENCL_VERSION 300
#include "spirv/backend.h"
#include "spirv/runtime_internal.h"
#include "spirv/spirv.h"
#include "common/env.h"

#include <CL/cl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gp_bk {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	int il, fine;
	struct gp_bk_info info;
	pthread_mutex_t lock;   /* the allocation list */
	void **allocs;          /* every SVM allocation: kernels may reach any of them */
	uint64_t *addrs;        /* what each gave the caller: 256-byte aligned, as CUDA's */
	size_t nallocs, cap;
};

struct gp_bk_queue { cl_command_queue q; };
struct gp_bk_event { cl_event e; };
struct gp_bk_prog { cl_program p; };
struct gp_bk_kernel { cl_kernel k; };

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

static int cl_open(gp_bk **out, char *err, size_t errlen)
{
	*out = NULL;
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np)
		return FAIL(-ENODEV, "no OpenCL platform (install an ICD such as pocl-opencl-icd)");
	int want = (int)gp_env_uint(GP_VAR_CL_DEVICE), seen = 0;
	gp_bk *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (cl_uint p = 0; p < np && !b->device; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint d = 0; d < nd && !b->device; d++)
			if (seen++ == want)
				b->platform = plats[p], b->device = devs[d];
	}
	if (!b->device) {
		free(b);
		return FAIL(-ENODEV, "no OpenCL device %d", want);
	}
	struct gp_bk_info *in = &b->info;
	spirv_cl_pocl_method(b->platform);
	clGetDeviceInfo(b->device, CL_DEVICE_NAME, sizeof(in->name) - 1, in->name, NULL);
	clGetDeviceInfo(b->device, CL_DEVICE_VENDOR, sizeof(in->vendor) - 1, in->vendor, NULL);
	snprintf(in->backend, sizeof(in->backend), "opencl");
	char il[256] = "";
	if (clGetDeviceInfo(b->device, CL_DEVICE_IL_VERSION, sizeof(il) - 1, il, NULL) == CL_SUCCESS)
		b->il = strstr(il, "SPIR-V") != NULL;
	if (gp_env_flag(GP_VAR_CL_NO_IL))
		b->il = 0;
	snprintf(in->route, sizeof(in->route), "%s", b->il ? "IL" : "llvm-spirv");
	cl_ulong u = 0;
	cl_uint cu = 0, mhz = 0;
	clGetDeviceInfo(b->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(u), &u, NULL);
	in->global_mem = u;
	clGetDeviceInfo(b->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(u), &u, NULL);
	in->local_mem = u;
	clGetDeviceInfo(b->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL);
	in->compute_units = cu ? cu : 1;
	cl_device_type dt = 0;
	clGetDeviceInfo(b->device, CL_DEVICE_TYPE, sizeof(dt), &dt, NULL);
	if (dt & CL_DEVICE_TYPE_CPU)   /* one work-group per compute unit (PoCL: per thread) */
		in->resident_groups = in->compute_units;
	clGetDeviceInfo(b->device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(mhz), &mhz, NULL);
	in->clock_mhz = mhz ? mhz : 1000;
	clGetDeviceInfo(b->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(in->max_wg_size), &in->max_wg_size, NULL);
	clGetDeviceInfo(b->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(in->max_wg_dims), in->max_wg_dims, NULL);
	cl_svm_mem_flags svm = 0;
	clGetDeviceInfo(b->device, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL);
	if (!(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
		int r = FAIL(-ENOTSUP, "OpenCL device %s has no shared virtual memory, which PTX pointers need", in->name);
		free(b);
		return r;
	}
	b->fine = in->fine_grain = (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
	cl_int e;
	b->ctx = clCreateContext(NULL, 1, &b->device, NULL, NULL, &e);
	if (e != CL_SUCCESS) {
		free(b);
		return FAIL(-EIO, "cannot create an OpenCL context (error %d)", e);
	}
	pthread_mutex_init(&b->lock, NULL);
	*out = b;
	return 0;
}

static void cl_close(gp_bk *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nallocs; i++)
		clSVMFree(b->ctx, b->allocs[i]);
	free(b->allocs);
	free(b->addrs);
	clReleaseContext(b->ctx);
	free(b);
}

static void cl_info(gp_bk *b, struct gp_bk_info *out) { *out = b->info; }

static int cl_mem_alloc(gp_bk *b, size_t size, enum gp_bk_mem kind, uint64_t *addr, char *err, size_t errlen)
{
	(void)kind;
	if (size > SIZE_MAX - 256)   /* the padding below would wrap to a small allocation */
		return FAIL(-ENOMEM, "%zu bytes is more than any device has", size);
	cl_svm_mem_flags f = CL_MEM_READ_WRITE | (b->fine ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0);
	/* CUDA aligns allocations to 256 bytes; PoCL aligns to at most 128: over-allocate. */
	void *p = clSVMAlloc(b->ctx, f, (size ? size : 1) + 128, 128);
	if (!p)
		return FAIL(-ENOMEM, "clSVMAlloc returned no memory");
	uint64_t a = ((uint64_t)(uintptr_t)p + 255) & ~(uint64_t)255;
	pthread_mutex_lock(&b->lock);
	if (b->nallocs == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		void **n = realloc(b->allocs, cap * sizeof(*n));
		if (n)
			b->allocs = n;
		uint64_t *na = n ? realloc(b->addrs, cap * sizeof(*na)) : NULL;
		if (!na) {
			pthread_mutex_unlock(&b->lock);
			clSVMFree(b->ctx, p);
			return FAIL(-ENOMEM, "out of host memory");
		}
		b->addrs = na, b->cap = cap;
	}
	b->addrs[b->nallocs] = a;
	b->allocs[b->nallocs++] = p;
	pthread_mutex_unlock(&b->lock);
	*addr = a;
	return 0;
}

static void cl_mem_free(gp_bk *b, uint64_t addr)
{
	void *p = NULL;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->nallocs; i++)
		if (b->addrs[i] == addr) {
			p = b->allocs[i];
			b->nallocs--;
			b->allocs[i] = b->allocs[b->nallocs];
			b->addrs[i] = b->addrs[b->nallocs];
			break;
		}
	pthread_mutex_unlock(&b->lock);
	if (p)
		clSVMFree(b->ctx, p);
}

static int cl_queue_create(gp_bk *b, gp_bk_queue **q, char *err, size_t errlen)
{
	cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
	cl_int e;
	gp_bk_queue *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->q = clCreateCommandQueueWithProperties(b->ctx, b->device, props, &e);
	if (e != CL_SUCCESS) {
		free(n);
		return FAIL(-EIO, "cannot create an OpenCL queue (error %d)", e);
	}
	*q = n;
	return 0;
}

static void cl_queue_destroy(gp_bk *b, gp_bk_queue *q)
{
	(void)b;
	if (!q)
		return;
	clFinish(q->q);
	clReleaseCommandQueue(q->q);
	free(q);
}

static int cl_queue_finish(gp_bk *b, gp_bk_queue *q, char *err, size_t errlen)
{
	(void)b;
	cl_int e = clFinish(q->q);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clFinish failed (error %d)", e);
}

static int cl_copy(gp_bk *b, gp_bk_queue *q, uint64_t dst, uint64_t src, size_t n, int blocking, char *err,
		   size_t errlen)
{
	(void)b;
	if (!n)
		return 0;
	cl_int e = clEnqueueSVMMemcpy(q->q, blocking ? CL_TRUE : CL_FALSE, (void *)(uintptr_t)dst,
				      (const void *)(uintptr_t)src, n, 0, NULL, NULL);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueSVMMemcpy of %zu bytes failed (error %d)", n, e);
}

static int cl_fill(gp_bk *b, gp_bk_queue *q, uint64_t dst, const void *pattern, size_t psize, size_t n, char *err,
		   size_t errlen)
{
	(void)b;
	if (!n)
		return 0;
	cl_int e = clEnqueueSVMMemFill(q->q, (void *)(uintptr_t)dst, pattern, psize, n, 0, NULL, NULL);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueSVMMemFill of %zu bytes failed (error %d)", n, e);
}

static int cl_event_record(gp_bk *b, gp_bk_queue *q, gp_bk_event **ev, char *err, size_t errlen)
{
	(void)b;
	gp_bk_event *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	cl_int e = clEnqueueMarkerWithWaitList(q->q, 0, NULL, &n->e);
	if (e != CL_SUCCESS) {
		free(n);
		return FAIL(-EIO, "clEnqueueMarkerWithWaitList failed (error %d)", e);
	}
	clFlush(q->q);
	*ev = n;
	return 0;
}

static int cl_event_query(gp_bk *b, gp_bk_event *ev)
{
	(void)b;
	cl_int st = CL_COMPLETE;
	if (clGetEventInfo(ev->e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL) != CL_SUCCESS)
		return -EIO;
	return st < 0 ? -EIO : st == CL_COMPLETE;
}

static int cl_event_wait(gp_bk *b, gp_bk_event *ev, char *err, size_t errlen)
{
	(void)b;
	cl_int e = clWaitForEvents(1, &ev->e);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clWaitForEvents failed (error %d)", e);
}

static int cl_event_time(gp_bk *b, gp_bk_event *ev, uint64_t *ns)
{
	(void)b;
	cl_ulong t = 0;
	if (clGetEventProfilingInfo(ev->e, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL) == CL_SUCCESS && t) {
		*ns = t;
		return 0;
	}
	return -ENOTSUP;
}

static int cl_queue_wait(gp_bk *b, gp_bk_queue *q, gp_bk_event *ev, char *err, size_t errlen)
{
	(void)b;
	cl_int e = clEnqueueMarkerWithWaitList(q->q, 1, &ev->e, NULL);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueMarkerWithWaitList failed (error %d)", e);
}

static void cl_event_release(gp_bk *b, gp_bk_event *ev)
{
	(void)b;
	if (ev) {
		clReleaseEvent(ev->e);
		free(ev);
	}
}

static int cl_program_build(gp_bk *b, const ir_module *m, const struct gp_bk_build *o, gp_bk_prog **out,
			    char *err, size_t errlen)
{
	uint32_t *words;
	size_t nwords;
	struct spirv_options so = {.dynamic_shared_bytes = o ? o->dyn_shared : 0, .trap_word = o ? o->trap_word : 0,
				   .grid_workspace = o ? o->grid_workspace : 0,
				   .launch_queue = o ? o->launch_queue : 0, .clock_word = o ? o->clock_word : 0,
				   .skipped = o ? o->skipped : NULL, .skipped_arg = o ? o->skipped_arg : NULL,
				   .noted = o ? o->noted : NULL, .check_shared = o ? o->check_shared : 0};
	int r = spirv_lower_module(m, &so, &words, &nwords, err, errlen);
	if (r < 0)
		return r;
	cl_int e = CL_SUCCESS;
	cl_program p;
	const char *opts = "";
	if (b->il) {
		p = clCreateProgramWithIL(b->ctx, words, nwords * 4, &e);
		free(words);
	} else {
		unsigned char *bc = NULL;
		size_t len = 0;
		r = spirv_cl_to_bitcode(words, nwords, &bc, &len, err, errlen);
		free(words);
		if (r < 0)
			return r;
		const unsigned char *bin = bc;
		cl_int st;
		p = clCreateProgramWithBinary(b->ctx, 1, &b->device, &len, &bin, &st, &e);
		free(bc);
		opts = "-x spir -spir-std=1.2";
	}
	if (e != CL_SUCCESS)
		return FAIL(-EINVAL, "OpenCL rejected the program (error %d)", e);
	e = clBuildProgram(p, 1, &b->device, opts, NULL, NULL);
	if (e != CL_SUCCESS) {
		char log[768] = "";
		clGetProgramBuildInfo(p, b->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
		for (char *c = log; *c; c++)
			if (*c == '\n')
				*c = ' ';
		clReleaseProgram(p);
		return FAIL(-EINVAL, "OpenCL build failed (error %d): %s", e, log);
	}
	gp_bk_prog *n = calloc(1, sizeof(*n));
	if (!n) {
		clReleaseProgram(p);
		return -ENOMEM;
	}
	n->p = p;
	*out = n;
	return 0;
}

static void cl_program_release(gp_bk *b, gp_bk_prog *p)
{
	(void)b;
	if (p) {
		clReleaseProgram(p->p);
		free(p);
	}
}

static int cl_kernel_create(gp_bk *b, gp_bk_prog *p, const char *name, gp_bk_kernel **k, char *err, size_t errlen)
{
	(void)b;
	cl_int e;
	cl_kernel ck = clCreateKernel(p->p, name, &e);
	if (e != CL_SUCCESS)
		return FAIL(-ENOENT, "no kernel %s in the built program (error %d)", name, e);
	gp_bk_kernel *n = calloc(1, sizeof(*n));
	if (!n) {
		clReleaseKernel(ck);
		return -ENOMEM;
	}
	n->k = ck;
	*k = n;
	return 0;
}

static void cl_kernel_release(gp_bk *b, gp_bk_kernel *k)
{
	(void)b;
	if (k) {
		clReleaseKernel(k->k);
		free(k);
	}
}

static int cl_launch(gp_bk *b, gp_bk_queue *q, gp_bk_kernel *k, const unsigned grid[3], const unsigned block[3],
		     const struct gp_bk_arg *args, unsigned nargs, char *err, size_t errlen)
{
	cl_uint kargs = 0;
	clGetKernelInfo(k->k, CL_KERNEL_NUM_ARGS, sizeof(kargs), &kargs, NULL);
	if (kargs != nargs)
		return FAIL(-EINVAL, "the kernel takes %u arguments, %u given", kargs, nargs);
	/* A cl_kernel holds its arguments: set and enqueue under one lock (clEnqueueNDRangeKernel
	 * captures them), so that threads launching the same kernel do not mix theirs. */
	pthread_mutex_lock(&b->lock);
	cl_int e = CL_SUCCESS;
	for (unsigned i = 0; i < nargs && e == CL_SUCCESS; i++)
		if ((e = clSetKernelArg(k->k, i, args[i].size, args[i].data)) != CL_SUCCESS) {
			pthread_mutex_unlock(&b->lock);
			return FAIL(-EINVAL, "argument %u (%zu bytes) rejected (error %d)", i, args[i].size, e);
		}
	if (b->nallocs)
		clSetKernelExecInfo(k->k, CL_KERNEL_EXEC_INFO_SVM_PTRS, b->nallocs * sizeof(void *), b->allocs);
	size_t gws[3], lws[3];
	for (int d = 0; d < 3; d++) {
		lws[d] = block[d] ? block[d] : 1;
		gws[d] = (size_t)(grid[d] ? grid[d] : 1) * lws[d];
	}
	e = clEnqueueNDRangeKernel(q->q, k->k, 3, NULL, gws, lws, 0, NULL, NULL);
	pthread_mutex_unlock(&b->lock);
	if (e == CL_SUCCESS)
		clFlush(q->q);
	if (e == CL_OUT_OF_RESOURCES || e == CL_INVALID_WORK_GROUP_SIZE)
		return FAIL(-E2BIG, "the device cannot run a block of %ux%ux%u threads (error %d)", block[0], block[1],
			    block[2], e);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueNDRangeKernel failed (error %d)", e);
}

const struct gp_bk_ops gp_bk_opencl = {
	.name = "opencl",
	.open = cl_open,
	.close = cl_close,
	.info = cl_info,
	.mem_alloc = cl_mem_alloc,
	.mem_free = cl_mem_free,
	.queue_create = cl_queue_create,
	.queue_destroy = cl_queue_destroy,
	.queue_finish = cl_queue_finish,
	.copy = cl_copy,
	.fill = cl_fill,
	.event_record = cl_event_record,
	.event_query = cl_event_query,
	.event_wait = cl_event_wait,
	.event_time = cl_event_time,
	.queue_wait = cl_queue_wait,
	.event_release = cl_event_release,
	.program_build = cl_program_build,
	.program_release = cl_program_release,
	.kernel_create = cl_kernel_create,
	.kernel_release = cl_kernel_release,
	.launch = cl_launch,
};
