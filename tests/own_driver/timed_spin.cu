// ktime on our own driver (tests/own_driver/probes.sh): a kernel that computes for a while,
// launched three times; the host times each launch to its synchronisation and prints the sum.
// Under `gpuprobe run -t ktime` the GPU time of the three launches must be more than 0 (OpenCL
// kernels have no clock: the own driver's clock word, shim/own_clock.c) and at most what the
// host saw.
#include <chrono>
#include <cstdio>

__global__ void spin(float *out, int iters)
{
	float x = threadIdx.x;
	for (int i = 0; i < iters; i++)
		x = x * 0.999f + 1.0f;
	out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

int main()
{
	float *d;
	cudaMalloc(&d, 64 * 64 * sizeof(float));
	spin<<<64, 64>>>(d, 1);   // built and run once untimed
	cudaDeviceSynchronize();
	long long host_ns = 0;
	for (int r = 0; r < 3; r++) {
		auto t0 = std::chrono::steady_clock::now();
		spin<<<64, 64>>>(d, 10000);
		cudaDeviceSynchronize();
		host_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
	}
	float h = 0;
	cudaMemcpy(&h, d + 1, sizeof(h), cudaMemcpyDeviceToHost);
	printf("timed_spin: %.3f host_ns %lld\n", h, host_ns);
	return 0;
}
