// A kernel that needs each warp whole right after its entry (tests/gpu/reconverge.sh): as in
// cuda-samples' cdpAdvancedQuicksort, each warp takes __activemask(), lane 0 (threadIdx.x & 31)
// reserves the group's output slots with one atomicAdd, and the group's lowest lane broadcasts
// the offset. Correct only when the group holds lane 0, i.e. the warp is whole there (CUDA does
// not promise it; natively it is): a probe site before it that leaves the warp split gives the
// part without lane 0 an offset nobody reserved. Early returns (n not a multiple of 32) give the
// kernel exit sites in two blocks. Prints "warp_whole: PASS" when every index 0..n-1 was written
// exactly once, within bounds.
#include <cstdio>
#include <vector>

__global__ void scatter(unsigned *out, unsigned *next, unsigned *bad, unsigned n)
{
	unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
	if (gid >= n)
		return;
	unsigned active = __activemask();
	unsigned lane = threadIdx.x & 31;
	unsigned off = 0xffffffffu;   // what a lane that reserved nothing broadcasts
	if (lane == 0)
		off = atomicAdd(next, __popc(active));
	off = __shfl_sync(active, off, __ffs(active) - 1);
	unsigned rank = __popc(active & ((1u << lane) - 1));
	unsigned slot = off + rank;
	if (slot < n)
		out[slot] = gid;
	else
		atomicAdd(bad, 1);
}

int main()
{
	const unsigned n = 1000003, rounds = 5;
	unsigned *out, *next, *bad;
	cudaMalloc(&out, n * sizeof(unsigned));
	cudaMalloc(&next, sizeof(unsigned));
	cudaMalloc(&bad, sizeof(unsigned));
	std::vector<unsigned> h(n);
	int fails = 0;
	for (unsigned r = 0; r < rounds; r++) {
		cudaMemset(out, 0xff, n * sizeof(unsigned));
		cudaMemset(next, 0, sizeof(unsigned));
		cudaMemset(bad, 0, sizeof(unsigned));
		scatter<<<(n + 255) / 256, 256>>>(out, next, bad, n);
		unsigned hbad = 0, hnext = 0;
		if (cudaDeviceSynchronize() != cudaSuccess) {
			printf("warp_whole: FAIL (%s)\n", cudaGetErrorString(cudaGetLastError()));
			return 1;
		}
		cudaMemcpy(h.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
		cudaMemcpy(&hbad, bad, sizeof(unsigned), cudaMemcpyDeviceToHost);
		cudaMemcpy(&hnext, next, sizeof(unsigned), cudaMemcpyDeviceToHost);
		std::vector<unsigned char> seen(n, 0);
		unsigned missing = 0;
		for (unsigned i = 0; i < n; i++)
			if (h[i] < n)
				seen[h[i]]++;
		for (unsigned i = 0; i < n; i++)
			missing += seen[i] != 1;
		if (hbad || missing || hnext != n) {
			printf("round %u: %u lanes out of bounds, %u indices not written once, %u slots "
			       "reserved of %u\n", r, hbad, missing, hnext, n);
			fails++;
		}
	}
	printf("warp_whole: %s\n", fails ? "FAIL" : "PASS");
	return fails != 0;
}
