// Kernels the driver-API app loads as PTX (nvcc -ptx): no runtime involved.
extern "C" __global__ void poly(const float *x, float *y, float a, float b, float c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = (a * x[i] + b) * x[i] + c;
}

extern "C" __global__ void iota_mix(unsigned *y, unsigned seed, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = (i * 2654435761u) ^ seed;
}
