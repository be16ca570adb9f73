// Recursion nvcc keeps (a result used after the recursive call, and two functions calling each
// other) on the own driver: OpenCL has none (PoCL's compiler crashed the application on it, a
// segmentation fault inside libpocl). The calls within a cycle are not made: a kernel that has a
// recursive path but does not take it runs as written (k_pick with impl 0, as cuda-samples'
// interval picks one of three implementations at run time); a thread that reaches such a call
// fails its launch (unspecified launch failure, one line of the shim's) and, as after a trap on a
// GPU, the context is unusable from then on, so that launch comes last. Recursion nvcc removes
// (factorial's accumulator becomes a loop) runs as before.
#include <cstdio>

__device__ __noinline__ int g(int n)
{
	if (n < 2)
		return 1;
	int a = g(n - 1);
	return a * a % 1000 + n;
}
__device__ __noinline__ int g_loop(int n)
{
	int a = 1;
	for (int i = 2; i <= n; i++)
		a = a * a % 1000 + i;
	return a;
}
__device__ __noinline__ int odd(int n);
__device__ __noinline__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__device__ __noinline__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__device__ __noinline__ int fact(int n) { return n < 2 ? 1 : n * fact(n - 1); }

__global__ void k_pick(int *out, int impl)
{
	int n = threadIdx.x % 9;
	out[threadIdx.x] = impl ? g(n) : g_loop(n);
}
__global__ void k_even(int *out, int) { out[threadIdx.x] = even(threadIdx.x); }
__global__ void k_fact(int *out, int) { out[threadIdx.x] = fact(threadIdx.x % 8); }
__global__ void k_plain(int *out, int) { out[threadIdx.x] = 3 * threadIdx.x; }

static void run(const char *name, void (*k)(int *, int), int arg, int *d)
{
	int h[32] = {0};
	cudaMemset(d, 0, sizeof(h));
	k<<<1, 32>>>(d, arg);
	cudaError_t launch = cudaGetLastError(), sync = cudaDeviceSynchronize();
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	printf("%s(%d): launch %s, sync %s, out[7] %d, out[8] %d\n", name, arg, cudaGetErrorString(launch),
	       cudaGetErrorString(sync), h[7], h[8]);
}

int main()
{
	int *d;
	cudaMalloc(&d, 32 * sizeof(int));
	run("k_pick", k_pick, 0, d);
	run("k_fact", k_fact, 0, d);
	run("k_plain", k_plain, 0, d);
	run("k_even", k_even, 0, d);
	run("k_plain", k_plain, 0, d);
	return 0;
}
