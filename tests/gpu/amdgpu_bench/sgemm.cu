// SGEMM for the LLVM-path bench (tests/gpu/amdgpu_bench.sh): C = A x B, 2048 x 2048 floats, a
// shared-memory tiled kernel (32 x 32 tiles), timed with CUDA events over 50 launches after 3
// warm-up ones; prints the median and checks 256 entries against a double-precision sum.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#define T 32
__global__ void sgemm(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[T][T], Bs[T][T];
	int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
	float acc = 0.0f;
	for (int k0 = 0; k0 < n; k0 += T) {
		As[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
		Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < T; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	C[row * n + col] = acc;
}

int main()
{
	const int n = 2048, iters = 50;
	std::vector<float> a((size_t)n * n), b((size_t)n * n), c((size_t)n * n);
	for (size_t i = 0; i < a.size(); i++) {
		a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
	}
	float *da, *db, *dc;
	size_t bytes = a.size() * sizeof(float);
	cudaMalloc(&da, bytes);
	cudaMalloc(&db, bytes);
	cudaMalloc(&dc, bytes);
	cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
	cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<float> ms;
	dim3 grid(n / T, n / T), block(T, T);
	for (int it = 0; it < iters + 3; it++) {
		cudaEventRecord(e0);
		sgemm<<<grid, block>>>(da, db, dc, n);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float t;
		cudaEventElapsedTime(&t, e0, e1);
		if (it >= 3)
			ms.push_back(t);
	}
	cudaError_t err = cudaGetLastError();
	cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
	int bad = 0;
	double maxerr = 0;
	for (int s = 0; s < 256; s++) {
		int i = (s * 131) % n, j = (s * 977) % n;
		double ref = 0;
		for (int k = 0; k < n; k++)
			ref += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
		double e = fabs(ref - c[(size_t)i * n + j]);
		maxerr = std::max(maxerr, e);
		bad += e > 1e-2;
	}
	std::sort(ms.begin(), ms.end());
	printf("sgemm n=%d median_ms=%.4f min_ms=%.4f checked=256 errors=%d maxerr=%.2e cuda=%s\n", n, ms[ms.size() / 2],
	       ms[0], bad, maxerr, cudaGetErrorString(err));
	return bad || err != cudaSuccess;
}
