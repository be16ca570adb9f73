/* OpenCL runtime for lowered modules. Devices that report SPIR-V in CL_DEVICE_IL_VERSION get it
 * through clCreateProgramWithIL; others (Debian's PoCL 3.1) get it back as LLVM 15 bitcode from
 * llvm-spirv, built with "-x spir -spir-std=1.2". */
#define CL_TARGET_OPENCL_VERSION 300
#include "spirv/runtime.h"
#include "common/env.h"
#include "spirv/runtime_internal.h"

#include <CL/cl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct spirv_cl {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	cl_program prog;
	int il;                 /* device takes SPIR-V */
	char name[256];
	char subgroups[160];    /* what the device says about sub-groups, for reports */
	void **allocs;          /* every SVM allocation: the kernels may reach any of them */
	size_t *sizes;
	size_t nallocs;
};

#define FAIL(code, ...) (snprintf(err, errlen, __VA_ARGS__), (code))

/* PoCL (the CPU device of CI and of machines without a GPU) makes work-group functions with its
 * "loopvec" method unless told otherwise, and with it CUB's onesweep kernel (radixSortThrust)
 * read values of other work-items after a thread-dependent branch: wrong ranks, then a store to
 * shared offset -4 (tests/own_driver/onesweep_probe/README.md). Its "loops" method runs the same
 * SPIR-V right, our kernels as fast (bench/spirv_kernel: vector add, reduction, GEMM within 10%),
 * and compiled that lock-step kernel in 3 minutes instead of 12. PoCL reads the variable when it
 * builds; a user's setting is kept. */
void spirv_cl_pocl_method(void *platform)
{
	char name[128] = "";
	if (getenv("POCL_WORK_GROUP_METHOD") ||
	    clGetPlatformInfo((cl_platform_id)platform, CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL) != CL_SUCCESS)
		return;
	if (strstr(name, "Portable Computing Language"))
		setenv("POCL_WORK_GROUP_METHOD", "loops", 0);
}

int spirv_cl__open(spirv_cl **out, char *err, size_t errlen)
{
	*out = NULL;
	cl_platform_id plats[16];
	cl_uint np = 0;
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np)
		return FAIL(-ENODEV, "no OpenCL platform (install an ICD such as pocl-opencl-icd)");
	int want = (int)gp_env_uint(GP_VAR_CL_DEVICE), seen = 0;
	spirv_cl *cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	for (cl_uint p = 0; p < np && !cl->device; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint d = 0; d < nd; d++)
			if (seen++ == want) {
				cl->platform = plats[p];
				cl->device = devs[d];
				break;
			}
	}
	if (!cl->device) {
		free(cl);
		return FAIL(-ENODEV, "no OpenCL device %d", want);
	}
	clGetDeviceInfo(cl->device, CL_DEVICE_NAME, sizeof(cl->name) - 1, cl->name, NULL);
	spirv_cl_pocl_method(cl->platform);
	char il[256] = "";
	if (clGetDeviceInfo(cl->device, CL_DEVICE_IL_VERSION, sizeof(il) - 1, il, NULL) == CL_SUCCESS)
		cl->il = strstr(il, "SPIR-V") != NULL;
	/* Sub-groups: PTX warps need exactly 32 lanes in lockstep. The lowering emulates warps with
	 * work-group memory, so it does not depend on them; this is reported for the record. */
	cl_uint nsg = 0;
	char ext[4096] = "";
	clGetDeviceInfo(cl->device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof(nsg), &nsg, NULL);
	clGetDeviceInfo(cl->device, CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
	snprintf(cl->subgroups, sizeof(cl->subgroups), "%s, %u sub-groups per work-group%s",
		 strstr(ext, "cl_khr_subgroups") ? "cl_khr_subgroups" : "no cl_khr_subgroups", nsg,
		 strstr(ext, "cl_khr_subgroup_shuffle") ? ", cl_khr_subgroup_shuffle" : "");
	if (gp_env_flag(GP_VAR_CL_NO_IL))
		cl->il = 0;
	cl_svm_mem_flags svm = 0;
	clGetDeviceInfo(cl->device, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL);
	if (!(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
		free(cl);
		return FAIL(-ENOTSUP, "OpenCL device %s has no shared virtual memory, which PTX pointers need",
			    cl->name);
	}
	cl_int e;
	cl->ctx = clCreateContext(NULL, 1, &cl->device, NULL, NULL, &e);
	if (e == CL_SUCCESS)
		cl->queue = clCreateCommandQueueWithProperties(cl->ctx, cl->device, NULL, &e);
	if (e != CL_SUCCESS) {
		spirv_cl__close(cl);
		return FAIL(-EIO, "cannot create an OpenCL context/queue (error %d)", e);
	}
	*out = cl;
	return 0;
}

void spirv_cl__close(spirv_cl *cl)
{
	if (!cl)
		return;
	if (cl->queue)
		clFinish(cl->queue);
	for (size_t i = 0; i < cl->nallocs; i++)
		clSVMFree(cl->ctx, cl->allocs[i]);
	free(cl->allocs);
	free(cl->sizes);
	if (cl->prog)
		clReleaseProgram(cl->prog);
	if (cl->queue)
		clReleaseCommandQueue(cl->queue);
	if (cl->ctx)
		clReleaseContext(cl->ctx);
	free(cl);
}

const char *spirv_cl__device_name(const spirv_cl *cl) { return cl->name; }
const char *spirv_cl__route(const spirv_cl *cl) { return cl->il ? "IL" : "llvm-spirv"; }
const char *spirv_cl__subgroups(const spirv_cl *cl) { return cl->subgroups; }

/* SPIR-V -> LLVM bitcode through the llvm-spirv tool, in a private temporary directory (also
 * used by backend_opencl.c). */
int spirv_cl_to_bitcode(const uint32_t *words, size_t nwords, unsigned char **bc, size_t *bclen, char *err,
		      size_t errlen)
{
	char dir[] = "/tmp/gpuprobe-spirv-XXXXXX";
	if (!mkdtemp(dir))
		return FAIL(-errno, "cannot create a temporary directory: %s", strerror(errno));
	char in[64], out[64];
	snprintf(in, sizeof(in), "%s/m.spv", dir);
	snprintf(out, sizeof(out), "%s/m.bc", dir);
	int ret = 0;
	FILE *f = fopen(in, "wb");
	if (!f || fwrite(words, 4, nwords, f) != nwords) {
		if (f)
			fclose(f);
		ret = FAIL(-EIO, "cannot write %s", in);
		goto out;
	}
	fclose(f);
	const char *tool = gp_env_str(GP_VAR_LLVM_SPIRV) ? gp_env_str(GP_VAR_LLVM_SPIRV) : "llvm-spirv-15";
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		execlp(tool, tool, "-r", in, "-o", out, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		ret = FAIL(-EIO, "%s -r failed (exit %d): cannot turn SPIR-V into LLVM bitcode for this device",
			   tool, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		goto out;
	}
	f = fopen(out, "rb");
	struct stat sb;
	if (!f || fstat(fileno(f), &sb) < 0) {
		if (f)
			fclose(f);
		ret = FAIL(-EIO, "cannot read %s", out);
		goto out;
	}
	*bclen = (size_t)sb.st_size;
	*bc = malloc(*bclen ? *bclen : 1);
	if (!*bc || fread(*bc, 1, *bclen, f) != *bclen)
		ret = FAIL(-EIO, "cannot read %s", out);
	fclose(f);
out:
	unlink(in);
	unlink(out);
	rmdir(dir);
	return ret;
}

int spirv_cl__load(spirv_cl *cl, const uint32_t *words, size_t nwords, char *err, size_t errlen)
{
	if (cl->prog) {
		clReleaseProgram(cl->prog);
		cl->prog = NULL;
	}
	cl_int e;
	const char *opts = "";
	if (cl->il) {
		cl->prog = clCreateProgramWithIL(cl->ctx, words, nwords * 4, &e);
	} else {
		unsigned char *bc = NULL;
		size_t len = 0;
		int r = spirv_cl_to_bitcode(words, nwords, &bc, &len, err, errlen);
		if (r < 0)
			return r;
		const unsigned char *bin = bc;
		cl_int st;
		cl->prog = clCreateProgramWithBinary(cl->ctx, 1, &cl->device, &len, &bin, &st, &e);
		free(bc);
		opts = "-x spir -spir-std=1.2";
	}
	if (e != CL_SUCCESS)
		return FAIL(-EINVAL, "OpenCL rejected the program (error %d)", e);
	e = clBuildProgram(cl->prog, 1, &cl->device, opts, NULL, NULL);
	if (e != CL_SUCCESS) {
		char log[768] = "";
		clGetProgramBuildInfo(cl->prog, cl->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
		for (char *p = log; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return FAIL(-EINVAL, "OpenCL build failed (error %d): %s", e, log);
	}
	return 0;
}

int spirv_cl__alloc(spirv_cl *cl, size_t size, uint64_t *addr, char *err, size_t errlen)
{
	void *p = clSVMAlloc(cl->ctx, CL_MEM_READ_WRITE, size ? size : 1, 128);
	if (!p)
		return FAIL(-ENOMEM, "clSVMAlloc of %zu bytes failed", size);
	cl->allocs = realloc(cl->allocs, (cl->nallocs + 1) * sizeof(*cl->allocs));
	cl->sizes = realloc(cl->sizes, (cl->nallocs + 1) * sizeof(*cl->sizes));
	cl->allocs[cl->nallocs] = p;
	cl->sizes[cl->nallocs++] = size;
	*addr = (uint64_t)(uintptr_t)p;
	return 0;
}

int spirv_cl__write(spirv_cl *cl, uint64_t addr, const void *src, size_t size, char *err, size_t errlen)
{
	cl_int e = clEnqueueSVMMemcpy(cl->queue, CL_TRUE, (void *)(uintptr_t)addr, src, size, 0, NULL, NULL);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueSVMMemcpy to the device failed (error %d)", e);
}

int spirv_cl__read(spirv_cl *cl, uint64_t addr, void *dst, size_t size, char *err, size_t errlen)
{
	cl_int e = clEnqueueSVMMemcpy(cl->queue, CL_TRUE, dst, (void *)(uintptr_t)addr, size, 0, NULL, NULL);
	return e == CL_SUCCESS ? 0 : FAIL(-EIO, "clEnqueueSVMMemcpy from the device failed (error %d)", e);
}

int spirv_cl__launch(spirv_cl *cl, const char *name, const unsigned grid[3], const unsigned block[3],
		     const struct spirv_arg *args, unsigned nargs, char *err, size_t errlen)
{
	if (!cl->prog)
		return FAIL(-EINVAL, "no module loaded");
	cl_int e;
	cl_kernel k = clCreateKernel(cl->prog, name, &e);
	if (e != CL_SUCCESS)
		return FAIL(-ENOENT, "no kernel %s in the module (error %d)", name, e);
	cl_uint kargs = 0;
	clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(kargs), &kargs, NULL);
	int ret = 0;
	if (kargs != nargs) {
		ret = FAIL(-EINVAL, "kernel %s takes %u arguments, %u given", name, kargs, nargs);
		goto out;
	}
	for (unsigned i = 0; i < nargs; i++)
		if ((e = clSetKernelArg(k, i, args[i].size, args[i].data)) != CL_SUCCESS) {
			ret = FAIL(-EINVAL, "argument %u of %s (%zu bytes) rejected (error %d)", i, name, args[i].size, e);
			goto out;
		}
	/* pointers travel as integers: tell OpenCL every allocation the kernel may touch */
	if (cl->nallocs)
		clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, cl->nallocs * sizeof(void *), cl->allocs);
	size_t gws[3], lws[3];
	for (int d = 0; d < 3; d++) {
		lws[d] = block[d] ? block[d] : 1;
		gws[d] = (size_t)(grid[d] ? grid[d] : 1) * lws[d];
	}
	e = clEnqueueNDRangeKernel(cl->queue, k, 3, NULL, gws, lws, 0, NULL, NULL);
	if (e == CL_SUCCESS)
		e = clFinish(cl->queue);
	if (e != CL_SUCCESS)
		ret = FAIL(-EIO, "launch of %s failed (error %d)", name, e);
out:
	clReleaseKernel(k);
	return ret;
}
