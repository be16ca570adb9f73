// The end-to-end program: three kernels nvcc compiles here, whose PTX (from the fatbin nvcc
// embeds in this executable) is lowered to SPIR-V and run on PoCL by tests/spirv/e2e.c.
// Run on an NVIDIA GPU, main() prints the same results the test expects.
#include <cstdio>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

// One partial sum per block: shared memory and barriers.
__global__ void reduce_shared(const int *in, int *out, int n)
{
	__shared__ int s[256];
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	s[t] = i < n ? in[i] : 0;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1) {
		if (t < o)
			s[t] += s[t + o];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}

// Warp shuffles reduce each warp; lane 0 adds the warp's sum to the total.
__global__ void reduce_warp(const int *in, int *total, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int v = i < n ? in[i] : 0;
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(total, v);
}

int main()
{
	const int n = 1000;
	float *a, *b, *c;
	int *in, *part, *tot;
	cudaMallocManaged(&a, n * sizeof(float));
	cudaMallocManaged(&b, n * sizeof(float));
	cudaMallocManaged(&c, n * sizeof(float));
	cudaMallocManaged(&in, 1024 * sizeof(int));
	cudaMallocManaged(&part, 4 * sizeof(int));
	cudaMallocManaged(&tot, sizeof(int));
	for (int i = 0; i < n; i++)
		a[i] = i * 0.5f, b[i] = i * 0.25f, in[i] = i;
	*tot = 0;
	vadd<<<4, 256>>>(a, b, c, n);
	reduce_shared<<<4, 256>>>(in, part, n);
	reduce_warp<<<4, 256>>>(in, tot, n);
	cudaDeviceSynchronize();
	printf("c[999] = %g, partial sums %d %d %d %d, total %d\n", c[999], part[0], part[1], part[2], part[3], *tot);
	return 0;
}
