/* cuda-samples' matrixMul kernel (BLOCK_SIZE 32) written in OpenCL C, line for line: the
 * reference for what PoCL can make of that GEMM. mm_global takes global pointers; mm_ulong takes
 * u64 addresses and casts them, as our lowering does with PTX pointers (buf: vs gbuf: in
 * kernel_time). */
#define BS 32

#define BODY(C, A, B)                                                                      \
	int bx = get_group_id(0), by = get_group_id(1), tx = get_local_id(0), ty = get_local_id(1); \
	int aBegin = wA * BS * by, aEnd = aBegin + wA - 1, aStep = BS;                           \
	int bBegin = BS * bx, bStep = BS * wB;                                                    \
	float Csub = 0;                                                                           \
	__local float As[BS][BS];                                                                 \
	__local float Bs[BS][BS];                                                                 \
	for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {                     \
		As[ty][tx] = A[a + wA * ty + tx];                                                 \
		Bs[ty][tx] = B[b + wB * ty + tx];                                                 \
		barrier(CLK_LOCAL_MEM_FENCE);                                                     \
		for (int k = 0; k < BS; ++k)                                                      \
			Csub += As[ty][k] * Bs[k][tx];                                            \
		barrier(CLK_LOCAL_MEM_FENCE);                                                     \
	}                                                                                         \
	int c = wB * BS * by + BS * bx;                                                           \
	C[c + wB * ty + tx] = Csub;

__kernel void mm_global(__global float *C, __global const float *A, __global const float *B, int wA, int wB)
{
	BODY(C, A, B)
}

__kernel void mm_ulong(ulong Cp, ulong Ap, ulong Bp, int wA, int wB)
{
	__global float *C = (__global float *)Cp;
	__global const float *A = (__global const float *)Ap;
	__global const float *B = (__global const float *)Bp;
	BODY(C, A, B)
}
