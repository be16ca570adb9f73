// Performance directives: launch bounds, max registers, unroll pragmas, inlining controls.
__global__ void __launch_bounds__(1024) lb1(float *p) { p[threadIdx.x] *= 2; }
__global__ void __launch_bounds__(256, 4) lb2(float *p) { p[threadIdx.x] += 1; }
__global__ void __maxnreg__(40) mr(float *p) { p[threadIdx.x] -= 1; }
__global__ void unrolls(float *p, int n)
{
	float s = 0;
#pragma unroll 1
	for (int i = 0; i < n; i++) s += p[i];
#pragma unroll 4
	for (int i = 0; i < n; i++) s *= p[i];
#pragma nounroll
	for (int i = 0; i < n; i++) s -= p[i];
	p[0] = s;
}
__device__ __forceinline__ float fi(float x) { return x * 3; }
__device__ __noinline__ float ni(float x) { return x * 5; }
__global__ void inl(float *p) { p[threadIdx.x] = fi(p[threadIdx.x]) + ni(p[threadIdx.x + 1]); }
