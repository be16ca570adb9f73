// A program whose every memory access is known in advance, for tests/trace_replay: each kernel
// has one access pattern, and the program prints the launch shapes and the device addresses
// of its buffers, so that check.py can compute, for every warp of every launch, the address
// each lane accesses and compare them with the warp records a memory trace captured.
//   coalesced  out[i] = 2 * in[i]              4-byte stride, loads and stores
//   strided    out[i] = in[7 * i]              28-byte stride loads
//   random     out[i] = in[hash(i) % n]        irregular loads (every lane's address listed)
//   banks      shared s[33 * lane] stores (conflict-free: 132-byte stride), s[32 * lane] loads
//              (all lanes in one bank: 128-byte stride), then out[i]
//   partial    (with --divergent) lanes with lane % 3 != 0 only: a partial mask, still regular
// Every block has 256 threads and n is a multiple of 256, so without --divergent every thread
// of a block reaches every access (gpuprobe's own driver on PoCL emulates warps only there).
// usage: patterns [--divergent] [N]
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                                            \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "patterns: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

__host__ __device__ static unsigned mix(unsigned i)
{
	unsigned h = (i ^ (i >> 3)) * 0x9E3779B1u;
	return h ^ (h >> 15);
}

extern "C" __global__ void k_coalesced(const float *in, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = 2.f * in[i];
}

extern "C" __global__ void k_strided(const float *in, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[7 * i];
}

extern "C" __global__ void k_random(const float *in, float *out, unsigned nmask)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[mix(i) & nmask];
}

extern "C" __global__ void k_banks(float *out)
{
	__shared__ float s[32 * 33];
	unsigned lane = threadIdx.x & 31;
	s[33 * lane] = (float)threadIdx.x;
	__syncthreads();
	float v = s[32 * lane];
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" __global__ void k_partial(const float *in, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if ((threadIdx.x & 31) % 3 != 0)
		out[i] = in[i];
}

int main(int argc, char **argv)
{
	bool divergent = argc > 1 && !strcmp(argv[1], "--divergent");
	unsigned n = argc > 1 + divergent ? (unsigned)atoi(argv[1 + divergent]) : 4096;
	if (n < 256 || n % 256 || (n & (n - 1))) {
		fprintf(stderr, "patterns: N must be a power of two >= 256\n");
		return 2;
	}
	float *in, *out;
	CK(cudaMalloc(&in, 7ull * n * sizeof(float)));
	CK(cudaMalloc(&out, n * sizeof(float)));
	CK(cudaMemset(in, 0, 7ull * n * sizeof(float)));
	unsigned blocks = n / 256;
	printf("PATTERNS n %u blocks %u threads 256 in 0x%llx out 0x%llx\n", n, blocks,
	       (unsigned long long)(uintptr_t)in, (unsigned long long)(uintptr_t)out);
	k_coalesced<<<blocks, 256>>>(in, out);
	k_strided<<<blocks, 256>>>(in, out);
	k_random<<<blocks, 256>>>(in, out, n - 1);
	k_banks<<<blocks, 256>>>(out);
	if (divergent)
		k_partial<<<blocks, 256>>>(in, out);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("PATTERNS done%s\n", divergent ? " divergent" : "");
	return 0;
}
