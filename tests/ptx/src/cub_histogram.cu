// CUB: device histograms (even and range bins, multi-channel).
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_histogram.cuh>
void hist(const float *samples, int *h, int n, void *tmp, size_t &bytes, const unsigned char *pixels, int *hc[4], const float *levels)
{
	cub::DeviceHistogram::HistogramEven(tmp, bytes, samples, h, 65, 0.f, 1.f, n);
	cub::DeviceHistogram::HistogramRange(tmp, bytes, samples, h, 9, levels, n);
	int nl[4] = {257, 257, 257, 257};
	unsigned lo[4] = {0, 0, 0, 0}, hi[4] = {256, 256, 256, 256};
	cub::DeviceHistogram::MultiHistogramEven<4, 4>(tmp, bytes, pixels, hc, nl, lo, hi, n);
}
