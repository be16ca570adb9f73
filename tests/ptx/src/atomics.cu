// Atomics of every width and scope, CAS loops, and fences.
__global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d, int n)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	atomicAdd(i, 1);
	atomicSub(i + 1, 2);
	atomicExch(u, (unsigned)t);
	atomicMin(i + 2, t);
	atomicMax(i + 3, t);
	atomicInc(u + 1, 100u);
	atomicDec(u + 2, 100u);
	atomicCAS(i + 4, t, t + 1);
	atomicAnd(u + 3, 0xF0u);
	atomicOr(u + 4, 1u << (t & 31));
	atomicXor(u + 5, (unsigned)t);
	atomicAdd(ull, 3ull);
	atomicCAS(ull + 1, 0ull, (unsigned long long)t);
	atomicMax(ull + 2, (unsigned long long)t);
	atomicAdd(f, 1.5f);
	atomicAdd(d, 2.5);
	atomicAdd_block(i + 5, 1);
	atomicAdd_system(i + 6, 1);
	__threadfence();
	__threadfence_block();
	__threadfence_system();
	float old = *f, assumed;
	do {
		assumed = old;
		old = __int_as_float(atomicCAS((int *)f, __float_as_int(assumed),
					       __float_as_int(fmaxf(assumed, (float)t))));
	} while (assumed != old);
	if (t < n)
		atomicAdd(i + 7, __float2int_rn(old));
}
__global__ void shared_atomics(int *out)
{
	__shared__ int hist[64];
	__shared__ unsigned long long wide[4];
	if (threadIdx.x < 64) hist[threadIdx.x] = 0;
	if (threadIdx.x < 4) wide[threadIdx.x] = 0;
	__syncthreads();
	atomicAdd(&hist[threadIdx.x & 63], 1);
	atomicAdd(&wide[threadIdx.x & 3], 1ull);
	__syncthreads();
	if (threadIdx.x < 64) out[threadIdx.x] = hist[threadIdx.x] + (int)wide[threadIdx.x & 3];
}
