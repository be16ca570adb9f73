// Dynamically sized stack allocations (alloca) and variable-length local buffers.
#include <cstddef>
extern "C" __device__ void *alloca(size_t);
__device__ __noinline__ int fill_and_sum(int n, const int *src)
{
	int *buf = (int *)alloca(n * sizeof(int));
	for (int i = 0; i < n; i++) buf[i] = src[i] * 2;
	int s = 0;
	for (int i = n - 1; i >= 0; i--) s += buf[i] ^ i;
	return s;
}
__global__ void use_alloca(const int *src, int *out, int n) { out[threadIdx.x] = fill_and_sum(n + (threadIdx.x & 3), src); }
