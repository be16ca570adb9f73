// tests/gpu/first_kernel.sh's application: a module of 1,000 kernels instantiated from one
// template (the shape of the issue's 3.5 MB template module), all sharing a __device__ scale and
// a __constant__ coefficient table the host writes with cudaMemcpyToSymbol, of which one kernel
// (KERNEL, default 500) is launched; then a register-heavy __launch_bounds__(1024) kernel launched
// with 1024 threads per block. Every result is checked against the host's. Prints the threads
// each launch ran ("threads NAME N"), the first launch's wall time ("F first_ms=..."), and PASS.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <utility>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__device__ int g_scale;
__constant__ float c_coef[8];

template <int N>
__global__ void tk(float *out, const float *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float acc = in[i];
#pragma unroll
	for (int k = 0; k < 4; k++)
		acc = acc * c_coef[(N + k) & 7] + (float)((N * 7 + k) % 13);
	out[i] = acc * (float)g_scale;
}

typedef void (*kfn)(float *, const float *, int);
template <int... I>
static std::vector<kfn> table(std::integer_sequence<int, I...>) { return {&tk<I>...}; }

static float host_tk(int N, float x, const float *coef, int scale)
{
	float acc = x;
	for (int k = 0; k < 4; k++)
		acc = acc * coef[(N + k) & 7] + (float)((N * 7 + k) % 13);
	return acc * (float)scale;
}

// 48 live accumulators per thread: near the 64 registers a 1024-thread block allows.
#define HEAVY 48
__global__ void __launch_bounds__(1024) heavy(float *out, const float *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float a[HEAVY];
#pragma unroll
	for (int k = 0; k < HEAVY; k++)
		a[k] = in[(i + k) % n] * c_coef[k & 7];
#pragma unroll
	for (int r = 0; r < 4; r++)
#pragma unroll
		for (int k = 0; k < HEAVY; k++)
			a[k] = a[k] * a[(k + 1) % HEAVY] + (float)g_scale;
	float s = 0;
#pragma unroll
	for (int k = 0; k < HEAVY; k++)
		s += a[k];
	if (i < n)
		out[i] = s;
}

static float host_heavy(int i, const std::vector<float> &in, int n, const float *coef, int scale)
{
	float a[HEAVY];
	for (int k = 0; k < HEAVY; k++)
		a[k] = in[(i + k) % n] * coef[k & 7];
	for (int r = 0; r < 4; r++)
		for (int k = 0; k < HEAVY; k++)
			a[k] = a[k] * a[(k + 1) % HEAVY] + (float)scale;
	float s = 0;
	for (int k = 0; k < HEAVY; k++)
		s += a[k];
	return s;
}

static bool close(float a, float b) { return fabsf(a - b) <= 1e-3f * fmaxf(1.0f, fabsf(b)); }

int main(int argc, char **argv)
{
	int kernel = argc > 1 ? atoi(argv[1]) : 500;
	const int n = 1 << 16;
	std::vector<kfn> ks = table(std::make_integer_sequence<int, 1000>{});
	if (kernel < 0 || kernel >= (int)ks.size()) {
		printf("FAIL kernel %d out of range\n", kernel);
		return 1;
	}
	std::vector<float> in(n), out(n);
	for (int i = 0; i < n; i++)
		in[i] = (float)((i * 37) % 101) / 101.0f;
	float coef[8] = {0.5f, 1.0f, 1.5f, 0.25f, 0.75f, 1.25f, 0.125f, 0.875f};
	int scale = 3;
	float *din, *dout;
	CHECK(cudaMalloc(&din, n * sizeof(float)));
	CHECK(cudaMalloc(&dout, n * sizeof(float)));
	CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	// The shared variables, written by the host before any launch (the instrumented kernel must
	// read these very bytes).
	CHECK(cudaMemcpyToSymbol(g_scale, &scale, sizeof(scale)));
	CHECK(cudaMemcpyToSymbol(c_coef, coef, sizeof(coef)));

	auto t0 = std::chrono::steady_clock::now();
	ks[kernel]<<<n / 256, 256>>>(dout, din, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (!close(out[i], host_tk(kernel, in[i], coef, scale))) {
			printf("FAIL tk<%d>: out[%d] = %g, expected %g\n", kernel, i, out[i],
			       host_tk(kernel, in[i], coef, scale));
			return 1;
		}
	printf("threads tk %d\n", n);

	// A second scale, written between launches: seen by the next launch.
	scale = 5;
	CHECK(cudaMemcpyToSymbol(g_scale, &scale, sizeof(scale)));
	ks[kernel]<<<n / 256, 256>>>(dout, din, n);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (!close(out[i], host_tk(kernel, in[i], coef, scale))) {
			printf("FAIL tk<%d> after the second write: out[%d] = %g, expected %g\n", kernel, i,
			       out[i], host_tk(kernel, in[i], coef, scale));
			return 1;
		}
	printf("threads tk %d\n", n);

	heavy<<<n / 1024, 1024>>>(dout, din, n);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (!close(out[i], host_heavy(i, in, n, coef, scale))) {
			printf("FAIL heavy: out[%d] = %g, expected %g\n", i, out[i], host_heavy(i, in, n, coef, scale));
			return 1;
		}
	printf("threads heavy %d\n", n);
	fprintf(stderr, "F first_ms=%.1f\n", first_ms);
	printf("PASS\n");
	return 0;
}
