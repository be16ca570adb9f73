// A small app for cuda-gdb through the shim (built with -g -G): one kernel to break in.
#include <cstdio>

__global__ void debug_me(int *out, int k)
{
	int i = threadIdx.x;
	int v = i * k + 7;
	out[i] = v;
}

int main()
{
	int *d, h[32];
	cudaMalloc(&d, sizeof(h));
	debug_me<<<1, 32>>>(d, 3);
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	int sum = 0;
	for (int i = 0; i < 32; i++)
		sum += h[i];
	printf("sum %d\n", sum);
	cudaFree(d);
	return 0;
}
