// CUB: device scans (inclusive, exclusive, by key) on ints and doubles.
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_scan.cuh>
void scan(const int *in, int *out, const double *d, double *dout, const int *keys, int n, void *tmp, size_t &bytes)
{
	cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, n);
	cub::DeviceScan::ExclusiveSum(tmp, bytes, d, dout, n);
	cub::DeviceScan::InclusiveScan(tmp, bytes, in, out, cuda::maximum<int>(), n);
	cub::DeviceScan::ExclusiveSumByKey(tmp, bytes, keys, in, out, n);
}
