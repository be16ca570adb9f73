// The math library: single and double precision transcendental functions (libdevice code).
__global__ void mathf(const float *x, float *y)
{
	float v = x[threadIdx.x];
	y[threadIdx.x] = sinf(v) + cosf(v) * tanf(v) + expf(v) - logf(v) + powf(v, 2.5f) + erff(v) +
			 lgammaf(v) + atan2f(v, 1.f) + cbrtf(v) + __sinf(v) + __expf(v) + rsqrtf(v) + fmodf(v, 3.f);
}
__global__ void mathd(const double *x, double *y)
{
	double v = x[threadIdx.x];
	y[threadIdx.x] = sin(v) + cos(v) + exp(v) + log1p(v) + pow(v, 1.5) + erfc(v) + tgamma(v) + acosh(v) +
			 sqrt(v) + rint(v) + j0(v) + ldexp(v, 3);
}
