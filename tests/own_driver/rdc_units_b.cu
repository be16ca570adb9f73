// The second translation unit of rdc_units.cu.
#include <cstdio>

__device__ int scale_b = 3;

__device__ int twice_b(int x) { return 2 * x; }

__global__ void kernel_b(int *out)
{
	out[threadIdx.x] = threadIdx.x + scale_b;
	if (threadIdx.x == 0)
		printf("kernel_b: %d threads\n", blockDim.x);
}
