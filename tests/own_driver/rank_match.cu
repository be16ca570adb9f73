// CUB's onesweep ranking step (BlockRadixRankMatchEarlyCounts, as radixSortThrust's
// DeviceRadixSortOnesweepKernel has it in PTX): each warp finds the lanes holding the same 8-bit
// digit with eight ballots (CUB's inline asm: `vote.ballot.sync` then `@!p not.b32`), the
// highest such lane adds the group's size to a per-warp shared counter, __shfl_sync hands the old
// count to the group, and each lane's rank is that count plus popc(peers & %lanemask_le) - 1.
// In radixSortThrust that rank came out so that a shared store went to window offset -4
// (0xfffffffc, signal 11; corpus-report.md); alone, as here (12 warps of 384-thread blocks, as
// onesweep's), every rank is right: the fault needs more of the kernel than this step.
#include <cstdio>
#include <cstdlib>

__device__ __forceinline__ unsigned ballot_or_not(unsigned label, unsigned bit)
{
	unsigned mask;
	asm("{\n    .reg .pred p;\n    and.b32 %0, %1, %2;    setp.ne.u32 p, %0, 0;\n"
	    "    vote.ballot.sync.b32 %0, p, 0xffffffff;\n    @!p not.b32 %0, %0;\n}\n"
	    : "=r"(mask) : "r"(label), "r"(bit));
	return mask;
}

__global__ void rank(const unsigned *keys, int *out)
{
	__shared__ unsigned counts[12][256];
	for (int i = threadIdx.x; i < 12 * 256; i += blockDim.x)
		(&counts[0][0])[i] = 0;
	__syncthreads();
	unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	unsigned digit = keys[tid] & 255;
	unsigned peers = 0xffffffff;
#pragma unroll
	for (int b = 0; b < 8; b++)
		peers &= ballot_or_not(digit, 1u << b);
	int leader = 31 - __clz(peers);
	unsigned le;
	asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
	unsigned r = __popc(peers & le);
	unsigned base = 0;
	if ((int)lane == leader)
		base = atomicAdd(&counts[warp][digit], r);
	base = __shfl_sync(0xffffffff, base, leader);
	__syncthreads();
	out[tid] = (int)(base + r) - 1;
}

int main()
{
	const int T = 384, B = 4, N = T * B;
	unsigned *k;
	int *o;
	cudaMallocManaged(&k, N * 4);
	cudaMallocManaged(&o, N * 4);
	srand(1);
	for (int i = 0; i < N; i++)
		k[i] = (unsigned)rand() % 7;
	rank<<<B, T>>>(k, o);
	cudaError_t e = cudaDeviceSynchronize();
	int bad = 0;
	for (int i = 0; i < N; i++) {
		int want = 0;
		for (int j = i & ~31; j < i; j++)
			want += (k[j] & 255) == (k[i] & 255);
		if (o[i] != want && bad++ < 5)
			printf("thread %d: rank %d, want %d\n", i, o[i], want);
	}
	printf("%s: %d of %d ranks wrong\n", cudaGetErrorString(e), bad, N);
	return bad != 0;
}
