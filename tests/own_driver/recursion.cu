// Recursion nvcc keeps (a result used after the recursive call, and two functions calling each
// other) on the own driver: OpenCL has none and PoCL's compiler crashed the application on it
// (a segmentation fault inside libpocl). The kernels that need it are refused at their launch
// (cudaErrorNoKernelImageForDevice, with one line of the shim's that names the recursive call),
// the application goes on, and a kernel of the same module without recursion runs.
// Recursion nvcc removes (factorial's accumulator becomes a loop) runs as before.
#include <cstdio>

__device__ __noinline__ int g(int n)
{
	if (n < 2)
		return 1;
	int a = g(n - 1);
	return a * a % 1000 + n;
}
__device__ __noinline__ int odd(int n);
__device__ __noinline__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__device__ __noinline__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__device__ __noinline__ int fact(int n) { return n < 2 ? 1 : n * fact(n - 1); }

__global__ void k_g(int *out) { out[threadIdx.x] = g(threadIdx.x % 9); }
__global__ void k_even(int *out) { out[threadIdx.x] = even(threadIdx.x); }
__global__ void k_fact(int *out) { out[threadIdx.x] = fact(threadIdx.x % 8); }
__global__ void k_plain(int *out) { out[threadIdx.x] = 3 * threadIdx.x; }

static void run(const char *name, void (*k)(int *), int *d)
{
	int h[32] = {0};
	cudaMemset(d, 0, sizeof(h));
	k<<<1, 32>>>(d);
	cudaError_t launch = cudaGetLastError(), sync = cudaDeviceSynchronize();
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	printf("%s: launch %s, sync %s, out[7] %d\n", name, cudaGetErrorString(launch), cudaGetErrorString(sync), h[7]);
}

int main()
{
	int *d;
	cudaMalloc(&d, 32 * sizeof(int));
	run("k_g", k_g, d);
	run("k_even", k_even, d);
	run("k_fact", k_fact, d);
	run("k_plain", k_plain, d);
	return 0;
}
