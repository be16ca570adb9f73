// A second translation unit: namespaces, templates, shared memory, constant memory, a device
// function, so that an executable built from both holds several fatbin containers.
#include <cstdio>

__constant__ float scale_by[4] = {1.f, 2.f, 3.f, 4.f};

namespace probe_test {
__device__ __noinline__ float square(float x) { return x * x; }

template <typename T, int BLOCK>
__global__ void block_sum(const T *in, T *out, int n)
{
	__shared__ T part[BLOCK];
	int i = blockIdx.x * BLOCK + threadIdx.x;
	part[threadIdx.x] = i < n ? in[i] : T(0);
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, part[0]);
}
template __global__ void block_sum<float, 128>(const float *, float *, int);
template __global__ void block_sum<int, 256>(const int *, int *, int);
} // namespace probe_test

__global__ void squares(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = probe_test::square(x[i]) * scale_by[i & 3];
}

int main()
{
	float *d = nullptr;
	if (cudaMalloc(&d, 64 * sizeof(float)) != cudaSuccess) {
		puts("no GPU");
		return 0;
	}
	squares<<<1, 64>>>(d, 64);
	probe_test::block_sum<float, 128><<<1, 128>>>(d, d, 64);
	return cudaDeviceSynchronize() != cudaSuccess;
}
