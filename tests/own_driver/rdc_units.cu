// Two translation units built with -rdc (this file and rdc_units_b.cu): the fatbin holds one PTX
// per unit, and the own driver links them into one module (ptx-frontend/link.h). A kernel here
// calls a device function and reads a variable of the other unit, and both units print from the
// device (nvcc names each unit's format strings $str, $str$1, ...: the same names twice).
#include <cstdio>

extern __device__ int scale_b;              // defined in rdc_units_b.cu
__device__ int twice_b(int x);              // defined in rdc_units_b.cu
__global__ void kernel_b(int *out);         // defined in rdc_units_b.cu

__global__ void kernel_a(int *out)
{
	out[threadIdx.x] = twice_b(threadIdx.x) * scale_b;
	if (threadIdx.x == 0)
		printf("kernel_a: scale_b %d\n", scale_b);
}

int main()
{
	int *d, h[64], bad = 0;
	cudaMalloc(&d, sizeof(h));
	kernel_a<<<1, 32>>>(d);
	kernel_b<<<1, 32>>>(d + 32);
	cudaError_t e = cudaDeviceSynchronize();
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	for (int i = 0; i < 32; i++)
		bad += (h[i] != 2 * i * 3) + (h[32 + i] != i + 3);
	printf("%s, %d of 64 wrong\n", cudaGetErrorString(e), bad);
	return bad != 0 || e != cudaSuccess;
}
