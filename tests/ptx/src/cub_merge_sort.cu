// CUB: merge sort with a custom comparator (keys, pairs, stable).
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_merge_sort.cuh>
struct Cmp { __device__ bool operator()(const float &a, const float &b) const { return a < b; } };
void msort(float *k, int *v, int n, void *tmp, size_t &bytes)
{
	cub::DeviceMergeSort::SortKeys(tmp, bytes, k, n, Cmp());
	cub::DeviceMergeSort::StableSortPairs(tmp, bytes, k, v, n, Cmp());
}
