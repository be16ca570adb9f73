// Device function calls: non-inlined functions taking and returning structs, vectors, many args.
struct S { int a; float b; double c; char d[3]; };
__device__ __noinline__ S make_s(int a, float b) { S s; s.a = a; s.b = b; s.c = a * 2.0; s.d[0] = 1; s.d[1] = 2; s.d[2] = (char)a; return s; }
__device__ __noinline__ float4 mix(float4 x, float4 y, float t) { return make_float4(x.x + t * y.x, x.y + t * y.y, x.z, x.w * y.w); }
__device__ __noinline__ long long many(int a, int b, int c, int d, int e, int f, int g, int h, int i, int j, long long k, double l)
{ return a + b * c - d + e * f + g - h + i * j + k + (long long)l; }
__device__ __noinline__ void by_ref(int &x, S *s) { x += s->a; s->b *= 2; }
__global__ void calls(S *out, float4 *v, long long *w, int n)
{
	int t = threadIdx.x;
	S s = make_s(t, 1.5f);
	by_ref(t, &s);
	out[t] = s;
	v[t] = mix(v[t], v[t + 1], 0.25f);
	w[t] = many(t, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10ll, 11.0);
}
