// Two-GPU app for the shim's GPU tests: the same work on every device, peer copies between
// devices 0 and 1, and checksums that must be identical with and without the shim.
// Exits 77 (skip) with a message when fewer than two GPUs are present.
#include <cstdint>
#include <cstdio>
#include <vector>

#define CK(x)                                                                            \
	do {                                                                             \
		cudaError_t e_ = (x);                                                    \
		if (e_ != cudaSuccess) {                                                 \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,       \
				cudaGetErrorString(e_));                                 \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

__global__ void gen(uint32_t *x, uint32_t dev, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = (i * 2654435761u) ^ (dev * 0x9E3779B9u);
}

__global__ void mix(uint32_t *x, const uint32_t *peer, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 31u + peer[n - 1 - i];
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

int main()
{
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2) {
		printf("SKIP: needs 2 GPUs, found %d\n", ndev);
		return 77;
	}
	const int N = 1 << 22;
	uint32_t *d[2], *peer[2];
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		CK(cudaMalloc(&d[g], N * 4));
		CK(cudaMalloc(&peer[g], N * 4));
		gen<<<N / 256, 256>>>(d[g], g, N);
	}
	int can01 = 0;
	CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		CK(cudaDeviceSynchronize());
	}
	// Exchange through peer copies (staged by the driver when P2P is off).
	CK(cudaMemcpyPeer(peer[0], 0, d[1], 1, N * 4));
	CK(cudaMemcpyPeer(peer[1], 1, d[0], 0, N * 4));
	std::vector<uint32_t> h(N);
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		mix<<<N / 256, 256>>>(d[g], peer[g], N);
		CK(cudaMemcpy(h.data(), d[g], N * 4, cudaMemcpyDeviceToHost));
		printf("device %d: %016llx\n", g, (unsigned long long)fnv(h.data(), N * 4));
	}
	printf("peer access 0->1: %s\n", can01 ? "yes" : "no");
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g));
		CK(cudaFree(d[g]));
		CK(cudaFree(peer[g]));
	}
	printf("done\n");
	return 0;
}
