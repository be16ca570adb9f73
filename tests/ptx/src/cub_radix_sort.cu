// CUB: device radix sort of keys and key-value pairs, descending, segmented.
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
void radix(const unsigned *k, unsigned *ko, const float *v, float *vo, int n, void *tmp, size_t &bytes, const int *offs, int segs)
{
	cub::DeviceRadixSort::SortKeys(tmp, bytes, k, ko, n);
	cub::DeviceRadixSort::SortPairsDescending(tmp, bytes, k, ko, v, vo, n);
	cub::DeviceSegmentedRadixSort::SortKeys(tmp, bytes, (const double *)v, (double *)vo, n, segs, offs, offs + 1);
}
