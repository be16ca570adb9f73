// A CUDA app with a known access pattern, for exact probe counts (tests/gpu/e2e.sh).
// pattern: n = G*B threads; every thread loads a[i], odd threads also a[i-1]; every thread stores
//   b[i]: n + n/2 global loads, n global stores.
// block_sum: each thread stores one shared word, bar.sync, thread 0 loads the B words and stores
//   one global word: G*B shared stores, G*B shared loads, G*B global loads (x[i]), G global stores.
// Prints checksums so that instrumented runs can be compared byte for byte.
#include <cstdio>
#include <cuda_runtime.h>

#define B 128

// A device function the compiler keeps (func_entry/func_exit sites).
__device__ __noinline__ float twice(float x)
{
	return 2.0f * x;
}

__global__ void pattern(const float *a, float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = twice(a[i]);
	if (i & 1)
		v += a[i - 1];
	b[i] = v;
}

__global__ void block_sum(const float *x, float *out)
{
	__shared__ volatile float s[B];
	s[threadIdx.x] = x[blockIdx.x * B + threadIdx.x];
	__syncthreads();
	if (threadIdx.x == 0) {
		float t = 0;
		for (int k = 0; k < B; k++)
			t += s[k];
		out[blockIdx.x] = t;
	}
}

int main(int argc, char **argv)
{
	int G = argc > 1 ? atoi(argv[1]) : 64;
	int n = G * B;
	float *a, *b, *out;
	cudaMallocManaged(&a, n * sizeof(float));
	cudaMallocManaged(&b, n * sizeof(float));
	cudaMallocManaged(&out, G * sizeof(float));
	for (int i = 0; i < n; i++)
		a[i] = (float)(i % 97) * 0.5f;
	pattern<<<G, B>>>(a, b, n);
	block_sum<<<G, B>>>(b, out);
	cudaError_t e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("CUDA error: %s\n", cudaGetErrorString(e));
		return 1;
	}
	double sb = 0, so = 0;
	for (int i = 0; i < n; i++)
		sb += b[i];
	for (int i = 0; i < G; i++)
		so += out[i];
	printf("G=%d B=%d sum(b)=%.1f sum(out)=%.1f\n", G, B, sb, so);
	return 0;
}
