// Module-scope variables: initialized arrays and structs, pointers to globals (generic()),
// constant memory, managed memory, extern shared, static device data.
struct Entry { const char *name; int *ptr; float w[3]; };
__device__ int counters[8] = {1, 2, 3};
__device__ int one = 1;
__device__ Entry entries[2] = {{"first", &one, {1.f, 2.f, 3.f}}, {"second", counters + 2, {4.f}}};
__device__ const char *names[] = {"alpha", "beta", "gamma"};
__constant__ float coeffs[16] = {0.5f, 0.25f, 0.125f};
__constant__ double dconst = 3.5;
__managed__ int managed_counter;
__device__ __managed__ float managed_arr[4];
__device__ unsigned long long big = 0xFFFFFFFFFFFFFFFFull;
__device__ char text[] = "hello \"ptx\"\n";
static __device__ short shorts[5] = {-1, -2, 3};
__device__ float gfl[2] = {1.f, 2.f};
__device__ float *fptr = gfl + 1;
__global__ void use_globals(float *out)
{
	int t = threadIdx.x;
	out[t] = coeffs[t & 15] * (float)dconst + (float)counters[t & 7] + entries[t & 1].w[0] +
		 (float)*entries[t & 1].ptr + (float)names[t % 3][0] + (float)big + (float)text[t & 7] +
		 (float)shorts[t % 5] + *fptr;
	atomicAdd(&managed_counter, 1);
	managed_arr[t & 3] += 1.f;
}
