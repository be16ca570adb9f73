// Loads and stores with cache hints, read-only loads, volatile and non-coherent accesses.
__global__ void hints(const float *__restrict__ a, float *b, volatile int *flag, const float4 *v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float x = __ldg(a + i) + __ldcg(a + i + 1) + __ldca(a + i + 2) + __ldcs(a + i + 3) + __ldlu(a + i + 4) + __ldcv(a + i + 5);
	float4 w = __ldg(v + i);
	__stcg(b + i, x);
	__stcs(b + i + n, w.x);
	__stwb(b + i + 2 * n, w.y);
	__stwt(b + i + 3 * n, w.z);
	while (*flag == 0) {}
	*flag = 2;
#if __CUDA_ARCH__ >= 800
	asm volatile("prefetch.global.L2::evict_last [%0];" :: "l"(b));
#else
	asm volatile("prefetch.global.L2 [%0];" :: "l"(b));
#endif
}
