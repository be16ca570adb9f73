// Global loads with known coalescing: 4096 threads (32 blocks of 128) each load one float
// through one ld.global instruction per kernel:
//   load_coalesced: in[i]          4 sectors per warp (128 contiguous bytes)
//   load_strided:   in[32 * i]     32 sectors per warp (one 128-byte stride per lane)
//   load_random:    in[idx[i]]     idx from a fixed LCG; plus the coalesced load of idx[i]
// The expected sector counts are computed here on the host from the same addresses (distinct
// address >> 5 per warp of 32 consecutive threads) and printed, so the probe's counts can be
// compared with them exactly.
#include <cstdio>
#include <cstdint>
#include <set>
#include <vector>

#define N 4096
#define B 128

__global__ void load_coalesced(const float *in, float *out) { int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = in[i] * 2.0f; }
__global__ void load_strided(const float *in, float *out) { int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = in[32 * i] * 2.0f; }
__global__ void load_random(const float *in, const int *idx, float *out) { int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = in[idx[i]] * 2.0f; }

// distinct 32-byte sectors per warp, summed over warps, of the addresses base + 4 * index(i)
template <class F> static unsigned long sectors(uintptr_t base, F index)
{
	unsigned long total = 0;
	for (int w = 0; w < N / 32; w++) {
		std::set<uintptr_t> s;
		for (int l = 0; l < 32; l++)
			s.insert((base + 4 * (uintptr_t)index(w * 32 + l)) >> 5);
		total += s.size();
	}
	return total;
}

int main()
{
	std::vector<float> h(32 * N);
	for (int i = 0; i < 32 * N; i++) h[i] = (float)(i % 1000) * 0.25f;
	std::vector<int> hidx(N);
	uint32_t x = 12345;
	for (int i = 0; i < N; i++) { x = x * 1103515245u + 12345u; hidx[i] = (x >> 8) % (32 * N); }
	float *in, *out; int *idx;
	cudaMalloc(&in, sizeof(float) * 32 * N);
	cudaMalloc(&out, sizeof(float) * N);
	cudaMalloc(&idx, sizeof(int) * N);
	cudaMemcpy(in, h.data(), sizeof(float) * 32 * N, cudaMemcpyHostToDevice);
	cudaMemcpy(idx, hidx.data(), sizeof(int) * N, cudaMemcpyHostToDevice);
	std::vector<float> r(N);
	double sum = 0;
	load_coalesced<<<N / B, B>>>(in, out);
	cudaMemcpy(r.data(), out, sizeof(float) * N, cudaMemcpyDeviceToHost);
	for (float v : r) sum += v;
	load_strided<<<N / B, B>>>(in, out);
	cudaMemcpy(r.data(), out, sizeof(float) * N, cudaMemcpyDeviceToHost);
	for (float v : r) sum += v;
	load_random<<<N / B, B>>>(in, idx, out);
	cudaMemcpy(r.data(), out, sizeof(float) * N, cudaMemcpyDeviceToHost);
	for (float v : r) sum += v;
	uintptr_t bi = (uintptr_t)in, bx = (uintptr_t)idx;
	printf("coalescing: %d threads, sum=%.1f\n", N, sum);
	printf("expected load_coalesced: requests %d sectors %lu\n", N / 32, sectors(bi, [](int i) { return i; }));
	printf("expected load_strided: requests %d sectors %lu\n", N / 32, sectors(bi, [](int i) { return 32 * i; }));
	printf("expected load_random: requests %d sectors %lu\n", 2 * N / 32,
	       sectors(bx, [](int i) { return i; }) + sectors(bi, [&](int i) { return hidx[i]; }));
	return cudaDeviceSynchronize() != cudaSuccess;
}
