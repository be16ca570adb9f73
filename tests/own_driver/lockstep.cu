// Warp collectives that part of a block may not reach where lower_diverge.c cannot rewrite the
// region around them: the kernel runs in lock step (spirv/lower_lockstep.c). Each line counts
// what differs from the host's answer:
//   ranges          per-warp ranges of different lengths, a cooperative groups ballot in a loop
//                   condition nvcc lays out rotated (the body before the condition, entered in
//                   its middle), a load on one path to the ballot;
//   warp0           warp 0 alone in a do/while on __all_sync, the block waiting at __syncthreads;
//   inclusive_scan  thrust over many tiles: CUB's decoupled look-back (a vote in a loop in warp
//                   0's branch), which spun forever before.
#include <cstdio>
#include <cooperative_groups.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
namespace cg = cooperative_groups;

__global__ void ranges(const int *in, int *out, int n)
{
	cg::thread_block cta = cg::this_thread_block();
	cg::thread_block_tile<32> t = cg::tiled_partition<32>(cta);
	int warp = threadIdx.x / 32;
	int begin = warp * 37, end = min(begin + 11 + warp * 23, n);
	int cnt = 0;
	for (int i = begin + t.thread_rank(); t.any(i < end); i += 32) {
		bool act = i < end;
		int v = act ? in[i] : 0;
		cnt += __popc(t.ballot(act && (v & 1)));
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = cnt;
}
// warp 0 alone loops until all its lanes are satisfied
__global__ void warp0(const int *in, int *out)
{
	__shared__ int s;
	if (threadIdx.x == 0) s = 0;
	__syncthreads();
	if (threadIdx.x < 32) {
		int k = 0;
		do { k++; } while (!__all_sync(0xffffffff, k >= in[threadIdx.x]));
		if (threadIdx.x == 0) s = k;
	}
	__syncthreads();
	out[threadIdx.x] = s;
}
int main()
{
	const int n = 1000, T = 128;
	int *in, *out;
	cudaMallocManaged(&in, n * sizeof(int));
	cudaMallocManaged(&out, T * sizeof(int));
	for (int i = 0; i < n; i++) in[i] = (i * 7919) % 13;
	ranges<<<1, T>>>(in, out, n);
	cudaDeviceSynchronize();
	int bad = 0;
	for (int w = 0; w < T / 32; w++) {
		int begin = w * 37, end = begin + 11 + w * 23 < n ? begin + 11 + w * 23 : n, c = 0;
		for (int i = begin; i < end; i++) c += in[i] & 1;
		for (int l = 0; l < 32; l++) bad += out[w * 32 + l] != c;
	}
	printf("ranges: %d wrong\n", bad);
	warp0<<<1, T>>>(in, out);
	cudaDeviceSynchronize();
	int mx = 0; for (int i = 0; i < 32; i++) mx = in[i] > mx ? in[i] : mx;
	if (mx < 1) mx = 1;
	bad = 0; for (int i = 0; i < T; i++) bad += out[i] != mx;
	printf("warp0: %d wrong (%d expected, %d got)\n", bad, mx, out[0]);
	const int m = 100000;   // many tiles: CUB's decoupled look-back
	thrust::device_vector<int> v(m), o(m);
	thrust::sequence(v.begin(), v.end());
	thrust::inclusive_scan(v.begin(), v.end(), o.begin());
	thrust::host_vector<int> h = o;
	long long s = 0;
	bad = 0;
	for (int i = 0; i < m; i++) {
		s += i;
		bad += h[i] != (int)s;
	}
	printf("inclusive_scan of %d: %d wrong\n", m, bad);
	return 0;
}
