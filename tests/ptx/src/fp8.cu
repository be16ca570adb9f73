// archs: sm_90 sm_100
// FP8 conversions and packed half math of Hopper and later.
#include <cuda_fp8.h>
#include <cuda_fp16.h>
__global__ void fp8(const float *in, __nv_fp8_e4m3 *o8, __nv_fp8x2_e5m2 *o82, float *out)
{
	float v = in[threadIdx.x];
	__nv_fp8_e4m3 a(v);
	__nv_fp8x2_e5m2 b(make_float2(v, v * 2));
	o8[threadIdx.x] = a;
	o82[threadIdx.x] = b;
	__half2 h = __half2(b);
	out[threadIdx.x] = (float)a + __low2float(h);
}
