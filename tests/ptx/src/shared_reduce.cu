// Shared memory: static and dynamic (extern) arrays, tree reduction, bank-conflict padding.
__global__ void reduce_static(const float *in, float *out, int n)
{
	__shared__ float s[256];
	int t = threadIdx.x, i = blockIdx.x * 256 + t;
	s[t] = i < n ? in[i] : 0.f;
	__syncthreads();
	for (int w = 128; w > 0; w >>= 1) {
		if (t < w)
			s[t] += s[t + w];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}
__global__ void reduce_dynamic(const double *in, double *out, int n)
{
	extern __shared__ double ds[];
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	ds[t] = i < n ? in[i] : 0.0;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1) {
		if (t < w)
			ds[t] += ds[t + w];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = ds[0];
}
__global__ void transpose(const float *in, float *out, int w, int h)
{
	__shared__ float tile[32][33];
	int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
	if (x < w && y < h)
		tile[threadIdx.y][threadIdx.x] = in[y * w + x];
	__syncthreads();
	x = blockIdx.y * 32 + threadIdx.x;
	y = blockIdx.x * 32 + threadIdx.y;
	if (x < h && y < w)
		out[y * h + x] = tile[threadIdx.x][threadIdx.y];
	__syncthreads_or(x > 3);
	__syncthreads_count(y > 2);
}
