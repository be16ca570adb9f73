// gpuprobe's own driver: newer PTX and thread block clusters (tests/own_driver/cu_program.sh):
// built with sm_90 machine code and compute_120 PTX only; clusters of 2 are refused (clusters.err).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(int *v, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] = v[i] * k + i;
}

int main()
{
	const int n = 1000;
	int h[n], *d;
	for (int i = 0; i < n; i++)
		h[i] = i;
	cudaMalloc(&d, sizeof(h));
	cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
	scale<<<(n + 127) / 128, 128>>>(d, n, 3);
	cudaError_t e = cudaGetLastError();
	printf("launch: %s\n", cudaGetErrorName(e));
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != i * 3 + i;
	printf("scale: %d of %d wrong\n", bad, n);

	for (unsigned c = 1; c <= 2; c++) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute a[1];
		a[0].id = cudaLaunchAttributeClusterDimension;
		a[0].val.clusterDim.x = c, a[0].val.clusterDim.y = 1, a[0].val.clusterDim.z = 1;
		cfg.gridDim = dim3(8), cfg.blockDim = dim3(128), cfg.attrs = a, cfg.numAttrs = 1;
		int clusters = -1;
		e = cudaOccupancyMaxActiveClusters(&clusters, scale, &cfg);
		printf("clusters of %u: occupancy %s, %s\n", c, cudaGetErrorName(e), clusters > 0 ? "some" : clusters == 0 ? "none" : "unset");
		e = cudaLaunchKernelEx(&cfg, scale, d, n, 1);
		printf("clusters of %u: launch %s\n", c, cudaGetErrorName(e));
		cudaGetLastError();
	}
	e = cudaDeviceSynchronize();
	printf("sync: %s\n", cudaGetErrorName(e));
	return 0;
}
