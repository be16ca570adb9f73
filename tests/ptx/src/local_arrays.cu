// Local memory: dynamically indexed arrays, structs on the stack, alloca-like patterns.
struct Big { int v[32]; float f[8]; };
__device__ __noinline__ int consume(Big *b, int i) { return b->v[i & 31] + (int)b->f[i & 7]; }
__global__ void locals(const int *idx, int *out)
{
	int a[64];
	Big big;
	for (int i = 0; i < 64; i++) a[i] = idx[i] * i;
	for (int i = 0; i < 32; i++) big.v[i] = a[(idx[i] + i) & 63];
	for (int i = 0; i < 8; i++) big.f[i] = (float)a[i];
	out[threadIdx.x] = a[idx[threadIdx.x] & 63] + consume(&big, threadIdx.x);
}
