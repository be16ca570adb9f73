// gpuprobe's own driver: warp collectives in divergent code (tests/own_driver/cu_program.sh).
// Each kernel's result is checked against what CUDA defines, computed here on the host; the
// program prints one line per kernel with the number of wrong values.
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

// 1. A grid-stride loop whose threads leave at different iterations, a vote inside: each
// iteration's ballot counts the lanes still in the loop.
__global__ void loop_ballot(int *out, int n)
{
	int acc = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		acc += __popc(__ballot_sync(__activemask(), i % 3 == 0));
	out[threadIdx.x] = acc;
}

// 2. coalesced_threads() inside a branch inside such a loop (warpAggregatedAtomicsCG's filter).
__device__ int agg_inc(int *counter)
{
	cg::coalesced_group active = cg::coalesced_threads();
	int res = 0;
	if (active.thread_rank() == 0)
		res = atomicAdd(counter, active.size());
	return active.shfl(res, 0) + active.thread_rank();
}

__global__ void filter(int *dst, int *nres, const int *src, int n)
{
	for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += gridDim.x * blockDim.x)
		if (src[i] > 0)
			dst[agg_inc(nres)] = src[i];
}

// 3. labeled_partition (match.any) of the active threads (its bucket counter).
__global__ void buckets(int *slot, int *counter, const int *src, int n, int nb)
{
	for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += gridDim.x * blockDim.x) {
		int b = src[i];
		if (b < nb) {
			cg::coalesced_group active = cg::coalesced_threads();
			auto g = cg::labeled_partition(active, b);
			int res = 0;
			if (g.thread_rank() == 0)
				res = atomicAdd(&counter[b], g.size());
			slot[i] = g.shfl(res, 0) + g.thread_rank();
		}
	}
}

// 4. A block reduction finished by warp 0 alone (simpleAWBarrier's reduceBlockData).
__global__ void tile_reduce(double *out)
{
	__shared__ double part[32];
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
	double v = threadIdx.x + 1;
	for (int o = 16; o > 0; o /= 2)
		v += tile.shfl_down(v, o);
	if (tile.thread_rank() == 0)
		part[tile.meta_group_rank()] = v;
	__syncthreads();
	if (tile.meta_group_rank() == 0) {
		double b = tile.thread_rank() < tile.meta_group_size() ? part[tile.thread_rank()] : 0.0;
		for (int o = 16; o > 0; o /= 2)
			b += tile.shfl_down(b, o);
		if (tile.thread_rank() == 0)
			out[blockIdx.x] = b;
	}
}

int main()
{
	const int T = 64, n = 100, nb = 3;
	int *d, *cnt, *src, h[n], hs[n], bad;

	cudaMalloc(&d, 4 * n * 4);
	cudaMalloc(&cnt, 16);
	cudaMalloc(&src, sizeof(hs));
	loop_ballot<<<1, T>>>(d, n);
	cudaMemcpy(h, d, T * 4, cudaMemcpyDeviceToHost);
	bad = 0;
	for (int t = 0; t < T; t++) {   // the lanes of t's warp still looping at each of t's iterations
		int want = 0;
		for (int it = 0; t + it * T < n; it++)
			for (int l = t & ~31; l < (t & ~31) + 32; l++)
				want += l + it * T < n && (l + it * T) % 3 == 0;
		bad += h[t] != want;
	}
	printf("loop_ballot: %d of %d wrong\n", bad, T);

	for (int i = 0; i < n; i++)
		hs[i] = (i * 7) % 4;
	cudaMemcpy(src, hs, sizeof(hs), cudaMemcpyHostToDevice);
	cudaMemset(cnt, 0, 16);
	filter<<<1, T>>>(d, cnt, src, n);
	int nres, want = 0, sum = 0, wsum = 0;
	cudaMemcpy(&nres, cnt, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	for (int i = 0; i < n; i++)
		if (hs[i] > 0)
			want++, wsum += hs[i];
	for (int i = 0; i < nres && i < n; i++)
		sum += h[i];
	printf("filter: %d kept (%d expected), sum %s\n", nres, want, sum == wsum ? "right" : "wrong");

	int zero[4] = {0, 0, 0, 0}, hc[4], seen[4 * n] = {0};
	cudaMemcpy(cnt, zero, 16, cudaMemcpyHostToDevice);
	buckets<<<1, T>>>(d, cnt, src, n, nb);
	cudaMemcpy(hc, cnt, 16, cudaMemcpyDeviceToHost);
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	bad = 0;
	int per[4] = {0, 0, 0, 0};
	for (int i = 0; i < n; i++)
		if (hs[i] < nb) {
			per[hs[i]]++;
			int s = h[i];   // a slot of its bucket, each taken once
			if (s < 0 || s >= n || seen[hs[i] * n + s]++)
				bad++;
		}
	for (int b = 0; b < nb; b++)
		bad += hc[b] != per[b];
	printf("buckets: %d wrong\n", bad);

	double *r, hr[2];
	cudaMalloc(&r, sizeof(hr));
	tile_reduce<<<2, T>>>(r);
	cudaMemcpy(hr, r, sizeof(hr), cudaMemcpyDeviceToHost);
	printf("tile_reduce: %.0f %.0f (%d expected)\n", hr[0], hr[1], T * (T + 1) / 2);
	return cudaDeviceSynchronize() != cudaSuccess;
}
