// bench/overhead workloads: vector add, tiled SGEMM, reduction, 2D stencil, memory-bound copy and
// CUB radix sort, each at several sizes up to filling the GPU. Every kernel launch is timed alone
// with a pair of CUDA events; after warm-ups the median (and min) over OVH_REPS launches prints as
//   R <workload> <size> <variant> <median_us> <min_us> <reps>
// so the same binary run natively, through the shim or with probes gives comparable lines.
// Built with -DOVH_HAND it also runs the hand-written-instrumentation variants of vector add,
// copy and SGEMM (the same work a probe does, written in CUDA and compiled by nvcc: the physical
// limit a probe is compared with). Inputs are random nonzero values; a checksum of each result
// prints (C lines) so that no configuration times a kernel whose output is dead or all zeros.
//   ovh [first|ring N SECONDS|WORKLOAD...]
//     first: only the time to the first kernel's completion (F line)
//     ring N S: launch the copy kernel on N floats for S seconds (memory-trace throughput)
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "ovh: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), \
				__LINE__);                                                 \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

// ---- the base kernels (what the probes instrument) ------------------------------------------

__global__ void k_vecadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void k_copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

#define TILE 32
__global__ void k_sgemm(const float *A, const float *B, float *C, int N)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.f;
	for (int t = 0; t < N; t += TILE) {
		As[threadIdx.y][threadIdx.x] = A[row * N + t + threadIdx.x];
		Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * N + col];
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	C[row * N + col] = acc;
}

// Block sums of a grid-stride pass (256 threads per block).
__global__ void k_reduce(const float *in, float *partial, int n)
{
	__shared__ float s[256];
	float v = 0.f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		v += in[i];
	s[threadIdx.x] = v;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = s[0];
}

// One Jacobi step of a 5-point stencil on an N x N grid (borders copied).
__global__ void k_stencil(const float *in, float *out, int N)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= N || y >= N)
		return;
	int i = y * N + x;
	if (x == 0 || y == 0 || x == N - 1 || y == N - 1)
		out[i] = in[i];
	else
		out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - N] + in[i + N]);
}

// ---- hand-written instrumentation (OVH_HAND) -------------------------------------------------
#ifdef OVH_HAND
// What each variant does, per thread or per global access, like the probe it is compared with:
enum {
	H_ATOMIC = 1,   // every thread: atomicAdd on one global counter (contended counter)
	H_SHARDED,      // every thread: atomicAdd on its SM's counter, 128 bytes apart
	H_PERTHREAD,    // every thread: its own slot += 1 (per-thread array map)
	H_MEMCNT,       // every global access: atomicAdd on its SM's counter (memory counter)
	H_MEMCNT_G,     // every global access: atomicAdd on one global counter
	H_RING,         // every global access: a 16-byte record into its SM's ring (memory trace)
	H_BLOCKTIME,    // per block: globaltimer at entry and exit into per-block slots
};
struct hand_state {
	unsigned long long *ctr;      // 1 + 132*16 words, zeroed
	unsigned long long *perthread;
	unsigned long long *head;     // per SM, 16 words apart
	unsigned long long *drops;
	ulonglong2 *ring;             // per SM: ring_cap records
	unsigned ring_cap;            // power of two
	unsigned long long *blocktime;
};
__constant__ hand_state hs;

__device__ __forceinline__ unsigned smid()
{
	unsigned r;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
	return r;
}
__device__ __forceinline__ unsigned long long gtimer()
{
	unsigned long long r;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r));
	return r;
}
template <int M> __device__ __forceinline__ void h_thread()
{
	if (M == H_ATOMIC)
		atomicAdd(hs.ctr, 1ull);
	if (M == H_SHARDED)
		atomicAdd(hs.ctr + 16 + smid() * 16, 1ull);
	if (M == H_PERTHREAD) {
		size_t t = ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y +
			   threadIdx.y * blockDim.x + threadIdx.x;
		hs.perthread[t] += 1;
	}
}
template <int M> __device__ __forceinline__ void h_access(const void *p)
{
	if (M == H_MEMCNT)
		atomicAdd(hs.ctr + 16 + smid() * 16, 1ull);
	if (M == H_MEMCNT_G)
		atomicAdd(hs.ctr, 1ull);
	if (M == H_RING) {
		unsigned s = smid();
		unsigned long long h = atomicAdd(hs.head + s * 16, 1ull);
		if (h < hs.ring_cap)
			hs.ring[(size_t)s * hs.ring_cap + h] = make_ulonglong2((unsigned long long)p, h);
		else
			atomicAdd(hs.drops + s * 16, 1ull);
	}
}
template <int M> __device__ __forceinline__ void h_block_begin()
{
	if (M == H_BLOCKTIME && threadIdx.x == 0 && threadIdx.y == 0)
		hs.blocktime[2 * (blockIdx.y * gridDim.x + blockIdx.x)] = gtimer();
}
template <int M> __device__ __forceinline__ void h_block_end()
{
	if (M == H_BLOCKTIME) {
		__syncthreads();
		if (threadIdx.x == 0 && threadIdx.y == 0)
			hs.blocktime[2 * (blockIdx.y * gridDim.x + blockIdx.x) + 1] = gtimer();
	}
}

template <int M> __global__ void h_vecadd(const float *a, const float *b, float *c, int n)
{
	h_block_begin<M>();
	h_thread<M>();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		h_access<M>(a + i);
		float x = a[i];
		h_access<M>(b + i);
		float y = b[i];
		h_access<M>(c + i);
		c[i] = x + y;
	}
	h_block_end<M>();
}
template <int M> __global__ void h_copy(const float *in, float *out, int n)
{
	h_block_begin<M>();
	h_thread<M>();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		h_access<M>(in + i);
		float x = in[i];
		h_access<M>(out + i);
		out[i] = x;
	}
	h_block_end<M>();
}
template <int M> __global__ void h_sgemm(const float *A, const float *B, float *C, int N)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	h_block_begin<M>();
	h_thread<M>();
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.f;
	for (int t = 0; t < N; t += TILE) {
		h_access<M>(&A[row * N + t + threadIdx.x]);
		As[threadIdx.y][threadIdx.x] = A[row * N + t + threadIdx.x];
		h_access<M>(&B[(t + threadIdx.y) * N + col]);
		Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * N + col];
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	h_access<M>(&C[row * N + col]);
	C[row * N + col] = acc;
	h_block_end<M>();
}
static const char *hand_names[] = {"base", "h_atomic", "h_sharded", "h_perthread", "h_memcnt",
				   "h_memcnt_g", "h_ring", "h_blocktime"};
#endif

// ---- timing -----------------------------------------------------------------------------------

static int reps = 30, warm = 3;
static cudaEvent_t ev0, ev1;

template <class F> static void timeit(const char *w, long size, const char *variant, F launch)
{
	std::vector<float> t;
	for (int i = 0; i < warm; i++)
		launch();
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(ev0));
		launch();
		CK(cudaEventRecord(ev1));
		CK(cudaEventSynchronize(ev1));
		float ms;
		CK(cudaEventElapsedTime(&ms, ev0, ev1));
		t.push_back(ms * 1000.f);
	}
	CK(cudaGetLastError());
	std::sort(t.begin(), t.end());
	printf("R %-8s %10ld %-12s %12.2f %12.2f %d\n", w, size, variant, t[t.size() / 2], t[0], reps);
	fflush(stdout);
}

static float *dev_random(size_t n, unsigned seed)
{
	std::vector<float> h(n);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		h[i] = 0.5f + (seed >> 8) * (1.0f / 16777216.0f);   // in [0.5, 1.5): never zero
	}
	float *d;
	CK(cudaMalloc(&d, n * sizeof(float)));
	CK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	return d;
}

static void checksum(const char *w, long size, const float *d, size_t n)
{
	size_t k = std::min(n, (size_t)4096);
	std::vector<float> h(k);
	CK(cudaMemcpy(h.data(), d + (n - k), k * sizeof(float), cudaMemcpyDeviceToHost));
	double s = 0;
	for (float v : h)
		s += v;
	printf("C %-8s %10ld %.6g\n", w, size, s);
}

static bool want(int argc, char **argv, const char *w)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], w))
			return true;
	return false;
}

#ifdef OVH_HAND
static hand_state hstate;
static void hand_setup(size_t max_threads)
{
	CK(cudaMalloc(&hstate.ctr, (16 + 256 * 16) * 8));
	CK(cudaMemset(hstate.ctr, 0, (16 + 256 * 16) * 8));
	CK(cudaMalloc(&hstate.perthread, max_threads * 8));
	CK(cudaMemset(hstate.perthread, 0, max_threads * 8));
	CK(cudaMalloc(&hstate.head, 256 * 16 * 8));
	CK(cudaMalloc(&hstate.drops, 256 * 16 * 8));
	hstate.ring_cap = 1u << 16;
	CK(cudaMalloc(&hstate.ring, (size_t)256 * hstate.ring_cap * sizeof(ulonglong2)));
	CK(cudaMalloc(&hstate.blocktime, (size_t)2 * (1 << 22) * 8));
	CK(cudaMemcpyToSymbol(hs, &hstate, sizeof(hstate)));
}
// The ring is emptied before each launch, as a consumer would keep up with it.
static void ring_reset()
{
	cudaMemsetAsync(hstate.head, 0, 256 * 16 * 8);
}
#define HAND_VARIANTS(W, SIZE, LAUNCH_T)                                                         \
	do {                                                                                   \
		timeit(W, SIZE, hand_names[H_ATOMIC], [&] { LAUNCH_T(H_ATOMIC); });          \
		timeit(W, SIZE, hand_names[H_SHARDED], [&] { LAUNCH_T(H_SHARDED); });        \
		timeit(W, SIZE, hand_names[H_PERTHREAD], [&] { LAUNCH_T(H_PERTHREAD); });    \
		timeit(W, SIZE, hand_names[H_MEMCNT], [&] { LAUNCH_T(H_MEMCNT); });          \
		timeit(W, SIZE, hand_names[H_MEMCNT_G], [&] { LAUNCH_T(H_MEMCNT_G); });      \
		timeit(W, SIZE, hand_names[H_BLOCKTIME], [&] { LAUNCH_T(H_BLOCKTIME); });    \
		ring_reset();                                                                  \
		timeit(W, SIZE, hand_names[H_RING], [&] { ring_reset(); LAUNCH_T(H_RING); }); \
	} while (0)
#endif

int main(int argc, char **argv)
{
	auto t0 = std::chrono::steady_clock::now();
	if (getenv("OVH_REPS"))
		reps = std::max(1, atoi(getenv("OVH_REPS")));
	if (getenv("OVH_WARM"))
		warm = std::max(0, atoi(getenv("OVH_WARM")));
	long maxn = getenv("OVH_MAXN") ? atol(getenv("OVH_MAXN")) : (16l << 20);
	CK(cudaFree(0));
	auto t1 = std::chrono::steady_clock::now();
	// Time to the first kernel's completion: module load (and, through the shim, instrumentation
	// and JIT) happen here under lazy loading.
	float *a = dev_random(maxn, 1), *b = dev_random(maxn, 2), *c;
	CK(cudaMalloc(&c, maxn * sizeof(float)));
	CK(cudaDeviceSynchronize());
	auto t2 = std::chrono::steady_clock::now();
	k_vecadd<<<16, 256>>>(a, b, c, 4096);
	CK(cudaDeviceSynchronize());
	auto t3 = std::chrono::steady_clock::now();
	auto ms = [](auto x, auto y) { return std::chrono::duration<double, std::milli>(y - x).count(); };
	printf("F init_ms %.2f first_launch_ms %.2f\n", ms(t0, t1), ms(t2, t3));
	if (argc > 1 && !strcmp(argv[1], "first"))
		return 0;
	CK(cudaEventCreate(&ev0));
	CK(cudaEventCreate(&ev1));

	if (argc > 3 && !strcmp(argv[1], "ring")) {
		// Memory-trace throughput: every launch makes exactly 2n global accesses.
		int n = atoi(argv[2]);
		double secs = atof(argv[3]);
		long launches = 0;
		auto s = std::chrono::steady_clock::now();
		do {
			k_copy<<<(n + 255) / 256, 256>>>(a, c, n);
			CK(cudaDeviceSynchronize());
			launches++;
		} while (ms(s, std::chrono::steady_clock::now()) < secs * 1000);
		double el = ms(s, std::chrono::steady_clock::now());
		// Plus the first launch above: a vector add of 4096 (3 accesses per element).
		printf("RING copy_launches %ld global_accesses %ld loop_ms %.1f\n", launches,
		       launches * 2l * n + 3l * 4096, el);
		return 0;
	}

#ifdef OVH_HAND
	hand_setup(maxn);
#endif
	for (long n : {4096l, 1l << 20, 16l << 20}) {
		if (n > maxn || !want(argc, argv, "vecadd"))
			continue;
		int g = (int)((n + 255) / 256);
		timeit("vecadd", n, "base", [&] { k_vecadd<<<g, 256>>>(a, b, c, (int)n); });
		checksum("vecadd", n, c, n);
#ifdef OVH_HAND
#define L(M) h_vecadd<M><<<g, 256>>>(a, b, c, (int)n)
		HAND_VARIANTS("vecadd", n, L);
#undef L
#endif
	}
	for (long n : {1l << 20, 16l << 20}) {
		if (n > maxn || !want(argc, argv, "copy"))
			continue;
		int g = (int)((n + 255) / 256);
		timeit("copy", n, "base", [&] { k_copy<<<g, 256>>>(a, c, (int)n); });
		checksum("copy", n, c, n);
#ifdef OVH_HAND
#define L(M) h_copy<M><<<g, 256>>>(a, c, (int)n)
		HAND_VARIANTS("copy", n, L);
#undef L
#endif
	}
	for (int N : {512, 1024, 2048}) {
		if ((long)N * N > maxn || !want(argc, argv, "sgemm"))
			continue;
		dim3 grid(N / TILE, N / TILE), blk(TILE, TILE);
		timeit("sgemm", N, "base", [&] { k_sgemm<<<grid, blk>>>(a, b, c, N); });
		checksum("sgemm", N, c, (size_t)N * N);
#ifdef OVH_HAND
#define L(M) h_sgemm<M><<<grid, blk>>>(a, b, c, N)
		HAND_VARIANTS("sgemm", N, L);
#undef L
#endif
	}
#ifndef OVH_HAND
	for (long n : {1l << 20, 16l << 20}) {
		if (n > maxn || !want(argc, argv, "reduce"))
			continue;
		int g = 132 * 8;
		timeit("reduce", n, "base", [&] { k_reduce<<<g, 256>>>(a, c, (int)n); });
		checksum("reduce", n, c, g);
	}
	for (int N : {1024, 4096}) {
		if ((long)N * N > maxn || !want(argc, argv, "stencil"))
			continue;
		dim3 grid(N / 32, N / 8), blk(32, 8);
		timeit("stencil", N, "base", [&] { k_stencil<<<grid, blk>>>(a, c, N); });
		checksum("stencil", N, c, (size_t)N * N);
	}
	for (long n : {1l << 20, 16l << 20}) {
		if (n > maxn || !want(argc, argv, "sort"))
			continue;
		unsigned *keys_in, *keys_out;
		CK(cudaMalloc(&keys_in, n * 4));
		CK(cudaMalloc(&keys_out, n * 4));
		// Random 32-bit keys from the random floats' bits.
		CK(cudaMemcpy(keys_in, a, n * 4, cudaMemcpyDeviceToDevice));
		size_t tmp_bytes = 0;
		void *tmp = nullptr;
		CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys_in, keys_out, (int)n));
		CK(cudaMalloc(&tmp, tmp_bytes));
		timeit("sort", n, "base", [&] {
			cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys_in, keys_out, (int)n);
		});
		checksum("sort", n, (const float *)keys_out, n);
		CK(cudaFree(tmp));
		CK(cudaFree(keys_in));
		CK(cudaFree(keys_out));
	}
#endif
	auto t4 = std::chrono::steady_clock::now();
	printf("T total_ms %.1f\n", ms(t0, t4));
	return 0;
}
