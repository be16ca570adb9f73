// Shared-memory loads with known bank conflicts: 4 blocks of 64 threads (8 warps); each block
// fills a 2048-float shared array (stores), then each thread loads one element with one
// ld.shared instruction per kernel:
//   read_stride<1>:  s[t]       conflict-free (32 lanes, 32 banks)
//   read_stride<2>:  s[2 * t]   2-way (words t and t + 16 of a warp share a bank)
//   read_stride<32>: s[32 * t]  32-way (every lane in bank 0, 32 distinct words)
//   read_same:       s[7]       broadcast: one word for the whole warp, conflict-free
// The expected wavefronts (per warp: the largest number of distinct words in one bank) are
// computed here on the host and printed, for an exact comparison with the probe.
#include <cstdio>
#include <set>
#include <vector>

#define G 4
#define B 64
#define S 2048

template <int STRIDE> __global__ void read_stride(float *out)
{
	__shared__ float s[S];
	for (int i = threadIdx.x; i < S; i += blockDim.x) s[i] = i * 0.5f + blockIdx.x;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[(STRIDE * threadIdx.x) % S];
}

__global__ void read_same(float *out)
{
	__shared__ float s[S];
	for (int i = threadIdx.x; i < S; i += blockDim.x) s[i] = i * 0.5f + blockIdx.x;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[7];
}

template <class F> static unsigned long wavefronts(F word)
{
	unsigned long total = 0;
	for (int w = 0; w < G * B / 32; w++) {
		std::set<int> banks[32];
		for (int l = 0; l < 32; l++) {
			int t = (w * 32 + l) % B, wd = word(t);
			banks[wd % 32].insert(wd);
		}
		size_t m = 0;
		for (auto &b : banks) m = b.size() > m ? b.size() : m;
		total += m;
	}
	return total;
}

int main()
{
	float *out;
	cudaMalloc(&out, sizeof(float) * G * B);
	std::vector<float> r(G * B);
	double sum = 0;
	auto run = [&](void (*k)(float *)) {
		k<<<G, B>>>(out);
		cudaMemcpy(r.data(), out, sizeof(float) * G * B, cudaMemcpyDeviceToHost);
		for (float v : r) sum += v;
	};
	run(read_stride<1>);
	run(read_stride<2>);
	run(read_stride<32>);
	run(read_same);
	printf("bank_conflicts: %d blocks of %d threads, sum=%.1f\n", G, B, sum);
	int req = G * B / 32;
	printf("expected read_stride<1>: requests %d wavefronts %lu\n", req, wavefronts([](int t) { return t % S; }));
	printf("expected read_stride<2>: requests %d wavefronts %lu\n", req, wavefronts([](int t) { return (2 * t) % S; }));
	printf("expected read_stride<32>: requests %d wavefronts %lu\n", req, wavefronts([](int t) { return (32 * t) % S; }));
	printf("expected read_same: requests %d wavefronts %lu\n", req, wavefronts([](int) { return 7; }));
	return cudaDeviceSynchronize() != cudaSuccess;
}
