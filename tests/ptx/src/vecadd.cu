// Plain element-wise kernels: grid-stride loops, 64-bit indexing, restrict pointers.
__global__ void vecadd(const float *__restrict__ a, const float *__restrict__ b, float *c, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		c[i] = a[i] + b[i];
}
__global__ void saxpy(float alpha, const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = alpha * x[i] + y[i];
}
__global__ void daxpy_vec(double alpha, const double2 *x, double2 *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		double2 a = x[i], b = y[i];
		y[i] = make_double2(alpha * a.x + b.x, alpha * a.y + b.y);
	}
}
__global__ void copy4(const int4 *in, int4 *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}
