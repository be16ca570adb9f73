// Half and bfloat16 arithmetic, packed pairs, conversions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void halfs(const __half *a, const __half2 *b, __half *o, __half2 *o2, float *f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half x = a[i];
	__half2 y = b[i];
	__half2 z = __hfma2(y, y, __half2half2(x));
	o[i] = __hadd(x, __hmul(x, __float2half(0.5f))) ;
	o2[i] = h2exp(__hmax2(z, y));
	f[i] = __half2float(hsin(x)) + __low2float(z) + __high2float(y);
	if (__hgt(x, __float2half(1.0f))) o[i] = hsqrt(x);
}
__global__ void bf16s(const __nv_bfloat16 *a, const __nv_bfloat162 *b, __nv_bfloat16 *o, float *f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__nv_bfloat16 x = a[i];
	__nv_bfloat162 y = b[i];
	__nv_bfloat162 z = __hmul2(y, y);
	o[i] = __hadd(x, __float2bfloat16(f[i]));
	f[i] = __bfloat162float(x) + __low2float(z) + __bfloat162float(__hmax(x, __high2bfloat16(y)));
}
