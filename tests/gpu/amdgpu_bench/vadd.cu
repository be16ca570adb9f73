// Vector add for the LLVM-path bench (tests/gpu/amdgpu_bench.sh): 16M floats, the kernel timed
// with CUDA events over 200 launches after 10 warm-up ones; prints the median and checks every
// element exactly.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

int main()
{
	const int n = 1 << 24, iters = 200;
	std::vector<float> a(n), b(n), c(n);
	for (int i = 0; i < n; i++) {
		a[i] = (float)(i % 1000) * 0.5f;
		b[i] = (float)(i % 777) * 0.25f;
	}
	float *da, *db, *dc;
	cudaMalloc(&da, n * sizeof(float));
	cudaMalloc(&db, n * sizeof(float));
	cudaMalloc(&dc, n * sizeof(float));
	cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice);
	cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice);
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	std::vector<float> ms;
	for (int it = 0; it < iters + 10; it++) {
		cudaEventRecord(e0);
		vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float t;
		cudaEventElapsedTime(&t, e0, e1);
		if (it >= 10)
			ms.push_back(t);
	}
	cudaError_t err = cudaGetLastError();
	cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += c[i] != a[i] + b[i];
	std::sort(ms.begin(), ms.end());
	printf("vadd n=%d median_ms=%.5f min_ms=%.5f errors=%d cuda=%s\n", n, ms[ms.size() / 2], ms[0], bad,
	       cudaGetErrorString(err));
	return bad || err != cudaSuccess;
}
