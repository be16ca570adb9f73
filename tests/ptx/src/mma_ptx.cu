// archs: sm_75 sm_90 sm_100
// mma.sync and ldmatrix/stmatrix through inline PTX, as CUTLASS-style code writes them.
#include <cstdint>
__global__ void mma_kernel(const uint32_t *a, const uint32_t *b, float *c)
{
	__shared__ __align__(16) uint16_t smem[16 * 16];
	smem[threadIdx.x] = (uint16_t)threadIdx.x;
	__syncthreads();
	uint32_t addr = (uint32_t)__cvta_generic_to_shared(&smem[(threadIdx.x % 16) * 8]);
	uint32_t r0, r1, r2, r3;
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
	uint32_t t0, t1;
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(t0), "=r"(t1) : "r"(addr));
	float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
		     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0 ^ a[0]), "r"(r1), "r"(b[threadIdx.x] ^ t0));
#if __CUDA_ARCH__ >= 800
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(t0), "r"(t1));
	int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
	asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(t0), "r"(t1));
	d0 += (float)(i0 + i1 + i2 + i3);
#endif
#if __CUDA_ARCH__ >= 900
	asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r0), "r"(r1));
#endif
	c[threadIdx.x * 4 + 0] = d0; c[threadIdx.x * 4 + 1] = d1; c[threadIdx.x * 4 + 2] = d2; c[threadIdx.x * 4 + 3] = d3;
}
