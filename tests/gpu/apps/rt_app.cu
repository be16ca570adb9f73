// CUDA runtime app for the shim's GPU tests: several kernels, streams, events, a CUDA graph
// (stream capture), async copies and 8 host threads launching at once. Prints checksums of
// every result; a run through the shim must print exactly the same bytes as one without it.
// With --oob it also launches a kernel that writes out of bounds (for compute-sanitizer).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <thread>
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

__global__ void fill(uint32_t *x, uint32_t seed, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		uint32_t h = seed ^ (uint32_t)i * 2654435761u;
		h ^= h >> 15;
		h *= 2246822519u;
		x[i] = h ^ (h >> 13);
	}
}

__global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void to_float(const uint32_t *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = (float)(in[i] & 0xffff) / 65536.0f;
}

// Deterministic reduction: one block per 1024 elements, tree in shared memory.
__global__ void block_sum(const float *x, float *out, int n)
{
	__shared__ float s[256];
	int base = blockIdx.x * 1024;
	float v = 0;
	for (int k = threadIdx.x; k < 1024; k += 256)
		if (base + k < n)
			v += x[base + k];
	s[threadIdx.x] = v;
	__syncthreads();
	for (int w = 128; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = s[0];
}

__global__ void oob_write(int *x, int n)
{
	x[n + threadIdx.x] = 1;   // deliberately past the end
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static const int N = 1 << 20;

static void streams_and_events()
{
	const int S = 4;
	cudaStream_t st[S];
	cudaEvent_t ev[S];
	uint32_t *d_u[S];
	float *d_f[S], *d_y[S], *d_sum[S];
	float *h_sum[S];
	for (int s = 0; s < S; s++) {
		CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
		CK(cudaEventCreate(&ev[s]));
		CK(cudaMalloc(&d_u[s], N * 4));
		CK(cudaMalloc(&d_f[s], N * 4));
		CK(cudaMalloc(&d_y[s], N * 4));
		CK(cudaMalloc(&d_sum[s], (N / 1024) * 4));
		CK(cudaMallocHost(&h_sum[s], (N / 1024) * 4));
	}
	for (int s = 0; s < S; s++) {
		fill<<<N / 256, 256, 0, st[s]>>>(d_u[s], 1234 + s, N);
		to_float<<<N / 256, 256, 0, st[s]>>>(d_u[s], d_f[s], N);
		CK(cudaMemsetAsync(d_y[s], 0, N * 4, st[s]));
		CK(cudaEventRecord(ev[s], st[s]));
	}
	// Each stream waits for its neighbour's event, then combines.
	for (int s = 0; s < S; s++) {
		CK(cudaStreamWaitEvent(st[s], ev[(s + 1) % S], 0));
		saxpy<<<N / 256, 256, 0, st[s]>>>(2.0f, d_f[(s + 1) % S], d_y[s], N);
		saxpy<<<N / 256, 256, 0, st[s]>>>(0.5f, d_f[s], d_y[s], N);
		block_sum<<<N / 1024, 256, 0, st[s]>>>(d_y[s], d_sum[s], N);
		CK(cudaMemcpyAsync(h_sum[s], d_sum[s], (N / 1024) * 4, cudaMemcpyDeviceToHost, st[s]));
	}
	for (int s = 0; s < S; s++) {
		CK(cudaStreamSynchronize(st[s]));
		printf("stream %d: sums %016llx\n", s, (unsigned long long)fnv(h_sum[s], (N / 1024) * 4));
	}
	for (int s = 0; s < S; s++) {
		CK(cudaFree(d_u[s])); CK(cudaFree(d_f[s])); CK(cudaFree(d_y[s])); CK(cudaFree(d_sum[s]));
		CK(cudaFreeHost(h_sum[s])); CK(cudaEventDestroy(ev[s])); CK(cudaStreamDestroy(st[s]));
	}
}

static void graph()
{
	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	uint32_t *d_u;
	float *d_f, *d_y, *d_sum;
	CK(cudaMalloc(&d_u, N * 4)); CK(cudaMalloc(&d_f, N * 4)); CK(cudaMalloc(&d_y, N * 4));
	CK(cudaMalloc(&d_sum, (N / 1024) * 4));
	std::vector<float> h(N / 1024);
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
	fill<<<N / 256, 256, 0, st>>>(d_u, 99, N);
	to_float<<<N / 256, 256, 0, st>>>(d_u, d_f, N);
	saxpy<<<N / 256, 256, 0, st>>>(3.0f, d_f, d_y, N);
	block_sum<<<N / 1024, 256, 0, st>>>(d_y, d_sum, N);
	CK(cudaStreamEndCapture(st, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaMemsetAsync(d_y, 0, N * 4, st));
	for (int it = 0; it < 5; it++)
		CK(cudaGraphLaunch(ge, st));   // y accumulates 3*f five times
	CK(cudaMemcpyAsync(h.data(), d_sum, h.size() * 4, cudaMemcpyDeviceToHost, st));
	CK(cudaStreamSynchronize(st));
	size_t nodes = 0;
	CK(cudaGraphGetNodes(g, nullptr, &nodes));
	printf("graph: %zu nodes, 5 launches, sums %016llx\n", nodes,
	       (unsigned long long)fnv(h.data(), h.size() * 4));
	CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
	CK(cudaFree(d_u)); CK(cudaFree(d_f)); CK(cudaFree(d_y)); CK(cudaFree(d_sum));
	CK(cudaStreamDestroy(st));
}

static void threads()
{
	const int T = 8, M = 1 << 16, ITERS = 50;
	std::vector<uint64_t> result(T);
	std::vector<std::thread> th;
	for (int t = 0; t < T; t++)
		th.emplace_back([t, &result] {
			cudaStream_t st;
			CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
			uint32_t *d_u;
			float *d_f, *d_y;
			CK(cudaMalloc(&d_u, M * 4)); CK(cudaMalloc(&d_f, M * 4)); CK(cudaMalloc(&d_y, M * 4));
			CK(cudaMemsetAsync(d_y, 0, M * 4, st));
			for (int i = 0; i < ITERS; i++) {
				fill<<<M / 256, 256, 0, st>>>(d_u, t * 1000 + i, M);
				to_float<<<M / 256, 256, 0, st>>>(d_u, d_f, M);
				saxpy<<<M / 256, 256, 0, st>>>(1.0f / (i + 1), d_f, d_y, M);
			}
			std::vector<float> h(M);
			CK(cudaMemcpyAsync(h.data(), d_y, M * 4, cudaMemcpyDeviceToHost, st));
			CK(cudaStreamSynchronize(st));
			result[t] = fnv(h.data(), M * 4);
			CK(cudaFree(d_u)); CK(cudaFree(d_f)); CK(cudaFree(d_y));
			CK(cudaStreamDestroy(st));
		});
	for (auto &x : th)
		x.join();
	for (int t = 0; t < T; t++)
		printf("thread %d: %d launches, result %016llx\n", t, 3 * ITERS,
		       (unsigned long long)result[t]);
}

int main(int argc, char **argv)
{
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	printf("devices: %s\n", ndev > 0 ? "present" : "none");
	streams_and_events();
	graph();
	threads();
	if (argc > 1 && !strcmp(argv[1], "--oob")) {
		int *d;
		CK(cudaMalloc(&d, 64 * 4));
		oob_write<<<1, 32>>>(d, 64);   // just past the end: only a sanitizer notices
		cudaError_t e = cudaDeviceSynchronize();
		printf("oob kernel: %s\n", cudaGetErrorName(e));
		return 0;
	}
	CK(cudaDeviceSynchronize());
	printf("done\n");
	return 0;
}
