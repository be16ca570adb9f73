// CUB's device-wide radix sort, reduce and inclusive scan on 1M keys (CUDA's own CCCL headers),
// printing checksums so that runs with and without probes can be compared byte for byte.
#include <cstdio>
#include <cub/cub.cuh>

int main()
{
	const int n = 1 << 20;
	unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
	unsigned x = 12345;
	for (int i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		h[i] = x >> 8;
	}
	unsigned *in, *out, *sum;
	cudaMalloc(&in, n * sizeof(unsigned));
	cudaMalloc(&out, n * sizeof(unsigned));
	cudaMalloc(&sum, sizeof(unsigned));
	cudaMemcpy(in, h, n * sizeof(unsigned), cudaMemcpyHostToDevice);
	void *tmp = NULL;
	size_t tmp_bytes = 0, need;
	cub::DeviceRadixSort::SortKeys(NULL, need, in, out, n);
	tmp_bytes = need;
	cub::DeviceReduce::Sum(NULL, need, in, sum, n);
	if (need > tmp_bytes) tmp_bytes = need;
	cub::DeviceScan::InclusiveSum(NULL, need, in, out, n);
	if (need > tmp_bytes) tmp_bytes = need;
	cudaMalloc(&tmp, tmp_bytes);

	cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, in, out, n);
	cudaMemcpy(h, out, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
	int sorted = 1;
	unsigned long long check = 0;
	for (int i = 0; i < n; i++) {
		sorted &= i == 0 || h[i - 1] <= h[i];
		check = check * 31 + h[i];
	}
	printf("sort: sorted=%d checksum=%llu\n", sorted, check);

	cub::DeviceReduce::Sum(tmp, tmp_bytes, in, sum, n);
	unsigned s;
	cudaMemcpy(&s, sum, sizeof(s), cudaMemcpyDeviceToHost);
	printf("reduce: sum=%u\n", s);

	cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, n);
	cudaMemcpy(h, out, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
	printf("scan: last=%u mid=%u\n", h[n - 1], h[n / 2]);
	cudaError_t e = cudaDeviceSynchronize();
	printf("status: %s\n", cudaGetErrorString(e));
	return 0;
}
