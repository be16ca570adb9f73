// Conversions between every scalar type, with rounding modes and saturation.
#include <cstdint>
__global__ void conv(const double *d, const float *f, const int64_t *l, const uint8_t *b, int64_t *lo, float *fo, double *dout, int *io, uint16_t *so)
{
	int i = threadIdx.x;
	double x = d[i];
	float y = f[i];
	io[i] = __double2int_rz(x) + __float2int_ru(y) + __float2int_rd(y) + (int)__float2uint_rn(y) + (int)b[i] + (int)(int8_t)l[i];
	lo[i] = __double2ll_rn(x) + (int64_t)__float2ull_rz(y) + (int64_t)x;
	fo[i] = __double2float_ru(x) + __ll2float_rn(l[i]) + __uint2float_rz((unsigned)l[i]) + __saturatef(y) + __int_as_float((int)l[i]);
	dout[i] = __ll2double_rn(l[i]) + (double)y + __longlong_as_double(l[i]) + (double)(uint64_t)l[i];
	so[i] = (uint16_t)y + (uint16_t)__float_as_uint(y);
}
