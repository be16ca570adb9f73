/* kernel_time: time one kernel per launch on the first OpenCL device (PoCL here), built either
 * from our SPIR-V (turned back into LLVM 15 bitcode by llvm-spirv-15 -r and built as SPIR 1.2,
 * exactly as spirv/runtime_opencl.c does for PoCL 3.1) or from OpenCL C source. It exists to
 * compare what PoCL makes of our lowering with what it makes of the same kernel written in
 * OpenCL C, launch for launch, on the same machine and load.
 *
 *   kernel_time FILE.spv|FILE.cl KERNEL GX,GY,GZ BX,BY,BZ ITERS ARG...
 *
 * ARG: buf:BYTES (an SVM buffer passed as its u64 address, as our lowering takes PTX pointers),
 * gbuf:BYTES (the same buffer passed as a global pointer, for OpenCL C kernels), i32:V, u64:V,
 * f32:V. Buffers hold floats 0.01*(i%97). Prints the first launch (it includes PoCL's
 * work-group function build) and the minimum and median of the other ITERS launches. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, "kernel_time: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		DIE("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n)
		DIE("cannot read %s", path);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void dims(const char *s, size_t d[3])
{
	d[0] = d[1] = d[2] = 1;
	if (sscanf(s, "%zu,%zu,%zu", &d[0], &d[1], &d[2]) < 1)
		DIE("bad dimensions %s", s);
}

int main(int argc, char **argv)
{
	if (argc < 6)
		DIE("usage: kernel_time FILE.spv|FILE.cl KERNEL GX,GY,GZ BX,BY,BZ ITERS ARG...");
	const char *file = argv[1], *name = argv[2];
	size_t grid[3], block[3], gws[3];
	dims(argv[3], grid);
	dims(argv[4], block);
	for (int d = 0; d < 3; d++)
		gws[d] = grid[d] * block[d];
	int iters = atoi(argv[5]);

	cl_platform_id plat;
	cl_device_id dev;
	cl_int e;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		DIE("no OpenCL device");
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
	cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);

	size_t len;
	cl_program prog;
	const char *opts = "";
	if (strstr(file, ".cl")) {
		char *src = (char *)slurp(file, &len);
		prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, &len, &e);
	} else {
		/* the route spirv/runtime_opencl.c takes on PoCL 3.1 */
		char bc[] = "/tmp/kernel_time.XXXXXX";
		int fd = mkstemp(bc);
		if (fd < 0)
			DIE("mkstemp");
		close(fd);
		char cmd[4096];
		snprintf(cmd, sizeof(cmd), "llvm-spirv-15 -r '%s' -o '%s'", file, bc);
		if (system(cmd) != 0)
			DIE("%s failed", cmd);
		unsigned char *bin = slurp(bc, &len);
		unlink(bc);
		cl_int st;
		prog = clCreateProgramWithBinary(ctx, 1, &dev, &len, (const unsigned char **)&bin, &st, &e);
		opts = "-x spir -spir-std=1.2";
	}
	if (e != CL_SUCCESS)
		DIE("program rejected (%d)", e);
	if ((e = clBuildProgram(prog, 1, &dev, opts, NULL, NULL)) != CL_SUCCESS) {
		char log[8192] = "";
		clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
		DIE("build failed (%d): %s", e, log);
	}
	cl_kernel k = clCreateKernel(prog, name, &e);
	if (e != CL_SUCCESS)
		DIE("no kernel %s (%d)", name, e);

	void *svm[64];
	int nsvm = 0;
	for (int i = 6; i < argc; i++) {
		cl_uint ai = (cl_uint)(i - 6);
		char *v = strchr(argv[i], ':');
		if (!v)
			DIE("bad argument %s", argv[i]);
		v++;
		if (!strncmp(argv[i], "buf:", 4) || !strncmp(argv[i], "gbuf:", 5)) {
			size_t n = strtoull(v, NULL, 0);
			float *p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, n, 128);
			if (!p)
				DIE("clSVMAlloc %zu", n);
			for (size_t j = 0; j < n / 4; j++)
				p[j] = 0.01f * (float)(j % 97);
			svm[nsvm++] = p;
			if (argv[i][0] == 'g') {
				e = clSetKernelArgSVMPointer(k, ai, p);
			} else {
				uint64_t a = (uint64_t)(uintptr_t)p;
				e = clSetKernelArg(k, ai, 8, &a);
			}
		} else if (!strncmp(argv[i], "i32:", 4)) {
			int32_t x = (int32_t)strtol(v, NULL, 0);
			e = clSetKernelArg(k, ai, 4, &x);
		} else if (!strncmp(argv[i], "u64:", 4)) {
			uint64_t x = strtoull(v, NULL, 0);
			e = clSetKernelArg(k, ai, 8, &x);
		} else if (!strncmp(argv[i], "f32:", 4)) {
			float x = strtof(v, NULL);
			e = clSetKernelArg(k, ai, 4, &x);
		} else {
			DIE("bad argument %s", argv[i]);
		}
		if (e != CL_SUCCESS)
			DIE("argument %u rejected (%d)", ai, e);
	}
	if (nsvm)
		clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, nsvm * sizeof(void *), svm);

	double *t = calloc((size_t)iters + 1, sizeof(double));
	for (int i = 0; i <= iters; i++) {
		double t0 = now();
		if ((e = clEnqueueNDRangeKernel(q, k, 3, NULL, gws, block, 0, NULL, NULL)) != CL_SUCCESS || (e = clFinish(q)) != CL_SUCCESS)
			DIE("launch failed (%d)", e);
		t[i] = now() - t0;
	}
	double first = t[0];
	qsort(t + 1, (size_t)iters, sizeof(double), cmp_d);
	/* a checksum of every buffer, so two builds of one kernel can be compared */
	double sum = 0;
	for (int i = 6, b = 0; i < argc; i++) {
		if (!strstr(argv[i], "buf:"))
			continue;
		size_t n = strtoull(strchr(argv[i], ':') + 1, NULL, 0) / 4;
		for (size_t j = 0; j < n; j++)
			sum += ((float *)svm[b])[j];
		b++;
	}
	printf("%s %s: first %.4f s, min %.4f s, median %.4f s per launch (%d launches), checksum %.6g\n", file, name, first,
	       iters ? t[1] : first, iters ? t[1 + iters / 2] : first, iters, sum);
	return 0;
}
