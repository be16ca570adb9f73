// Kernel parameters: large structs by value, __grid_constant__, arrays in structs, alignment.
struct __align__(16) Params { float m[4][4]; int n; double scale; char tag[7]; };
struct Small { char c; short s; };
__global__ void gc(const __grid_constant__ Params p, float *out, Small sm, double d, char c)
{
	const float *row = p.m[threadIdx.x & 3];
	out[threadIdx.x] = row[0] * (float)p.scale + row[3] + p.n + p.tag[threadIdx.x % 7] + sm.c + sm.s + (float)d + c;
}
__global__ void byval(Params p, float *out) { out[threadIdx.x] = p.m[1][threadIdx.x & 3] + p.tag[2]; }
__global__ void noparams() { }
