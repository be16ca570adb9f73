// tests/gpu/capture.sh's application: bench/overhead's copy and vector-add kernels launched back
// to back for S seconds (every launch synchronised), printing exactly how many global accesses
// the kernels made, so that a memory trace's delivered + lost can be checked against it; and
// the host link's bandwidth, measured the two ways ring records can cross it.
//   cap_app copy|vecadd N S   ->  CAP kernel K n N launches L accesses A loop_ms T warmup_accesses W
//   (A counts every access, the untimed first launch's W included; L and T are the timed loop's)
//   cap_app bw MB             ->  BW dtoh_pinned_GBps X mapped_write_GBps Y
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "cap_app: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), \
				__LINE__);                                                     \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

__global__ void k_vecadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void k_copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

// 16 bytes per thread into host-mapped memory: what a ring record's bytes cost on the link.
__global__ void k_mapped_write(ulonglong2 *dst, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = make_ulonglong2(i, i ^ 0x5a5a);
}

static double ms_since(std::chrono::steady_clock::time_point s)
{
	return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
}

static int bandwidth(size_t mb)
{
	size_t bytes = mb << 20;
	void *d, *h;
	CK(cudaMalloc(&d, bytes));
	CK(cudaMallocHost(&h, bytes));
	CK(cudaMemset(d, 1, bytes));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	float best = 1e30f;
	for (int i = 0; i < 10; i++) {
		CK(cudaEventRecord(e0));
		CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		best = ms < best ? ms : best;
	}
	double dtoh = bytes / (best * 1e-3) / 1e9;
	ulonglong2 *m, *md;
	CK(cudaHostAlloc((void **)&m, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
	CK(cudaHostGetDevicePointer((void **)&md, m, 0));
	size_t n = bytes / sizeof(ulonglong2);
	best = 1e30f;
	for (int i = 0; i < 10; i++) {
		CK(cudaEventRecord(e0));
		k_mapped_write<<<132 * 16, 256>>>(md, n);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		best = ms < best ? ms : best;
	}
	double mapped = bytes / (best * 1e-3) / 1e9;
	printf("BW dtoh_pinned_GBps %.2f mapped_write_GBps %.2f bytes %zu\n", dtoh, mapped, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "bw"))
		return bandwidth((size_t)atol(argv[2]));
	if (argc != 4 || (strcmp(argv[1], "copy") && strcmp(argv[1], "vecadd"))) {
		fprintf(stderr, "usage: cap_app copy|vecadd N SECONDS | cap_app bw MB\n");
		return 2;
	}
	int vecadd = !strcmp(argv[1], "vecadd");
	int n = atoi(argv[2]);
	double secs = atof(argv[3]);
	float *a, *b, *c;
	CK(cudaMalloc(&a, (size_t)n * 4));
	CK(cudaMalloc(&b, (size_t)n * 4));
	CK(cudaMalloc(&c, (size_t)n * 4));
	CK(cudaMemset(a, 0, (size_t)n * 4));
	CK(cudaMemset(b, 0, (size_t)n * 4));
	int g = (n + 255) / 256;
	// One launch before the clock starts: the first pays for instrumenting and compiling the
	// kernel, which is not the rate events flow at. Its accesses are counted (every record is).
	if (vecadd)
		k_vecadd<<<g, 256>>>(a, b, c, n);
	else
		k_copy<<<g, 256>>>(a, c, n);
	CK(cudaDeviceSynchronize());
	long warm = (vecadd ? 3l : 2l) * n;
	long launches = 0;
	auto s = std::chrono::steady_clock::now();
	do {
		if (vecadd)
			k_vecadd<<<g, 256>>>(a, b, c, n);
		else
			k_copy<<<g, 256>>>(a, c, n);
		CK(cudaDeviceSynchronize());
		launches++;
	} while (ms_since(s) < secs * 1000);
	double el = ms_since(s);
	printf("CAP kernel %s n %d launches %ld accesses %ld loop_ms %.1f warmup_accesses %ld\n",
	       argv[1], n, launches, warm + launches * (vecadd ? 3l : 2l) * n, el, warm);
	return 0;
}
