// CUB: segmented reductions and segmented sort.
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
void seg(const float *in, float *out, const int *offs, int segs, void *tmp, size_t &bytes, float *keys, float *ko, int n)
{
	cub::DeviceSegmentedReduce::Sum(tmp, bytes, in, out, segs, offs, offs + 1);
	cub::DeviceSegmentedReduce::Min(tmp, bytes, in, out, segs, offs, offs + 1);
	cub::DeviceSegmentedSort::SortKeys(tmp, bytes, keys, ko, n, segs, offs, offs + 1);
}
